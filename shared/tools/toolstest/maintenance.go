package toolstest

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The maintenance tools over the sample vault, whose index.md declares
//
//	lint: {tags: {allowed: [hub, garden, project, people, committee, concept, soil, source,
//	  water, meeting, planning, planting, tools, volunteers],
//	  required: [hub, project, concept, people, source, meeting], deprecated: {shed: tools}}}

type finding struct {
	Rule       string `json:"rule"`
	Severity   string `json:"severity"`
	Path       string `json:"path"`
	Line       int    `json:"line"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion"`
}

type lintPage struct {
	Items  []finding      `json:"items"`
	Total  int            `json:"total"`
	Counts map[string]int `json:"counts"`
}

// lintAll pages through every finding of the given rules (all when none).
func lintAll(t *testing.T, c *Client, rules ...string) lintPage {
	t.Helper()
	var all lintPage
	for offset := 0; ; offset += 100 {
		args := map[string]any{"limit": 100, "offset": offset}
		if len(rules) > 0 {
			args["rules"] = rules
		}
		var p lintPage
		c.MustOK("lint", args, &p)
		all.Items = append(all.Items, p.Items...)
		all.Total, all.Counts = p.Total, p.Counts
		if len(p.Items) < 100 {
			return all
		}
	}
}

func (p lintPage) of(rule string) []finding {
	var out []finding
	for _, f := range p.Items {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func findingPaths(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

func testLint(t *testing.T, c *Client) {
	all := lintAll(t, c)
	if all.Total != len(all.Items) || all.Total == 0 {
		t.Fatalf("lint: total %d, %d items", all.Total, len(all.Items))
	}
	sum := 0
	for _, n := range all.Counts {
		sum += n
	}
	if sum != all.Total {
		t.Errorf("counts %v add up to %d, total %d", all.Counts, sum, all.Total)
	}
	sorted := slices.IsSortedFunc(all.Items, func(a, b finding) int {
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	if !sorted {
		t.Errorf("findings are not sorted by rule, path, line")
	}
	for _, f := range all.Items {
		if f.Suggestion == "" || f.Message == "" || !slices.Contains([]string{"error", "warning", "info"}, f.Severity) {
			t.Errorf("malformed finding %+v", f)
		}
		if strings.HasPrefix(f.Path, ".") || f.Path == "binary.md" {
			t.Errorf("finding on a file outside the vault model: %+v", f)
		}
	}

	orphans := findingPaths(all.of("orphan-note"))
	want := []string{"Broken frontmatter.md", "Forgotten recipe.md", "Frontmatter only.md", "Short.md", "sources/Pollinator survey 2025.md"}
	if !slices.Equal(orphans, want) {
		t.Errorf("orphan-note %v, want %v", orphans, want)
	}
	noIn := findingPaths(all.of("no-inbound"))
	mustContain(t, "no-inbound", noIn, "Tag zoo.md", "Archive/Old plot map.md")
	mustLack(t, "no-inbound", noIn, "index.md", "AGENTS.md", "log.md", "Glossary.md")

	var broken []string
	for _, f := range all.of("unresolved-link") {
		if strings.Contains(f.Message, "[[Greenhouse budget]]") && f.Line > 0 && strings.Contains(f.Suggestion, "Greenhouse budget") {
			broken = append(broken, f.Path)
		}
	}
	if want := []string{"Ideas 💡.md", "Link zoo.md", "Projects/Garden/Plan.md"}; !slices.Equal(broken, want) {
		t.Errorf("[[Greenhouse budget]] findings in %v, want %v (%+v)", broken, want, all.of("unresolved-link"))
	}
	amb := all.of("ambiguous-link")
	if len(amb) != 1 || amb[0].Path != "Link zoo.md" || !strings.Contains(amb[0].Suggestion, "[[Projects/Garden/Plan]]") {
		t.Errorf("ambiguous-link: %+v", amb)
	}

	// The schema rules index.md declares.
	dep := all.of("deprecated-tag")
	if len(dep) != 1 || dep[0].Path != "Tool library.md" || dep[0].Suggestion != "replace #shed with #tools" {
		t.Errorf("deprecated-tag: %+v", dep)
	}
	var unknown []string
	for _, f := range all.of("unknown-tag") {
		unknown = append(unknown, f.Path+" "+f.Message)
	}
	mustContain(t, "unknown-tag", unknown, "Multilingual.md #languages is not in lint.tags.allowed of index.md")
	for _, u := range unknown {
		if strings.HasPrefix(u, "Projects/Garden/Plan.md") || strings.HasPrefix(u, "Tool library.md") {
			t.Errorf("allowed (nested or deprecated) tag reported unknown: %s", u)
		}
	}
	missing := findingPaths(all.of("missing-required-tag"))
	mustContain(t, "missing-required-tag", missing, "Glossary.md", "Tool library.md", "Watering rota.md")
	mustLack(t, "missing-required-tag", missing, "index.md", "Projects/Garden/Plan.md", "People/Yuki Sato.md")
	if n := len(all.of("lint-config")); n != 0 {
		t.Errorf("the sample lint block is valid, got %d lint-config findings", n)
	}
	untagged := findingPaths(all.of("untagged-note"))
	mustContain(t, "untagged-note", untagged, "Short.md", "Glossary.md")

	// rules and paging.
	var p lintPage
	c.MustOK("lint", map[string]any{"rules": []string{"orphan-note", "unresolved-link"}, "limit": 2, "offset": 4}, &p)
	if p.Total != 8 || len(p.Items) != 2 || p.Items[0].Path != "sources/Pollinator survey 2025.md" || p.Items[1].Rule != "unresolved-link" {
		t.Errorf("lint rules+paging: %+v", p)
	}
	if len(p.Counts) != 2 || p.Counts["orphan-note"] != 5 || p.Counts["unresolved-link"] != 3 {
		t.Errorf("lint counts: %v", p.Counts)
	}
	c.MustFail("args-invalid", "lint", map[string]any{"rules": []string{"no-such-rule"}})
	c.MustFail("args-invalid", "lint", map[string]any{"rules": []string{}})
	c.MustFail("args-invalid", "lint", map[string]any{"limit": 0})
}

func testWikiHealth(t *testing.T, c *Client) {
	var h struct {
		Score           int     `json:"score"`
		NoteCount       int     `json:"noteCount"`
		LinkHealth      float64 `json:"linkHealth"`
		LintCleanliness float64 `json:"lintCleanliness"`
		TagCoverage     float64 `json:"tagCoverage"`
		Orphans         int     `json:"orphans"`
		LintWarnings    int     `json:"lintWarnings"`
	}
	c.MustOK("wiki_health", nil, &h)

	var notes notesPage
	c.MustOK("list_notes", map[string]any{"limit": 500}, &notes)
	tagged := 0
	for _, n := range notes.Items {
		if len(n.Tags) > 0 {
			tagged++
		}
	}
	all := lintAll(t, c)
	warnings := 0
	for _, f := range all.Items {
		if f.Severity == "warning" {
			warnings++
		}
	}
	n := float64(notes.Total)
	link := 1 - float64(all.Counts["orphan-note"])/n
	clean := max(0, 1-float64(warnings)/n)
	cover := float64(tagged) / n
	score := int(math.Round(100 * (link + clean + cover) / 3))
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if h.NoteCount != notes.Total || h.Orphans != 5 || h.LintWarnings != warnings || !near(h.LinkHealth, link) ||
		!near(h.LintCleanliness, clean) || !near(h.TagCoverage, cover) || h.Score != score {
		t.Errorf("wiki_health %+v; recomputed notes %d, orphans %d, warnings %d, link %v, clean %v, cover %v, score %d",
			h, notes.Total, all.Counts["orphan-note"], warnings, link, clean, cover, score)
	}
	if h.Score < 0 || h.Score > 100 {
		t.Errorf("score %d out of range", h.Score)
	}
	c.MustFail("args-invalid", "wiki_health", map[string]any{"bogus": true})
}

type activity struct {
	Entries []struct {
		Date  string `json:"date"`
		Op    string `json:"op"`
		Title string `json:"title"`
		Line  int    `json:"line"`
	} `json:"entries"`
	Total             int      `json:"total"`
	SkippedLines      int      `json:"skippedLines"`
	UncompiledSources []string `json:"uncompiledSources"`
}

func (a activity) titles() []string {
	var out []string
	for _, e := range a.Entries {
		out = append(out, e.Date+" "+e.Op+": "+e.Title)
	}
	return out
}

func testRecentActivity(t *testing.T, c *Client) {
	var a activity
	c.MustOK("recent_activity", nil, &a)
	want := []string{ // log.md, newest first
		"2026-11-02 ingest: Added soil test results",
		"2026-04-09 query: Which beds need lime this year",
		"2026-04-01 compile: 2026-04-01 Committee",
		"2026-03-18 lint: Fixed broken links in Garden plan",
		"2026-03-04 compile: 2026-03-04 Committee",
		"2026-02-28 ingest: Pollinator survey 2025",
		"2026-02-10 compile: Irrigation",
		"2026-02-03 ingest: Rainwater harvesting article",
		"2026-01-20 compile: Soil handbook",
		"2026-01-15 ingest: Extension service soil guide",
	}
	if got := a.titles(); !slices.Equal(got, want) || a.Total != 10 || a.SkippedLines != 0 {
		t.Errorf("recent_activity: total %d, skipped %d, entries\n%s", a.Total, a.SkippedLines, strings.Join(got, "\n"))
	}
	if len(a.Entries) > 0 && (a.Entries[0].Line != 12 || a.Entries[9].Line != 3) {
		t.Errorf("entry lines: first %d, last %d", a.Entries[0].Line, a.Entries[9].Line)
	}
	if !slices.Equal(a.UncompiledSources, []string{"sources/Pollinator survey 2025.md"}) {
		t.Errorf("uncompiledSources %v", a.UncompiledSources)
	}

	c.MustOK("recent_activity", map[string]any{"since": "2026-03-18"}, &a)
	if got := a.titles(); !slices.Equal(got, want[:4]) || a.Total != 4 {
		t.Errorf("since 2026-03-18: %v", got)
	}
	c.MustOK("recent_activity", map[string]any{"op": "ingest"}, &a)
	if got := a.titles(); !slices.Equal(got, []string{want[0], want[5], want[7], want[9]}) {
		t.Errorf("op ingest: %v", got)
	}
	c.MustOK("recent_activity", map[string]any{"op": "compile", "since": "2026-02-01", "limit": 2}, &a)
	if got := a.titles(); !slices.Equal(got, []string{want[2], want[4]}) || a.Total != 3 {
		t.Errorf("op compile since 2026-02-01 limit 2: %v (total %d)", got, a.Total)
	}
	c.MustOK("recent_activity", map[string]any{"since": "2027-01-01"}, &a)
	if a.Entries == nil || len(a.Entries) != 0 || a.Total != 0 {
		t.Errorf("nothing since 2027: %+v", a)
	}
	c.MustFail("args-invalid", "recent_activity", map[string]any{"since": "last week"})
	c.MustFail("args-invalid", "recent_activity", map[string]any{"since": "2026-02-30"})
	c.MustFail("args-invalid", "recent_activity", map[string]any{"limit": 0})
	c.MustFail("args-invalid", "recent_activity", map[string]any{"limit": 201})
}
