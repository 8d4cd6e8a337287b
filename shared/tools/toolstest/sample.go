package toolstest

import (
	"encoding/base64"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The facts below are those of infra/sample-vault; keep them in step with it.

type summary struct {
	Path  string   `json:"path"`
	Name  string   `json:"name"`
	Title string   `json:"title"`
	Tags  []string `json:"tags"`
	ID    string   `json:"id"`
}

type notesPage struct {
	Items  []summary `json:"items"`
	Total  int       `json:"total"`
	Offset int       `json:"offset"`
	Limit  int       `json:"limit"`
}

func paths(items []summary) []string {
	var ps []string
	for _, it := range items {
		ps = append(ps, it.Path)
	}
	sort.Strings(ps)
	return ps
}

func mustContain(t *testing.T, what string, list []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(list, w) {
			t.Errorf("%s: %q missing from %v", what, w, list)
		}
	}
}

func mustLack(t *testing.T, what string, list []string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if slices.Contains(list, b) {
			t.Errorf("%s: %q must not be there", what, b)
		}
	}
}

// sampleNotes is every indexable note (binary.md is skipped as binary).
const sampleNotes = 43

const nfdPath = "Cafe\u0301/Re\u0301sume\u0301 notes.md"
const nfcPath = "Café/Résumé notes.md"

func testVaultInfo(t *testing.T, c *Client) {
	var info struct {
		Vault          string   `json:"vault"`
		NoteCount      int      `json:"noteCount"`
		AgentsFile     *string  `json:"agentsFile"`
		ImmutablePaths []string `json:"immutablePaths"`
		IndexedAt      string   `json:"indexedAt"`
		Capabilities   struct {
			Embeddings      bool `json:"embeddings"`
			HasIndexCatalog bool `json:"hasIndexCatalog"`
		} `json:"capabilities"`
		Liveness struct {
			PendingDirectives int    `json:"pendingDirectives"`
			LastLogDate       string `json:"lastLogDate"`
		} `json:"liveness"`
		Problems []struct {
			Path string `json:"path"`
		} `json:"problems"`
	}
	c.MustOK("get_vault_info", nil, &info)
	if info.NoteCount != sampleNotes {
		t.Errorf("noteCount = %d, want %d", info.NoteCount, sampleNotes)
	}
	if info.AgentsFile == nil || !strings.Contains(*info.AgentsFile, "agents") {
		t.Errorf("agentsFile should hold AGENTS.md, got %v", info.AgentsFile)
	}
	if info.IndexedAt == "" || !info.Capabilities.HasIndexCatalog {
		t.Errorf("indexedAt/capabilities wrong: %+v", info)
	}
	if info.Liveness.PendingDirectives != 3 {
		t.Errorf("pendingDirectives = %d, want 3 (hidden folders and code do not count)", info.Liveness.PendingDirectives)
	}
	if info.Liveness.LastLogDate != "2026-11-02" {
		t.Errorf("lastLogDate = %q, want 2026-11-02", info.Liveness.LastLogDate)
	}
	var probs []string
	for _, p := range info.Problems {
		probs = append(probs, p.Path)
	}
	mustContain(t, "problems", probs, "binary.md", "bad-utf8.md")
	c.MustOK("get_vault_info", map[string]any{"vault": info.Vault}, nil)
}

