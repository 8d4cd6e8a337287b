package core

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
)

func TestSuggestLinks(t *testing.T) {
	dir := indexertest.Folder(t, map[string]string{
		"Source.md": "---\ntitle: Source\nnote: Compost Heap in frontmatter\n---\n" +
			"# Source notes\n\n" +
			"The compost heap is warm. Compost again, and COMPOST.\n" +
			"Composting and decompost are other words.\n" +
			"Already linked: [[Irrigation]] and irrigation in prose.\n" +
			"Code: `Compost` and\n\n```\nCompost in a fence\n```\n\n" +
			"A URL https://example.org/Compost and www.compost.org/x.\n" +
			"[Compost](https://example.org) is a link's text.\n" +
			"The Plan is ambiguous; the Bed is short; Source is my own name.\n" +
			"Müller and Straße Über: über-müller and straße.\n" +
			"%%Compost in a comment%%\n" +
			"Kompost works through an alias. Café Résumé too.\n",
		"Projects/Compost.md":  "---\naliases: [Compost heap, Kompost]\n---\n# Compost\n",
		"Irrigation.md":        "# Irrigation\n",
		"a/Plan.md":            "# Plan\n",
		"b/Plan.md":            "# Plan\n",
		"Bed.md":               "# Bed\n",
		"People/Müller.md":     "# Müller\n",
		"Straße.md":            "# Straße\n",
		"Café/Résumé notes.md": "---\naliases: [Café Résumé]\n---\n",
		"Elsewhere.md":         "---\naliases: [Source]\n---\n",
	})
	s, _ := refVault(t, dir)
	ctx := context.Background()
	got, err := s.SuggestLinks(ctx, notePathIn{Path: "Source.md", Page: Page{Limit: 50}})
	if err != nil {
		t.Fatal(err)
	}
	want := []LinkSuggestion{
		{TargetPath: "People/Müller.md", Name: "Müller", Count: 2},
		{TargetPath: "Projects/Compost.md", Name: "Compost", Count: 2},
		{TargetPath: "Straße.md", Name: "Straße", Count: 2},
		{TargetPath: "Café/Résumé notes.md", Name: "Café Résumé", Count: 1},
		{TargetPath: "Projects/Compost.md", Name: "Compost heap", Count: 1},
		{TargetPath: "Projects/Compost.md", Name: "Kompost", Count: 1},
	}
	if !slices.Equal(got.Items, want) || got.Total != len(want) {
		t.Errorf("suggestions\n got %+v\nwant %+v", got.Items, want)
	}
	pg, _ := s.SuggestLinks(ctx, notePathIn{Path: "Source", Page: Page{Limit: 2, Offset: 4}})
	if pg.Total != len(want) || len(pg.Items) != 2 || pg.Items[0] != want[4] {
		t.Errorf("paging: %+v", pg)
	}
	if _, err := s.SuggestLinks(ctx, notePathIn{Path: "missing.md", Page: Page{Limit: 5}}); refKind(err) != KindNoteNotFound {
		t.Errorf("missing note: %v", err)
	}
	if _, err := s.SuggestLinks(ctx, notePathIn{Path: "../x.md", Page: Page{Limit: 5}}); refKind(err) != KindPathInvalid {
		t.Errorf("bad path: %v", err)
	}
}

