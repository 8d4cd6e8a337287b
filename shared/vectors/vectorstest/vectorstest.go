// Package vectorstest is the conformance suite every vectors adapter passes:
// an adapter's test calls Run with a constructor for fresh, empty indexes.
// The fixture's hand-made vectors give distinct scores wherever a test checks
// order; elsewhere tests compare sets.
package vectorstest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// Space is the fixture's embedding space.
var Space = vectors.Space{Model: "test-model", Dim: 4}

// Run runs the conformance suite. newIndex must return a new, empty index;
// Run closes it when the subtest ends.
func Run(t *testing.T, newIndex func(t *testing.T) vectors.Index) {
	open := func(t *testing.T, withSpace bool, points ...vectors.Point) vectors.Index {
		t.Helper()
		ix := newIndex(t)
		t.Cleanup(func() {
			if err := ix.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		if withSpace {
			if err := ix.Reset(context.Background(), Space); err != nil {
				t.Fatalf("Reset: %v", err)
			}
		}
		if len(points) > 0 {
			if err := ix.Upsert(context.Background(), points...); err != nil {
				t.Fatalf("Upsert: %v", err)
			}
		}
		return ix
	}
	fixture := func(t *testing.T) vectors.Index { return open(t, true, Fixture()...) }

	t.Run("Empty", func(t *testing.T) { testEmpty(t, open(t, false)) })
	t.Run("Dimension", func(t *testing.T) { testDimension(t, fixture(t)) })
	t.Run("ResetOnModelChange", func(t *testing.T) { testReset(t, fixture(t)) })
	t.Run("UpsertReplacesNote", func(t *testing.T) { testUpsertReplaces(t, fixture(t)) })
	t.Run("DeletePrunes", func(t *testing.T) { testDelete(t, fixture(t)) })
	t.Run("Hashes", func(t *testing.T) { testHashes(t, fixture(t)) })
	t.Run("NoteHashes", func(t *testing.T) { testNoteHashes(t, fixture(t)) })
	t.Run("CosineOrder", func(t *testing.T) { testCosineOrder(t, fixture(t)) })
	t.Run("SearchNotes", func(t *testing.T) { testSearchNotes(t, fixture(t)) })
	t.Run("K", func(t *testing.T) { testK(t, fixture(t)) })
	t.Run("Filters", func(t *testing.T) { testFilters(t, fixture(t)) })
	t.Run("HostileInput", func(t *testing.T) { testHostile(t, open(t, true)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, fixture(t)) })
}

// Fixture returns the suite's points: eight passages in five notes.
// Against the query X = (1,0,0,0) the cosines are, best first:
// tomatoes#0 1, tomatoes#1 0.994, basil#0 0.707, plan#1 0.555, then
// tomatoes#2, tools#0 and plan#0 at 0, and 日本語#0 at -1.
func Fixture() []vectors.Point {
	pt := func(path string, ord int, heading string, tags []string, v ...float32) vectors.Point {
		return vectors.Point{Path: path, Ordinal: ord, Hash: fmt.Sprintf("h-%s-%d", path, ord),
			NoteHash: "n-" + path, Heading: heading, Tags: tags, Vector: v}
	}
	tomato := []string{"garden/vegetables", "summer"}
	return []vectors.Point{
		pt("garden/tomatoes.md", 0, "", tomato, 1, 0, 0, 0),
		pt("garden/tomatoes.md", 1, "Soil", tomato, 2.7, 0.3, 0, 0), // not unit length
		pt("garden/tomatoes.md", 2, "Watering", tomato, 0, 1, 0, 0),
		pt("garden/herbs/basil.md", 0, "", []string{"garden/herbs"}, 0.7, 0.7, 0, 0),
		pt("gardening/tools.md", 0, "", []string{"tools"}, 0, 0, 5, 0),
		pt("work/plan.md", 0, "Goals", []string{"Work/Q3", "#summer"}, 0, 0, 0, 1),
		pt("work/plan.md", 1, "Budget", []string{"Work/Q3", "#summer"}, 0.4, 0, 0, 0.6),
		pt("notes/日本語.md", 0, "見出し", nil, -1, 0, 0, 0),
	}
}

// X is the query the fixture's scores are given for.
var X = []float32{1, 0, 0, 0}

var ctx = context.Background()

// key names a hit "path#ordinal".
func key(h vectors.Hit) string { return fmt.Sprintf("%s#%d", h.Path, h.Ordinal) }

func keys(hits []vectors.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = key(h)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func search(t *testing.T, ix vectors.Index, q []float32, k int, f vectors.Filter) []vectors.Hit {
	t.Helper()
	hits, err := ix.Search(ctx, q, k, f)
	if err != nil {
		t.Fatalf("Search(%v, %d, %+v): %v", q, k, f, err)
	}
	return hits
}

func searchNotes(t *testing.T, ix vectors.Index, q []float32, k int, f vectors.Filter) []vectors.Hit {
	t.Helper()
	hits, err := ix.SearchNotes(ctx, q, k, f)
	if err != nil {
		t.Fatalf("SearchNotes(%v, %d, %+v): %v", q, k, f, err)
	}
	return hits
}

func paths(t *testing.T, ix vectors.Index) []string {
	t.Helper()
	m, err := ix.Notes(ctx)
	if err != nil {
		t.Fatalf("Notes: %v", err)
	}
	p := make([]string, 0, len(m))
	for path := range m {
		p = append(p, path)
	}
	sort.Strings(p)
	return p
}

func wantKeys(t *testing.T, what string, hits []vectors.Hit, want ...string) {
	t.Helper()
	if got := keys(hits); !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func wantSet(t *testing.T, what string, hits []vectors.Hit, want ...string) {
	t.Helper()
	if got := sorted(keys(hits)); !slices.Equal(got, sorted(want)) {
		t.Errorf("%s = %q, want (any order) %q", what, got, sorted(want))
	}
}

func testEmpty(t *testing.T, ix vectors.Index) {
	sp, err := ix.Space(ctx)
	if err != nil || sp != (vectors.Space{}) {
		t.Errorf("Space of a new index = %+v, %v; want zero", sp, err)
	}
	if err := ix.Upsert(ctx, Fixture()[0]); !errors.Is(err, vectors.ErrNoSpace) {
		t.Errorf("Upsert before Reset: %v, want ErrNoSpace", err)
	}
	if hits := search(t, ix, X, 5, vectors.Filter{}); len(hits) != 0 {
		t.Errorf("Search before Reset = %v", hits)
	}
	if p := paths(t, ix); len(p) != 0 {
		t.Errorf("Paths = %q", p)
	}
	if h, err := ix.Hashes(ctx, "a.md"); err != nil || h == nil || len(h) != 0 {
		t.Errorf("Hashes of a missing note = %v, %v; want empty map", h, err)
	}
	if err := ix.Delete(ctx, "a.md"); err != nil {
		t.Errorf("Delete missing: %v", err)
	}
	if err := ix.Reset(ctx, Space); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, ix, X, 5, vectors.Filter{}); len(hits) != 0 {
		t.Errorf("Search of empty index = %v", hits)
	}
	if hits := searchNotes(t, ix, X, 5, vectors.Filter{}); len(hits) != 0 {
		t.Errorf("SearchNotes of empty index = %v", hits)
	}
	if err := ix.Upsert(ctx); err != nil {
		t.Errorf("Upsert of nothing: %v", err)
	}
}

func testDimension(t *testing.T, ix vectors.Index) {
	good := vectors.Point{Path: "new.md", Hash: "n", Vector: []float32{1, 1, 1, 1}}
	bad := vectors.Point{Path: "bad.md", Hash: "b", Vector: []float32{1, 1, 1}}
	if err := ix.Upsert(ctx, good, bad); !errors.Is(err, vectors.ErrDimension) {
		t.Errorf("Upsert of a 3-dim vector: %v, want ErrDimension", err)
	}
	nan := vectors.Point{Path: "nan.md", Hash: "x", Vector: []float32{1, float32(math.NaN()), 0, 0}}
	if err := ix.Upsert(ctx, good, nan); !errors.Is(err, vectors.ErrVector) {
		t.Errorf("Upsert of a NaN vector: %v, want ErrVector", err)
	}
	inf := vectors.Point{Path: "inf.md", Hash: "x", Vector: []float32{float32(math.Inf(-1)), 0, 0, 0}}
	if err := ix.Upsert(ctx, inf); !errors.Is(err, vectors.ErrVector) {
		t.Errorf("Upsert of an infinite vector: %v, want ErrVector", err)
	}
	if p := paths(t, ix); slices.Contains(p, "new.md") || len(p) != 5 {
		t.Errorf("a failed Upsert changed the index: Paths = %q", p)
	}
	for _, q := range [][]float32{{1, 0, 0}, {1, 0, 0, 0, 0}, nil} {
		if _, err := ix.Search(ctx, q, 3, vectors.Filter{}); !errors.Is(err, vectors.ErrDimension) {
			t.Errorf("Search with %d dims: %v, want ErrDimension", len(q), err)
		}
		if _, err := ix.SearchNotes(ctx, q, 3, vectors.Filter{}); !errors.Is(err, vectors.ErrDimension) {
			t.Errorf("SearchNotes with %d dims: %v, want ErrDimension", len(q), err)
		}
	}
	if _, err := ix.Search(ctx, []float32{float32(math.NaN()), 0, 0, 0}, 3, vectors.Filter{}); !errors.Is(err, vectors.ErrVector) {
		t.Errorf("Search with NaN: %v, want ErrVector", err)
	}
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: 0}); err == nil {
		t.Error("Reset to dimension 0 succeeded")
	}
	if sp, _ := ix.Space(ctx); sp != Space {
		t.Errorf("failed Reset changed Space to %+v", sp)
	}
}

func testReset(t *testing.T, ix vectors.Index) {
	if sp, err := ix.Space(ctx); err != nil || sp != Space {
		t.Fatalf("Space = %+v, %v; want %+v", sp, err, Space)
	}
	next := vectors.Space{Model: "other-model", Dim: 3}
	if err := ix.Reset(ctx, next); err != nil {
		t.Fatal(err)
	}
	if sp, _ := ix.Space(ctx); sp != next {
		t.Errorf("Space after Reset = %+v, want %+v", sp, next)
	}
	if p := paths(t, ix); len(p) != 0 {
		t.Errorf("Paths after Reset = %q, want none", p)
	}
	if h, _ := ix.Hashes(ctx, "garden/tomatoes.md"); len(h) != 0 {
		t.Errorf("Hashes after Reset = %v", h)
	}
	q := []float32{1, 0, 0}
	if hits := search(t, ix, q, 10, vectors.Filter{}); len(hits) != 0 {
		t.Errorf("Search after Reset = %v", hits)
	}
	if err := ix.Upsert(ctx, Fixture()[0]); !errors.Is(err, vectors.ErrDimension) {
		t.Errorf("Upsert of an old-dimension vector: %v, want ErrDimension", err)
	}
	if err := ix.Upsert(ctx, vectors.Point{Path: "a.md", Hash: "a", Vector: q}); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, "Search in the new space", search(t, ix, q, 10, vectors.Filter{}), "a.md#0")
	// Resetting to the same space still drops everything.
	if err := ix.Reset(ctx, next); err != nil {
		t.Fatal(err)
	}
	if p := paths(t, ix); len(p) != 0 {
		t.Errorf("Paths after a second Reset = %q", p)
	}
}

