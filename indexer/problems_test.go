package indexer

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/catalogstore"
)

// problemFiles are notes the indexer skips or degrades, next to a clean one.
var problemFiles = map[string]string{
	"ok.md":       "# Fine\nclean note\n",
	"binary.md":   "\x00\x01\x02 not text",
	"bad-utf8.md": "# Bad\ncaf\xe9 au lait\n",
	"bad-fm.md":   "---\ntitle: [unclosed\n---\nbody\n",
}

// wantReasons checks that problems holds exactly the paths of want, each
// reason containing want's fragment.
func wantReasons(t *testing.T, what string, problems map[string]string, want map[string]string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(problems))
	if !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Errorf("%s: problems of %q, want %q (%q)", what, got, slices.Sorted(maps.Keys(want)), problems)
		return
	}
	for p, frag := range want {
		if !strings.Contains(problems[p], frag) {
			t.Errorf("%s: problem of %s = %q, want it to mention %q", what, p, problems[p], frag)
		}
	}
}

// savedProblems is what the stateless handlers see: the problems of the
// snapshot in the store, through catalogstore.Catalogs and through a fresh Load.
func (f *cloudFixture) savedProblems(t *testing.T, cats *catalogstore.Catalogs) (viaCatalogs, viaLoad map[string]string) {
	t.Helper()
	c, err := cats.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c.Problems(), f.saved(t).Problems()
}

func TestProblemsPersistInTheSnapshot(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, problemFiles)
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"binary.md":   "binary",
		"bad-utf8.md": "invalid UTF-8",
		"bad-fm.md":   "frontmatter",
	}
	wantReasons(t, "Status", f.ix.Status().Problems, want)
	cats := &catalogstore.Catalogs{Store: f.store, MaxAge: time.Nanosecond}
	viaCats, viaLoad := f.savedProblems(t, cats)
	wantReasons(t, "catalogstore.Catalogs", viaCats, want)
	wantReasons(t, "snapshot", viaLoad, want)

	// A restarted indexer keeps the problems of notes it does not re-read.
	again := f.next(t)
	st, err := again.Sync(ctx, nil)
	if err != nil || st.Indexed != 0 {
		t.Fatalf("sync after restart: %+v %v", st, err)
	}
	wantReasons(t, "after a restart", again.Status().Problems, want)

	// Fixing a file clears its problem, in the snapshot too.
	indexertest.Write(t, f.dir, "bad-utf8.md", "# Bad\ncafé au lait\n")
	f.handle(t, objects("bad-utf8.md"))
	delete(want, "bad-utf8.md")
	wantReasons(t, "after the fix", f.ix.Status().Problems, want)
	viaCats, viaLoad = f.savedProblems(t, cats)
	wantReasons(t, "catalogstore.Catalogs after the fix", viaCats, want)
	wantReasons(t, "snapshot after the fix", viaLoad, want)

	// Deleting a skipped file or a degraded note clears its problem; a note
	// turning binary gets one.
	os.Remove(filepath.Join(f.dir, "binary.md"))
	os.Remove(filepath.Join(f.dir, "bad-fm.md"))
	f.handle(t, objects("binary.md", "bad-fm.md"))
	indexertest.Write(t, f.dir, "ok.md", "\x00binary now")
	if sum := f.handle(t, objects("ok.md")); !slices.Equal(sum.Skipped, []string{"ok.md"}) {
		t.Errorf("a note turned binary: %+v", sum)
	}
	delete(want, "binary.md")
	delete(want, "bad-fm.md")
	want["ok.md"] = "binary"
	viaCats, _ = f.savedProblems(t, cats)
	wantReasons(t, "catalogstore.Catalogs after delete", viaCats, want)
	if _, ok := f.ix.Catalog.Note("ok.md"); ok {
		t.Error("a note turned binary is still in the catalog")
	}

	// A deletion seen only by a reconcile clears the problem too.
	os.Remove(filepath.Join(f.dir, "ok.md"))
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	viaCats, viaLoad = f.savedProblems(t, cats)
	wantReasons(t, "catalogstore.Catalogs after reconcile", viaCats, nil)
	wantReasons(t, "snapshot after reconcile", viaLoad, nil)
	wantReasons(t, "Status after reconcile", f.ix.Status().Problems, nil)
}

