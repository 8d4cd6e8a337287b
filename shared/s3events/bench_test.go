package s3events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	iofs "io/fs"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	s3store "github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// BenchmarkHandleS3Events indexes a generated 1,000-note vault from S3
// events, as the indexer Lambda does: SQS batches of ten AWS-style
// notifications, each batch applied and the catalog snapshot saved
// (conditionally) in the store. The store is a versitygw bucket when
// versitygw is installed (see s3test), else the fs store.
func BenchmarkHandleS3Events(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "v")
	notes := 1000 // SHEAF_BENCH_EVENT_NOTES=10000 measures a bigger bulk upload
	if n, err := strconv.Atoi(os.Getenv("SHEAF_BENCH_EVENT_NOTES")); err == nil && n > 0 {
		notes = n
	}
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: notes, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	var (
		st      store.Store
		keyPath func(string) (string, bool)
		prefix  string
	)
	if _, err := s3test.Binary(); err == nil {
		srv := s3test.Start(b, s3test.Options{})
		srv.CreateBucket(b, "bench")
		s3st := s3store.New(srv.Client(b), "bench", "vault")
		st, keyPath, prefix = s3st, s3st.Path, "vault/"
		uploadDir(b, st, dir)
		b.Log("store: versitygw")
	} else {
		fsst, err := fs.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		st = fsst
		b.Log("store: fs (versitygw not installed)")
	}
	var paths []string
	if err := st.List(context.Background(), "", func(o store.Object) error {
		paths = append(paths, o.Path)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	// SQS hands the function up to 10 messages, or up to 10,000 with a
	// batching window (template.yaml uses 100): every batch costs one
	// snapshot save, so bigger batches amortise it.
	for _, size := range []int{10, 100} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			benchHandle(b, st, keyPath, prefix, paths, size)
		})
	}
}

