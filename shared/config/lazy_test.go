package config

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// heldSnapshots is a saved catalog whose Load waits for release.
type heldSnapshots struct {
	release chan struct{}
	cat     *vault.Catalog
	loads   atomic.Int32 // Loads started
}

func (h *heldSnapshots) Load(context.Context) (*vault.Catalog, error) {
	h.loads.Add(1)
	<-h.release
	return h.cat, nil
}
func (h *heldSnapshots) Save(context.Context, *vault.Catalog) error { return nil }

// live is a Site.Live as the folder site's: the indexer's status, and the
// load of the saved catalog into it.
func live(ctx context.Context, o *Opened, _ *Config, _ *slog.Logger) func() {
	o.Vault.Status = func() core.IndexStatus { return core.IndexStatus{State: o.Indexer.Status().State} }
	return func() {
		if cat, _ := o.Site.Snapshots.Load(ctx); cat != nil {
			o.Indexer.Catalog = cat
		}
	}
}

// TestOpenLazilyWaitsForTheCatalog: until a live site's saved catalog is
// loaded the status says "starting" and a tool's catalog or reindex waits
// (here until its context ends) rather than answering from an empty
// catalog; Build returns with it loaded.
func TestOpenLazilyWaitsForTheCatalog(t *testing.T) {
	saved := vault.NewCatalog()
	for _, p := range []string{"a.md", "b.md", "c.md"} {
		saved.Upsert(vault.Note{Path: p})
	}
	c := &Config{Search: "http://127.0.0.1:1", NoAudit: true}
	snaps := &heldSnapshots{release: make(chan struct{}), cat: saved}
	o, err := build(t.Context(), c, &Site{Root: "r", ID: "v", Live: live, Snapshots: snaps}, slog.New(slog.DiscardHandler), true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if st := o.Vault.Status(); st.State != "starting" {
		t.Errorf("status before the load: %q, want starting", st.State)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if cat, err := o.Vault.Catalogs.Catalog(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("catalog before the load: %v, %v; want to wait until the deadline", cat, err)
	}
	if err := o.Vault.Reindex.Reindex(ctx, "a.md"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("reindex before the load: %v; want to wait until the deadline", err)
	}
	close(snaps.release)
	cat, err := o.Vault.Catalogs.Catalog(t.Context())
	if err != nil || cat.Len() != 3 {
		t.Fatalf("catalog after the load: %v, %v; want 3 notes", cat, err)
	}
	<-o.Loaded()

	held := &heldSnapshots{release: make(chan struct{}), cat: saved}
	close(held.release)
	eager, err := Build(t.Context(), c, &Site{Root: "r", ID: "v", Live: live, Snapshots: held}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer eager.Close()
	select {
	case <-eager.Loaded():
	default:
		t.Error("Build returned before the catalog was loaded")
	}
	if n := eager.Indexer.Catalog.Len(); n != 3 {
		t.Errorf("Build's catalog: %d notes, want 3", n)
	}
}

// TestOpenLazilyLoadsAfterBegin: a lazily opened vault reads nothing
// before Begin (the server's answer to initialize comes first), and a call
// that needs the catalog begins the load itself rather than wait forever.
func TestOpenLazilyLoadsAfterBegin(t *testing.T) {
	saved := vault.NewCatalog()
	saved.Upsert(vault.Note{Path: "a.md"})
	c := &Config{Search: "http://127.0.0.1:1", NoAudit: true}
	snaps := &heldSnapshots{release: make(chan struct{}), cat: saved}
	close(snaps.release)
	o, err := build(t.Context(), c, &Site{Root: "r", ID: "v", Live: live, Snapshots: snaps}, slog.New(slog.DiscardHandler), true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	time.Sleep(20 * time.Millisecond) // room for a load that should not start
	if n := snaps.loads.Load(); n != 0 {
		t.Fatalf("%d loads before Begin, want 0", n)
	}
	if st := o.Vault.Status(); st.State != "starting" {
		t.Errorf("status before Begin: %q, want starting", st.State)
	}
	cat, err := o.Vault.Catalogs.Catalog(t.Context()) // begins
	if err != nil || cat.Len() != 1 {
		t.Fatalf("catalog: %v, %v; want 1 note", cat, err)
	}
	o.Begin() // again: a no-op
	if n := snaps.loads.Load(); n != 1 {
		t.Errorf("%d loads, want 1", n)
	}

	// Close begins and waits too: an unbegun vault closes.
	idle, err := build(t.Context(), c, &Site{Root: "r", ID: "v", Live: live, Snapshots: snaps}, slog.New(slog.DiscardHandler), true)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- idle.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close of a vault never begun did not return: it waits for a load nobody began")
	}
}

// TestServerWarmsItsCatalog: a lazily opened vault restarted over a saved
// catalog builds its query indexes once loaded (and its start-up pass, if
// any, is over), so that its first question does not.
func TestServerWarmsItsCatalog(t *testing.T) {
	released := make(chan struct{})
	close(released)
	open := func(cat *vault.Catalog) *Opened {
		t.Helper()
		site := &Site{Root: "r", ID: "v", Disk: t.TempDir(), Live: live, Snapshots: &heldSnapshots{release: released, cat: cat}}
		o, err := build(t.Context(), &Config{NoAudit: true, History: "off"}, site, slog.New(slog.DiscardHandler), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		o.Begin()
		<-o.Loaded()
		return o
	}
	saved := vault.NewCatalog()
	saved.Upsert(vault.Note{Path: "a.md", Title: "A", Links: []vault.Link{{Target: "b"}}, Tags: []string{"x"}})
	var snap bytes.Buffer
	if err := saved.WriteSnapshot(&snap); err != nil {
		t.Fatal(err)
	}
	saved, err := vault.ReadSnapshot(&snap) // as loaded: no index built
	if err != nil {
		t.Fatal(err)
	}
	if saved.Warmed() {
		t.Fatal("a catalog read back has its indexes built already: the test proves nothing")
	}
	o := open(saved)
	deadline := time.Now().Add(5 * time.Second)
	for !o.Indexer.Catalog.Warmed() {
		if time.Now().After(deadline) {
			t.Fatal("the loaded catalog's indexes were not built")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