func testListNotes(t *testing.T, c *Client) {
	var all notesPage
	c.MustOK("list_notes", map[string]any{"limit": 500}, &all)
	if all.Total != sampleNotes || len(all.Items) != sampleNotes {
		t.Errorf("list_notes: total %d, items %d, want %d", all.Total, len(all.Items), sampleNotes)
	}
	ps := paths(all.Items)
	mustContain(t, "list_notes", ps, "index.md", "Ideas 💡.md", "庭の記録.md", nfcPath, "bad-utf8.md", "Watering rota.md")
	mustLack(t, "list_notes", ps, "binary.md", ".obsidian/templates/Daily template.md", ".trash/Deleted idea.md", nfdPath)

	var p notesPage
	c.MustOK("list_notes", map[string]any{"path": "Projects", "limit": 100}, &p)
	if p.Total != 10 {
		t.Errorf("Projects recursive: %d notes, want 10: %v", p.Total, paths(p.Items))
	}
	c.MustOK("list_notes", map[string]any{"path": "Projects/Garden", "recursive": false}, &p)
	if got := paths(p.Items); !slices.Equal(got, []string{"Projects/Garden/Compost.md", "Projects/Garden/Irrigation.md", "Projects/Garden/Plan.md"}) {
		t.Errorf("Projects/Garden non-recursive: %v", got)
	}
	c.MustOK("list_notes", map[string]any{"path": "Café/"}, &p)
	if got := paths(p.Items); !slices.Equal(got, []string{nfcPath}) {
		t.Errorf("folder Café: %v", got)
	}
	c.MustOK("list_notes", map[string]any{"tags": []string{"project"}, "limit": 100}, &p)
	if p.Total != 12 {
		t.Errorf("tags [project] (nested descendants): %d, want 12", p.Total)
	}
	c.MustOK("list_notes", map[string]any{"title_contains": "COMMITTEE"}, &p)
	if got := paths(p.Items); len(got) != 2 {
		t.Errorf("title_contains committee: %v", got)
	}
	c.MustOK("list_notes", map[string]any{"metadata_match": map[string]any{"status": "draft", "priority": 2}}, &p)
	mustContain(t, "metadata_match", paths(p.Items), "Projects/Website/Architecture.md")
	c.MustOK("list_notes", map[string]any{"metadata_match": map[string]any{"priority": "2"}}, &p)
	mustLack(t, "metadata_match type-sensitive", paths(p.Items), "Projects/Website/Architecture.md")
	c.MustOK("list_notes", map[string]any{"entities": []string{"Greenhaven"}}, &p)
	mustContain(t, "entities", paths(p.Items), "Projects/Garden/2026/Soil test results.md")
	c.MustOK("list_notes", map[string]any{"since": "2999-01-01"}, &p)
	if p.Total != 0 {
		t.Errorf("since far future: %d notes", p.Total)
	}
	c.MustOK("list_notes", map[string]any{"content_query": "compost", "path_prefix": "Projects/"}, &p)
	mustContain(t, "content_query", paths(p.Items), "Projects/Garden/Compost.md")
	for _, it := range p.Items {
		if !strings.HasPrefix(it.Path, "Projects/") {
			t.Errorf("path_prefix not applied: %s", it.Path)
		}
	}
}

type readNoteResult struct {
	Path          string         `json:"path"`
	Title         string         `json:"title"`
	ID            string         `json:"id"`
	Content       string         `json:"content"`
	Truncated     bool           `json:"truncated"`
	ContentHash   string         `json:"content_hash"`
	Frontmatter   map[string]any `json:"frontmatter"`
	Warnings      []string       `json:"warnings"`
	OutgoingLinks []outLink      `json:"outgoingLinks"`
}

type outLink struct {
	Target       string   `json:"target"`
	Kind         string   `json:"kind"`
	Embed        bool     `json:"embed"`
	ResolvedPath *string  `json:"resolvedPath"`
	Candidates   []string `json:"candidates"`
	DisplayText  string   `json:"displayText"`
}

