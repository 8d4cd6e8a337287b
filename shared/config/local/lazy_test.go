package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/config"
)

// holdLoad makes the catalog loads of the test wait until the returned
// func is called.
func holdLoad(t *testing.T) (release func()) {
	gate := make(chan struct{})
	beforeLoad = func() { <-gate }
	t.Cleanup(func() { beforeLoad = nil })
	var done bool
	return func() {
		if !done {
			done = true
			close(gate)
		}
	}
}

// indexedVault is a vault of n notes indexed once (its catalog saved).
func indexedVault(t *testing.T, n int) *config.Config {
	t.Helper()
	c := &config.Config{Vault: t.TempDir(), State: t.TempDir(), NoAudit: true}
	for i := range n {
		if err := os.WriteFile(filepath.Join(c.Vault, fmt.Sprintf("n%d.md", i)), []byte("# N\n\nalpha\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Open(t.Context(), c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Indexer.Sync(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOpenLazilyWaitsForTheCatalog: until the catalog snapshot is loaded
// the status says "starting" and a tool's catalog or reindex waits (here
// until its context ends) rather than answering from an empty catalog.
func TestOpenLazilyWaitsForTheCatalog(t *testing.T) {
	c := indexedVault(t, 3)
	release := holdLoad(t)
	defer release()
	l, err := OpenLazily(t.Context(), c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if st := l.Vault.Status(); st.State != "starting" {
		t.Errorf("status before the load: %q, want starting", st.State)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if cat, err := l.Vault.Catalogs.Catalog(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("catalog before the load: %v, %v; want to wait until the deadline", cat, err)
	}
	if err := l.Vault.Reindex.Reindex(ctx, "n0.md"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("reindex before the load: %v; want to wait until the deadline", err)
	}
	release()
	cat, err := l.Vault.Catalogs.Catalog(t.Context())
	if err != nil || cat.Len() != 3 {
		t.Fatalf("catalog after the load: %v notes, %v; want 3", cat.Len(), err)
	}
	if st := l.Vault.Status(); st.State != "starting" {
		t.Errorf("status before any index pass: %q, want starting", st.State)
	}
}
