package toolstest

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

type refsResult struct {
	Counts []struct {
		Value  string `json:"value"`
		Lines  int    `json:"lines"`
		Capped bool   `json:"capped"`
	} `json:"counts"`
	References []reference `json:"references"`
	Offset     int         `json:"offset"`
	HasMore    bool        `json:"hasMore"`
	Note       string      `json:"note"`
}

type reference struct {
	Value     string `json:"value"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Text      string `json:"text"`
	Shortened bool   `json:"shortened"`
	Struck    bool   `json:"struck"`
}

// allRefs pages through find_references with small pages and checks that
// the pages agree with the counts and come sorted without repeats.
func allRefs(t *testing.T, c *Client, args map[string]any) (refsResult, []reference) {
	t.Helper()
	var first refsResult
	var refs []reference
	for offset := 0; ; {
		a := map[string]any{"limit": 7, "offset": offset}
		for k, v := range args {
			a[k] = v
		}
		var r refsResult
		c.MustOK("find_references", a, &r)
		if offset == 0 {
			first = r
		}
		if r.Offset != offset {
			t.Errorf("offset %d, asked for %d", r.Offset, offset)
		}
		refs = append(refs, r.References...)
		if !r.HasMore || len(r.References) == 0 {
			break
		}
		offset += len(r.References)
	}
	total := 0
	for _, cnt := range first.Counts {
		total += cnt.Lines
	}
	if len(refs) != total {
		t.Errorf("%v: %d references on all pages, counts say %d", args, len(refs), total)
	}
	for i := 1; i < len(refs); i++ {
		a, b := refs[i-1], refs[i]
		if a.Path > b.Path || (a.Path == b.Path && a.Line > b.Line) || (a == b) {
			t.Errorf("%v: references out of order or repeated: %+v then %+v", args, a, b)
		}
	}
	return first, refs
}

func testReferences(t *testing.T, c *Client) {
	r, refs := allRefs(t, c, map[string]any{"values": []any{"drip lines", "ПОЖАЛУЙСТА", "no such phrase anywhere"}})
	if len(r.Counts) != 3 || r.Counts[0].Value != "drip lines" || r.Counts[0].Lines < 3 || r.Counts[1].Lines != 1 || r.Counts[2].Lines != 0 {
		t.Errorf("counts %+v", r.Counts)
	}
	var irrigation, russian []reference
	for _, ref := range refs {
		switch {
		case ref.Path == "Projects/Garden/Irrigation.md":
			irrigation = append(irrigation, ref)
		case ref.Value == "ПОЖАЛУЙСТА":
			russian = append(russian, ref)
		}
		if !strings.Contains(strings.ToLower(ref.Text), strings.ToLower(ref.Value)) {
			t.Errorf("reference text %q lacks %q", ref.Text, ref.Value)
		}
	}
	if len(irrigation) < 2 || irrigation[0].Text != "## Drip lines" {
		t.Errorf("drip lines in Irrigation: %+v", irrigation)
	}
	if len(russian) != 1 || russian[0].Path != "Multilingual.md" || !strings.HasPrefix(russian[0].Text, "Пожалуйста") {
		t.Errorf("case-insensitive Cyrillic: %+v", russian)
	}

	// Values in code count: it is a text search.
	r, refs = allRefs(t, c, map[string]any{"values": []any{"FENCED FAKE LINK"}})
	if r.Counts[0].Lines != 1 || refs[0].Path != "Link zoo.md" {
		t.Errorf("a value inside a code block: %+v", refs)
	}

	// A note: every link to it by any spelling, plus its path in prose.
	r, refs = allRefs(t, c, map[string]any{"path": "Projects/Garden/Irrigation"})
	if len(r.Counts) != 1 || r.Counts[0].Value != "Projects/Garden/Irrigation.md" || r.Counts[0].Lines < 10 {
		t.Errorf("path counts %+v", r.Counts)
	}
	var zoo []int
	sources := map[string]bool{}
	for _, ref := range refs {
		sources[ref.Path] = true
		if ref.Path == "Link zoo.md" {
			zoo = append(zoo, ref.Line)
		}
		if ref.Value != "Projects/Garden/Irrigation.md" {
			t.Errorf("path reference value %q", ref.Value)
		}
	}
	if len(zoo) != 2 {
		t.Errorf("Link zoo links to Irrigation on two lines (display text, heading), got %v", zoo)
	}
	mustContain(t, "notes referencing Irrigation", slices.Collect(maps.Keys(sources)),
		"Projects/Garden/Plan.md", "People/Bob Tanaka.md", "Glossary.md")
	_, refs = allRefs(t, c, map[string]any{"path": "assets/photo.jpg"})
	var photo []string
	for _, ref := range refs {
		photo = append(photo, ref.Path)
	}
	if !slices.Equal(photo, []string{"Archive/Old plot map.md", "Link zoo.md", "Projects/Garden/2026/Spring planting.md"}) {
		t.Errorf("references to an attachment (relative, path and name links): %+v", refs)
	}

	c.MustFail("args-invalid", "find_references", map[string]any{})
	c.MustFail("args-invalid", "find_references", map[string]any{"values": []any{"x"}, "path": "index.md"})
	c.MustFail("args-invalid", "find_references", map[string]any{"values": []any{}})
	c.MustFail("args-invalid", "find_references", map[string]any{"values": []any{""}})
	c.MustFail("args-invalid", "find_references", map[string]any{"values": []any{"x"}, "limit": 71})
	c.MustFail("args-invalid", "find_references", map[string]any{"values": []any{"x"}, "repo": "handbook"})
	c.MustFail("note-not-found", "find_references", map[string]any{"path": "Nowhere/missing.md"})
	for _, p := range traversals {
		c.MustFail("path-invalid", "find_references", map[string]any{"path": p})
	}
}

func testSuggestLinks(t *testing.T, c *Client) {
	var p struct {
		Items []struct {
			TargetPath string `json:"targetPath"`
			Name       string `json:"name"`
			Count      int    `json:"count"`
		} `json:"items"`
		Total int `json:"total"`
	}
	c.MustOK("suggest_links", map[string]any{"path": "Volunteer roster.md"}, &p)
	var targets []string
	for _, it := range p.Items {
		targets = append(targets, it.TargetPath)
		if it.Count < 1 || it.Name == "" {
			t.Errorf("suggestion %+v", it)
		}
	}
	mustContain(t, "unlinked mentions in Volunteer roster", targets, "People/Alice Moreau.md", "People/Bob Tanaka.md")

	// Hügelkultur names Compost in prose (its frontmatter relation is no link).
	c.MustOK("suggest_links", map[string]any{"path": "Concepts/Hügelkultur"}, &p)
	if p.Total != 1 || p.Items[0].TargetPath != "Projects/Garden/Compost.md" || p.Items[0].Count != 1 {
		t.Errorf("Hügelkultur: %+v", p)
	}
	// Link zoo links to nearly everything it names, and "Plan" is ambiguous.
	c.MustOK("suggest_links", map[string]any{"path": "Link zoo.md", "limit": 500}, &p)
	for _, it := range p.Items {
		if it.Name == "Plan" || it.TargetPath == "Projects/Garden/Compost.md" || it.TargetPath == "Link zoo.md" {
			t.Errorf("Link zoo: %+v must not be suggested", it)
		}
	}
	c.MustFail("note-not-found", "suggest_links", map[string]any{"path": "missing.md"})
	c.MustFail("args-invalid", "suggest_links", map[string]any{})
}

type relatedNote struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Title string `json:"title"`
	Depth int    `json:"depth"`
}

type relationEdge struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Path  string `json:"path"`
	Title string `json:"title"`
}

type relations struct {
	ID       string   `json:"id"`
	Path     string   `json:"path"`
	Included []string `json:"included"`
	Links    *struct {
		Outgoing []relatedNote `json:"outgoing"`
		Incoming []relatedNote `json:"incoming"`
	} `json:"links"`
	Provenance *struct {
		Sources           []relatedNote `json:"sources"`
		Derived           []relatedNote `json:"derived"`
		UnresolvedSources []string      `json:"unresolved_sources"`
	} `json:"provenance"`
	Edges *struct {
		Outgoing   []relationEdge `json:"outgoing"`
		Incoming   []relationEdge `json:"incoming"`
		Unresolved []struct {
			Type   string `json:"type"`
			Target string `json:"target"`
		} `json:"unresolved"`
	} `json:"edges"`
	RelatedIDs []string `json:"related_ids"`
}

func testNoteRelations(t *testing.T, c *Client) {
	const cropID = "e4c7b1d9-5a2f-4b6e-8d3c-0f9a7e2b5c14"
	var r relations
	c.MustOK("note_relations", map[string]any{"id": "e4c7b1d9"}, &r)
	if r.ID != cropID || r.Path != "Concepts/Crop rotation.md" || !slices.Equal(r.Included, []string{"links", "provenance", "edges"}) {
		t.Fatalf("crop rotation: %+v", r)
	}
	if p := r.Provenance; p == nil || len(p.Sources) != 1 || p.Sources[0].ID != "7c1e4a52-3b8d-4f6e-9a21-5d0c8e7f1a34" ||
		!slices.Equal(p.UnresolvedSources, []string{"deadbeef-dead-4bee-8bad-000000000000"}) {
		t.Errorf("provenance of crop rotation: %+v", r.Provenance)
	}
	if e := r.Edges; e == nil || len(e.Incoming) != 1 || e.Incoming[0].Type != "refines" || e.Incoming[0].Path != "Concepts/Hügelkultur.md" {
		t.Errorf("edges into crop rotation: %+v", r.Edges)
	}
	mustContain(t, "related_ids of crop rotation", r.RelatedIDs,
		"7c1e4a52-3b8d-4f6e-9a21-5d0c8e7f1a34", "c2e8f4a6-0b1d-4e3f-a5c7-9d2b4f6a8e11", "Concepts/Hügelkultur.md")
	mustLack(t, "related_ids of crop rotation", r.RelatedIDs, cropID)
	if !slices.IsSorted(r.RelatedIDs) {
		t.Errorf("related_ids not sorted: %v", r.RelatedIDs)
	}

	r = relations{}
	c.MustOK("note_relations", map[string]any{"path": "Projects/Garden/Irrigation.md", "include": []any{"links", "someday"}}, &r)
	if r.Provenance != nil || r.Edges != nil || r.Links == nil || len(r.Links.Incoming) < 8 {
		t.Errorf("links only, Irrigation has many backlinks: %+v", r)
	}

	r = relations{}
	c.MustOK("note_relations", map[string]any{"path": "Concepts/Hügelkultur.md", "include": []any{"edges"}}, &r)
	var out []string
	for _, e := range r.Edges.Outgoing {
		out = append(out, e.Type+" "+e.Path)
	}
	if !slices.Equal(out, []string{"depends_on Projects/Garden/Compost.md", "refines Concepts/Crop rotation.md", "supports Projects/Garden/Plan.md"}) ||
		len(r.Edges.Unresolved) != 1 || r.Edges.Unresolved[0].Target != "Lasagna gardening" {
		t.Errorf("edges out of Hügelkultur: %+v", r.Edges)
	}

	r = relations{}
	c.MustOK("note_relations", map[string]any{"id": "7c1e4a52", "include": []any{"provenance"}, "depth": 2}, &r)
	var derived []string
	for _, d := range r.Provenance.Derived {
		derived = append(derived, d.Path)
	}
	mustContain(t, "notes derived from the soil guide", derived, "Concepts/Crop rotation.md")

	c.MustFail("args-invalid", "note_relations", map[string]any{})
	c.MustFail("args-invalid", "note_relations", map[string]any{"id": "e4c7b1d9", "path": "index.md"})
	c.MustFail("args-invalid", "note_relations", map[string]any{"id": "e4c7b1d9", "depth": 4})
	c.MustFail("note-not-found", "note_relations", map[string]any{"id": "ffffffff-none"})
	c.MustFail("note-not-found", "note_relations", map[string]any{"path": "missing.md"})
	c.MustFail("path-invalid", "note_relations", map[string]any{"path": "../outside.md"})
}
