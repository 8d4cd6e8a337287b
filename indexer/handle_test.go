package indexer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// cloudFixture is an indexer wired as in the cloud: the snapshot in the
// store, keys under "vault/" in bucket "sheaf-vault".
type cloudFixture struct {
	dir   string
	store *indexertest.FlakyStore
	ix    *Indexer
}

func newCloudFixture(t *testing.T, files map[string]string) *cloudFixture {
	t.Helper()
	dir, st, text := indexertest.LocalVault(t, files)
	fl := &indexertest.FlakyStore{Store: st}
	return &cloudFixture{dir: dir, store: fl, ix: newCloudIndexer(fl, text)}
}

// saved loads the snapshot in the store, as a fresh instance would.
func (f *cloudFixture) saved(t *testing.T) *vault.Catalog {
	t.Helper()
	return indexertest.Saved(t, f.store)
}

// next starts another indexer instance, sharing the store and the text
// index, from the saved snapshot.
func (f *cloudFixture) next(t *testing.T) *Indexer {
	t.Helper()
	ix := newCloudIndexer(f.store, f.ix.Text)
	c, err := ix.Snapshots.Load(context.Background())
	if err != nil || c == nil {
		t.Fatalf("loading the snapshot: %v", err)
	}
	ix.Catalog = c
	return ix
}

func newCloudIndexer(st store.Store, text textindex.Index) *Indexer {
	return &Indexer{
		Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: &catalogstore.Snapshots{Store: st},
		MaxNoteBytes: 1 << 20, Bucket: "sheaf-vault",
		KeyPath: func(key string) (string, bool) { return strings.CutPrefix(key, "vault/") },
	}
}

// objects names vault paths as changed objects of the cloud fixture's
// bucket (keys under "vault/" in "sheaf-vault"), as an event door passes
// them.
func objects(paths ...string) []Change {
	out := make([]Change, len(paths))
	for i, p := range paths {
		out[i] = Change{Bucket: "sheaf-vault", Keys: []string{"vault/" + p}}
	}
	return out
}

// applyObjects applies paths as changed objects (see objects): an error
// when the save failed or a path is to be retried, as a door reports it.
func applyObjects(ctx context.Context, ix *Indexer, paths ...string) (ChangeResult, error) {
	res, err := ix.ApplyChanges(ctx, objects(paths...))
	if err == nil && len(res.Failed) > 0 {
		err = fmt.Errorf("indexing %v failed", res.Failed)
	}
	return res, err
}

func (f *cloudFixture) handle(t *testing.T, changes []Change) ChangeResult {
	t.Helper()
	res, err := f.ix.ApplyChanges(context.Background(), changes)
	if err == nil && len(res.Failed) > 0 {
		err = fmt.Errorf("indexing %v failed", res.Failed)
	}
	if err != nil {
		t.Fatalf("ApplyChanges: %v", err)
	}
	return res
}

// assertMatchesStore checks c and ix's text index against the store.
func assertMatchesStore(t testing.TB, ix *Indexer, c *vault.Catalog) {
	t.Helper()
	indexertest.AssertMatchesStore(t, ix.Store, ix.maxNote(), ix.Text, c)
}

func TestConcurrentIndexersMergeOnConflict(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"seed.md": "seed"})
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	// A second instance starts from the snapshot, sharing store and text index.
	b := f.next(t)
	var (
		wg   sync.WaitGroup
		errs = make(chan error, 64)
	)
	for w, ix := range []*Indexer{f.ix, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				p := fmt.Sprintf("w%d/n%02d.md", w, i)
				indexertest.Write(t, f.dir, p, "note "+p)
				if _, err := applyObjects(ctx, ix, p); err != nil {
					errs <- fmt.Errorf("%s: %w", p, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	final := f.saved(t)
	if final.Len() != 51 {
		t.Errorf("snapshot has %d notes, want 51 (both writers' changes)", final.Len())
	}
	assertMatchesStore(t, f.ix, final)

	// A deletion one instance saw survives the other's stale catalog.
	os.Remove(filepath.Join(f.dir, "w0", "n00.md"))
	if _, err := applyObjects(ctx, b, "w0/n00.md"); err != nil {
		t.Fatal(err)
	}
	indexertest.Write(t, f.dir, "late.md", "late")
	if _, err := applyObjects(ctx, f.ix, "late.md"); err != nil {
		t.Fatal(err)
	}
	assertMatchesStore(t, f.ix, f.saved(t))
}

func TestReconcileHealsACrash(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"a.md": "alpha", "b.md": "bravo", "c.md": "charlie", "bin.md": "binary to be"})
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	// A crash between the text write and the snapshot save, seen by the
	// next instance: the text index holds notes the snapshot lacks, and
	// the other way round.
	indexertest.Write(t, f.dir, "d.md", "delta")
	indexertest.Write(t, f.dir, "a.md", "alpha edited")
	os.Remove(filepath.Join(f.dir, "b.md"))
	indexertest.Write(t, f.dir, "bin.md", "\x00\x00now binary")
	if err := f.ix.Text.Upsert(ctx, textindex.Doc{Path: "ghost.md", Body: "ghost"}); err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Text.Delete(ctx, "c.md"); err != nil {
		t.Fatal(err)
	}
	next := f.next(t)
	st, err := next.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed != 1 {
		t.Errorf("reconcile: %+v", st)
	}
	assertMatchesStore(t, next, next.Catalog)
	assertMatchesStore(t, next, f.saved(t))
	if got := (&fixture{ix: next}).search(t, "binary"); len(got) != 0 {
		t.Errorf("a note that became binary is still searchable: %v", got)
	}
}

func TestSaveConflictBounded(t *testing.T) {
	// A store whose snapshot always moves on: Save gives up with the conflict.
	f := newCloudFixture(t, map[string]string{"a.md": "alpha"})
	f.ix.Snapshots = conflictingSnapshots{}
	indexertest.Write(t, f.dir, "b.md", "bravo")
	err := f.ix.Apply(context.Background(), "b.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Save(context.Background()); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Save: %v, want a conflict", err)
	}
}

type conflictingSnapshots struct{}

func (conflictingSnapshots) Load(context.Context) (*vault.Catalog, error) {
	return vault.NewCatalog(), nil
}
func (conflictingSnapshots) Save(context.Context, *vault.Catalog) error {
	return fmt.Errorf("always moving: %w", store.ErrConflict)
}

func TestSortedFailures(t *testing.T) {
	// Skipped paths are reported sorted, for stable logs.
	f := newCloudFixture(t, map[string]string{"z.md": "\x00\x01", "a.md": "\x00\x01"})
	sum := f.handle(t, objects("z.md", "a.md"))
	if !sort.StringsAreSorted(sum.Skipped) || len(sum.Skipped) != 2 {
		t.Errorf("skipped %v", sum.Skipped)
	}
}
