package indexer

import (
	"context"
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

func TestStoreCatalogsMissing(t *testing.T) {
	ctx := context.Background()
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cats := &StoreCatalogs{Store: st, MaxAge: time.Nanosecond}
	if _, err := cats.Catalog(ctx); err != nil || !cats.Missing() {
		t.Fatalf("no snapshot: missing %v, %v", cats.Missing(), err)
	}
	if err := (&StoreSnapshots{Store: st}).Save(ctx, catalogWith("a.md")); err != nil {
		t.Fatal(err)
	}
	if c, err := cats.Catalog(ctx); err != nil || c.Len() != 1 || cats.Missing() {
		t.Fatalf("after the first save: %v, %v, missing %v", c, err, cats.Missing())
	}
}

func TestStoreCatalogs(t *testing.T) {
	ctx := context.Background()
	fsStore, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: fsStore, delay: 20 * time.Millisecond}
	cats := &StoreCatalogs{Store: st, MaxAge: time.Hour}

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

	writer := &StoreSnapshots{Store: fsStore}
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

	// A cold cache under concurrent load: one Stat and one Get in all.
	cold := &countingStore{Store: fsStore, delay: 20 * time.Millisecond}
	cats = &StoreCatalogs{Store: cold, MaxAge: time.Hour}
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
	if bad.Load() != 0 || cold.stats.Load() != 1 || cold.gets.Load() != 1 {
		t.Errorf("cold load: %d bad answers, %d Stat, %d Get; want 0, 1, 1", bad.Load(), cold.stats.Load(), cold.gets.Load())
	}

	// Warm, under sustained concurrent load, with the snapshot changing:
	// at most one Stat per MaxAge, and every change is seen.
	const maxAge = 20 * time.Millisecond
	warm := &countingStore{Store: fsStore}
	cats = &StoreCatalogs{Store: warm, MaxAge: maxAge}
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
	cats = &StoreCatalogs{Store: &countingStore{Store: fsStore, delay: 50 * time.Millisecond}}
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if _, err := cats.Catalog(short); err == nil {
		t.Errorf("cancelled caller got no error")
	}
	if c, err := cats.Catalog(ctx); err != nil || c.Len() != 2 {
		t.Errorf("after a cancelled caller: %v %v", c, err)
	}
}
