package embedded

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

const (
	benchPoints = 100_000
	benchDim    = 512
	benchPerDoc = 10
)

var bench struct {
	once          sync.Once
	ix            *Index
	bytesPerPoint float64
}

// benchIndex builds, once, 100k random unit vectors of 512 dims in 10k notes
// spread over 20 folders and a few tags.
func benchIndex(b *testing.B) *Index {
	bench.once.Do(func() {
		rng := rand.New(rand.NewPCG(7, 11))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ix := newIndex("")
		if err := ix.Reset(ctx, vectors.Space{Model: "bench", Dim: benchDim}); err != nil {
			b.Fatal(err)
		}
		tags := []string{"project/alpha", "project/beta", "area/home", "reading", "journal/2026"}
		pts := make([]vectors.Point, benchPerDoc)
		for n := range benchPoints / benchPerDoc {
			path := fmt.Sprintf("folder%02d/sub%d/note-%05d.md", n%20, n%3, n)
			for o := range pts {
				pts[o] = vectors.Point{Path: path, Ordinal: o, Hash: fmt.Sprintf("%064x", n*benchPerDoc+o),
					Heading: fmt.Sprintf("Heading %d", o), Tags: []string{tags[n%len(tags)]}, Vector: randUnit(rng)}
			}
			if err := ix.Upsert(ctx, pts...); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		bench.ix = ix
		bench.bytesPerPoint = float64(after.HeapAlloc-before.HeapAlloc) / benchPoints
	})
	return bench.ix
}

func randUnit(rng *rand.Rand) []float32 {
	v := make([]float32, benchDim)
	var s float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		s += x * x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(s))
	}
	return v
}

// BenchmarkSearch100k reports per-query latency percentiles (p50_ms,
// p99_ms) and the index's heap bytes per point (bytes/point).
func BenchmarkSearch100k(b *testing.B) {
	ix := benchIndex(b)
	someNotes := make([]string, 50)
	for i := range someNotes {
		someNotes[i] = fmt.Sprintf("folder%02d/sub%d/note-%05d.md", (i*197)%20, (i*197)%3, i*197)
	}
	cases := []struct {
		name   string
		byNote bool
		f      vectors.Filter
	}{
		{"passages", false, vectors.Filter{}},
		{"notes", true, vectors.Filter{}},
		{"folder-5pct", false, vectors.Filter{Folder: "folder03"}},
		{"tag-20pct", false, vectors.Filter{Tags: []string{"project"}}},
		{"paths-50", true, vectors.Filter{Paths: someNotes}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 5))
			queries := make([][]float32, 64)
			for i := range queries {
				queries[i] = randUnit(rng)
			}
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				var err error
				var hits []vectors.Hit
				if c.byNote {
					hits, err = ix.SearchNotes(ctx, queries[i%len(queries)], 10, c.f)
				} else {
					hits, err = ix.Search(ctx, queries[i%len(queries)], 10, c.f)
				}
				lat = append(lat, time.Since(start))
				if err != nil || len(hits) != 10 {
					b.Fatalf("%d hits, %v", len(hits), err)
				}
			}
			slices.Sort(lat)
			ms := func(q float64) float64 {
				return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond)
			}
			b.ReportMetric(ms(0.50), "p50_ms")
			b.ReportMetric(ms(0.99), "p99_ms")
			b.ReportMetric(bench.bytesPerPoint, "bytes/point")
		})
	}
}

// BenchmarkPersist100k measures Flush and Open of the 100k-point index.
func BenchmarkPersist100k(b *testing.B) {
	ix := benchIndex(b)
	path := filepath.Join(b.TempDir(), "vectors.bin")
	for b.Loop() {
		ix.path, ix.saved = path, ix.gen-1
		start := time.Now()
		if err := ix.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		flush := time.Since(start)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start = time.Now()
		again, err := Open(path)
		if err != nil || again.LoadError() != nil || again.Len() != benchPoints {
			b.Fatalf("Open: %v %v", err, again.LoadError())
		}
		open := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(flush)/float64(time.Millisecond), "flush_ms")
		b.ReportMetric(float64(open)/float64(time.Millisecond), "open_ms")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/benchPoints, "loaded_bytes/point")
		again.path = ""
		again.Close()
	}
	ix.path = ""
	if st, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(st.Size())/benchPoints, "file_bytes/point")
	}
}
