package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vectors"
	"github.com/sheaf-dev/sheaf/shared/vectors/vectorstest"
)

var ctx = context.Background()

func TestConformanceMemory(t *testing.T) {
	vectorstest.Run(t, func(t *testing.T) vectors.Index {
		ix, err := Open("")
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}

func TestConformanceFile(t *testing.T) {
	vectorstest.Run(t, func(t *testing.T) vectors.Index {
		ix, err := Open(filepath.Join(t.TempDir(), ".sheaf", "vectors.bin"))
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}

// fixtureFile writes the conformance fixture to a new file and returns its path.
func fixtureFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".sheaf", "vectors.bin")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Reset(ctx, vectorstest.Space); err != nil {
		t.Fatal(err)
	}
	if err := ix.Upsert(ctx, vectorstest.Fixture()...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustOpen(t *testing.T, path string) *Index {
	t.Helper()
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// A note's name point (a negative ordinal) survives the file.
func TestNamePointPersists(t *testing.T) {
	path := fixtureFile(t)
	ix := mustOpen(t, path)
	name := vectors.Point{Path: "k.md", Ordinal: vectors.NameOrdinal, Hash: vectors.NameHash("Kettle"), NoteHash: "n-k", Vector: []float32{0, 0, 1, 1}}
	body := vectors.Point{Path: "k.md", Ordinal: 0, Hash: "h-k-0", NoteHash: "n-k", Heading: "Boiling", Vector: []float32{0, 1, 0, 0}}
	if err := ix.Upsert(ctx, name, body); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	re := mustOpen(t, path)
	hits, err := re.SearchNotes(ctx, []float32{0, 0, 1, 1}, 1, vectors.Filter{})
	if err != nil || len(hits) != 1 || hits[0].Path != "k.md" || hits[0].Ordinal != vectors.NameOrdinal {
		t.Errorf("SearchNotes after reopen = %+v, %v; want k.md at the name ordinal", hits, err)
	}
	if h, _ := re.Hashes(ctx, "k.md"); len(h) != 2 || h[vectors.NameHash("Kettle")] == nil {
		t.Errorf("Hashes after reopen = %v", h)
	}
}

func TestReopen(t *testing.T) {
	path := fixtureFile(t)
	ix := mustOpen(t, path)
	if err := ix.LoadError(); err != nil {
		t.Fatalf("LoadError = %v", err)
	}
	if sp, _ := ix.Space(ctx); sp != vectorstest.Space {
		t.Errorf("Space after reopen = %+v", sp)
	}
	if n := ix.Len(); n != len(vectorstest.Fixture()) {
		t.Errorf("Len after reopen = %d", n)
	}
	hits, err := ix.Search(ctx, vectorstest.X, 3, vectors.Filter{Tags: []string{"garden"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"garden/tomatoes.md#0", "garden/tomatoes.md#1", "garden/herbs/basil.md#0"}
	var got []string
	for _, h := range hits {
		got = append(got, fmt.Sprintf("%s#%d", h.Path, h.Ordinal))
	}
	if !slices.Equal(got, want) || hits[1].Heading != "Soil" {
		t.Errorf("Search after reopen = %v, want %q", hits, want)
	}
	h, _ := ix.Hashes(ctx, "work/plan.md")
	if len(h) != 2 || h["h-work/plan.md-1"] == nil {
		t.Errorf("Hashes after reopen = %v", h)
	}

	// Edits after reopen persist too; an unchanged index is not rewritten.
	st1, _ := os.Stat(path)
	if err := ix.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(path); !os.SameFile(st1, st2) {
		t.Error("Flush of an unchanged index rewrote the file")
	}
	if err := ix.Delete(ctx, "work/plan.md"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(ctx, vectorstest.X, 1, vectors.Filter{}); err == nil {
		t.Error("Search after Close succeeded")
	}
	if err := ix.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	ix = mustOpen(t, path)
	if p, _ := ix.Notes(ctx); len(p) != 4 || hasKey(p, "work/plan.md") {
		t.Errorf("Paths after delete and reopen = %q", p)
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	if len(matches) != 1 {
		t.Errorf("files beside the index: %q (temporary files left?)", matches)
	}
}

func TestResetPersists(t *testing.T) {
	path := fixtureFile(t)
	ix := mustOpen(t, path)
	next := vectors.Space{Model: "other", Dim: 2}
	if err := ix.Reset(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = mustOpen(t, path)
	if sp, _ := ix.Space(ctx); sp != next || ix.Len() != 0 {
		t.Errorf("after Reset and reopen: Space %+v, %d points", sp, ix.Len())
	}
}

func TestBadFiles(t *testing.T) {
	good, err := os.ReadFile(fixtureFile(t))
	if err != nil {
		t.Fatal(err)
	}
	otherVersion := slices.Clone(good)
	binary.LittleEndian.PutUint32(otherVersion[len(magic):], fileVersion+1)
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	cases := map[string][]byte{
		"empty":         {},
		"garbage":       []byte("not a vector file at all, just some text"),
		"magic only":    []byte(magic),
		"other version": otherVersion,
		"truncated":     good[:len(good)-9],
		"bit flip":      flipped,
		"trailing":      append(slices.Clone(good), 0),
		"huge count":    append([]byte(magic), 1, 0, 0, 0, 4, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vectors.bin")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			ix := mustOpen(t, path)
			if ix.LoadError() == nil {
				t.Error("LoadError = nil for a bad file")
			}
			if sp, _ := ix.Space(ctx); sp != (vectors.Space{}) || ix.Len() != 0 {
				t.Errorf("bad file gave Space %+v and %d points", sp, ix.Len())
			}
			// The index works and its next Flush replaces the bad file.
			if err := ix.Reset(ctx, vectorstest.Space); err != nil {
				t.Fatal(err)
			}
			if err := ix.Upsert(ctx, vectorstest.Fixture()...); err != nil {
				t.Fatal(err)
			}
			if err := ix.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if again := mustOpen(t, path); again.LoadError() != nil || again.Len() != len(vectorstest.Fixture()) {
				t.Errorf("after Flush: LoadError %v, %d points", again.LoadError(), again.Len())
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	// A folder where the file should be is unusable content, not a crash.
	ix := mustOpen(t, dir)
	if ix.LoadError() == nil {
		t.Error("opening a folder: LoadError = nil")
	}
	if err := ix.Reset(ctx, vectorstest.Space); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(ctx); err == nil {
		t.Error("Flush over a folder succeeded")
	}
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: maxDim + 1}); err == nil {
		t.Error("Reset beyond maxDim succeeded")
	}
}

// TestRandomAgainstModel checks search results against brute force after a
// random series of upserts and deletes, with enough points to exercise the
// parallel scan, swap-removal and both ways of resolving filters.
func TestRandomAgainstModel(t *testing.T) {
	const dim = 8
	rng := rand.New(rand.NewPCG(1, 2))
	path := filepath.Join(t.TempDir(), "vectors.bin")
	ix := mustOpen(t, path)
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: dim}); err != nil {
		t.Fatal(err)
	}
	model := map[string][]vectors.Point{}
	randVec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	tagNames := []string{"a", "a/b", "a/b/c", "d", "e/f"}
	for step := range 6000 {
		p := fmt.Sprintf("f%d/n%d.md", rng.IntN(7), rng.IntN(2500))
		if step%5 == 4 {
			delete(model, p)
			if err := ix.Delete(ctx, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		tags := []string{tagNames[rng.IntN(len(tagNames))]}
		var pts []vectors.Point
		for o := range 1 + rng.IntN(5) {
			pts = append(pts, vectors.Point{Path: p, Ordinal: o, Hash: fmt.Sprint(step, o), Tags: tags, Vector: randVec()})
		}
		model[p] = pts
		if err := ix.Upsert(ctx, pts...); err != nil {
			t.Fatal(err)
		}
	}
	var all []vectors.Point
	for _, pts := range model {
		all = append(all, pts...)
	}
	if ix.Len() != len(all) || len(all) <= 2*minChunk {
		t.Fatalf("Len = %d, model has %d points (want > %d)", ix.Len(), len(all), 2*minChunk)
	}
	somePaths := slices.Sorted(func(yield func(string) bool) {
		for p := range model {
			if !yield(p) {
				return
			}
		}
	})
	filters := []vectors.Filter{
		{},
		{Folder: "f3"},
		{PathPrefix: "f1/n1"},
		{Tags: []string{"a/b"}},
		{Tags: []string{"A", "#a/b/c"}, Folder: "f2"},
		{Paths: somePaths[:20]},
		{Paths: somePaths[:len(somePaths)/2], Tags: []string{"a"}}, // large: resolved by scanning
	}
	check := func(t *testing.T, ix *Index) {
		for _, f := range filters {
			q := randVec()
			for _, byNote := range []bool{false, true} {
				want := bruteForce(all, q, 25, f, byNote)
				var got []vectors.Hit
				var err error
				if byNote {
					got, err = ix.SearchNotes(ctx, q, 25, f)
				} else {
					got, err = ix.Search(ctx, q, 25, f)
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("filter %+v byNote %v: %d hits, want %d", f.Tags, byNote, len(got), len(want))
				}
				for i := range want {
					if got[i].Path != want[i].Path || got[i].Ordinal != want[i].Ordinal || math.Abs(float64(got[i].Score-want[i].Score)) > 1e-4 {
						t.Fatalf("filter %+v byNote %v: hit %d = %+v, want %+v", f, byNote, i, got[i], want[i])
					}
				}
			}
		}
	}
	check(t, ix)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	check(t, mustOpen(t, path))
}

// bruteForce is the reference search.
func bruteForce(all []vectors.Point, q []float32, k int, f vectors.Filter, byNote bool) []vectors.Hit {
	var hits []vectors.Hit
	for _, p := range all {
		if f.MatchPath(p.Path) && f.MatchTags(vault.ExpandTags(p.Tags)) {
			hits = append(hits, vectors.Hit{Path: p.Path, Ordinal: p.Ordinal, Score: float32(cos(q, p.Vector))})
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if byNote {
		seen := map[string]bool{}
		hits = slices.DeleteFunc(hits, func(h vectors.Hit) bool {
			dup := seen[h.Path]
			seen[h.Path] = true
			return dup
		})
	}
	return hits[:min(k, len(hits))]
}

func cos(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestDot(t *testing.T) {
	for n := range 40 {
		a, b := make([]float32, n), make([]float32, n)
		var want float64
		for i := range n {
			a[i], b[i] = float32(i+1), float32(n-i)
			want += float64(a[i]) * float64(b[i])
		}
		if got := dot(a, b); math.Abs(float64(got)-want) > 1e-3*math.Max(1, want) {
			t.Errorf("dot len %d = %v, want %v", n, got, want)
		}
	}
}

func FuzzLoad(f *testing.F) {
	ix := newIndex("")
	ix.Reset(ctx, vectorstest.Space)
	ix.Upsert(ctx, vectorstest.Fixture()...)
	var seed bytes.Buffer
	if err := ix.write(ctx, &seed); err != nil {
		f.Fatal(err)
	}
	f.Add(seed.Bytes())
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Fix the checksum so the fuzzer reaches the decoder.
		data = slices.Clone(data)
		if len(data) >= 4 {
			binary.LittleEndian.PutUint32(data[len(data)-4:], crcOf(data[:len(data)-4]))
		}
		ix := newIndex("")
		if err := ix.read(bytes.NewReader(data), int64(len(data))); err != nil {
			if _, ok := err.(*formatError); !ok {
				t.Fatalf("read: %v is not a format error", err)
			}
			return
		}
		// What loads writes back the same.
		var out bytes.Buffer
		if err := ix.write(ctx, &out); err != nil {
			t.Fatal(err)
		}
		again := newIndex("")
		if err := again.read(bytes.NewReader(out.Bytes()), int64(out.Len())); err != nil || again.Len() != ix.Len() {
			t.Fatalf("round trip: %v, %d points, want %d", err, again.Len(), ix.Len())
		}
		sp, _ := ix.Space(ctx)
		q := make([]float32, sp.Dim)
		q[0] = 1
		if _, err := ix.SearchNotes(ctx, q, 5, vectors.Filter{Tags: []string{"a"}}); err != nil {
			t.Fatal(err)
		}
		m, _ := ix.Notes(ctx)
		var ps []string
		for p := range m {
			ps = append(ps, p)
		}
		if err := ix.Delete(ctx, ps...); err != nil || ix.Len() != 0 {
			t.Fatalf("Delete all: %v, %d left", err, ix.Len())
		}
	})
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
