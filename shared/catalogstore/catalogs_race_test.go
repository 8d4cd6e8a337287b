package catalogstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	s3store "github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
)

// TestCatalogsConcurrentRewrites rewrites the snapshot in a real
// versitygw bucket while readers revalidate it continuously: every catalog
// a reader gets is one whole generation, never a mix or a torn read.
func TestCatalogsConcurrentRewrites(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	srv.CreateBucket(t, "cats")
	st := s3store.New(srv.Client(t), "cats", "vault")
	// Bounded by work, not time: on a loaded machine a 3 s window saw a
	// single rewrite. The writer saves 12 generations; readers revalidate
	// until it is done.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	writing := make(chan struct{})

	const notes = 2000
	gen := func(g int) []string {
		ps := make([]string, notes)
		for i := range ps {
			ps[i] = fmt.Sprintf("g%d/%s note %d.md", g, strings.Repeat("x", i%40), i)
		}
		return ps
	}
	snaps := &Snapshots{Store: st}
	if err := snaps.Save(ctx, catalogWith(gen(0)...)); err != nil {
		t.Fatal(err)
	}
	var wrote atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(writing)
		for g := 1; ctx.Err() == nil && g <= 12; g++ {
			if err := snaps.Save(ctx, catalogWith(gen(g)...)); err != nil {
				if ctx.Err() == nil {
					t.Errorf("save %d: %v", g, err)
				}
				return
			}
			wrote.Add(1)
		}
	}()
	var seen sync.Map
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cats := &Catalogs{Store: st, MaxAge: time.Nanosecond}
			for ctx.Err() == nil {
				select {
				case <-writing:
					return
				default:
				}
				c, err := cats.Catalog(ctx)
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("reader %d: %v", r, err)
					}
					return
				}
				ns := c.Notes()
				if len(ns) != notes {
					t.Errorf("reader %d: %d notes, want %d", r, len(ns), notes)
					return
				}
				g, _, _ := strings.Cut(ns[0].Path, "/")
				for _, n := range ns {
					if !strings.HasPrefix(n.Path, g+"/") {
						t.Errorf("reader %d: mixed catalog: %s and %s", r, ns[0].Path, n.Path)
						return
					}
				}
				seen.Store(g, true)
			}
		}()
	}
	wg.Wait()
	n := 0
	seen.Range(func(any, any) bool { n++; return true })
	if wrote.Load() < 2 || n < 2 {
		t.Errorf("%d rewrites, %d generations seen: the test proves nothing", wrote.Load(), n)
	}
}
