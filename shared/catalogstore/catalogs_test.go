package catalogstore

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// countingStore counts Stat and Get calls.
type countingStore struct {
	store.Store
	stats, gets atomic.Int64
	delay       time.Duration // per Get, to let callers pile up
}

func (s *countingStore) Stat(ctx context.Context, p string) (store.Object, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, p)
}

func (s *countingStore) Get(ctx context.Context, p string, max int64) ([]byte, store.Object, error) {
	s.gets.Add(1)
	time.Sleep(s.delay)
	return s.Store.Get(ctx, p, max)
}

func catalogWith(paths ...string) *vault.Catalog {
	c := vault.NewCatalog()
	for _, p := range paths {
		c.Upsert(vault.Note{Path: p})
	}
	return c
}

func TestCatalogsMissing(t *testing.T) {
	ctx := context.Background()
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cats := &Catalogs{Store: st, MaxAge: time.Nanosecond}
	if _, err := cats.Catalog(ctx); err != nil || !cats.Missing() {
		t.Fatalf("no snapshot: missing %v, %v", cats.Missing(), err)
	}
	if err := (&Snapshots{Store: st}).Save(ctx, catalogWith("a.md")); err != nil {
		t.Fatal(err)
	}
	if c, err := cats.Catalog(ctx); err != nil || c.Len() != 1 || cats.Missing() {
		t.Fatalf("after the first save: %v, %v, missing %v", c, err, cats.Missing())
	}
}

func TestCatalogs(t *testing.T) {
	ctx := context.Background()
	fsStore, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: fsStore, delay: 20 * time.Millisecond}
	cats := &Catalogs{Store: st, MaxAge: time.Hour}

	// No snapshot yet: an empty catalog, no error, and Missing says why.
	if cats.Missing() {
		t.Error("Missing before any load")
	}
	c, err := cats.Catalog(ctx)
	if err != nil || c == nil || c.Len() != 0 {
		t.Fatalf("fresh deployment: %v %v", c, err)
	}
	if !cats.Missing() {
		t.Error("a fresh deployment's catalog must say the snapshot is missing")
	}

	writer := &Snapshots{Store: fsStore}
	if err := writer.Save(ctx, catalogWith("a.md")); err != nil {
		t.Fatal(err)
	}
	// Within MaxAge the cached catalog is served without a Stat.
	before := st.stats.Load()
	if c, _ := cats.Catalog(ctx); c.Len() != 0 || st.stats.Load() != before {
		t.Errorf("revalidated before MaxAge")
	}
	cats.MaxAge = 10 * time.Millisecond
	time.Sleep(20 * time.Millisecond)
	if c, _ := cats.Catalog(ctx); c.Len() != 1 {
		t.Errorf("change not seen after MaxAge: %d notes", c.Len())
	}
	// Unchanged: a Stat, no Get, the same catalog.
	first, _ := cats.Catalog(ctx)
	gets := st.gets.Load()
	time.Sleep(20 * time.Millisecond)
	if c, _ := cats.Catalog(ctx); c != first || st.gets.Load() != gets {
		t.Errorf("unchanged snapshot reloaded")
	}

	// A cold cache under concurrent load: one read of the manifest and one
	// of its segment in all.
	cold := &countingStore{Store: fsStore, delay: 20 * time.Millisecond}
	cats = &Catalogs{Store: cold, MaxAge: time.Hour}
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, err := cats.Catalog(ctx); err != nil || c.Len() != 1 {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 || cold.stats.Load() != 0 || cold.gets.Load() != 2 {
		t.Errorf("cold load: %d bad answers, %d Stat, %d Get; want 0, 0, 2", bad.Load(), cold.stats.Load(), cold.gets.Load())
	}

	// Warm, under sustained concurrent load, with the snapshot changing:
	// at most one Stat per MaxAge, and every change is seen.
	const maxAge = 20 * time.Millisecond
	warm := &countingStore{Store: fsStore}
	cats = &Catalogs{Store: warm, MaxAge: maxAge}
	if _, err := cats.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stop := make(chan struct{})
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := cats.Catalog(ctx); err != nil {
					bad.Add(1)
				}
			}
		}()
	}
	if _, err := writer.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := writer.Save(ctx, catalogWith("a.md", "b.md")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * maxAge)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	if limit := int64(elapsed/maxAge) + 2; warm.stats.Load() > limit {
		t.Errorf("%d Stat calls in %v, more than one per %v", warm.stats.Load(), elapsed, maxAge)
	}
	if c, _ := cats.Catalog(ctx); bad.Load() != 0 || c.Len() != 2 {
		t.Errorf("after a change: %d notes, %d errors", c.Len(), bad.Load())
	}

	// A caller that gives up does not spoil the load for the others.
	cats = &Catalogs{Store: &countingStore{Store: fsStore, delay: 50 * time.Millisecond}}
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if _, err := cats.Catalog(short); err == nil {
		t.Errorf("cancelled caller got no error")
	}
	if c, err := cats.Catalog(ctx); err != nil || c.Len() != 2 {
		t.Errorf("after a cancelled caller: %v %v", c, err)
	}
}

