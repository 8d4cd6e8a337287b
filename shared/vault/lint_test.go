package vault

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func lintCatalog(notes ...Note) *Catalog {
	c := NewCatalog()
	for _, n := range notes {
		n.Name = NameOf(n.Path)
		c.Upsert(n)
	}
	return c
}

// byRule returns the findings of one rule.
func byRule(fs []Finding, rule string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func findingPaths(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

func checkWellFormed(t *testing.T, fs []Finding) {
	t.Helper()
	for _, f := range fs {
		if f.Suggestion == "" || f.Message == "" || f.Path == "" {
			t.Errorf("finding without path, message or suggestion: %+v", f)
		}
		if f.Severity != severityOf[f.Rule] || f.Severity == "" {
			t.Errorf("finding %+v: severity %q, want %q", f, f.Severity, severityOf[f.Rule])
		}
	}
	sorted := slices.IsSortedFunc(fs, func(a, b Finding) int {
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	if !sorted {
		t.Errorf("findings not sorted by rule, path, line")
	}
}

func TestLintLinks(t *testing.T) {
	c := lintCatalog(
		Note{Path: "A.md", Tags: []string{"x"}, Links: []Link{
			wl("Plann", 3),             // near the two Plans
			wl("greenhouse-budget", 4), // separators differ from a real note
			wl("Nothing like it", 5),   // nothing near
			{Kind: KindWikilink, Embed: true, Target: "phot.jpg", Key: LinkKey("phot.jpg"), Line: 6},
			wl("Plan", 7), // ambiguous
			wl("", 8),     // self link: fine
			wl("Alias one", 9),
			wl("Projects/Missing/Greenhouse budget", 10), // a wrong folder
		}},
		Note{Path: "Greenhouse budget.md", Aliases: []string{"Alias one"}},
		Note{Path: "Projects/Garden/Plan.md"},
		Note{Path: "Projects/Website/Plan.md"},
	)
	c.UpsertAttachment(Attachment{Path: "assets/photo.jpg"})
	fs := Lint(c)
	checkWellFormed(t, fs)

	un := byRule(fs, RuleUnresolvedLink)
	want := map[int]string{
		3:  "did you mean [[Projects/Garden/Plan]]?",
		4:  "did you mean [[Greenhouse budget]]?",
		5:  `create it: write the note "Nothing like it.md"`,
		6:  "did you mean ![[photo.jpg]]?",
		10: "did you mean [[Greenhouse budget]]?",
	}
	if len(un) != len(want) {
		t.Fatalf("unresolved: %+v", un)
	}
	for _, f := range un {
		if f.Path != "A.md" || !strings.HasPrefix(f.Suggestion, want[f.Line]) || want[f.Line] == "" {
			t.Errorf("line %d: suggestion %q, want prefix %q", f.Line, f.Suggestion, want[f.Line])
		}
	}
	if un[3].Message != "![[phot.jpg]] points at no file" {
		t.Errorf("embed message %q", un[3].Message)
	}

	amb := byRule(fs, RuleAmbiguousLink)
	if len(amb) != 1 || amb[0].Line != 7 ||
		amb[0].Suggestion != "qualify the link with a path: [[Projects/Garden/Plan]] or [[Projects/Website/Plan]]" {
		t.Errorf("ambiguous: %+v", amb)
	}
	if got := Lint(c, RuleAmbiguousLink); len(got) != 1 || got[0] != amb[0] {
		t.Errorf("rules filter: %+v", got)
	}
}

func TestLintGraph(t *testing.T) {
	c := lintCatalog(
		Note{Path: "index.md", Links: []Link{wl("Hub child", 1)}},       // hub: no-inbound exempt
		Note{Path: "AGENTS.md", Links: []Link{wl("index", 1)}},          // hub
		Note{Path: "log.md", Links: []Link{wl("Hub child", 1)}},         // hub
		Note{Path: "Sub/index.md", Links: []Link{wl("Hub child", 1)}},   // folder hub
		Note{Path: "Sub/log.md", Links: []Link{wl("Hub child", 1)}},     // not a hub
		Note{Path: "Hub child.md"},                                      // inbound only: fine
		Note{Path: "Lonely.md", Tags: []string{"rare"}},                 // orphan
		Note{Path: "Selfie.md", Links: []Link{wl("Selfie", 1)}},         // self links do not count
		Note{Path: "Pictures.md", Links: []Link{wl("assets/p.png", 2)}}, // attachments do not count
		Note{Path: "Peer.md", Tags: []string{"rare"}, Links: []Link{wl("Hub child", 1)}},
		Note{Path: "Broken.md", Links: []Link{wl("Nowhere", 1)}}, // unresolved links do not count
	)
	c.UpsertAttachment(Attachment{Path: "assets/p.png"})
	fs := Lint(c, RuleOrphanNote, RuleNoInbound)
	checkWellFormed(t, fs)
	if got, want := findingPaths(byRule(fs, RuleOrphanNote)), []string{"Broken.md", "Lonely.md", "Pictures.md", "Selfie.md"}; !slices.Equal(got, want) {
		t.Errorf("orphans %v, want %v", got, want)
	}
	if got, want := findingPaths(byRule(fs, RuleNoInbound)), []string{"Peer.md", "Sub/log.md"}; !slices.Equal(got, want) {
		t.Errorf("no-inbound %v, want %v", got, want)
	}
	for _, f := range fs {
		switch f.Path {
		case "Lonely.md":
			if !strings.Contains(f.Suggestion, "[[Peer]] (also tagged #rare)") || !strings.Contains(f.Suggestion, "[[index]]") {
				t.Errorf("orphan advice %q", f.Suggestion)
			}
		case "Peer.md":
			if !strings.Contains(f.Suggestion, "[[Hub child]]") {
				t.Errorf("no-inbound advice %q", f.Suggestion)
			}
		}
	}
}

func TestLintTags(t *testing.T) {
	c := lintCatalog(
		Note{Path: "p1.md", Tags: []string{"project", "underscore"}, Links: []Link{wl("untagged", 1)}},
		Note{Path: "p2.md", Tags: []string{"project", "underscore"}, Links: []Link{wl("untagged", 1)}},
		Note{Path: "p3.md", Tags: []string{"project/web"}},
		Note{Path: "typo.md", Tags: []string{"projcet"}},     // distance 2 from a 3-note tag
		Note{Path: "plural.md", Tags: []string{"projects"}},  // plural
		Note{Path: "sep.md", Tags: []string{"under_score"}},  // separators; "underscore" has 2 notes
		Note{Path: "rare.md", Tags: []string{"apiary"}},      // orphan tag
		Note{Path: "nested.md", Tags: []string{"status/dr"}}, // orphan tag; its ancestor is not reported
		Note{Path: "short.md", Tags: []string{"prj"}},        // too far for a 3-rune tag
		Note{Path: "untagged.md"},
		Note{Path: "bare.md"},
	)
	fs := Lint(c, RuleTagTypo, RuleOrphanTag, RuleUntaggedNote)
	checkWellFormed(t, fs)
	typos := map[string]string{}
	for _, f := range byRule(fs, RuleTagTypo) {
		typos[f.Path] = f.Suggestion
	}
	want := map[string]string{
		"typo.md":   "replace #projcet with #project",
		"plural.md": "replace #projects with #project",
		"sep.md":    "replace #under_score with #underscore",
	}
	if fmt.Sprint(typos) != fmt.Sprint(want) {
		t.Errorf("typos %v, want %v", typos, want)
	}
	var orphanTags []string
	for _, f := range byRule(fs, RuleOrphanTag) {
		orphanTags = append(orphanTags, f.Path+" "+f.Message)
	}
	wantOrphans := []string{
		"nested.md #status/dr is used by this note only",
		"p3.md #project/web is used by this note only",
		"rare.md #apiary is used by this note only",
		"short.md #prj is used by this note only",
	}
	if !slices.Equal(orphanTags, wantOrphans) {
		t.Errorf("orphan tags %q, want %q", orphanTags, wantOrphans)
	}
	un := byRule(fs, RuleUntaggedNote)
	if got := findingPaths(un); !slices.Equal(got, []string{"bare.md", "untagged.md"}) {
		t.Fatalf("untagged %v", got)
	}
	if un[1].Suggestion != "add a tag, e.g. #project (carried by 2 of its linked notes)" {
		t.Errorf("untagged advice %q", un[1].Suggestion)
	}
}

func schemaIndex(lint any) Note {
	return Note{Path: "index.md", Tags: []string{"hub"}, Frontmatter: map[string]any{"title": "Hub", "lint": lint}}
}

func TestLintSchema(t *testing.T) {
	block := map[string]any{"tags": map[string]any{
		"allowed":    []any{"hub", "project", "people", "tools"},
		"required":   []any{"project", "#People", "hub"},
		"deprecated": map[string]any{"shed": "tools", "old": "project", "gone": nil},
	}}
	c := lintCatalog(
		schemaIndex(block),
		Note{Path: "ok.md", Tags: []string{"project/garden"}},
		Note{Path: "unknown.md", Tags: []string{"peple", "people"}},
		Note{Path: "shed.md", Tags: []string{"shed", "tools"}},
		Note{Path: "old.md", Tags: []string{"old/web"}},
		Note{Path: "gone.md", Tags: []string{"gone", "project"}},
		Note{Path: "none.md"},
	)
	fs := Lint(c, RuleUnknownTag, RuleMissingRequiredTag, RuleDeprecatedTag, RuleLintConfig)
	checkWellFormed(t, fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.Rule+" "+f.Path+": "+f.Suggestion)
	}
	want := []string{
		"deprecated-tag gone.md: remove #gone",
		"deprecated-tag old.md: replace #old/web with #project/web",
		"deprecated-tag shed.md: replace #shed with #tools",
		"missing-required-tag none.md: add one of #project, #people, #hub",
		"missing-required-tag old.md: add one of #project, #people, #hub",
		"missing-required-tag shed.md: add one of #project, #people, #hub",
		"unknown-tag unknown.md: replace #peple with #people, or add peple to lint.tags.allowed in index.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("schema findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Without a block the schema rules are silent; a bad block is one error.
	if fs := Lint(lintCatalog(Note{Path: "index.md"}, Note{Path: "x.md", Tags: []string{"x"}}), RuleUnknownTag, RuleLintConfig); len(fs) != 0 {
		t.Errorf("no block: %+v", fs)
	}
	fs = Lint(lintCatalog(schemaIndex("yes")), RuleUnknownTag, RuleLintConfig)
	if len(fs) != 1 || fs[0].Rule != RuleLintConfig || fs[0].Severity != SeverityError || fs[0].Path != "index.md" {
		t.Errorf("bad block: %+v", fs)
	}
}

func TestParseLintSchema(t *testing.T) {
	for _, tc := range []struct {
		lint any
		err  string
	}{
		{map[string]any{"tags": map[string]any{"allowed": "solo"}}, ""},
		{map[string]any{"tags": nil}, ""},
		{[]any{"x"}, "lint must be a mapping, got a list"},
		{map[string]any{"rules": 1}, "unknown key lint.rules"},
		{map[string]any{"tags": "x"}, "lint.tags must be a mapping"},
		{map[string]any{"tags": map[string]any{"allowed": []any{map[string]any{}}}}, "lint.tags.allowed must list tags"},
		{map[string]any{"tags": map[string]any{"extra": 1}}, "unknown key lint.tags.extra"},
		{map[string]any{"tags": map[string]any{"deprecated": []any{"x"}}}, "lint.tags.deprecated must map"},
		{map[string]any{"tags": map[string]any{"deprecated": map[string]any{"a": 3.0}}}, "lint.tags.deprecated.a must be a tag"},
		{map[string]any{"tags": map[string]any{"deprecated": map[string]any{"#": "x"}}}, "empty tag"},
	} {
		s, err := ParseLintSchema(map[string]any{"lint": tc.lint})
		switch {
		case tc.err == "" && (err != nil || s == nil):
			t.Errorf("%v: %v", tc.lint, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.lint, err, tc.err)
		}
	}
	if s, err := ParseLintSchema(map[string]any{"title": "x"}); s != nil || err != nil {
		t.Errorf("no block: %v %v", s, err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"kitten", "sitting", 5, 3},
		{"kitten", "sitting", 2, 3}, // over the limit: limit+1
		{"", "abc", 5, 3},
		{"same", "same", 0, 0},
		{"projcet", "project", 2, 2},
		{"café", "cafe", 1, 1},
		{"a", "abcdef", 2, 3},
	} {
		if got := editDistance([]rune(tc.a), []rune(tc.b), tc.limit); got != tc.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.limit, got, tc.want)
		}
	}
}

// TestEditDistanceBanded checks the banded distance against the full
// dynamic programme on random short strings, reusing one scratch.
func TestEditDistanceBanded(t *testing.T) {
	full := func(a, b []rune) int {
		d := make([][]int, len(a)+1)
		for i := range d {
			d[i] = make([]int, len(b)+1)
			d[i][0] = i
		}
		for j := range d[0] {
			d[0][j] = j
		}
		for i := 1; i <= len(a); i++ {
			for j := 1; j <= len(b); j++ {
				cost := 1
				if a[i-1] == b[j-1] {
					cost = 0
				}
				d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			}
		}
		return d[len(a)][len(b)]
	}
	r := rand.New(rand.NewPCG(3, 4))
	word := func() []rune {
		w := make([]rune, r.IntN(9))
		for i := range w {
			w[i] = rune('a' + r.IntN(3))
		}
		return w
	}
	var rows distRows
	for range 20000 {
		a, b, limit := word(), word(), r.IntN(5)
		want := min(full(a, b), limit+1)
		if got := rows.distance(a, b, limit); got != want {
			t.Fatalf("distance(%q, %q, %d) = %d, want %d", string(a), string(b), limit, got, want)
		}
	}
}

func TestNearIndexBudget(t *testing.T) {
	ix := newNearIndex()
	ix.add("Garden plan", "Garden plan")
	ix.budget = 0
	if got := ix.nearest("Garden plam"); got != "" {
		t.Errorf("an exhausted budget still found %q", got)
	}
}

// FuzzLint parses arbitrary notes into a small vault and lints it: no
// panic, and every finding is well formed.
func FuzzLint(f *testing.F) {
	f.Add([]byte("---\ntags: [a, b]\nlint: {tags: {allowed: [a], required: [b], deprecated: {c: d}}}\n---\n[[x]] [[Hub]] #c #a/b"), []byte("# Hub\n[[Note]] ![[p.png]] #tag"))
	f.Add([]byte("[[\xff]] #\xfe [[../..]] [x](../../y.md)"), []byte("---\nlint: [1]\n---"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		c := NewCatalog()
		c.Upsert(Parse("Note.md", a).Note)
		c.Upsert(Parse("index.md", a).Note)
		c.Upsert(Parse("dir/Hub.md", b).Note)
		c.UpsertAttachment(Attachment{Path: "p.png"})
		checkWellFormed(t, Lint(c))
	})
}

// BenchmarkLint lints a synthetic 10,000-note vault with many broken links
// and one-off tags, the worst case of the near-name searches.
func BenchmarkLint(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		var sb strings.Builder
		for range 4 + r.IntN(8) {
			sb.WriteByte(byte('a' + r.IntN(26)))
		}
		return sb.String()
	}
	c := NewCatalog()
	const n = 10000
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s %s %d", word(), word(), i)
	}
	for i, name := range names {
		note := Note{Path: fmt.Sprintf("f%d/%s.md", i%50, name), Name: name, Tags: []string{fmt.Sprintf("t%d", r.IntN(200)), word()}}
		for j := range 8 {
			target := names[r.IntN(n)]
			if j == 0 {
				target = word() + " " + word() // broken
			}
			note.Links = append(note.Links, wl(target, j+1))
		}
		c.Upsert(note)
	}
	b.ResetTimer()
	for b.Loop() {
		Lint(c)
	}
}

// TestLintUnreadableFrontmatter: a note whose frontmatter cannot be read
// is reported as such, not as a note without tags.
func TestLintUnreadableFrontmatter(t *testing.T) {
	bad := Parse("dup.md", []byte("---\ntags: [a]\ntags: [b]\n---\nbody\n")).Note
	if bad.FrontmatterError == "" {
		t.Fatal("repeated keys parsed")
	}
	c := lintCatalog(bad, Note{Path: "plain.md"})
	fs := Lint(c, RuleFrontmatter, RuleUntaggedNote)
	checkWellFormed(t, fs)
	if got := findingPaths(byRule(fs, RuleFrontmatter)); !slices.Equal(got, []string{"dup.md"}) {
		t.Errorf("unreadable-frontmatter: %v", got)
	}
	if got := findingPaths(byRule(fs, RuleUntaggedNote)); !slices.Equal(got, []string{"plain.md"}) {
		t.Errorf("untagged-note: %v", got)
	}
}
