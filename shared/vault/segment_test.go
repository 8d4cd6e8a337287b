package vault

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

// sameCatalog fails unless a and b hold the same notes, attachments,
// problems and index time, and answer index-backed queries alike.
func sameCatalog(t *testing.T, what string, a, b *Catalog) {
	t.Helper()
	if x, y := a.Notes(), b.Notes(); !reflect.DeepEqual(x, y) {
		t.Fatalf("%s: notes differ: %d vs %d", what, len(x), len(y))
	}
	if x, y := a.Attachments(), b.Attachments(); !reflect.DeepEqual(x, y) {
		t.Fatalf("%s: attachments differ: %v vs %v", what, x, y)
	}
	if x, y := a.Problems(), b.Problems(); !reflect.DeepEqual(x, y) {
		t.Fatalf("%s: problems differ: %v vs %v", what, x, y)
	}
	if !a.IndexedAt().Equal(b.IndexedAt()) {
		t.Fatalf("%s: indexed at %v vs %v", what, a.IndexedAt(), b.IndexedAt())
	}
	if x, y := a.Tags(""), b.Tags(""); !reflect.DeepEqual(x, y) {
		t.Fatalf("%s: tags differ", what)
	}
	for _, m := range []map[string]any{{"priority": 1}, {"created": "2026-01-01"}, {"tags": "raced"}, {"title": "A fairly typical note title 3"}} {
		if x, y := paths(a.List(ListFilter{MetadataMatch: m})), paths(b.List(ListFilter{MetadataMatch: m})); !reflect.DeepEqual(x, y) {
			t.Fatalf("%s: notes with frontmatter %v differ: %v vs %v", what, m, x, y)
		}
	}
	for _, n := range a.Notes() {
		if x, y := a.Backlinks(n.Path), b.Backlinks(n.Path); !reflect.DeepEqual(x, y) {
			t.Fatalf("%s: backlinks of %s differ: %v vs %v", what, n.Path, x, y)
		}
	}
}

func roundTrip(t *testing.T, s *Segment) *Segment {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSegment(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Random changes saved as segments of the changed paths rebuild the same
// catalog however the segments are combined: applied in order to a fresh
// catalog, in place, merged into one base, merged in runs, split in parts.
func TestSegmentsRebuildTheCatalog(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	live := NewCatalog()
	mod := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var segs []*Segment
	for round := range 40 {
		var changed []string
		for range 1 + r.IntN(30) {
			p := fmt.Sprintf("f%d/n%d.md", r.IntN(4), r.IntN(60))
			changed = append(changed, p)
			switch r.IntN(6) {
			case 0, 1, 2:
				n := note(p, wl(fmt.Sprintf("n%d", r.IntN(60)), 1), wl("f1/n3", 2))
				n.Tags = []string{fmt.Sprintf("t/%d", r.IntN(5))}
				n.Hash = fmt.Sprint(round)
				live.Upsert(n)
			case 3:
				live.Remove(p)
			case 4:
				a := fmt.Sprintf("img/%d.png", r.IntN(10))
				changed = append(changed, a)
				if r.IntN(2) == 0 {
					live.UpsertAttachment(Attachment{Path: a, Size: int64(round), Modified: mod})
				} else {
					live.RemoveAttachment(a)
				}
			case 5:
				why := ""
				if r.IntN(2) == 0 {
					why = fmt.Sprintf("broken %d", round)
				}
				live.SetProblem(p, why)
			}
		}
		live.SetIndexedAt(mod.Add(time.Duration(round) * time.Minute))
		segs = append(segs, roundTrip(t, live.Segment(changed)))
	}
	sameCatalog(t, "CatalogOf", live, CatalogOf(segs...))
	sameCatalog(t, "whole snapshot", live, CatalogOf(roundTrip(t, live.Segment(nil))))

	inPlace := CatalogOf(segs[:10]...)
	for _, s := range segs[10:] {
		inPlace.Apply(s)
	}
	sameCatalog(t, "Apply", live, inPlace)

	base := roundTrip(t, MergeSegments(segs, true))
	if len(base.Removed) != 0 {
		t.Errorf("a base keeps %d removals", len(base.Removed))
	}
	sameCatalog(t, "merged base", live, CatalogOf(base))

	// A run merged in the middle keeps its removals: they hide what the
	// segments before it hold.
	mid := roundTrip(t, MergeSegments(segs[5:30], false))
	runs := append(append(slices.Clone(segs[:5]), mid), segs[30:]...)
	sameCatalog(t, "merged run", live, CatalogOf(runs...))

	parts := base.Split(7)
	if len(parts) < 2 {
		t.Fatalf("split into %d parts", len(parts))
	}
	for i, p := range parts {
		parts[i] = roundTrip(t, p)
	}
	slices.Reverse(parts) // any order
	sameCatalog(t, "parts", live, CatalogOf(parts...))
	total := 0
	for _, p := range parts {
		total += p.Len()
	}
	if total != base.Len() {
		t.Errorf("parts hold %d entries, the base %d", total, base.Len())
	}
}

// A segment names removed paths, and applying it removes them.
func TestSegmentRemoves(t *testing.T) {
	c := sampleCatalog()
	c.Remove("Other.md")
	c.RemoveAttachment("assets/pic.png")
	c.SetProblem("binary.md", "")
	s := roundTrip(t, c.Segment([]string{"Other.md", "assets/pic.png", "binary.md", "Inbox/Café.md", "never.md"}))
	if want := []string{"Other.md", "assets/pic.png", "binary.md", "never.md"}; !reflect.DeepEqual(s.Removed, want) {
		t.Errorf("removed = %q, want %q", s.Removed, want)
	}
	old := sampleCatalog()
	old.Apply(s)
	sameCatalog(t, "after Apply", c, old)
}

// BenchmarkCatalogOfParts100k: a 100k-note catalog from 25 parts, as a
// cold reader builds it ("lazy"), and with its indexes built by the first
// query that needs them ("indexed").
func BenchmarkCatalogOfParts100k(b *testing.B) {
	parts := syntheticCatalog(100_000).Segment(nil).Split(25)
	for _, indexed := range []bool{false, true} {
		name := "lazy"
		if indexed {
			name = "indexed"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				c := CatalogOf(parts...)
				if indexed {
					c.Tags("")
				}
				if c.Len() != 100_000 {
					b.Fatal(c.Len())
				}
			}
		})
	}
}

