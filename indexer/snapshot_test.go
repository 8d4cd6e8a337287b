package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// linkedNotes is a vault of n small notes linking to each other.
func linkedNotes(n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("f%d/n%05d.md", i%20, i)] = fmt.Sprintf("# Note %d\n\nSee [[n%05d]] and #tag/%d.\n", i, (i*7)%n, i%9)
	}
	return files
}

// A save after a small batch writes that batch, not the vault; merging
// keeps the segments few; a fresh reader, an incremental reader and the
// writer agree at every step.
func TestSegmentedSavesCostTheBatch(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, linkedNotes(3000))
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	snaps := f.ix.Snapshots.(*catalogstore.Snapshots)
	// The whole catalog as one segment (the reconcile's own saves may have
	// been checkpoints of parts of it, on a slow machine).
	var buf bytes.Buffer
	if err := f.ix.Catalog.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	whole := int64(buf.Len())
	reader := &catalogstore.Catalogs{Store: f.store, MaxAge: time.Nanosecond}
	if c, err := reader.Catalog(ctx); err != nil || c.Len() != 3000 {
		t.Fatalf("reader: %v, %v", c, err)
	}

	r := rand.New(rand.NewPCG(5, 6))
	var biggest int64
	for batch := range 120 {
		var keys []string
		for range 10 {
			p := fmt.Sprintf("f%d/n%05d.md", r.IntN(20), r.IntN(3500))
			if r.IntN(5) == 0 {
				os.Remove(filepath.Join(f.dir, filepath.FromSlash(p)))
			} else {
				write(t, f.dir, p, fmt.Sprintf("# Edited %d\n\n[[n%05d]]", batch, r.IntN(3500)))
			}
			keys = append(keys, p)
		}
		if _, err := applyObjects(ctx, f.ix, keys...); err != nil {
			t.Fatal(err)
		}
		biggest = max(biggest, snaps.Stats().LastSaveBytes)
		if batch%40 == 39 {
			c, err := reader.Catalog(ctx)
			if err != nil {
				t.Fatal(err)
			}
			assertMatchesStore(t, f.ix, c)
			assertMatchesStore(t, f.ix, f.saved(t))
		}
	}
	st := snaps.Stats()
	t.Logf("whole save %d bytes; batch saves up to %d bytes; %+v", whole, biggest, st)
	if biggest*20 > whole {
		t.Errorf("a 10-path save wrote %d bytes, the whole catalog is %d: not incremental", biggest, whole)
	}
	if st.Merges == 0 || st.Segments > 4*8 { // four size classes of catalogstore's merge fan-out
		t.Errorf("%d merges, %d segments: merging does not bound the segments", st.Merges, st.Segments)
	}
	// Merged-away objects are gone; nothing but the manifest's own parts
	// is left.
	data, _, err := f.store.Get(ctx, catalogstore.DefaultCatalogDir+catalogstore.ManifestName, 0)
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Segments []struct{ Parts []string } }
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, ref := range m.Segments {
		for _, p := range ref.Parts {
			named[catalogstore.DefaultCatalogDir+p] = true
		}
	}
	err = f.store.List(ctx, catalogstore.DefaultCatalogDir, func(o store.Object) error {
		if !named[o.Path] && !strings.HasSuffix(o.Path, catalogstore.ManifestName) {
			t.Errorf("left behind: %s", o.Path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Several indexers write the same few paths at once: whichever saves
// last, no update is lost, in the catalog or in the text index.
func TestConcurrentIndexersNoLostUpdate(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"seed.md": "seed"})
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	ixs := []*Indexer{f.ix, f.next(t), f.next(t), f.next(t)}
	var mu sync.Mutex // one writer of a file at a time, as S3 orders PUTs
	var redeliver []string
	var wg sync.WaitGroup
	for w, ix := range ixs {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range 40 {
				p := fmt.Sprintf("hot/%d.md", r.IntN(12))
				mu.Lock()
				if r.IntN(6) == 0 {
					os.Remove(filepath.Join(f.dir, filepath.FromSlash(p)))
				} else {
					write(t, f.dir, p, fmt.Sprintf("# tok%dq%d\n%s", w, i, strings.Repeat("x", r.IntN(50))))
				}
				mu.Unlock()
				// A failed save (the other writers kept winning) is retried
				// later, as SQS redelivers a failed message.
				if _, err := applyObjects(ctx, ix, p); err != nil {
					if !errors.Is(err, store.ErrConflict) {
						t.Errorf("%s: %v", p, err)
					}
					mu.Lock()
					redeliver = append(redeliver, p)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, p := range redeliver {
		if _, err := applyObjects(ctx, f.ix, p); err != nil {
			t.Errorf("%s redelivered: %v", p, err)
		}
	}
	retries := int64(0)
	for _, ix := range ixs {
		retries += ix.ConflictRetries()
	}
	t.Logf("%d conflict retries over %d batches; %d batches gave up and were redelivered", retries, 4*40, len(redeliver))
	if retries == 0 {
		t.Errorf("no save conflicted: the test proves nothing")
	}
	final := f.saved(t)
	assertMatchesStore(t, f.ix, final)
	// The text index holds each note's last content, not an older one.
	for _, n := range final.Notes() {
		if !strings.HasPrefix(n.Path, "hot/") {
			continue
		}
		data, _, err := f.store.Get(ctx, n.Path, 0)
		if err != nil {
			t.Fatal(err)
		}
		first := strings.SplitN(string(data), "\n", 2)[0]
		res, err := f.ix.Text.Search(ctx, textindex.ParseQuery(strings.TrimPrefix(first, "# ")), textindex.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || res.Hits[0].Path != n.Path {
			t.Errorf("%s: its last content %q is not what the text index holds", n.Path, first)
		}
	}
}

// A whole snapshot of an older Sheaf is read until the first save writes
// the segmented layout; readers follow.
func TestLegacySnapshotMigrates(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"a.md": "# A", "b.md": "# B [[a]]"})
	old := &Indexer{Store: f.store, Catalog: vault.NewCatalog(), Text: f.ix.Text, MaxNoteBytes: 1 << 20}
	if _, err := old.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := old.Catalog.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Put(ctx, catalogstore.DefaultSnapshotKey, buf.Bytes(), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	reader := &catalogstore.Catalogs{Store: f.store, MaxAge: time.Nanosecond}
	if c, err := reader.Catalog(ctx); err != nil || c.Len() != 2 {
		t.Fatalf("legacy snapshot through catalogstore.Catalogs: %v, %v", c, err)
	}

	ix := f.next(t)
	write(t, f.dir, "c.md", "# C")
	if _, err := applyObjects(ctx, ix, "c.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Stat(ctx, catalogstore.DefaultCatalogDir+catalogstore.ManifestName); err != nil {
		t.Fatalf("no manifest after the first save: %v", err)
	}
	c, err := reader.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	assertMatchesStore(t, ix, c)
	assertMatchesStore(t, ix, f.saved(t))
}

// Locally the catalog is the same segmented layout in the state folder: a
// checkpoint writes what changed since the last one.
func TestFileSnapshotsAreIncremental(t *testing.T) {
	ctx := context.Background()
	dir, st, text := localVault(t, linkedNotes(2000))
	path := filepath.Join(t.TempDir(), "state", "catalog.json.gz")
	snaps := fileSnaps(t, path)
	// No checkpoint during the pass (a slow run, under -race, would take
	// one): its final save is then the whole catalog.
	ix := &Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: snaps, CheckpointEvery: time.Hour}
	if _, err := ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	s := snaps
	whole := s.Stats().LastSaveBytes
	write(t, dir, "f1/n00001.md", "# changed")
	if err := ix.Apply(ctx, "f1/n00001.md"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Save(ctx); err != nil {
		t.Fatal(err)
	}
	if one := s.Stats().LastSaveBytes; one*100 > whole {
		t.Errorf("a one-note checkpoint wrote %d bytes, the whole catalog %d", one, whole)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "catalog", catalogstore.ManifestName)); err != nil {
		t.Fatal(err)
	}
	again := fileSnaps(t, path)
	c, err := again.Load(ctx)
	if err != nil || c == nil {
		t.Fatalf("reload: %v %v", c, err)
	}
	assertMatchesStore(t, ix, c)
}

// Segments no manifest names (a save killed before its manifest) are
// deleted by Sweep once old enough, and only those.
func TestSweepDeletesOrphans(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"a.md": "# A"})
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	orphan := catalogstore.DefaultCatalogDir + "seg-00000000000000ff-00000000000000ff-dead-0.jsonl.gz"
	if _, err := f.store.Put(ctx, orphan, []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	snaps := f.ix.Snapshots.(*catalogstore.Snapshots)
	if n, err := snaps.Sweep(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("young orphan swept: %d, %v", n, err)
	}
	if n, err := snaps.Sweep(ctx, 0); err != nil || n != 1 {
		t.Fatalf("swept %d, %v; want the orphan", n, err)
	}
	if _, err := f.store.Stat(ctx, orphan); err == nil {
		t.Errorf("orphan still there")
	}
	assertMatchesStore(t, f.ix, f.saved(t))
}

// With TrackChanges the paths changed are handed over once, and given back
// paths come again.
func TestTakeChanges(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"a.md": "# A", "b.md": "# B"})
	f.ix.TrackChanges = true
	if _, err := applyObjects(ctx, f.ix, "a.md", "b.md"); err != nil {
		t.Fatal(err)
	}
	if got := f.ix.TakeChanges(); !slices.Equal(got, []string{"a.md", "b.md"}) {
		t.Errorf("took %q", got)
	}
	if got := f.ix.TakeChanges(); len(got) != 0 {
		t.Errorf("took %q again", got)
	}
	f.ix.GiveBack([]string{"b.md"})
	if got := f.ix.TakeChanges(); !slices.Equal(got, []string{"b.md"}) {
		t.Errorf("after GiveBack took %q", got)
	}
}

// A manifest of another format version is not read: the indexer rebuilds
// and its save replaces it.
func TestManifestOfAnotherVersionIsReplaced(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, map[string]string{"a.md": "# A", "b.md": "# B"})
	if _, err := f.store.Put(ctx, catalogstore.DefaultCatalogDir+catalogstore.ManifestName, []byte(`{"format":"sheaf-catalog-manifest","version":99}`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ix := newCloudIndexer(f.store, f.ix.Text)
	if c, err := ix.Snapshots.Load(ctx); err != nil || c != nil {
		t.Fatalf("Load: %v, %v; want nothing", c, err)
	}
	if _, err := ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	assertMatchesStore(t, ix, f.saved(t))

	// An instance that never loaded catches up the same way.
	if _, err := f.store.Put(ctx, catalogstore.DefaultCatalogDir+catalogstore.ManifestName, []byte(`{"format":"sheaf-catalog-manifest","version":99}`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	other := newCloudIndexer(f.store, f.ix.Text)
	write(t, f.dir, "c.md", "# C")
	if _, err := applyObjects(ctx, other, "c.md"); err != nil {
		t.Fatal(err)
	}
	assertMatchesStore(t, other, f.saved(t))
}

// A manifest write whose answer is lost (a timeout after the store wrote
// it) deletes nothing: the manifest may name the new segment, and a reader
// that finds one of its parts gone could not load the catalog at all.
func TestLostManifestAnswerKeepsTheSegment(t *testing.T) {
	ctx := context.Background()
	f := newCloudFixture(t, linkedNotes(40))
	if _, err := f.ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	manifestKey := catalogstore.DefaultCatalogDir + catalogstore.ManifestName
	for round := range 3 {
		p := fmt.Sprintf("f%d/n%05d.md", round, round)
		write(t, f.dir, p, fmt.Sprintf("# Lost answer %d\n", round))
		f.store.loseOn(manifestKey, 1)
		applyObjects(ctx, f.ix, p) // may fail: the indexer never heard
		c := f.saved(t)
		if n, ok := c.Note(p); !ok || n.Title != fmt.Sprintf("Lost answer %d", round) {
			t.Fatalf("round %d: a fresh reader sees %+v, %v", round, n, ok)
		}
	}
	// The indexer that lost the answers saves on: its next save conflicts,
	// catches up and lands.
	write(t, f.dir, "after.md", "# After\n")
	if _, err := applyObjects(ctx, f.ix, "after.md"); err != nil {
		t.Fatal(err)
	}
	c := f.saved(t)
	if _, ok := c.Note("after.md"); !ok || c.Len() != 41 {
		t.Fatalf("after: %d notes, after.md %v", c.Len(), ok)
	}
}
