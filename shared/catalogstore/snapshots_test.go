package catalogstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

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
	snaps := &Snapshots{Store: st, Dir: "catalog/"}
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
		func() (*vault.Catalog, error) { return (&Snapshots{Store: st, Dir: "catalog/"}).Load(ctx) },
		func() (*vault.Catalog, error) { return (&Catalogs{Store: st, Dir: "catalog/"}).Catalog(ctx) },
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
func savedWriters(t *testing.T, paths ...string) (st store.Store, load func() (*Snapshots, *vault.Catalog)) {
	t.Helper()
	ctx := context.Background()
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Snapshots{Store: st}).Save(ctx, catalogWith(paths...)); err != nil {
		t.Fatal(err)
	}
	return st, func() (*Snapshots, *vault.Catalog) {
		s := &Snapshots{Store: st}
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
			if !strings.HasSuffix(o.Path, ManifestName) {
				out = append(out, o.Path)
			}
			return nil
		})
		return out
	}
	one, c1 := load()
	two, c2 := load()
	edit := func(s *Snapshots, c *vault.Catalog, p, title string) error {
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