func testUpsertReplaces(t *testing.T, ix vectors.Index) {
	const p = "garden/tomatoes.md"
	err := ix.Upsert(ctx,
		vectors.Point{Path: p, Ordinal: 0, Hash: "new0", Heading: "Intro", Vector: []float32{0, 0, 1, 0}},
		vectors.Point{Path: p, Ordinal: 1, Hash: "new1", Heading: "Soil", Vector: []float32{0, 0, 0.5, 0.5}},
	)
	if err != nil {
		t.Fatal(err)
	}
	var mine []vectors.Hit
	for _, h := range search(t, ix, X, 100, vectors.Filter{}) {
		if h.Path == p {
			mine = append(mine, h)
		}
	}
	wantSet(t, "the note's passages after replacing three with two", mine, p+"#0", p+"#1")
	for _, h := range mine {
		if h.Score > 0.01 || h.Score < -0.01 {
			t.Errorf("%s scores %v: the old vector survived", key(h), h.Score)
		}
	}
	h, err := ix.Hashes(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := sorted(mapKeys(h)); !slices.Equal(got, []string{"new0", "new1"}) {
		t.Errorf("Hashes after replace = %q", got)
	}
	wantKeys(t, "Search for the new vector", search(t, ix, []float32{0, 0, 1, 0}, 1, vectors.Filter{PathPrefix: "garden/"}), p+"#0")
	// Other notes are untouched.
	if got := paths(t, ix); len(got) != 5 {
		t.Errorf("Paths = %q", got)
	}
	// The same ordinal twice in one call: the last one wins.
	err = ix.Upsert(ctx,
		vectors.Point{Path: "dup.md", Hash: "d1", Vector: []float32{1, 0, 0, 0}},
		vectors.Point{Path: "dup.md", Hash: "d2", Vector: []float32{0, 1, 0, 0}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := ix.Hashes(ctx, "dup.md"); len(h) != 1 || h["d2"] == nil {
		t.Errorf("Hashes of a note upserted with a repeated ordinal = %v, want only d2", h)
	}
}

func testDelete(t *testing.T, ix vectors.Index) {
	if err := ix.Delete(ctx, "garden/tomatoes.md", "missing.md", "work/plan.md"); err != nil {
		t.Fatal(err)
	}
	if got, want := paths(t, ix), []string{"garden/herbs/basil.md", "gardening/tools.md", "notes/日本語.md"}; !slices.Equal(got, want) {
		t.Errorf("Paths after Delete = %q, want %q", got, want)
	}
	wantSet(t, "Search after Delete", search(t, ix, X, 100, vectors.Filter{}),
		"garden/herbs/basil.md#0", "gardening/tools.md#0", "notes/日本語.md#0")
	if h, _ := ix.Hashes(ctx, "garden/tomatoes.md"); len(h) != 0 {
		t.Errorf("Hashes of a deleted note = %v", h)
	}
	// Deleting everything, then adding back, works.
	if err := ix.Delete(ctx, paths(t, ix)...); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, ix, X, 10, vectors.Filter{}); len(hits) != 0 {
		t.Errorf("Search after deleting all = %v", hits)
	}
	if err := ix.Upsert(ctx, Fixture()...); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, "Search after re-adding", search(t, ix, X, 2, vectors.Filter{}), "garden/tomatoes.md#0", "garden/tomatoes.md#1")
}

func testHashes(t *testing.T, ix vectors.Index) {
	h, err := ix.Hashes(ctx, "garden/tomatoes.md")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{}
	for _, p := range Fixture() {
		if p.Path == "garden/tomatoes.md" {
			want[p.Hash] = p.Vector
		}
	}
	if got := sorted(mapKeys(h)); !slices.Equal(got, sorted(mapKeys(want))) {
		t.Fatalf("Hashes = %q, want %q", got, sorted(mapKeys(want)))
	}
	for k, v := range h {
		if c := cosine(v, want[k]); c < 0.9999 {
			t.Errorf("Hashes[%s] = %v, cosine %v with the upserted %v", k, v, c, want[k])
		}
	}
	// Reusing the returned vectors (an edit that changed one passage) keeps
	// the unchanged passages' scores.
	before := search(t, ix, X, 2, vectors.Filter{})
	pts := []vectors.Point{
		{Path: "garden/tomatoes.md", Ordinal: 0, Hash: "h-garden/tomatoes.md-0", Vector: h["h-garden/tomatoes.md-0"]},
		{Path: "garden/tomatoes.md", Ordinal: 1, Hash: "h-garden/tomatoes.md-1", Vector: h["h-garden/tomatoes.md-1"]},
		{Path: "garden/tomatoes.md", Ordinal: 2, Hash: "changed", Vector: []float32{0, 0, 1, 1}},
	}
	if err := ix.Upsert(ctx, pts...); err != nil {
		t.Fatal(err)
	}
	after := search(t, ix, X, 2, vectors.Filter{})
	if len(after) != len(before) {
		t.Fatalf("Search after reuse = %v, before %v", after, before)
	}
	for i := range before {
		if key(before[i]) != key(after[i]) || math.Abs(float64(before[i].Score-after[i].Score)) > 1e-5 {
			t.Errorf("hit %d: %v before reuse, %v after", i, before[i], after[i])
		}
	}
	h, _ = ix.Hashes(ctx, "garden/tomatoes.md")
	if _, ok := h["changed"]; !ok || len(h) != 3 {
		t.Errorf("Hashes after reuse = %q", mapKeys(h))
	}
	// The map is the caller's: changing it changes nothing stored.
	for _, v := range h {
		for i := range v {
			v[i] = 0
		}
	}
	wantKeys(t, "Search after mutating Hashes' result", search(t, ix, X, 1, vectors.Filter{}), "garden/tomatoes.md#0")
}

func testCosineOrder(t *testing.T, ix vectors.Index) {
	hits := search(t, ix, X, 4, vectors.Filter{})
	wantKeys(t, "Search(X, 4)", hits, "garden/tomatoes.md#0", "garden/tomatoes.md#1", "garden/herbs/basil.md#0", "work/plan.md#1")
	want := []float64{1, 0.9 / math.Sqrt(0.82), math.Sqrt(0.5), 0.4 / math.Sqrt(0.52)}
	for i, h := range hits {
		if i < len(want) && math.Abs(float64(h.Score)-want[i]) > 1e-4 {
			t.Errorf("%s scores %v, want cosine %v", key(h), h.Score, want[i])
		}
	}
	if len(hits) > 1 && hits[1].Heading != "Soil" {
		t.Errorf("hit heading = %q, want Soil", hits[1].Heading)
	}
	all := search(t, ix, X, 100, vectors.Filter{})
	if len(all) != len(Fixture()) {
		t.Fatalf("Search(X, 100) gave %d hits, want %d", len(all), len(Fixture()))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Score > all[i-1].Score {
			t.Errorf("hits out of order: %v before %v", all[i-1], all[i])
		}
	}
	if last := all[len(all)-1]; key(last) != "notes/日本語.md#0" || math.Abs(float64(last.Score)+1) > 1e-4 {
		t.Errorf("worst hit = %v, want notes/日本語.md#0 at -1", last)
	}
	// Query length does not matter: cosine, not dot product.
	wantKeys(t, "Search(10·X, 2)", search(t, ix, []float32{10, 0, 0, 0}, 2, vectors.Filter{}), "garden/tomatoes.md#0", "garden/tomatoes.md#1")
	// Other directions.
	wantKeys(t, "Search(Z, 1)", search(t, ix, []float32{0, 0, 1, 0}, 1, vectors.Filter{}), "gardening/tools.md#0")
	wantKeys(t, "Search(-X, 1)", search(t, ix, []float32{-1, 0, 0, 0}, 1, vectors.Filter{}), "notes/日本語.md#0")
	wantKeys(t, "Search(W, 2)", search(t, ix, []float32{0, 0, 0, 1}, 2, vectors.Filter{}), "work/plan.md#0", "work/plan.md#1")
}

func testSearchNotes(t *testing.T, ix vectors.Index) {
	hits := searchNotes(t, ix, X, 3, vectors.Filter{})
	wantKeys(t, "SearchNotes(X, 3)", hits, "garden/tomatoes.md#0", "garden/herbs/basil.md#0", "work/plan.md#1")
	all := searchNotes(t, ix, X, 100, vectors.Filter{})
	seen := map[string]bool{}
	for _, h := range all {
		if seen[h.Path] {
			t.Errorf("SearchNotes returned %s twice", h.Path)
		}
		seen[h.Path] = true
	}
	if len(all) != 5 {
		t.Errorf("SearchNotes(X, 100) = %q, want the 5 notes", keys(all))
	}
	// The best passage represents the note.
	wantKeys(t, "SearchNotes(Y, 1)", searchNotes(t, ix, []float32{0, 1, 0, 0}, 1, vectors.Filter{}), "garden/tomatoes.md#2")
	wantKeys(t, "SearchNotes(W, 1)", searchNotes(t, ix, []float32{0, 0, 0, 1}, 1, vectors.Filter{}), "work/plan.md#0")
	// Filters apply to passages before grouping.
	wantKeys(t, "SearchNotes(X, 2, garden/)", searchNotes(t, ix, X, 2, vectors.Filter{PathPrefix: "garden/"}),
		"garden/tomatoes.md#0", "garden/herbs/basil.md#0")
	// A note's name point is searched as its passages are, and reported
	// at its ordinal.
	name := vectors.Point{Path: "names/kettle.md", Ordinal: vectors.NameOrdinal, Hash: vectors.NameHash("Kettle"), NoteHash: "n-kettle", Vector: []float32{0, 0, 1, 1}}
	body := vectors.Point{Path: "names/kettle.md", Ordinal: 0, Hash: "h-kettle-0", NoteHash: "n-kettle", Heading: "Boiling", Vector: []float32{0, 1, 0, 0}}
	if err := ix.Upsert(ctx, name, body); err != nil {
		t.Fatal(err)
	}
	hits = searchNotes(t, ix, []float32{0, 0, 1, 1}, 1, vectors.Filter{})
	wantKeys(t, "SearchNotes(the name, 1)", hits, "names/kettle.md#-1")
	if len(hits) == 1 && hits[0].Heading != "" {
		t.Errorf("a name hit has heading %q", hits[0].Heading)
	}
	if hs, err := ix.Hashes(ctx, "names/kettle.md"); err != nil || len(hs) != 2 || hs[vectors.NameHash("Kettle")] == nil || !vectors.IsNameHash(vectors.NameHash("Kettle")) || vectors.IsNameHash("h-kettle-0") {
		t.Errorf("Hashes of a note with a name point = %v, %v", mapKeys(hs), err)
	}
}

func testK(t *testing.T, ix vectors.Index) {
	for _, k := range []int{0, -1, math.MinInt} {
		if hits := search(t, ix, X, k, vectors.Filter{}); len(hits) != 0 {
			t.Errorf("Search k=%d = %v", k, hits)
		}
		if hits := searchNotes(t, ix, X, k, vectors.Filter{}); len(hits) != 0 {
			t.Errorf("SearchNotes k=%d = %v", k, hits)
		}
	}
	wantKeys(t, "Search k=1", search(t, ix, X, 1, vectors.Filter{}), "garden/tomatoes.md#0")
	if n := len(search(t, ix, X, math.MaxInt32, vectors.Filter{})); n != 8 {
		t.Errorf("Search k=MaxInt32 gave %d hits, want 8", n)
	}
	if n := len(searchNotes(t, ix, X, 1<<30, vectors.Filter{})); n != 5 {
		t.Errorf("SearchNotes k=1<<30 gave %d hits, want 5", n)
	}
}

func testFilters(t *testing.T, ix vectors.Index) {
	notes := func(f vectors.Filter) []string {
		t.Helper()
		var out []string
		for _, h := range searchNotes(t, ix, X, 100, f) {
			out = append(out, h.Path)
		}
		return sorted(out)
	}
	cases := []struct {
		name string
		f    vectors.Filter
		want []string
	}{
		{"none", vectors.Filter{}, []string{"garden/herbs/basil.md", "garden/tomatoes.md", "gardening/tools.md", "notes/日本語.md", "work/plan.md"}},
		{"prefix", vectors.Filter{PathPrefix: "garden"}, []string{"garden/herbs/basil.md", "garden/tomatoes.md", "gardening/tools.md"}},
		{"prefix slash", vectors.Filter{PathPrefix: "garden/"}, []string{"garden/herbs/basil.md", "garden/tomatoes.md"}},
		{"prefix unicode", vectors.Filter{PathPrefix: "notes/日"}, []string{"notes/日本語.md"}},
		{"prefix none", vectors.Filter{PathPrefix: "zzz"}, nil},
		{"folder", vectors.Filter{Folder: "garden"}, []string{"garden/herbs/basil.md", "garden/tomatoes.md"}},
		{"folder slashes", vectors.Filter{Folder: "/garden/"}, []string{"garden/herbs/basil.md", "garden/tomatoes.md"}},
		{"folder nested", vectors.Filter{Folder: "garden/herbs"}, []string{"garden/herbs/basil.md"}},
		{"folder is not a prefix", vectors.Filter{Folder: "gard"}, nil},
		{"folder root", vectors.Filter{Folder: "/"}, []string{"garden/herbs/basil.md", "garden/tomatoes.md", "gardening/tools.md", "notes/日本語.md", "work/plan.md"}},
		{"tag exact", vectors.Filter{Tags: []string{"garden/herbs"}}, []string{"garden/herbs/basil.md"}},
		{"tag parent", vectors.Filter{Tags: []string{"garden"}}, []string{"garden/herbs/basil.md", "garden/tomatoes.md"}},
		{"tag case and hash", vectors.Filter{Tags: []string{"#WORK"}}, []string{"work/plan.md"}},
		{"tag written with hash", vectors.Filter{Tags: []string{"summer"}}, []string{"garden/tomatoes.md", "work/plan.md"}},
		{"tags all", vectors.Filter{Tags: []string{"summer", "garden"}}, []string{"garden/tomatoes.md"}},
		{"tags none match", vectors.Filter{Tags: []string{"summer", "tools"}}, nil},
		{"tag child is not parent", vectors.Filter{Tags: []string{"garden/herbs/basil"}}, nil},
		{"tag partial word", vectors.Filter{Tags: []string{"gard"}}, nil},
		{"paths", vectors.Filter{Paths: []string{"work/plan.md", "gardening/tools.md", "missing.md"}}, []string{"gardening/tools.md", "work/plan.md"}},
		{"paths empty", vectors.Filter{Paths: []string{}}, nil},
		{"paths and prefix", vectors.Filter{Paths: []string{"work/plan.md", "gardening/tools.md"}, PathPrefix: "work/"}, []string{"work/plan.md"}},
		{"paths and tags", vectors.Filter{Paths: []string{"work/plan.md", "garden/tomatoes.md"}, Tags: []string{"garden"}}, []string{"garden/tomatoes.md"}},
		{"folder and tag", vectors.Filter{Folder: "garden", Tags: []string{"summer"}}, []string{"garden/tomatoes.md"}},
	}
	for _, c := range cases {
		if got := notes(c.f); !slices.Equal(got, c.want) {
			t.Errorf("%s: %+v gives %q, want %q", c.name, c.f, got, c.want)
		}
	}
	// Filters apply before ranking: the best passages overall are excluded,
	// and k still fills from those that pass.
	wantKeys(t, "Search(X, 2, tools)", search(t, ix, X, 2, vectors.Filter{Tags: []string{"tools"}}), "gardening/tools.md#0")
	wantKeys(t, "Search(X, 1, work)", search(t, ix, X, 1, vectors.Filter{Folder: "work"}), "work/plan.md#1")
	wantKeys(t, "Search(X, 2, paths)", search(t, ix, X, 2, vectors.Filter{Paths: []string{"notes/日本語.md", "work/plan.md"}}), "work/plan.md#1", "work/plan.md#0")
}

func testHostile(t *testing.T, ix vectors.Index) {
	weird := []string{"a\x00b.md", "\xff\xfe.md", "emoji 🌱/note.md", "nfd/cafe\u0301.md", " spaced .md", "x"}
	var pts []vectors.Point
	for i, p := range weird {
		v := []float32{0, 0, 0, 0}
		v[i%4] = 1
		pts = append(pts, vectors.Point{Path: p, Ordinal: -i, Hash: p, Heading: p, Tags: []string{"#", "", "/", "a//b", "\xff"}, Vector: v})
	}
	pts = append(pts,
		vectors.Point{Path: "zero.md", Hash: "z", Vector: []float32{0, 0, 0, 0}},
		vectors.Point{Path: "huge.md", Hash: "h", Vector: []float32{3e38, 3e38, 0, 0}},
		vectors.Point{Path: "tiny.md", Hash: "t", Vector: []float32{1e-40, 0, 0, 0}},
	)
	if err := ix.Upsert(ctx, pts...); err != nil {
		t.Fatal(err)
	}
	if got := len(paths(t, ix)); got != len(pts) {
		t.Errorf("Paths has %d notes, want %d", got, len(pts))
	}
	for _, h := range search(t, ix, X, 100, vectors.Filter{}) {
		if math.IsNaN(float64(h.Score)) || h.Score > 1.0001 || h.Score < -1.0001 {
			t.Errorf("%s scores %v, outside [-1, 1]", key(h), h.Score)
		}
		if h.Path == "zero.md" && h.Score != 0 {
			t.Errorf("zero vector scores %v, want 0", h.Score)
		}
		if h.Path == "huge.md" && math.Abs(float64(h.Score)-math.Sqrt(0.5)) > 1e-4 {
			t.Errorf("huge vector scores %v, want 0.707", h.Score)
		}
	}
	if hits := search(t, ix, []float32{0, 0, 0, 0}, 3, vectors.Filter{}); len(hits) != 3 {
		t.Errorf("zero query gave %d hits, want 3", len(hits))
	}
	for _, tags := range [][]string{{"a"}, {"a/b"}, {"\xff"}, {"", "#"}} {
		if _, err := ix.Search(ctx, X, 3, vectors.Filter{Tags: tags, PathPrefix: "\xff", Folder: "\x00"}); err != nil {
			t.Errorf("Search with tags %q: %v", tags, err)
		}
	}
	if err := ix.Delete(ctx, weird...); err != nil {
		t.Fatal(err)
	}
	if got := len(paths(t, ix)); got != 3 {
		t.Errorf("Paths after deleting the weird notes has %d, want 3", got)
	}
	if err := ix.Upsert(ctx, vectors.Point{Path: "", Hash: "e", Vector: X}); err == nil {
		t.Error("Upsert with an empty path succeeded")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ix.Search(cctx, X, 3, vectors.Filter{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search with a cancelled context: %v", err)
	}
}

func testConcurrent(t *testing.T, ix vectors.Index) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				p := fmt.Sprintf("c/%d/%d.md", w, i%5)
				v := []float32{float32(w), float32(i), 1, 0}
				if err := ix.Upsert(ctx, vectors.Point{Path: p, Hash: p, Vector: v}); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					if err := ix.Delete(ctx, p); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				if _, err := ix.Search(ctx, X, 5, vectors.Filter{Folder: "garden"}); err != nil {
					t.Error(err)
					return
				}
				if _, err := ix.SearchNotes(ctx, X, 5, vectors.Filter{PathPrefix: "c/"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	wantKeys(t, "fixture after concurrent writes", search(t, ix, X, 2, vectors.Filter{Folder: "garden"}), "garden/tomatoes.md#0", "garden/tomatoes.md#1")
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func testNoteHashes(t *testing.T, ix vectors.Index) {
	m, err := ix.Notes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 5 {
		t.Errorf("Notes() has %d notes, want 5", len(m))
	}
	for path, h := range m {
		if h != "n-"+path {
			t.Errorf("Notes()[%q] = %q, want %q", path, h, "n-"+path)
		}
	}
	p := "garden/tomatoes.md"
	if err := ix.Upsert(ctx, vectors.Point{Path: p, Hash: "x", NoteHash: "v2", Vector: []float32{0, 0, 1, 0}}); err != nil {
		t.Fatal(err)
	}
	if m, _ = ix.Notes(ctx); m[p] != "v2" {
		t.Errorf("after an upsert Notes()[%q] = %q, want v2", p, m[p])
	}
}
