package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// flakyStore fails Stat and Get for chosen paths and counts Stat calls.
type flakyStore struct {
	store.Store
	mu    sync.Mutex
	fail  map[string]error
	lost  map[string]int
	stats atomic.Int64
}

func (s *flakyStore) Stat(ctx context.Context, p string) (store.Object, error) {
	s.stats.Add(1)
	s.mu.Lock()
	err := s.fail[p]
	s.mu.Unlock()
	if err != nil {
		return store.Object{}, err
	}
	return s.Store.Stat(ctx, p)
}

func (s *flakyStore) Get(ctx context.Context, p string, max int64) ([]byte, store.Object, error) {
	s.mu.Lock()
	err := s.fail[p]
	s.mu.Unlock()
	if err != nil {
		return nil, store.Object{}, err
	}
	return s.Store.Get(ctx, p, max)
}

// Put writes, then, for a path loseOn named, fails as a timeout would:
// the store made the write but the caller never heard.
func (s *flakyStore) Put(ctx context.Context, p string, data []byte, opts store.PutOptions) (store.Object, error) {
	s.mu.Lock()
	lost := s.lost[p] > 0
	if lost {
		s.lost[p]--
	}
	s.mu.Unlock()
	obj, err := s.Store.Put(ctx, p, data, opts)
	if err == nil && lost {
		return store.Object{}, fmt.Errorf("put %s: %w", p, context.DeadlineExceeded)
	}
	return obj, err
}

// loseOn makes the next n Puts of p lose their answer.
func (s *flakyStore) loseOn(p string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		s.lost = map[string]int{}
	}
	s.lost[p] = n
}

func (s *flakyStore) failOn(p string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail == nil {
		s.fail = map[string]error{}
	}
	s.fail[p] = err
}

// cloudFixture is an indexer wired as in the cloud: the snapshot in the
// store, keys under "vault/" in bucket "sheaf-vault".
type cloudFixture struct {
	dir   string
	store *flakyStore
	ix    *Indexer
}

func newCloudFixture(t *testing.T, files map[string]string) *cloudFixture {
	t.Helper()
	dir, st, text := localVault(t, files)
	fl := &flakyStore{Store: st}
	return &cloudFixture{dir: dir, store: fl, ix: newCloudIndexer(fl, text)}
}

// saved loads the snapshot in the store, as a fresh instance would.
func (f *cloudFixture) saved(t *testing.T) *vault.Catalog {
	t.Helper()
	c, err := (&catalogstore.Snapshots{Store: f.store}).Load(context.Background())
	if err != nil || c == nil {
		t.Fatalf("loading the snapshot: %v", err)
	}
	return c
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

func notePaths(c *vault.Catalog) []string {
	var ps []string
	for _, n := range c.Notes() {
		ps = append(ps, n.Path)
	}
	return ps
}

// storeState is what the catalog and the text index must hold for st:
// every indexable note, path -> content hash.
func storeState(t testing.TB, st store.Store, maxBytes int64) map[string]string {
	t.Helper()
	want := map[string]string{}
	err := st.List(context.Background(), "", func(o store.Object) error {
		if !vault.IsNotePath(o.Path) {
			return nil
		}
		data, _, err := st.Get(context.Background(), o.Path, maxBytes)
		if errors.Is(err, store.ErrTooLarge) {
			return nil
		}
		if err != nil {
			return err
		}
		if errors.Is(vault.Check(data), vault.ErrBinary) {
			return nil
		}
		sum := sha256.Sum256(data)
		want[o.Path] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// assertMatchesStore checks catalog paths+hashes and text-index paths
// against a fresh listing of the store.
func assertMatchesStore(t testing.TB, ix *Indexer, c *vault.Catalog) {
	t.Helper()
	want := storeState(t, ix.Store, ix.maxNote())
	got := map[string]string{}
	for _, n := range c.Notes() {
		got[n.Path] = n.Hash
	}
	for p, h := range want {
		if got[p] != h {
			t.Errorf("catalog: %q has hash %q, store %q", p, got[p], h)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("catalog: %q is not in the store", p)
		}
	}
	paths, err := ix.Text.Paths(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for p := range want {
		if _, ok := paths[p]; !ok {
			t.Errorf("text index lacks %q", p)
		}
	}
	for p := range paths {
		if _, ok := want[p]; !ok {
			t.Errorf("text index has %q, not in the store", p)
		}
	}
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
				write(t, f.dir, p, "note "+p)
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
	write(t, f.dir, "late.md", "late")
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
	write(t, f.dir, "d.md", "delta")
	write(t, f.dir, "a.md", "alpha edited")
	os.Remove(filepath.Join(f.dir, "b.md"))
	write(t, f.dir, "bin.md", "\x00\x00now binary")
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
	write(t, f.dir, "b.md", "bravo")
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
