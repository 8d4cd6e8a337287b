package indexer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
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
	snaps := f.ix.Snapshots.(*StoreSnapshots)
	// The whole catalog as one segment (the reconcile's own saves may have
	// been checkpoints of parts of it, on a slow machine).
	var buf bytes.Buffer
	if err := f.ix.Catalog.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	whole := int64(buf.Len())
	reader := &StoreCatalogs{Store: f.store, MaxAge: time.Nanosecond}
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
		if _, err := f.ix.Handle(ctx, awsEvent("ObjectCreated:Put", keys...)); err != nil {
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
	if st.Merges == 0 || st.Segments > 4*mergeFanout {
		t.Errorf("%d merges, %d segments: merging does not bound the segments", st.Merges, st.Segments)
	}
	// Merged-away objects are gone; nothing but the manifest's own parts
	// is left.
	named := map[string]bool{}
	for _, ref := range snaps.view.man.Segments {
		for _, p := range ref.Parts {
			named[DefaultCatalogDir+p] = true
		}
	}
	err := f.store.List(ctx, DefaultCatalogDir, func(o store.Object) error {
		if !named[o.Path] && !strings.HasSuffix(o.Path, manifestName) {
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
				if _, err := ix.Handle(ctx, awsEvent("ObjectCreated:Put", p)); err != nil {
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
		if _, err := f.ix.Handle(ctx, awsEvent("ObjectCreated:Put", p)); err != nil {
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
	if _, err := f.store.Put(ctx, DefaultSnapshotKey, buf.Bytes(), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	reader := &StoreCatalogs{Store: f.store, MaxAge: time.Nanosecond}
	if c, err := reader.Catalog(ctx); err != nil || c.Len() != 2 {
		t.Fatalf("legacy snapshot through StoreCatalogs: %v, %v", c, err)
	}

	ix := f.next(t)
	write(t, f.dir, "c.md", "# C")
	if _, err := ix.Handle(ctx, awsEvent("ObjectCreated:Put", "c.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Stat(ctx, DefaultCatalogDir+manifestName); err != nil {
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
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "catalog", manifestName)); err != nil {
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
	orphan := DefaultCatalogDir + "seg-00000000000000ff-00000000000000ff-dead-0.jsonl.gz"
	if _, err := f.store.Put(ctx, orphan, []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	snaps := f.ix.Snapshots.(*StoreSnapshots)
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
	if _, err := f.ix.Handle(ctx, awsEvent("ObjectCreated:Put", "a.md", "b.md")); err != nil {
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
	if _, err := f.store.Put(ctx, DefaultCatalogDir+manifestName, []byte(`{"format":"sheaf-catalog-manifest","version":99}`), store.PutOptions{}); err != nil {
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
	if _, err := f.store.Put(ctx, DefaultCatalogDir+manifestName, []byte(`{"format":"sheaf-catalog-manifest","version":99}`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	other := newCloudIndexer(f.store, f.ix.Text)
	write(t, f.dir, "c.md", "# C")
	if _, err := other.Handle(ctx, awsEvent("ObjectCreated:Put", "c.md")); err != nil {
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
	manifestKey := DefaultCatalogDir + manifestName
	for round := range 3 {
		p := fmt.Sprintf("f%d/n%05d.md", round, round)
		write(t, f.dir, p, fmt.Sprintf("# Lost answer %d\n", round))
		f.store.loseOn(manifestKey, 1)
		f.ix.Handle(ctx, awsEvent("ObjectCreated:Put", p)) // may fail: the indexer never heard
		c := f.saved(t)
		if n, ok := c.Note(p); !ok || n.Title != fmt.Sprintf("Lost answer %d", round) {
			t.Fatalf("round %d: a fresh reader sees %+v, %v", round, n, ok)
		}
	}
	// The indexer that lost the answers saves on: its next save conflicts,
	// catches up and lands.
	write(t, f.dir, "after.md", "# After\n")
	if _, err := f.ix.Handle(ctx, awsEvent("ObjectCreated:Put", "after.md")); err != nil {
		t.Fatal(err)
	}
	c := f.saved(t)
	if _, ok := c.Note("after.md"); !ok || c.Len() != 41 {
		t.Fatalf("after: %d notes, after.md %v", c.Len(), ok)
	}
}

// A catalog that Sheaf saved before the binary format (manifest version
// 3, segments of JSON lines; testdata/catalog-v3 is the sample vault as
// that release saved it) is read; the next save adds a binary segment and
// writes manifest version 4, and readers then see the two combined.
func TestCatalogOfTheJSONReleaseIsRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fixture, err := filepath.Glob(filepath.Join("testdata", "catalog-v3", "*"))
	if err != nil || len(fixture) < 2 {
		t.Fatalf("fixture: %v %v", fixture, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "catalog"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range fixture {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "catalog", filepath.Base(p)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	snaps := &StoreSnapshots{Store: st, Dir: "catalog/"}
	c, err := snaps.Load(ctx)
	if err != nil || c == nil {
		t.Fatalf("Load: %v, %v", c, err)
	}
	if c.Len() != 43 || len(c.Attachments()) != 5 || len(c.Problems()) != 3 {
		t.Fatalf("read %d notes, %d attachments, %d problems; want 43, 5, 3", c.Len(), len(c.Attachments()), len(c.Problems()))
	}
	if bs := c.Backlinks("Concepts/Crop rotation.md"); len(bs) == 0 {
		t.Error("no backlinks to Concepts/Crop rotation.md in the catalog read")
	}

	n, ok := c.Note("Concepts/Crop rotation.md")
	if !ok {
		t.Fatal("Concepts/Crop rotation.md is not in the catalog read")
	}
	n.Title = "Compost, edited after the upgrade"
	c.Upsert(n)
	if err := snaps.SaveChanges(ctx, c, []string{n.Path}); err != nil {
		t.Fatal(err)
	}
	m, _, _, err := snaps.files().readManifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, r := range m.Segments {
		parts = append(parts, r.Parts...)
	}
	if m.Version != manifestVersion || len(parts) != 2 || !strings.HasSuffix(parts[0], ".jsonl.zst") || !strings.HasSuffix(parts[1], ".bin.zst") {
		t.Fatalf("after the save: manifest version %d, parts %v", m.Version, parts)
	}
	for _, reader := range []func() (*vault.Catalog, error){
		func() (*vault.Catalog, error) { return (&StoreSnapshots{Store: st, Dir: "catalog/"}).Load(ctx) },
		func() (*vault.Catalog, error) { return (&StoreCatalogs{Store: st, Dir: "catalog/"}).Catalog(ctx) },
	} {
		got, err := reader()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Notes(), c.Notes()) || !reflect.DeepEqual(got.Problems(), c.Problems()) || !reflect.DeepEqual(got.Attachments(), c.Attachments()) {
			t.Fatal("a fresh reader of the upgraded catalog differs from the writer's")
		}
	}
}

// savedWriters saves a catalog of paths in a new store; load starts a
// writer there, as a new indexer instance does.
func savedWriters(t *testing.T, paths ...string) (st store.Store, load func() (*StoreSnapshots, *vault.Catalog)) {
	t.Helper()
	ctx := context.Background()
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := (&StoreSnapshots{Store: st}).Save(ctx, catalogWith(paths...)); err != nil {
		t.Fatal(err)
	}
	return st, func() (*StoreSnapshots, *vault.Catalog) {
		s := &StoreSnapshots{Store: st}
		c, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s, c
	}
}

// A save that lost the race keeps the segment it wrote: the retry, after
// catching up, reuses it when it still holds what that save writes (the
// racers changed different notes), and writes a new one (deleting the
// spare) when not.
func TestRetryReusesTheLostSegment(t *testing.T) {
	ctx := context.Background()
	st, load := savedWriters(t, "a.md", "b.md", "c.md")
	parts := func() []string {
		var out []string
		st.List(ctx, DefaultCatalogDir, func(o store.Object) error {
			if !strings.HasSuffix(o.Path, manifestName) {
				out = append(out, o.Path)
			}
			return nil
		})
		return out
	}
	one, c1 := load()
	two, c2 := load()
	edit := func(s *StoreSnapshots, c *vault.Catalog, p, title string) error {
		c.Upsert(vault.Note{Path: p, Title: title})
		return s.SaveChanges(ctx, c, []string{p})
	}

	// Different notes: the retry writes only the manifest.
	if err := edit(one, c1, "a.md", "one"); err != nil {
		t.Fatal(err)
	}
	if err := edit(two, c2, "b.md", "two"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the second writer: %v, want a conflict", err)
	}
	before := len(parts())
	if _, _, err := two.CatchUp(ctx, c2); err != nil {
		t.Fatal(err)
	}
	if err := two.SaveChanges(ctx, c2, []string{"b.md"}); err != nil {
		t.Fatal(err)
	}
	if got := two.Stats().Reused; got != 1 || len(parts()) != before {
		t.Errorf("retry: reused %d, parts %d -> %d; want the spare reused, nothing written", got, before, len(parts()))
	}

	// The same note: the spare is stale, so it is replaced.
	if _, _, err := one.CatchUp(ctx, c1); err != nil {
		t.Fatal(err)
	}
	if err := edit(two, c2, "c.md", "two again"); err != nil {
		t.Fatal(err)
	}
	if err := edit(one, c1, "c.md", "one again"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the first writer: %v, want a conflict", err)
	}
	if _, _, err := one.CatchUp(ctx, c1); err != nil {
		t.Fatal(err)
	}
	c1.Upsert(vault.Note{Path: "c.md", Title: "one, after catching up"}) // as the indexer replays a path both changed
	before = len(parts())
	if err := one.SaveChanges(ctx, c1, []string{"c.md"}); err != nil {
		t.Fatal(err)
	}
	if got := one.Stats().Reused; got != 0 || len(parts()) != before {
		t.Errorf("stale spare: reused %d, parts %d -> %d; want it replaced", got, before, len(parts()))
	}

	_, fresh := load()
	for p, want := range map[string]string{"a.md": "one", "b.md": "two", "c.md": "one, after catching up"} {
		if n, _ := fresh.Note(p); n.Title != want {
			t.Errorf("%s: title %q, want %q", p, n.Title, want)
		}
	}
}

// A writer that keeps losing races takes the turn: the others neither save
// nor merge until it has saved (which gives the turn back) or the turn has
// expired.
func TestTurnHoldsTheOtherWritersBack(t *testing.T) {
	ctx := context.Background()
	_, load := savedWriters(t, "a.md", "b.md")
	slow, cs := load()
	fast, cf := load()
	if mine, err := slow.TakeTurn(ctx); err != nil || !mine {
		t.Fatalf("TakeTurn: %v, %v", mine, err)
	}
	if mine, err := fast.TakeTurn(ctx); err != nil || mine {
		t.Fatalf("a second writer took the held turn: %v, %v", mine, err)
	}
	// The fast writer, caught up, still may not save while the turn holds.
	if _, _, err := fast.CatchUp(ctx, cf); err != nil {
		t.Fatal(err)
	}
	cf.Upsert(vault.Note{Path: "b.md", Title: "fast"})
	if err := fast.SaveChanges(ctx, cf, []string{"b.md"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("save during another's turn: %v, want a conflict", err)
	}
	// The turn's holder catches up and saves, giving the turn back.
	if _, _, err := slow.CatchUp(ctx, cs); err != nil {
		t.Fatal(err)
	}
	cs.Upsert(vault.Note{Path: "a.md", Title: "slow"})
	if err := slow.SaveChanges(ctx, cs, []string{"a.md"}); err != nil {
		t.Fatalf("the holder's save: %v", err)
	}
	if _, _, err := fast.CatchUp(ctx, cf); err != nil {
		t.Fatal(err)
	}
	if err := fast.SaveChanges(ctx, cf, []string{"b.md"}); err != nil {
		t.Fatalf("save after the turn was given back: %v", err)
	}
	_, fresh := load()
	if a, _ := fresh.Note("a.md"); a.Title != "slow" {
		t.Errorf("a.md: %q", a.Title)
	}
	if b, _ := fresh.Note("b.md"); b.Title != "fast" {
		t.Errorf("b.md: %q", b.Title)
	}

	// A turn whose holder went away expires.
	if mine, err := slow.TakeTurn(ctx); err != nil || !mine {
		t.Fatalf("TakeTurn: %v, %v", mine, err)
	}
	f := fast.files()
	m, etag, _, err := f.readManifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.Turn.Until = time.Now().Add(-time.Second)
	if _, err := f.writeManifest(ctx, m, etag); err != nil {
		t.Fatal(err)
	}
	if _, _, err := fast.CatchUp(ctx, cf); err != nil {
		t.Fatal(err)
	}
	cf.Upsert(vault.Note{Path: "b.md", Title: "after the turn expired"})
	if err := fast.SaveChanges(ctx, cf, []string{"b.md"}); err != nil {
		t.Fatalf("save past an expired turn: %v", err)
	}
}