// A bulk-loaded catalog builds its indexes once, on first use, while
// readers and writers race; the result equals a catalog built note by note.
func TestLazyIndexesUnderRace(t *testing.T) {
	src := syntheticCatalog(500)
	lazy := CatalogOf(src.Segment(nil))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			switch i % 4 {
			case 0:
				lazy.Tags("")
			case 1:
				lazy.Backlinks("folder 0/Note number 0.md")
			case 2:
				n, _ := src.Note(fmt.Sprintf("folder %d/Note number %d.md", i%50, i))
				n.Tags = append(n.Tags, "raced")
				n.Frontmatter = map[string]any{"tags": n.Tags, "priority": 1}
				lazy.Upsert(n)
				src.Upsert(n)
			case 3:
				lazy.ByID("00000000")
				lazy.List(ListFilter{MetadataMatch: map[string]any{"priority": 1}})
			}
		})
	}
	wg.Wait()
	sameCatalog(t, "lazy", src, lazy)
}

// The frontmatter index is built apart from the others, by the first
// metadata filter: edits before, between and after the two builds all show.
func TestLazyMetaIndex(t *testing.T) {
	src := syntheticCatalog(300)
	lazy := CatalogOf(src.Segment(nil))
	edit := func(i int, priority any) {
		n, _ := src.Note(fmt.Sprintf("folder %d/Note number %d.md", i%50, i))
		n.Frontmatter = map[string]any{"priority": priority}
		src.Upsert(n)
		lazy.Upsert(n)
	}
	edit(1, "x")  // nothing built
	lazy.Tags("") // the note indexes, not meta
	edit(2, "x")  // note indexes built, meta not
	lazy.Remove("folder 3/Note number 3.md")
	src.Remove("folder 3/Note number 3.md")
	got := paths(lazy.List(ListFilter{MetadataMatch: map[string]any{"priority": "x"}}))
	if want := []string{"folder 1/Note number 1.md", "folder 2/Note number 2.md"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("priority x: %v, want %v", got, want)
	}
	edit(1, 0) // both built
	sameCatalog(t, "lazy meta", src, lazy)
	// Meta first, the others later.
	lazy = CatalogOf(src.Segment(nil))
	lazy.List(ListFilter{MetadataMatch: map[string]any{"priority": 2}})
	edit(4, "y")
	sameCatalog(t, "meta first", src, lazy)
}

