package core

import (
	"context"
	"testing"
	"time"
)

var provNotes = map[string]string{
	"sources/Pruning.md": "---\ntitle: Pruning guide\nsource_url: https://example.com/pruning\nexpires_at: 2026-01-01\ntags: [orchard]\nowner: ann\n---\n# Pruning guide\n\nPrune apple trees in late winter.\n",
	"Orchard plan.md":    "---\nderived_from_ids: [s-1, s-2]\nexpires_at: 2099-01-01T00:00:00Z\ntags: [orchard]\n---\n# Orchard plan\n\nPrune the apple trees in February.\n",
	"Plain.md":           "# Plain\n\n#orchard apple notes without provenance.\n",
}

// TestProvenanceOnHitsAndListings: search (fulltext and graph),
// search_and_read, list_notes and notes_by_tag carry updated_at,
// source_url, derived_from_ids and is_stale from the catalog, and the
// frontmatter as metadata when asked.
func TestProvenanceOnHitsAndListings(t *testing.T) {
	s, _ := indexedServer(t, provNotes, nil)
	s.Now = func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }
	ctx := context.Background()
	check := func(what string, got map[string]Provenance) {
		t.Helper()
		pr, plan, plain := got["sources/Pruning.md"], got["Orchard plan.md"], got["Plain.md"]
		if pr.SourceURL != "https://example.com/pruning" || pr.IsStale == nil || !*pr.IsStale || pr.ExpiresAt != "2026-01-01T00:00:00Z" || pr.UpdatedAt == "" {
			t.Errorf("%s: the expired source: %+v", what, pr)
		}
		if plan.IsStale == nil || *plan.IsStale || len(plan.DerivedFromIDs) != 2 || plan.DerivedFromIDs[1] != "s-2" || plan.UpdatedAt == "" {
			t.Errorf("%s: the plan: %+v", what, plan)
		}
		if plain.IsStale == nil || *plain.IsStale || plain.SourceURL != "" || plain.ExpiresAt != "" || plain.UpdatedAt == "" {
			t.Errorf("%s: the plain note: %+v", what, plain)
		}
	}

	res, err := s.Search(ctx, SearchArgs{Query: "apple", Limit: 10, Match: "any"})
	if err != nil || len(res.Items) != 3 {
		t.Fatalf("search: %v %+v", err, res)
	}
	got := map[string]Provenance{}
	for _, h := range res.Items {
		got[h.Path] = h.Provenance
		if h.Metadata != nil {
			t.Errorf("search without include: metadata on %s", h.Path)
		}
	}
	check("search", got)

	res, err = s.Search(ctx, SearchArgs{Query: "apple", Limit: 10, Match: "any", IncludeArg: IncludeArg{Include: []string{"metadata"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Items {
		if h.Path == "sources/Pruning.md" && h.Metadata["owner"] != "ann" {
			t.Errorf("search with include metadata: %+v", h.Provenance)
		}
	}

	list, err := s.ListNotes(ctx, listNotesIn{Page: Page{Limit: 50}})
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]Provenance{}
	for _, n := range list.Items {
		got[n.Path] = n.Provenance
	}
	check("list_notes", got)

	tagged, err := s.NotesByTag(ctx, notesByTagIn{Tag: "orchard", Page: Page{Limit: 50}, IncludeArg: IncludeArg{Include: []string{"metadata"}}})
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]Provenance{}
	for _, n := range tagged.Items {
		got[n.Path] = n.Provenance
		if n.Path == "sources/Pruning.md" && n.Metadata["owner"] != "ann" {
			t.Errorf("notes_by_tag metadata: %+v", n.Metadata)
		}
	}
	check("notes_by_tag", got)

	sar, err := s.SearchAndRead(ctx, searchAndReadIn{Query: "apple trees", K: 5, Mode: "note"})
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]Provenance{}
	for _, it := range sar.Notes {
		got[it.Path] = it.Provenance
	}
	check("search_and_read", got)
}