// A read that fails for now is a problem too, and it is saved even though
// nothing else changed; a successful retry clears it.
func TestTransientProblemIsSaved(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"a.md": "alpha"})
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	indexertest.Write(t, f.dir, "b.md", "bravo")
	f.store.FailOn("b.md", errors.New("connection reset"))
	if _, err := applyObjects(ctx, f.ix, "b.md"); err == nil {
		t.Fatal("a failed read should be retried")
	}
	cats := &catalogstore.Catalogs{Store: f.store, MaxAge: time.Nanosecond}
	viaCats, _ := f.savedProblems(t, cats)
	wantReasons(t, "after a failed read", viaCats, map[string]string{"b.md": "connection reset"})

	f.store.FailOn("b.md", nil)
	f.handle(t, objects("b.md"))
	viaCats, _ = f.savedProblems(t, cats)
	wantReasons(t, "after the retry", viaCats, nil)
}

// When another indexer saved first, its problems come along with its
// snapshot, and this indexer's own changes are replayed on top.
func TestProblemsMergeOnConflict(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"seed.md": "seed", "binary.md": "\x00bin"})
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	b := f.next(t)
	wantReasons(t, "b at start", b.Status().Problems, map[string]string{"binary.md": "binary"})

	// a sees binary.md go and a new bad note come; b, not knowing, saves a
	// degraded note of its own and must merge.
	os.Remove(filepath.Join(f.dir, "binary.md"))
	indexertest.Write(t, f.dir, "a-bad.md", "\xff\xfe a's")
	f.handle(t, objects("binary.md"))
	f.handle(t, objects("a-bad.md"))
	indexertest.Write(t, f.dir, "b-bad.md", "---\n: [\n---\nb's")
	out, err := applyObjects(ctx, b, "b-bad.md")
	if err != nil {
		t.Fatalf("b: %+v %v", out, err)
	}
	want := map[string]string{"a-bad.md": "invalid UTF-8", "b-bad.md": "frontmatter"}
	wantReasons(t, "b after the merge", b.Status().Problems, want)
	final := f.saved(t)
	wantReasons(t, "final snapshot", final.Problems(), want)
	assertMatchesStore(t, f.ix, final)
}

// TestPassedOverFilesAreProblems: files no vault path can name (a line
// break or a backslash in the name) and the NFD twin of a note are listed
// in the problems, not silently missing; the problem goes with the file.
func TestPassedOverFilesAreProblems(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{"café.md": "# NFC\n"})
	for name, body := range map[string]string{"line\nbreak.md": "heron", "back\\slash.md": "ibis", "cafe\u0301.md": "# NFD twin\n"} {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte(body), 0o644); err != nil {
			t.Skipf("this file system refuses the name %q: %v", name, err)
		}
	}
	if _, err := f.ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	wantReasons(t, "after sync", f.ix.Status().Problems, map[string]string{
		"line\nbreak.md": "cannot be a vault path", "back\\slash.md": "cannot be a vault path", "café.md": "Unicode normalisations"})
	if got := f.ix.Catalog.Len(); got != 1 {
		t.Errorf("%d notes, want the NFC café.md alone", got)
	}
	// The note indexed again on its own (a write, a watcher event) keeps
	// its twin's problem: only a listing can tell the twin is gone.
	if err := os.WriteFile(filepath.Join(f.dir, "café.md"), []byte("# NFC again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Reindex(ctx, "café.md"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.ix.Status().Problems["café.md"], "Unicode normalisations") {
		t.Errorf("reindexing café.md cleared its twin's problem: %q", f.ix.Status().Problems)
	}
	for _, name := range []string{"line\nbreak.md", "cafe\u0301.md"} {
		if err := os.Remove(filepath.Join(f.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	wantReasons(t, "after removing two", f.ix.Status().Problems, map[string]string{"back\\slash.md": "cannot be a vault path"})
}
