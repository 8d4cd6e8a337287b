package indexer

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/history/folder"
)

// TestHistoryObserver: changes made outside Sheaf to notes history holds
// become versions by the external author, as the indexer sees them.
func TestHistoryObserver(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{"n.md": "by sheaf\n", "other.md": "never written by sheaf\n"})
	h, err := folder.Open(t.TempDir(), folder.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	f.ix.History = h
	alice := history.Author{Subject: "key:a", Name: "alice"}
	if _, err := h.Record(ctx, history.Change{Path: "n.md", Op: history.OpWrite, Data: []byte("by sheaf\n"), Author: alice}); err != nil {
		t.Fatal(err)
	}
	ops := func(p string) []string {
		pg, err := h.List(ctx, p, history.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range pg.Versions {
			out = append(out, string(v.Op)+"/"+v.Author.Subject)
		}
		return out
	}
	if _, err := f.ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := ops("n.md"); len(got) != 1 {
		t.Errorf("after a sync that saw what Sheaf wrote: %q", got)
	}
	time.Sleep(10 * time.Millisecond)
	indexertest.Write(t, f.dir, "n.md", "edited in an editor\n")
	indexertest.Write(t, f.dir, "other.md", "edited too\n")
	for _, p := range []string{"n.md", "other.md"} {
		if err := f.ix.Apply(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := ops("n.md"); len(got) != 2 || got[0] != "external/external" {
		t.Errorf("after an external edit: %q", got)
	}
	if got := ops("other.md"); len(got) != 0 {
		t.Errorf("a note history never held got versions: %q", got)
	}
	data, _, err := h.Read(ctx, "n.md", mustList(t, h, "n.md")[0].ID)
	if err != nil || string(data) != "edited in an editor\n" {
		t.Errorf("the external version reads %q, %v", data, err)
	}
	// Deleted outside Sheaf, seen by an event.
	os.Remove(filepath.Join(f.dir, "n.md"))
	if err := f.ix.Apply(ctx, "n.md"); err != nil {
		t.Fatal(err)
	}
	if got := ops("n.md"); len(got) != 3 || got[0] != "delete/external" {
		t.Errorf("after an external delete: %q", got)
	}
	// Re-created, then deleted while no one watched: the next sync sees it.
	indexertest.Write(t, f.dir, "n.md", "back\n")
	if err := f.ix.Apply(ctx, "n.md"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(f.dir, "n.md"))
	ix2 := &Indexer{Store: f.ix.Store, Catalog: f.ix.Catalog, Text: f.ix.Text, History: h, MaxNoteBytes: 1 << 20}
	if _, err := ix2.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := ops("n.md"); len(got) != 5 || got[0] != "delete/external" || got[1] != "external/external" {
		t.Errorf("after a sync that found it gone: %q", got)
	}
}

func mustList(t *testing.T, h history.Store, p string) []history.Version {
	t.Helper()
	pg, err := h.List(context.Background(), p, history.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pg.Versions
}
