package indexer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

func TestReindex(t *testing.T) {
	f := newFixture(t, map[string]string{"a.md": "# A\n[[b]]\n", "b.md": "# B\n"})
	ctx := context.Background()
	if _, err := f.ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	write(t, f.dir, "c.md", "# C\nquokka [[a]]\n")
	if err := os.Remove(filepath.Join(f.dir, "b.md")); err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Reindex(ctx, "c.md", "b.md", ".sheaf/x.json", "../bad"); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.ix.Catalog.Note("c.md"); !ok || len(f.search(t, "quokka")) != 1 {
		t.Error("Reindex did not index the new note")
	}
	if _, ok := f.ix.Catalog.Note("b.md"); ok {
		t.Error("Reindex kept a deleted note")
	}
	// The watcher's event for the same write then changes nothing.
	g := f.ix.Catalog.Generation()
	if err := f.ix.Apply(ctx, "c.md"); err != nil || f.ix.Catalog.Generation() != g {
		t.Errorf("the event after Reindex changed the catalog: %v", err)
	}
	// During a Sync, Reindex does not wait: the paths are applied after it.
	f.ix.mu.Lock()
	write(t, f.dir, "d.md", "# D\n")
	if err := f.ix.Reindex(ctx, "d.md"); !errors.Is(err, ErrReindexLater) {
		t.Errorf("Reindex during a Sync: %v", err)
	}
	f.ix.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := f.ix.Catalog.Note("d.md"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("d.md was never indexed after the Sync")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOverlay is a cloud handler writing: its catalog shows its writes at
// once, says they lag the shared snapshot, and settles when the indexer has
// saved them.
func TestOverlay(t *testing.T) {
	dir, st, text := localVault(t, map[string]string{"a.md": "# A\n", "b.md": "# B\n[[a]]\n"})
	ctx := context.Background()
	shared := &Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: &catalogstore.Snapshots{Store: st}}
	if _, err := shared.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	base := &catalogstore.Catalogs{Store: st, MaxAge: time.Nanosecond}
	o := &Overlay{Base: base, Store: st, Text: text}
	// The handler writes c.md and deletes b.md.
	if _, err := st.Put(ctx, "c.md", []byte("# C\nwombat [[a]]\n"), store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "b.md", ""); err != nil {
		t.Fatal(err)
	}
	if err := o.Reindex(ctx, "c.md", "b.md"); err != nil {
		t.Fatal(err)
	}
	cat, err := o.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Note("c.md"); !ok {
		t.Error("the overlay does not show the handler's new note")
	}
	if _, ok := cat.Note("b.md"); ok {
		t.Error("the overlay still shows the deleted note")
	}
	if bl := cat.Backlinks("a.md"); len(bl) != 1 || bl[0].Source != "c.md" {
		t.Errorf("backlinks through the overlay: %+v", bl)
	}
	baseCat, _ := base.Catalog(ctx)
	if _, ok := baseCat.Note("c.md"); ok {
		t.Fatal("the shared snapshot changed by itself")
	}
	if lags := o.Lagging(); len(lags) != 2 {
		t.Errorf("lagging %+v, want c.md and b.md", lags)
	}
	again, _ := o.Catalog(ctx)
	if again != cat {
		t.Error("the merged catalog is rebuilt on every call")
	}
	// The shared catalog changes in place (a handler applies new segments
	// to it): the overlay shows that change too, with its own writes.
	baseCat.Upsert(vault.Note{Path: "d.md", Name: "d"})
	if cat, _ := o.Catalog(ctx); !hasNote(cat, "d.md") || !hasNote(cat, "c.md") {
		t.Error("the overlay hides a change of the shared catalog made in place")
	}
	baseCat.Remove("d.md")
	// The indexer processes the events and saves the snapshot.
	for _, p := range []string{"c.md", "b.md"} {
		if err := shared.Apply(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := shared.Save(ctx); err != nil {
		t.Fatal(err)
	}
	cat, err = o.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lags := o.Lagging(); len(lags) != 0 {
		t.Errorf("still lagging after the snapshot caught up: %+v", lags)
	}
	if _, ok := cat.Note("c.md"); !ok {
		t.Error("c.md missing once settled")
	}
	_ = dir
}

func hasNote(c *vault.Catalog, p string) bool {
	_, ok := c.Note(p)
	return ok
}

// An overlay gives its base's summary while no write of its own is
// pending; with one pending it loads the catalog.
func TestOverlaySummary(t *testing.T) {
	ctx := context.Background()
	fsStore, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := vault.NewCatalog()
	c.Upsert(vault.Note{Path: "a.md"})
	if err := (&catalogstore.Snapshots{Store: fsStore}).Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	o := &Overlay{Base: &catalogstore.Catalogs{Store: fsStore}, Store: fsStore}
	if _, ok, _ := o.Summary(ctx); !ok {
		t.Error("an overlay with no writes pending gives no summary")
	}
	o.pending = map[string]overlayWrite{"new.md": {at: time.Now()}}
	if _, ok, _ := o.Summary(ctx); ok {
		t.Error("an overlay with a write pending gave the shared summary")
	}
}