func testReadNote(t *testing.T, c *Client) {
	var n readNoteResult
	c.MustOK("read_note", map[string]any{"path": "Projects/Garden/Plan.md"}, &n)
	if n.Title != "Garden plan 2026" || n.ID != "c2e8f4a6-0b1d-4e3f-a5c7-9d2b4f6a8e11" || len(n.ContentHash) != 64 {
		t.Errorf("read_note Garden plan: title %q id %q hash %q", n.Title, n.ID, n.ContentHash)
	}
	unresolved := false
	for _, l := range n.OutgoingLinks {
		if strings.EqualFold(l.Target, "Greenhouse budget") && l.ResolvedPath == nil {
			unresolved = true
		}
	}
	if !unresolved {
		t.Errorf("[[Greenhouse budget]] should be listed unresolved")
	}
	var byID readNoteResult
	c.MustOK("read_note", map[string]any{"id": "c2e8f4"}, &byID)
	if byID.Path != "Projects/Garden/Plan.md" {
		t.Errorf("read_note by id prefix: %s", byID.Path)
	}
	c.MustOK("read_note", map[string]any{"id": "3f2a9c"}, &byID)
	if byID.Path != "sources/Rainwater harvesting article.md" {
		t.Errorf("read_note by id prefix 3f2a9c: %s", byID.Path)
	}
	c.MustFail("note-not-found", "read_note", map[string]any{"id": "3f2a"})
	c.MustFail("note-not-found", "read_note", map[string]any{"id": "ffffffff-0000"})

	var long readNoteResult
	c.MustOK("read_note", map[string]any{"path": "Soil handbook.md", "max_length": 300}, &long)
	if !long.Truncated || len([]rune(long.Content)) > 300 || len(long.Content) == 0 {
		t.Errorf("max_length 300: truncated %v, %d chars", long.Truncated, len([]rune(long.Content)))
	}
	c.MustOK("read_note", map[string]any{"path": "Short.md", "max_length": 10000}, &long)
	if long.Truncated {
		t.Errorf("a short note must not be truncated")
	}

	c.MustOK("read_note", map[string]any{"path": "Link zoo"}, &n)
	if n.Path != "Link zoo.md" {
		t.Errorf("a note named without .md: %s", n.Path)
	}
	for _, p := range []string{nfcPath, nfdPath} {
		c.MustOK("read_note", map[string]any{"path": p}, &n)
		if n.Path != nfcPath {
			t.Errorf("read_note(%q).path = %q, want the NFC spelling", p, n.Path)
		}
	}
	c.MustOK("read_note", map[string]any{"path": "bad-utf8.md"}, &n)
	if len(n.Warnings) == 0 || !strings.Contains(n.Content, "\uFFFD") {
		t.Errorf("bad-utf8.md: want a warning and U+FFFD in the content")
	}
	c.MustOK("read_note", map[string]any{"path": "Broken frontmatter.md"}, &n)
	if n.Title == "" {
		t.Errorf("broken frontmatter: no title")
	}
	c.MustFail("not-markdown", "read_note", map[string]any{"path": "assets/diagram.png"})
	c.MustFail("not-markdown", "read_note", map[string]any{"path": "binary.md"})
	c.MustFail("note-not-found", "read_note", map[string]any{"path": "Nope/missing.md"})
	c.MustFail("note-not-found", "read_note", map[string]any{"path": ".obsidian/templates/Daily template.md"})
	c.MustFail("note-not-found", "read_note", map[string]any{"path": ".trash/Deleted idea.md"})
}

func testOutline(t *testing.T, c *Client) {
	var o struct {
		Headings []struct {
			Level int    `json:"level"`
			Title string `json:"title"`
			ID    string `json:"id"`
			Line  int    `json:"line"`
		} `json:"headings"`
	}
	c.MustOK("read_outline", map[string]any{"path": "Meetings/2026-03-04 Committee.md"}, &o)
	ids := map[string]bool{}
	var decisions []int
	for _, h := range o.Headings {
		if ids[h.ID] {
			t.Errorf("duplicate heading id %q: duplicates need -1, -2 suffixes", h.ID)
		}
		ids[h.ID] = true
		if h.Title == "Decisions" {
			decisions = append(decisions, h.Line)
		}
	}
	if !slices.Equal(decisions, []int{10, 21}) || !ids["decisions"] || !ids["decisions-1"] {
		t.Errorf("Decisions headings: lines %v ids %v", decisions, ids)
	}
	c.MustOK("read_outline", map[string]any{"path": "Glossary.md"}, &o)
	if len(o.Headings) != 5 || o.Headings[0].Level != 1 {
		t.Errorf("Glossary setext outline: %+v", o.Headings)
	}
	c.MustFail("note-not-found", "read_outline", map[string]any{"path": "missing.md"})
	c.MustFail("not-markdown", "read_outline", map[string]any{"path": "docs/spec.pdf"})
}

