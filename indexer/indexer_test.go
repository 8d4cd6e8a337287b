package indexer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

type fixture struct {
	dir string
	ix  *Indexer
}

func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	dir, st, text := localVault(t, files)
	ix := &Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text,
		Snapshots: fileSnaps(t, filepath.Join(t.TempDir(), "catalog.json.gz")), MaxNoteBytes: 1 << 20}
	return &fixture{dir: dir, ix: ix}
}

// localVault writes files into a new folder and opens it (see openLocal).
func localVault(t *testing.T, files map[string]string) (string, *fs.Store, *embedded.Index) {
	t.Helper()
	dir := t.TempDir()
	for p, body := range files {
		write(t, dir, p, body)
	}
	st, text := openLocal(t, dir)
	return dir, st, text
}

// openLocal opens dir as an fs store, next to an in-memory text index
// closed at cleanup.
func openLocal(tb testing.TB, dir string) (*fs.Store, *embedded.Index) {
	tb.Helper()
	st, err := fs.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	text, err := embedded.Open("")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { text.Close() })
	return st, text
}

func write(t *testing.T, dir, p, body string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) search(t *testing.T, q string) []string {
	t.Helper()
	res, err := f.ix.Text.Search(context.Background(), textindex.ParseQuery(q), textindex.Options{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ps []string
	for _, h := range res.Hits {
		ps = append(ps, h.Path)
	}
	return ps
}

func TestSyncIndexesAndReconciles(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{
		"a.md":              "# Alpha\nlinks to [[b]] #tag\n",
		"sub/b.md":          "---\ntitle: Bravo\n---\nbody bravo\n",
		".obsidian/x.md":    "hidden zulu",
		"img/p.png":         "\x89PNG",
		"bin.md":            "\x00\x01binary",
		"huge.md":           strings.Repeat("word ", 300000),
		".trash/deleted.md": "zulu",
	})
	st, err := f.ix.Sync(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Notes != 4 || st.Indexed != 2 || st.Skipped != 2 || st.Attachments != 1 {
		t.Errorf("first sync: %+v", st)
	}
	if f.ix.Catalog.Len() != 2 {
		t.Errorf("catalog has %d notes, want 2", f.ix.Catalog.Len())
	}
	probs := f.ix.Status().Problems
	if !strings.Contains(probs["bin.md"], "binary") || !strings.Contains(probs["huge.md"], "too large") {
		t.Errorf("problems: %v", probs)
	}
	if got := f.search(t, "zulu"); len(got) != 0 {
		t.Errorf("hidden folders indexed: %v", got)
	}
	if bl := f.ix.Catalog.Backlinks("sub/b.md"); len(bl) != 1 || bl[0].Source != "a.md" {
		t.Errorf("backlinks of sub/b.md: %v", bl)
	}

	// A second pass changes nothing.
	st, _ = f.ix.Sync(ctx, nil)
	if st.Indexed != 0 || st.Kept != 2 {
		t.Errorf("idle sync re-indexed: %+v", st)
	}

	// Edit, delete and add behind the indexer's back; Sync converges.
	time.Sleep(10 * time.Millisecond)
	write(t, f.dir, "a.md", "# Alpha\nnow mentions yankee\n")
	os.Remove(filepath.Join(f.dir, "sub", "b.md"))
	write(t, f.dir, "c.md", "charlie")
	os.Remove(filepath.Join(f.dir, "bin.md"))
	st, _ = f.ix.Sync(ctx, nil)
	if st.Indexed != 2 || st.Removed != 1 {
		t.Errorf("reconcile: %+v", st)
	}
	if got := f.search(t, "yankee"); len(got) != 1 || got[0] != "a.md" {
		t.Errorf("edited note not re-indexed: %v", got)
	}
	if got := f.search(t, "bravo"); len(got) != 0 {
		t.Errorf("deleted note still searchable: %v", got)
	}
	if _, ok := f.ix.Status().Problems["bin.md"]; ok {
		t.Errorf("a deleted file's problem is still reported")
	}
}

func TestApplyIsAHint(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{"n.md": "first version kilo"})
	if _, err := f.ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	write(t, f.dir, "n.md", "second version lima")
	// Duplicate and reordered events converge on what is there now.
	for range 3 {
		if err := f.ix.Apply(ctx, "n.md"); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.search(t, "lima"); len(got) != 1 {
		t.Errorf("edit not indexed: %v", got)
	}
	if got := f.search(t, "kilo"); len(got) != 0 {
		t.Errorf("old text still indexed: %v", got)
	}
	// An event for a deleted file removes it; a late create event for a file
	// that is gone again does nothing.
	os.Remove(filepath.Join(f.dir, "n.md"))
	if err := f.ix.Apply(ctx, "n.md"); err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Apply(ctx, "n.md"); err != nil {
		t.Fatal(err)
	}
	if f.ix.Catalog.Len() != 0 || len(f.search(t, "lima")) != 0 {
		t.Errorf("deleted note still indexed")
	}
	// A file that turns binary is taken out, not left stale.
	write(t, f.dir, "m.md", "mike")
	_ = f.ix.Apply(ctx, "m.md")
	write(t, f.dir, "m.md", "\x00\x00mike")
	if err := f.ix.Apply(ctx, "m.md"); err == nil {
		t.Errorf("binary content should be reported")
	}
	if len(f.search(t, "mike")) != 0 {
		t.Errorf("a note that became binary is still searchable")
	}
	// Hidden paths and traversal are ignored or refused.
	if err := f.ix.Apply(ctx, ".sheaf/catalog.json.gz"); err != nil {
		t.Errorf("own objects must be ignored: %v", err)
	}
	if err := f.ix.Apply(ctx, "../etc/passwd"); err == nil {
		t.Errorf("traversal accepted")
	}
}

func TestSnapshotRestart(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{"a.md": "alpha [[b]]", "b.md": "bravo"})
	if _, err := f.ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	c, err := f.ix.Snapshots.Load(ctx)
	if err != nil || c == nil {
		t.Fatalf("loading the snapshot: %v", err)
	}
	if c.Len() != 2 || len(c.Backlinks("b.md")) != 1 {
		t.Errorf("restored catalog: %d notes", c.Len())
	}
	// A restarted indexer with the restored catalog and the same text index
	// has nothing to do.
	ix2 := &Indexer{Store: f.ix.Store, Catalog: c, Text: f.ix.Text}
	st, err := ix2.Sync(ctx, nil)
	if err != nil || st.Indexed != 0 || st.Kept != 2 {
		t.Errorf("sync after restart: %+v %v", st, err)
	}
}

func TestStoreSnapshotsConditional(t *testing.T) {
	ctx := context.Background()
	st, _ := fs.Open(t.TempDir())
	a := &catalogstore.Snapshots{Store: st}
	b := &catalogstore.Snapshots{Store: st}
	c := vault.NewCatalog()
	if err := a.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(ctx, c); err == nil {
		t.Errorf("a second writer that never loaded overwrote the snapshot")
	}
	if _, err := b.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(ctx, c); err != nil {
		t.Errorf("save after load: %v", err)
	}
	if err := a.Save(ctx, c); err == nil || !strings.Contains(err.Error(), store.ErrConflict.Error()) {
		t.Errorf("stale writer: %v, want a conflict", err)
	}
}

// The working files of sync tools (Remotely Save's metadata, rclone's
// partial uploads, Syncthing's temporary and hidden files) are no part of
// the vault: neither a reconcile nor an event indexes them.
func TestSyncToolFilesIgnored(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{
		"a.md":                                   "alpha",
		"img/p.png":                              "png",
		"_remotely-save-metadata-on-remote.json": `{"_readme":"Do NOT edit"}`,
		"_remotely-save-metadata-on-remote.bin":  "obfuscated",
		"b.md.Xk39aa2b.partial":                  "half a note",
		"~syncthing~c.md.tmp":                    "being written",
		".stfolder/marker":                       "",
		".stversions/a~20260101-101010.md":       "alpha old",
		"RCLONE_TEST":                            "bisync check",
	})
	st, err := f.ix.Sync(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Notes != 1 || st.Attachments != 1 {
		t.Errorf("reconcile saw %d notes, %d attachments; want the one note and the one image", st.Notes, st.Attachments)
	}
	for _, p := range []string{"_remotely-save-metadata-on-remote.json", "b.md.Xk39aa2b.partial", "~syncthing~c.md.tmp"} {
		if err := f.ix.Apply(ctx, p); err != nil {
			t.Errorf("Apply(%s): %v", p, err)
		}
		if _, ok := f.ix.Catalog.Attachment(p); ok {
			t.Errorf("%s indexed", p)
		}
	}
}