func benchHandle(b *testing.B, st store.Store, keyPath func(string) (string, bool), prefix string, paths []string, size int) {
	var batches [][]byte
	for i := 0; i < len(paths); i += size {
		var bodies []string
		for _, p := range paths[i:min(i+size, len(paths))] {
			bodies = append(bodies, string(awsRecord(prefix+p)))
		}
		batches = append(batches, sqsBatch(b, bodies...))
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := st.Delete(ctx, catalogstore.DefaultCatalogDir+catalogstore.ManifestName, ""); err != nil {
			b.Fatal(err)
		}
		text, err := embedded.Open(filepath.Join(b.TempDir(), "index.db"))
		if err != nil {
			b.Fatal(err)
		}
		ix := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: &catalogstore.Snapshots{Store: st}, KeyPath: keyPath}
		b.StartTimer()
		start := time.Now()
		for _, batch := range batches {
			out, err := Handle(ctx, ix, batch)
			if err != nil || len(out.(events.SQSEventResponse).BatchItemFailures) > 0 {
				b.Fatalf("batch: %+v %v", out, err)
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		if ix.Catalog.Len() < len(paths)*99/100 {
			b.Fatalf("indexed %d notes", ix.Catalog.Len())
		}
		b.ReportMetric(float64(ix.Catalog.Len())/elapsed.Seconds(), "notes/s")
		text.Close()
	}
}

// awsRecord is an AWS S3 notification for key (form-encoded, as AWS does).
func awsRecord(key string) []byte {
	out, _ := json.Marshal(map[string]any{"Records": []any{map[string]any{
		"eventVersion": "2.1", "eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
		"s3": map[string]any{"bucket": map[string]any{"name": "bench", "arn": "arn:aws:s3:::bench"},
			"object": map[string]any{"key": url.QueryEscape(key)}},
	}}})
	return out
}

// uploadDir copies a folder into st, 16 files at a time.
func uploadDir(b *testing.B, st store.Store, dir string) {
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	var wg sync.WaitGroup
	jobs := make(chan string)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				data, err := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				if err == nil {
					_, err = st.Put(context.Background(), filepath.ToSlash(rel), data, store.PutOptions{})
				}
				if err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
}

// BenchmarkBulkIngest is a bulk upload indexed from SQS batches of 100 (as
// template.yaml configures them) in a random order, by one indexer and by
// two racing ones (the template's MaximumConcurrency), then a cold
// handler's first catalog load (its CPU time too: on a shared machine
// the wall time says little). SHEAF_BENCH_INGEST_NOTES sets the size
// (default 10,000; 100000 for the big vault). The vault and the catalog
// segments are in an fs store in /dev/shm and the text index is the
// embedded FTS5 one: the Meilisearch fake deletes stale passages by
// scanning every document, so it would time itself, not the indexer.
func BenchmarkBulkIngest(b *testing.B) {
	notes := 10000
	if n, err := strconv.Atoi(os.Getenv("SHEAF_BENCH_INGEST_NOTES")); err == nil && n > 0 {
		notes = n
	}
	base := ""
	if _, err := os.Stat("/dev/shm"); err == nil {
		base = "/dev/shm"
	}
	tmp, err := os.MkdirTemp(base, "sheaf-ingest-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "v")
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: notes, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	st, err := fs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	if err := st.List(context.Background(), "", func(o store.Object) error {
		paths = append(paths, o.Path)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	var batches [][]byte
	for i := 0; i < len(paths); i += 100 {
		var bodies []string
		for _, p := range paths[i:min(i+100, len(paths))] {
			bodies = append(bodies, string(awsRecord(p)))
		}
		batches = append(batches, sqsBatch(b, bodies...))
	}
	for _, text := range []string{"fts5", "paths-only"} {
		for _, instances := range []int{1, 2} {
			b.Run(fmt.Sprintf("text=%s/instances=%d", text, instances), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					benchIngest(b, st, dir, text, batches, len(paths), instances)
				}
			})
		}
	}
}

// pathsOnly is a text index that keeps only the paths and times it is
// given: the ingest benchmark's "paths-only" lane, which times Sheaf's own
// work (read, parse, catalog, segments) without any search engine's.
type pathsOnly struct {
	mu    sync.Mutex
	paths map[string]time.Time
}

func (p *pathsOnly) Upsert(_ context.Context, docs ...textindex.Doc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range docs {
		p.paths[d.Path] = d.Modified
	}
	return nil
}

func (p *pathsOnly) Delete(_ context.Context, paths ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range paths {
		delete(p.paths, q)
	}
	return nil
}

func (p *pathsOnly) Search(context.Context, textindex.Query, textindex.Options) (textindex.Result, error) {
	return textindex.Result{}, nil
}

func (p *pathsOnly) Ask(context.Context, textindex.Question, textindex.Options) (textindex.Result, error) {
	return textindex.Result{}, nil
}

func (p *pathsOnly) Paths(context.Context) (map[string]time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.paths), nil
}

func (p *pathsOnly) Close() error { return nil }

func benchIngest(b *testing.B, st store.Store, dir, kind string, batches [][]byte, total, instances int) {
	ctx := context.Background()
	b.StopTimer()
	if err := os.RemoveAll(filepath.Join(dir, ".sheaf")); err != nil {
		b.Fatal(err)
	}
	var text textindex.Index = &pathsOnly{paths: map[string]time.Time{}}
	if kind == "fts5" {
		fts, err := embedded.Open(filepath.Join(b.TempDir(), "index.db"))
		if err != nil {
			b.Fatal(err)
		}
		text = fts
	}
	defer text.Close()
	ixs := make([]*indexer.Indexer, instances)
	for i := range ixs {
		ixs[i] = &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: &catalogstore.Snapshots{Store: st}}
	}
	// done[i] is when the i-th batch (in completion order) finished.
	var mu sync.Mutex
	var done []time.Time
	var counts []int
	next := make(chan []byte)
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for _, ix := range ixs {
		wg.Go(func() {
			for batch := range next {
				out, err := Handle(ctx, ix, batch)
				if err != nil || len(out.(events.SQSEventResponse).BatchItemFailures) > 0 {
					b.Errorf("batch: %v %v", out, err)
				}
				mu.Lock()
				done = append(done, time.Now())
				counts = append(counts, bytes.Count(batch, []byte(`"messageId"`)))
				mu.Unlock()
			}
		})
	}
	for _, batch := range batches {
		next <- batch
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	// The first and the last tenth of the notes, by completion time.
	at := func(frac float64) time.Time {
		n := 0
		for i, c := range counts {
			if n += c; float64(n) >= frac*float64(total) {
				return done[i]
			}
		}
		return done[len(done)-1]
	}
	tenth := float64(total) / 10
	// Per-batch durations (one instance), first and last tenth: a median
	// that grows means a cost per batch that grows with the vault; a
	// maximum alone, a merge now and then.
	if instances == 1 && len(done) >= 20 {
		durs := make([]time.Duration, len(done))
		for i := range done {
			prev := start
			if i > 0 {
				prev = done[i-1]
			}
			durs[i] = done[i].Sub(prev)
		}
		k := len(durs) / 10
		for _, part := range []struct {
			name string
			d    []time.Duration
		}{{"first", durs[:k]}, {"last", durs[len(durs)-k:]}} {
			d := slices.Clone(part.d)
			slices.Sort(d)
			b.Logf("%s tenth of batches: p50 %v, p90 %v, max %v", part.name, d[len(d)/2], d[len(d)*9/10], d[len(d)-1])
		}
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "notes/s")
	b.ReportMetric(tenth/at(0.1).Sub(start).Seconds(), "notes/s-first-10%")
	b.ReportMetric(tenth/done[len(done)-1].Sub(at(0.9)).Seconds(), "notes/s-last-10%")
	var saves, retries, reused, turns int
	var segBytes, mergeBytes, maxBytes int64
	for _, ix := range ixs {
		s := ix.Snapshots.(*catalogstore.Snapshots).Stats()
		saves += s.Saves
		reused += s.Reused
		turns += s.Turns
		segBytes += s.SegmentBytes
		mergeBytes += s.MergeBytes
		maxBytes = max(maxBytes, s.MaxSaveBytes)
		retries += int(ix.ConflictRetries())
	}
	b.ReportMetric(float64(segBytes)/float64(saves), "catalog-B/batch")
	b.ReportMetric(float64(maxBytes), "catalog-B/batch-max")
	b.ReportMetric(float64(segBytes+mergeBytes)/float64(total), "catalog-B/note-with-merges")
	b.ReportMetric(float64(retries), "conflict-retries")
	b.ReportMetric(float64(reused), "segments-reused")
	b.ReportMetric(float64(turns), "turns-taken")

	// A cold handler: the first catalog, and the heap it takes.
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0, cpu0 := time.Now(), cpuTime()
	c, err := (&catalogstore.Catalogs{Store: st}).Catalog(ctx)
	cold, coldCPU := time.Since(t0), cpuTime()-cpu0
	if err != nil || c.Len() != total {
		b.Fatalf("cold catalog: %v notes, %v (want %d)", c.Len(), err, total)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(cold.Seconds()*1000, "ms-cold-catalog")
	b.ReportMetric(coldCPU.Seconds()*1000, "ms-cpu-cold-catalog")
	b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/(1<<20), "MB-catalog-heap")
	runtime.KeepAlive(c)
}

// cpuTime is the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