// Each index family is built by the first query that needs it, alone:
// resolving a link builds the names, a tag query the facets, backlinks the
// names and links; edits before, between and after the builds all show,
// whatever the order.
func TestIndexFamiliesBuiltApart(t *testing.T) {
	src := syntheticCatalog(300)
	queries := []struct {
		builds family
		run    func(c *Catalog)
	}{
		{names, func(c *Catalog) { c.ResolveTarget("a.md", "Note number 7") }},
		{facets, func(c *Catalog) { c.Tags("") }},
		{names | links, func(c *Catalog) { c.Backlinks("folder 0/Note number 0.md") }},
		{meta, func(c *Catalog) { c.List(ListFilter{MetadataMatch: map[string]any{"priority": 1}}) }},
	}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}} {
		lazy := CatalogOf(src.Segment(nil))
		want := family(0)
		for step, q := range order {
			n, _ := src.Note(fmt.Sprintf("folder %d/Note number %d.md", step%50, step))
			n.Tags = append(n.Tags, fmt.Sprintf("step/%d", step))
			n.Aliases = append(n.Aliases, fmt.Sprintf("Step %d", step))
			n.Links = append(n.Links, wl(fmt.Sprintf("Note number %d", 100+step), 99))
			n.Frontmatter = map[string]any{"priority": step % 3}
			src.Upsert(n)
			lazy.Upsert(n)
			queries[q].run(lazy)
			want |= queries[q].builds
			if got := family(lazy.built.Load()); got != want {
				t.Fatalf("order %v, step %d: built %04b, want %04b", order, step, got, want)
			}
		}
		sameCatalog(t, fmt.Sprint("order ", order), src, lazy)
	}
}

// A bulk-loaded catalog answers a case-insensitive Note lookup without
// building its indexes, exactly as the indexes would.
func TestNoteFoldBeforeIndexes(t *testing.T) {
	src := syntheticCatalog(200)
	src.Upsert(note("Twin.md"))
	src.Upsert(note("twin.md"))
	for _, p := range []string{"FOLDER 3/note NUMBER 3.md", "folder 3/Note number 3.md", "twin.md", "TWIN.md", "nowhere.md", "Folder 3/Note Number 3"} {
		lazy := CatalogOf(src.Segment(nil))
		got, ok := lazy.Note(p)
		if lazy.built.Load() != 0 {
			t.Fatalf("Note(%q) built indexes", p)
		}
		want, wok := src.Note(p)
		if ok != wok || got.Path != want.Path {
			t.Errorf("Note(%q) = %q, %v before the indexes; %q, %v after", p, got.Path, ok, want.Path, wok)
		}
	}
}

func BenchmarkNoteFoldMiss100k(b *testing.B) {
	c := CatalogOf(syntheticCatalog(100_000).Segment(nil))
	for b.Loop() {
		if _, ok := c.Note("index.md"); ok {
			b.Fatal("found")
		}
	}
}

// A move planned on a freshly loaded catalog, before anything built its
// indexes, finds every note whose links it must rewrite.
func TestPlanMoveBeforeIndexes(t *testing.T) {
	src := syntheticCatalog(300)
	want, err := PlanMove(src, "folder 7/Note number 7.md", "moved/Elsewhere.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := PlanMove(CatalogOf(src.Segment(nil)), "folder 7/Note number 7.md", "moved/Elsewhere.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Sources()) < 2 || !reflect.DeepEqual(got.Sources(), want.Sources()) {
		t.Fatalf("sources %v, want %v", got.Sources(), want.Sources())
	}
}

// An index build does not hold up a reader that needs no index; a write
// that lands between the build and its installation is not lost.
func TestIndexBuildBesideReadersAndWrites(t *testing.T) {
	defer func(a, b func()) { testHookBuilding, testHookBuilt = a, b }(testHookBuilding, testHookBuilt)
	src := syntheticCatalog(200)
	lazy := CatalogOf(src.Segment(nil))

	building, release := make(chan struct{}), make(chan struct{})
	testHookBuilding = func() { close(building); <-release }
	done := make(chan []Backlink)
	go func() { done <- lazy.Backlinks("folder 7/Note number 7.md") }()
	<-building
	if n, ok := lazy.Note("folder 3/Note number 3.md"); !ok || n.Path != "folder 3/Note number 3.md" {
		t.Fatal("a note lookup during an index build failed")
	}
	if got := len(lazy.List(ListFilter{PathPrefix: "folder 1/"})); got != 4 {
		t.Fatalf("a list during an index build: %d notes", got)
	}
	close(release)
	if got, want := <-done, src.Backlinks("folder 7/Note number 7.md"); !reflect.DeepEqual(got, want) {
		t.Fatalf("backlinks %v, want %v", got, want)
	}

	// A note added after the indexes were built, before they are
	// installed: a build that would miss it is done again.
	testHookBuilding = func() {}
	added := note("late/Latecomer.md", wl("Note number 7", 1))
	testHookBuilt = func() {
		testHookBuilt = func() {}
		lazy.Upsert(added)
	}
	src.Upsert(added)
	lazy.Tags("")
	sameCatalog(t, "write between build and install", src, lazy)
}