// A cold reader gives the catalog's summary from the manifest alone (one
// read), the same summary the writer's catalog gives; once the catalog is
// loaded, it says to use the catalog. With Preload, Prefetch loads it in
// the background.
func TestCatalogsSummary(t *testing.T) {
	ctx := context.Background()
	fsStore, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := catalogWith("a.md", "Index.md", "b/c.md")
	c.Upsert(vault.Note{Path: "todo.md", Directives: []vault.Directive{{Title: "x"}, {Title: "y", Done: true}}})
	c.SetProblem("huge.md", "too large: not indexed")
	c.SetIndexedAt(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	writer := &Snapshots{Store: fsStore}
	if err := writer.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	want := c.Summary()
	if want.Notes != 4 || !want.HasIndex || want.PendingDirectives != 1 || want.Unindexed != 1 || len(want.Problems) != 1 {
		t.Fatalf("writer's summary: %+v", want)
	}

	st := &countingStore{Store: fsStore}
	cats := &Catalogs{Store: st, MaxAge: time.Hour}
	got, ok, err := cats.Summary(ctx)
	if err != nil || !ok {
		t.Fatalf("cold Summary: %v, %v", ok, err)
	}
	if !got.IndexedAt.Equal(want.IndexedAt) {
		t.Errorf("indexed at %v, want %v", got.IndexedAt, want.IndexedAt)
	}
	got.IndexedAt = want.IndexedAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary from the manifest %+v, want %+v", got, want)
	}
	if n := st.gets.Load(); n != 1 {
		t.Errorf("a cold summary read %d objects, want the manifest alone", n)
	}
	if _, ok, _ := cats.Summary(ctx); !ok || st.gets.Load() != 1 {
		t.Errorf("a second summary within MaxAge read again (%d reads)", st.gets.Load())
	}
	if _, err := cats.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := cats.Summary(ctx); ok || err != nil {
		t.Errorf("with the catalog loaded: Summary ok %v, %v; want the catalog used", ok, err)
	}

	prefetching := &Catalogs{Store: fsStore, MaxAge: time.Hour, Preload: true}
	if _, ok, _ := prefetching.Summary(ctx); !ok {
		t.Fatal("prefetching reader: no summary")
	}
	(&Catalogs{Store: fsStore}).Prefetch(ctx) // without Preload: nothing
	prefetching.Prefetch(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ok, _ := prefetching.Summary(ctx); !ok {
			break // loaded
		}
		if time.Now().After(deadline) {
			t.Fatal("Prefetch did not load the catalog")
		}
	}

}

// A manifest written before summaries (version 3) gives none: the reader
// loads the catalog.
func TestCatalogsSummaryOfAnOlderManifest(t *testing.T) {
	ctx := context.Background()
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writer := &Snapshots{Store: st}
	if err := writer.Save(ctx, catalogWith("a.md")); err != nil {
		t.Fatal(err)
	}
	f := writer.files()
	m, etag, _, err := f.readManifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.Summary = nil
	if _, err := f.writeManifest(ctx, m, etag); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := (&Catalogs{Store: st}).Summary(ctx); ok || err != nil {
		t.Errorf("Summary of a manifest without one: ok %v, %v", ok, err)
	}
}