func testLinks(t *testing.T, c *Client) {
	var out struct {
		Items []outLink `json:"items"`
		Total int       `json:"total"`
	}
	c.MustOK("list_outgoing_links", map[string]any{"path": "Link zoo.md", "limit": 500}, &out)
	resolved := map[string]string{}
	for _, l := range out.Items {
		if strings.Contains(strings.ToLower(l.Target), "hidden link") {
			t.Errorf("a link inside %%%%comments%%%% was listed")
		}
		if strings.EqualFold(l.Target, "Plan") {
			if l.ResolvedPath != nil || !slices.Equal(l.Candidates, []string{"Projects/Garden/Plan.md", "Projects/Website/Plan.md"}) {
				t.Errorf("[[Plan]] must be ambiguous with both candidates, got %v %v", l.ResolvedPath, l.Candidates)
			}
		}
		if l.ResolvedPath != nil {
			resolved[strings.ToLower(l.Target)] = *l.ResolvedPath
		}
	}
	for target, want := range map[string]string{
		"compost heap":        "Projects/Garden/Compost.md",
		"rota of volunteers":  "Volunteer roster.md",
		"volunteer roster.md": "Volunteer roster.md",
		"diagram.png":         "assets/diagram.png",
	} {
		if resolved[target] != want {
			t.Errorf("Link zoo: %q resolved to %q, want %q", target, resolved[target], want)
		}
	}

	var back struct {
		Items []struct {
			SourcePath string `json:"sourcePath"`
		} `json:"items"`
		Total int `json:"total"`
	}
	sources := func(path string) []string {
		c.MustOK("list_backlinks", map[string]any{"path": path, "limit": 500}, &back)
		var s []string
		for _, it := range back.Items {
			s = append(s, it.SourcePath)
		}
		return s
	}
	mustContain(t, "backlinks of Compost", sources("Projects/Garden/Compost.md"),
		"Projects/Garden/2026/Spring planting.md", "People/Bob Tanaka.md", "Link zoo.md")
	mustContain(t, "backlinks of Volunteer roster", sources("Volunteer roster.md"), "Link zoo.md")
	mustContain(t, "backlinks of the NFD note", sources(nfdPath), "index.md")
	mustContain(t, "backlinks of Alice", sources("People/Alice Moreau.md"), "Meetings/2026-04-01 Committee.md")
	if got := sources("Forgotten recipe.md"); len(got) != 0 {
		t.Errorf("an orphan has backlinks: %v", got)
	}

	var g struct {
		Center string `json:"center"`
		Depth  int    `json:"depth"`
		Nodes  []struct {
			Path string `json:"path"`
		} `json:"nodes"`
		Edges []struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"edges"`
	}
	c.MustOK("link_graph", map[string]any{"path": "Projects/Garden/Irrigation.md", "depth": 9}, &g)
	if g.Depth != 5 {
		t.Errorf("depth must be capped at 5, got %d", g.Depth)
	}
	c.MustOK("link_graph", map[string]any{"path": "Projects/Garden/Irrigation.md"}, &g)
	nodes := map[string]bool{}
	for _, n := range g.Nodes {
		nodes[n.Path] = true
	}
	if !nodes["Projects/Garden/Irrigation.md"] || len(nodes) < 5 {
		t.Errorf("link_graph depth 1 around Irrigation (10 inbound): %d nodes", len(nodes))
	}
	for _, e := range g.Edges {
		if !nodes[e.From] || !nodes[e.To] {
			t.Errorf("edge %v leaves the node set", e)
		}
	}
}

type searchResult struct {
	Items []struct {
		Path     string  `json:"path"`
		Title    string  `json:"title"`
		Snippet  string  `json:"snippet"`
		Score    float64 `json:"score"`
		Distance *int    `json:"distance"`
	} `json:"items"`
	Total int    `json:"total"`
	Hint  string `json:"hint"`
	Mode  string `json:"mode"`
}

func (r searchResult) paths() []string {
	var ps []string
	for _, it := range r.Items {
		ps = append(ps, it.Path)
	}
	return ps
}

func testSearch(t *testing.T, c *Client) {
	var info struct {
		Capabilities struct {
			Embeddings bool `json:"embeddings"`
		} `json:"capabilities"`
	}
	c.MustOK("get_vault_info", nil, &info)
	var r searchResult
	c.MustOK("search", map[string]any{"query": "compost"}, &r)
	mustContain(t, "search compost", r.paths(), "Projects/Garden/Compost.md")
	for i, it := range r.Items {
		if it.Score >= 0 {
			t.Errorf("BM25 scores are negative, got %v", it.Score)
		}
		if i > 0 && it.Score < r.Items[i-1].Score {
			t.Errorf("results not best-first: %v after %v", it.Score, r.Items[i-1].Score)
		}
		if it.Snippet == "" {
			t.Errorf("%s: empty snippet", it.Path)
		}
	}
	c.MustOK("search", map[string]any{"query": "compo"}, &r)
	mustContain(t, "prefix search compo", r.paths(), "Projects/Garden/Compost.md")
	c.MustOK("search", map[string]any{"query": "garden -compost", "limit": 100}, &r)
	mustLack(t, "garden -compost", r.paths(), "Projects/Garden/Compost.md")
	c.MustOK("search", map[string]any{"query": "compost OR irrigation", "limit": 100}, &r)
	mustContain(t, "OR", r.paths(), "Projects/Garden/Compost.md", "Projects/Garden/Irrigation.md")
	for _, q := range []string{`"unbalanced`, `OR`, `NOT`, `-only`, `()`, `"`, `***`, `title:x`} {
		if res := c.Call("search", map[string]any{"query": q}, &r); res.IsError {
			t.Errorf("malformed query %q must return no rows, not error %s", q, res.Kind)
		}
	}
	c.MustOK("search", map[string]any{"query": "resume"}, &r)
	mustContain(t, "diacritics folded", r.paths(), nfcPath)
	c.MustOK("search", map[string]any{"query": "огород"}, &r)
	if r.Total == 0 {
		t.Errorf("Cyrillic search found nothing")
	}
	c.MustOK("search", map[string]any{"query": "庭"}, &r)
	mustContain(t, "Japanese search", r.paths(), "庭の記録.md")
	for _, q := range []string{"hidden-template", "trash-only"} {
		c.MustOK("search", map[string]any{"query": q}, &r)
		if r.Total != 0 {
			t.Errorf("hidden folders were indexed: %q found %v", q, r.paths())
		}
	}
	c.MustOK("search", map[string]any{"query": "plan", "path_prefix": "Projects/Website/", "limit": 100}, &r)
	if r.Total == 0 {
		t.Errorf("path_prefix search found nothing")
	}
	for _, p := range r.paths() {
		if !strings.HasPrefix(p, "Projects/Website/") {
			t.Errorf("path_prefix not applied before ranking: %s", p)
		}
	}
	c.MustOK("search", map[string]any{"query": "plan", "tags": []string{"project/website"}, "limit": 100}, &r)
	for _, p := range r.paths() {
		if !strings.HasPrefix(p, "Projects/Website/") {
			t.Errorf("tag filter let %s through", p)
		}
	}
	c.MustOK("search", map[string]any{"query": "how do we keep the compost heap warm in winter"}, &r)
	if r.Total == 0 && r.Hint == "" {
		t.Errorf("a sentence with no all-word match must come with a hint")
	}
	c.MustOK("search", map[string]any{"query": "how do we keep the compost heap warm in winter", "match": "any"}, &r)
	if r.Total == 0 {
		t.Errorf("match any found nothing for a question")
	}
	if !info.Capabilities.Embeddings {
		res := c.MustFail("unsupported", "search", map[string]any{"query": "soil", "mode": "semantic"})
		if res.Fields["reason"] != "not-configured" {
			t.Errorf("semantic without a provider: reason %v", res.Fields["reason"])
		}
		c.MustFail("unsupported", "search", map[string]any{"query": "soil", "mode": "hybrid"})
	}

	c.MustOK("search", map[string]any{"query": "x", "mode": "graph", "seed_ids": []string{"5b8e2d71"}, "graph_depth": 1, "limit": 100}, &r)
	if r.Mode != "graph" || len(r.Items) < 2 || r.Items[0].Path != "Projects/Garden/Irrigation.md" {
		t.Errorf("graph search from Irrigation: %v", r.paths())
	}
	for _, it := range r.Items {
		if it.Distance == nil || *it.Distance > 1 {
			t.Errorf("graph depth 1 returned %s at distance %v", it.Path, it.Distance)
		}
	}
	c.MustOK("search", map[string]any{"query": "irrigation drip lines", "mode": "graph"}, &r)
	if r.Total == 0 {
		t.Errorf("graph search with auto seeds found nothing")
	}
}

func testTags(t *testing.T, c *Client) {
	var tags struct {
		Items []struct {
			Tag   string `json:"tag"`
			Count int    `json:"count"`
		} `json:"items"`
		Total int `json:"total"`
	}
	c.MustOK("list_tags", map[string]any{"limit": 500}, &tags)
	counts := map[string]int{}
	for _, it := range tags.Items {
		counts[it.Tag] = it.Count
	}
	for tag, want := range map[string]int{"project": 12, "project/garden": 8, "project/website": 4, "café": 3, "日本語": 3, "огород": 1, "season/spring": 1} {
		if counts[tag] != want {
			t.Errorf("tag %q: count %d, want %d", tag, counts[tag], want)
		}
	}
	for _, bad := range []string{"inline-code-tag", "fenced-tag", "comment-tag", "fragment-tag", "123", "2026", "hidden-template", "trash-only", "c"} {
		if _, ok := counts[bad]; ok {
			t.Errorf("%q must not be a tag", bad)
		}
	}
	c.MustOK("list_tags", map[string]any{"prefix": "#Proj"}, &tags)
	for _, it := range tags.Items {
		if !strings.HasPrefix(it.Tag, "proj") {
			t.Errorf("prefix filter let %q through", it.Tag)
		}
	}
	if tags.Total != 3 {
		t.Errorf("prefix proj: %d tags, want 3", tags.Total)
	}
	var p notesPage
	c.MustOK("notes_by_tag", map[string]any{"tag": "project", "limit": 100}, &p)
	if p.Total != 12 {
		t.Errorf("notes_by_tag project: %d, want 12 (nested descendants)", p.Total)
	}
	c.MustOK("notes_by_tag", map[string]any{"tag": "#project/garden"}, &p)
	if p.Total != 8 {
		t.Errorf("notes_by_tag #project/garden: %d, want 8", p.Total)
	}
	c.MustOK("notes_by_tag", map[string]any{"tag": "no-such-tag"}, &p)
	if p.Total != 0 || p.Items == nil {
		t.Errorf("unknown tag: want an empty list, got %+v", p)
	}
}

func testFolders(t *testing.T, c *Client) {
	var f struct {
		Folders []string `json:"folders"`
	}
	c.MustOK("list_folders", nil, &f)
	want := []string{"Archive", "Café", "Concepts", "Inbox", "Meetings", "People", "Projects", "Projects/Garden",
		"Projects/Garden/2026", "Projects/Website", "assets", "data", "docs", "eval", "sources"}
	got := append([]string(nil), f.Folders...)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("list_folders = %v\nwant %v", got, want)
	}
	c.MustOK("list_folders", map[string]any{"path": "Projects"}, &f)
	sort.Strings(f.Folders)
	if !slices.Equal(f.Folders, []string{"Projects/Garden", "Projects/Garden/2026", "Projects/Website"}) {
		t.Errorf("list_folders Projects = %v", f.Folders)
	}
}

func testAttachments(t *testing.T, c *Client) {
	var a struct {
		Items []struct {
			Path     string `json:"path"`
			Size     int64  `json:"size"`
			MimeType string `json:"mimeType"`
		} `json:"items"`
		Total int `json:"total"`
	}
	c.MustOK("list_attachments", map[string]any{"limit": 500}, &a)
	mime := map[string]string{}
	for _, it := range a.Items {
		mime[it.Path] = it.MimeType
	}
	for p, want := range map[string]string{"assets/diagram.png": "image/png", "assets/photo.jpg": "image/jpeg", "docs/spec.pdf": "application/pdf"} {
		if mime[p] != want {
			t.Errorf("attachment %s: mime %q, want %q", p, mime[p], want)
		}
	}
	if _, ok := mime[".obsidian/app.json"]; ok {
		t.Errorf("hidden files listed as attachments")
	}
	c.MustOK("list_attachments", map[string]any{"path": "docs"}, &a)
	if a.Total != 1 || a.Items[0].Path != "docs/spec.pdf" {
		t.Errorf("list_attachments docs: %+v", a.Items)
	}
	var r struct {
		MimeType string `json:"mimeType"`
		Size     int64  `json:"size"`
		Base64   string `json:"base64"`
	}
	c.MustOK("read_attachment", map[string]any{"path": "assets/diagram.png"}, &r)
	data, err := base64.StdEncoding.DecodeString(r.Base64)
	if err != nil || !strings.HasPrefix(string(data), "\x89PNG") || int64(len(data)) != r.Size {
		t.Errorf("read_attachment diagram.png: %d bytes, err %v", len(data), err)
	}
	res := c.MustFail("unsupported", "read_attachment", map[string]any{"path": "assets/huge.bin"})
	if res.Fields["max_bytes"] == nil {
		t.Errorf("an oversized attachment's error must say the cap: %v", res.Fields)
	}
	c.MustFail("note-not-found", "read_attachment", map[string]any{"path": "assets/missing.png"})
}

func testPaging(t *testing.T, c *Client) {
	seen := map[string]bool{}
	total := -1
	for offset := 0; ; offset += 7 {
		var p notesPage
		c.MustOK("list_notes", map[string]any{"limit": 7, "offset": offset}, &p)
		if total >= 0 && p.Total != total {
			t.Fatalf("total changed while paging: %d then %d", total, p.Total)
		}
		total = p.Total
		if p.Offset != offset || p.Limit != 7 {
			t.Errorf("page echoes offset %d limit %d", p.Offset, p.Limit)
		}
		for _, it := range p.Items {
			if seen[it.Path] {
				t.Errorf("%s on two pages", it.Path)
			}
			seen[it.Path] = true
		}
		if len(p.Items) < 7 {
			break
		}
	}
	if len(seen) != total {
		t.Errorf("paged through %d notes, total %d", len(seen), total)
	}
	var p notesPage
	c.MustOK("list_notes", map[string]any{"offset": 10000}, &p)
	if len(p.Items) != 0 || p.Total != total {
		t.Errorf("offset past the end: %d items, total %d", len(p.Items), p.Total)
	}
	var r searchResult
	c.MustOK("search", map[string]any{"query": "garden", "limit": 3, "offset": 0}, &r)
	first := r.paths()
	c.MustOK("search", map[string]any{"query": "garden", "limit": 3, "offset": 3}, &r)
	for _, p := range r.paths() {
		if slices.Contains(first, p) {
			t.Errorf("search paging repeated %s", p)
		}
	}
}