func TestNoteRelationsSample(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../infra/sample-vault")); err != nil {
		t.Fatal(err)
	}
	s, _ := refVault(t, dir)
	ctx := context.Background()

	crop, err := s.NoteRelations(ctx, noteRelationsIn{ID: "e4c7b1d9", Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if crop.Path != "Concepts/Crop rotation.md" || !slices.Equal(crop.Included, relationSections) {
		t.Errorf("crop rotation: %+v", crop)
	}
	if p := crop.Provenance; len(p.Sources) != 1 || p.Sources[0].Path != "sources/Extension service soil guide.md" ||
		!slices.Equal(p.UnresolvedSources, []string{"deadbeef-dead-4bee-8bad-000000000000"}) || len(p.Derived) != 0 {
		t.Errorf("provenance: %+v", p)
	}
	if e := crop.Edges; len(e.Outgoing) != 0 || len(e.Incoming) != 1 ||
		e.Incoming[0] != (RelationEdge{Type: "refines", Path: "Concepts/Hügelkultur.md", Title: "Hügelkultur"}) {
		t.Errorf("edges into crop rotation: %+v", e)
	}
	if !slices.Contains(crop.RelatedIDs, "7c1e4a52-3b8d-4f6e-9a21-5d0c8e7f1a34") || !slices.Contains(crop.RelatedIDs, "Concepts/Hügelkultur.md") ||
		slices.Contains(crop.RelatedIDs, crop.ID) || !slices.IsSorted(crop.RelatedIDs) {
		t.Errorf("related ids: %v", crop.RelatedIDs)
	}

	// The source, seen from below: derived notes, two hops with depth 2.
	src, err := s.NoteRelations(ctx, noteRelationsIn{Path: "sources/Extension service soil guide", Include: []string{"provenance", "bogus"}, Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src.Included, []string{"provenance"}) || src.Links != nil || src.Edges != nil {
		t.Errorf("include: %+v", src)
	}
	var derived []string
	for _, d := range src.Provenance.Derived {
		derived = append(derived, d.Path)
		if d.Path == "Concepts/Crop rotation.md" && d.Depth != 1 {
			t.Errorf("crop rotation is one hop down: %+v", d)
		}
	}
	if !slices.Contains(derived, "Concepts/Crop rotation.md") {
		t.Errorf("derived from the soil guide: %v", derived)
	}

	irr, err := s.NoteRelations(ctx, noteRelationsIn{Path: "Projects/Garden/Irrigation.md", Include: []string{"links"}, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(irr.Links.Incoming) < 8 || len(irr.Links.Outgoing) != 1 || irr.Links.Outgoing[0].Path != "sources/Rainwater harvesting article.md" {
		t.Errorf("irrigation links: %+v", irr.Links)
	}

	h, err := s.NoteRelations(ctx, noteRelationsIn{Path: "Concepts/Hügelkultur.md", Include: []string{"edges"}, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantOut := []RelationEdge{
		{Type: "depends_on", ID: "b7f1d3e5-2a4c-4b6d-8e0f-1a3c5e7b9d62", Path: "Projects/Garden/Compost.md", Title: "Compost"},
		{Type: "refines", ID: "e4c7b1d9-5a2f-4b6e-8d3c-0f9a7e2b5c14", Path: "Concepts/Crop rotation.md", Title: "Crop rotation"},
		{Type: "supports", ID: "c2e8f4a6-0b1d-4e3f-a5c7-9d2b4f6a8e11", Path: "Projects/Garden/Plan.md", Title: "Garden plan 2026"},
	}
	if !slices.Equal(h.Edges.Outgoing, wantOut) || !slices.Equal(h.Edges.Unresolved, []UnresolvedEdge{{Type: "depends_on", Target: "Lasagna gardening"}}) {
		t.Errorf("edges out of Hügelkultur: %+v", h.Edges)
	}
	if !slices.Equal(h.RelatedIDs, []string{"b7f1d3e5-2a4c-4b6d-8e0f-1a3c5e7b9d62", "c2e8f4a6-0b1d-4e3f-a5c7-9d2b4f6a8e11", "e4c7b1d9-5a2f-4b6e-8d3c-0f9a7e2b5c14"}) {
		t.Errorf("related ids: %v", h.RelatedIDs)
	}

	none, err := s.NoteRelations(ctx, noteRelationsIn{Path: "Forgotten recipe.md", Include: []string{}, Depth: 1})
	if err != nil || len(none.Included) != 0 || len(none.RelatedIDs) != 0 || none.Links != nil {
		t.Errorf("empty include: %+v %v", none, err)
	}

	for _, in := range []noteRelationsIn{{}, {ID: "e4c7b1d9", Path: "index.md"}} {
		if _, err := s.NoteRelations(ctx, in); refKind(err) != KindArgsInvalid {
			t.Errorf("%+v: %v, want args-invalid", in, err)
		}
	}
	for _, in := range []noteRelationsIn{{ID: "00000000-none"}, {ID: "abc"}, {Path: "nope.md"}} {
		if _, err := s.NoteRelations(ctx, in); refKind(err) != KindNoteNotFound {
			t.Errorf("%+v: %v, want note-not-found", in, err)
		}
	}
	if _, err := s.NoteRelations(ctx, noteRelationsIn{Path: "a/../../x.md"}); refKind(err) != KindPathInvalid {
		t.Errorf("bad path: %v", err)
	}
}

func TestNoteRelationsDepthAndCycles(t *testing.T) {
	dir := indexertest.Folder(t, map[string]string{
		"a.md": "---\nid: aaaaaaaa-1\nderived_from_ids: [bbbbbbbb-1]\nrelations:\n  cites: [\"[[b]]\", \"[[a]]\", 42]\n  \"\": \"[[c]]\"\n---\n[[b]] [[a]]\n",
		"b.md": "---\nid: bbbbbbbb-1\nderived_from_ids: [cccccccc-1, AAAAAAAA-1]\n---\n[[c]]\n",
		"c.md": "---\nid: cccccccc-1\nderived_from_ids: [missing-1]\nrelations: not a mapping\n---\n[[a]] ![[pic.png]]\n",
		"d.md": "no id, links to [[a]]\n",
	})
	s, _ := refVault(t, dir)
	ctx := context.Background()
	r, err := s.NoteRelations(ctx, noteRelationsIn{Path: "a.md", Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	paths := func(ns []RelatedNote) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Path)
		}
		return out
	}
	if got := paths(r.Links.Outgoing); !slices.Equal(got, []string{"b.md", "c.md"}) {
		t.Errorf("outgoing %v", got)
	}
	if got := paths(r.Links.Incoming); !slices.Equal(got, []string{"c.md", "d.md", "b.md"}) {
		t.Errorf("incoming %v (nearest first)", got)
	}
	if got := paths(r.Provenance.Sources); !slices.Equal(got, []string{"b.md", "c.md"}) || !slices.Equal(r.Provenance.UnresolvedSources, []string{"missing-1"}) {
		t.Errorf("sources %v, unresolved %v", got, r.Provenance.UnresolvedSources)
	}
	if got := paths(r.Provenance.Derived); !slices.Equal(got, []string{"b.md"}) {
		t.Errorf("derived %v", got)
	}
	if len(r.Edges.Outgoing) != 2 || r.Edges.Outgoing[0].Path != "a.md" || r.Edges.Outgoing[1].Path != "b.md" {
		t.Errorf("edges %+v", r.Edges)
	}
	if !slices.Equal(r.RelatedIDs, []string{"bbbbbbbb-1", "cccccccc-1", "d.md"}) {
		t.Errorf("related ids %v", r.RelatedIDs)
	}
	one, _ := s.NoteRelations(ctx, noteRelationsIn{ID: "aaaaaaaa-1", Depth: 1})
	if got := paths(one.Provenance.Sources); !slices.Equal(got, []string{"b.md"}) || len(one.Provenance.UnresolvedSources) != 0 {
		t.Errorf("depth 1 sources %v %v", got, one.Provenance.UnresolvedSources)
	}
}
