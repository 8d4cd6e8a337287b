package config

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// TestLazyText: calls wait for the background open (or their context) and
// then answer from the opened index; a failed open is every call's error
// and closes without one.
func TestLazyText(t *testing.T) {
	gate := make(chan struct{})
	path := filepath.Join(t.TempDir(), "index.db")
	l := lazyText{openInBackground(begun(), func() {}, func() (textindex.Index, error) {
		<-gate
		return embedded.Open(path)
	})}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	if _, err := l.Paths(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Paths before the open: %v, want to wait until the deadline", err)
	}
	close(gate)
	if err := l.Upsert(t.Context(), textindex.Doc{Path: "a.md", Title: "Alpha", Body: "lantern"}); err != nil {
		t.Fatal(err)
	}
	if paths, err := l.Paths(t.Context()); err != nil || len(paths) != 1 {
		t.Fatalf("paths: %v, %v", paths, err)
	}
	if err := l.Delete(t.Context(), "a.md"); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	bad := lazyText{openInBackground(begun(), func() {}, func() (textindex.Index, error) {
		return nil, errors.New("opening the text index: disk on fire")
	})}
	if _, err := bad.Search(t.Context(), textindex.Query{}, textindex.Options{}); err == nil || err.Error() != "opening the text index: disk on fire" {
		t.Errorf("search after a failed open: %v", err)
	}
	if _, err := bad.Ask(t.Context(), textindex.Question{}, textindex.Options{}); err == nil {
		t.Error("ask after a failed open: no error")
	}
	if err := bad.Close(); err != nil {
		t.Errorf("closing a failed open: %v", err)
	}
}

// TestOpeningReportsTheTextIndex: a lazily opened vault whose embedded
// index cannot be opened says so from Opening (serve then refuses to
// start, as it did when the index opened first); one that opens, nil.
func TestOpeningReportsTheTextIndex(t *testing.T) {
	c := &Config{NoAudit: true, History: "off"}
	broken := t.TempDir()
	if err := os.Mkdir(filepath.Join(broken, "index.db"), 0o755); err != nil { // a folder where the database goes
		t.Fatal(err)
	}
	released := make(chan struct{})
	close(released)
	site := func(disk string) *Site {
		return &Site{Root: "r", ID: "v", Disk: disk, Live: live, Snapshots: &heldSnapshots{release: released, cat: vault.NewCatalog()}}
	}
	o, err := build(t.Context(), c, site(broken), slog.New(slog.DiscardHandler), true)
	if err != nil {
		t.Fatalf("build: %v (the open is in the background; Opening reports it)", err)
	}
	if err := o.Opening(t.Context()); err == nil || !strings.Contains(err.Error(), "opening the text index") {
		t.Errorf("Opening with a folder for index.db: %v", err)
	}
	o.Close()
	ok, err := build(t.Context(), c, site(t.TempDir()), slog.New(slog.DiscardHandler), true)
	if err != nil {
		t.Fatal(err)
	}
	defer ok.Close()
	if err := ok.Opening(t.Context()); err != nil {
		t.Errorf("Opening a fresh index: %v", err)
	}
}
