package vault

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseTags(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"simple", "a #tag b", []string{"tag"}},
		{"line start", "#tag at start", []string{"tag"}},
		{"lower-cased and deduplicated", "#Tag #TAG #tag", []string{"tag"}},
		{"nested", "#project/alpha and #a/b/", []string{"project/alpha", "a/b"}},
		{"punctuation ends", "(#one), #two. #three's", []string{"one", "two", "three"}},
		{"dash and underscore", "#to-do #snake_case", []string{"to-do", "snake_case"}},
		{"numbers only", "#123 #1-2 #2024/01 #y2024", []string{"y2024"}},
		{"heading marker", "# Title\n## Sub #real", []string{"real"}},
		{"heading text", "# Title #inhead", []string{"inhead"}},
		{"no space after hash is a tag", "#notaheading", []string{"notaheading"}},
		{"C sharp", "I like C# and F#.", nil},
		{"inside word", "foo#bar a&#35;b", nil},
		{"double hash", "##x", nil},
		{"escaped", `\#nope`, nil},
		{"code span", "`#nope` #yes", []string{"yes"}},
		{"fenced code", "```\n#nope\n```\n~~~\n#nope2\n~~~\n#yes", []string{"yes"}},
		{"indented code", "para\n\n    #nope\n\n#yes", []string{"yes"}},
		{"html block", "<div>\n#nope\n</div>\n\n#yes", []string{"yes"}},
		{"url", "see https://example.com/page#nope and www.x.org/#nope2", nil},
		{"link destination", "[text](https://x.com/#nope) [t](note.md#nope)", nil},
		{"autolink", "<https://x.com/#nope>", nil},
		{"wikilink", "[[note#nope]] [[a|#nope]]", nil},
		{"inline comment", "%% #nope %% #yes", []string{"yes"}},
		{"comment glued", "a%%x%%#yes", []string{"yes"}},
		{"multi-line comment", "%%\n#nope\n\n# Hidden #nope2\n%%\n#yes", []string{"yes"}},
		{"unclosed comment", "#yes\n%%\n#nope", []string{"yes"}},
		{"percent in code", "`%%` #yes\n```\n%%\n```\n#yes2", []string{"yes", "yes2"}},
		{"list item", "- item #listed\n- [ ] task #todo", []string{"listed", "todo"}},
		{"blockquote", "> quoted #q", []string{"q"}},
		{"emphasis", "**#bold** *#star* _#under", []string{"bold", "star", "under"}},
		{"CJK", "#日本語 #中文/标签", []string{"日本語", "中文/标签"}},
		{"Cyrillic", "#Привет_мир", []string{"привет_мир"}},
		{"emoji", "#🚀launch #done✅", []string{"🚀launch", "done✅"}},
		{"NFD is NFC", "#cafe\u0301", []string{"caf\u00e9"}},
		{"frontmatter first", "---\ntags: [B, '#a']\n---\n#c #b", []string{"b", "a", "c"}},
		{"frontmatter string", "---\ntags: 'x, #y z'\n---\n", []string{"x", "y", "z"}},
		{"frontmatter tag key", "---\ntag: solo\n---\n", []string{"solo"}},
		{"frontmatter is not body", "---\ntitle: '#nope'\n---\n", nil},
		{"CRLF", "a #one\r\nb #two\r\n", []string{"one", "two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse("n.md", []byte(tt.src)).Note.Tags
			if !slices.Equal(got, tt.want) {
				t.Errorf("tags = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseLinks(t *testing.T) {
	wl := func(target, heading, block, display string, line int) Link {
		return Link{Kind: KindWikilink, Target: target, Key: LinkKey(target), Heading: heading, Block: block, Display: display, Line: line}
	}
	md := func(target, heading, display string, line int) Link {
		return Link{Kind: KindMarkdown, Target: target, Key: LinkKey(target), Heading: heading, Display: display, Line: line}
	}
	embed := func(l Link) Link { l.Embed = true; return l }
	tests := []struct {
		name string
		src  string
		want []Link
	}{
		{"wikilink", "see [[Note]]", []Link{wl("Note", "", "", "", 1)}},
		{"alias", "[[Folder/Note.md|the note]]", []Link{wl("Folder/Note.md", "", "", "the note", 1)}},
		{"heading", "[[Note#Some Heading]]", []Link{wl("Note", "Some Heading", "", "", 1)}},
		{"block", "[[Note#^abc-1]]", []Link{wl("Note", "", "abc-1", "", 1)}},
		{"heading alias", "[[Note#H|shown]]", []Link{wl("Note", "H", "", "shown", 1)}},
		{"same note", "[[#Local]]", []Link{wl("", "Local", "", "", 1)}},
		{"same note block", "[[#^b]]", []Link{wl("", "", "b", "", 1)}},
		{"embed", "![[diagram.png]]\n![[note#section]]", []Link{embed(wl("diagram.png", "", "", "", 1)), embed(wl("note", "section", "", "", 2))}},
		{"table escaped pipe", "| a | b |\n|---|---|\n| [[x\\|y]] | z |", []Link{wl("x", "", "", "y", 3)}},
		{"trimmed", "[[  spaced  | alias ]]", []Link{wl("spaced", "", "", "alias", 1)}},
		{"empty is not a link", "[[]] [[ ]]", nil},
		{"unclosed", "[[nope", nil},
		{"code span", "`[[nope]]` [[yes]]", []Link{wl("yes", "", "", "", 1)}},
		{"fenced", "```md\n[[nope]]\n```\n[[yes]]", []Link{wl("yes", "", "", "", 4)}},
		{"comment", "%%[[nope]]%%\n%%\n[[nope2]]\n%%\n[[yes]]", []Link{wl("yes", "", "", "", 5)}},
		{"NFD key", "[[Cafe\u0301]]", []Link{{Kind: KindWikilink, Target: "Cafe\u0301", Key: "caf\u00e9", Line: 1}}},
		{"markdown", "[text](path.md)", []Link{md("path.md", "", "text", 1)}},
		{"markdown spaces", "[t](<path with spaces.md>)", []Link{md("path with spaces.md", "", "t", 1)}},
		{"markdown encoded", "[t](my%20note.md#My%20Heading)", []Link{md("my note.md", "My Heading", "t", 1)}},
		{"markdown bad escape", "[t](100%.md)", []Link{md("100%.md", "", "t", 1)}},
		{"markdown heading", "[t](folder/note.md#heading)", []Link{md("folder/note.md", "heading", "t", 1)}},
		{"markdown block", "[t](note.md#^blk)", []Link{{Kind: KindMarkdown, Target: "note.md", Key: "note", Block: "blk", Display: "t", Line: 1}}},
		{"image", "![alt *x*](assets/x.png)", []Link{embed(md("assets/x.png", "", "alt x", 1))}},
		{"external", "[a](https://x.com) [b](mailto:a@b.c) [c](obsidian://open?x) [d](//cdn/x) [e](#frag) <http://y.com>", nil},
		{"reference", "[t][r]\n\n[r]: notes/ref.md", []Link{md("notes/ref.md", "", "t", 1)}},
		{"link line", "para\nnext ![](a.png)\n\n[](b.md)", []Link{embed(md("a.png", "", "", 2)), md("b.md", "", "", 4)}},
		{"in heading", "# See [[Target|T]]", []Link{wl("Target", "", "", "T", 1)}},
		{"lines count frontmatter", "---\na: 1\n---\n\n[[x]]", []Link{wl("x", "", "", "", 5)}},
		{"CRLF", "a\r\n[[x]]\r\n", []Link{wl("x", "", "", "", 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse("n.md", []byte(tt.src)).Note.Links
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("links =\n%s\nwant\n%s", jsonOf(got), jsonOf(tt.want))
			}
		})
	}
}

func TestParseHeadings(t *testing.T) {
	src := "---\ntitle: T\n---\n# Intro\ntext\n\nSetext *Two*\n---\n## Intro\n## Intro\n### [[Page|Alias]] and `code` #tag\n#### 日本語の見出し\n##### Привет, мир!\n###### Émoji 🚀 rocket\n# \n```\n# not a heading\n```\n> ## Quoted\n"
	want := []Heading{
		{1, "Intro", "intro", 4},
		{2, "Setext Two", "setext-two", 7},
		{2, "Intro", "intro-1", 9},
		{2, "Intro", "intro-2", 10},
		{3, "Alias and code #tag", "alias-and-code-tag", 11},
		{4, "日本語の見出し", "日本語の見出し", 12},
		{5, "Привет, мир!", "привет-мир", 13},
		{6, "Émoji 🚀 rocket", "émoji--rocket", 14},
		{1, "", "", 15},
		{2, "Quoted", "quoted", 19},
	}
	got := Parse("n.md", []byte(src)).Note.Headings
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headings =\n%s\nwant\n%s", jsonOf(got), jsonOf(want))
	}
}

func TestParseTitle(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"frontmatter", "---\ntitle: From FM\n---\n# H1", "From FM"},
		{"first H1", "## Two\n# One *emph*\n# Later", "One emph"},
		{"setext H1", "Big\n===", "Big"},
		{"name", "no headings", "My Note"},
		{"empty H1 skipped", "#\n# Real", "Real"},
		{"numeric title", "---\ntitle: 2024\n---\n", "2024"},
		{"empty file", "", "My Note"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse("dir/My Note.md", []byte(tt.src)).Note.Title; got != tt.want {
				t.Errorf("title = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseFrontmatter(t *testing.T) {
	src := `---
title: "Hello"
tags:
  - One
  - "#two"
aliases: [First, Second]
alias: Third
id: 42
author: Ann
entities: Acme
derived_from_ids: [a1, 7]
source_url: https://example.com/x
date: 2024-05-06
when: 2024-05-06T07:08:09+02:00
nested: {k: [1, 2.5, true, null]}
1: numeric key
nan: .nan
---
Body`
	p := Parse("n.md", []byte(src))
	n := p.Note
	if n.FrontmatterError != "" {
		t.Fatalf("FrontmatterError = %q", n.FrontmatterError)
	}
	check := func(field string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", field, got, want)
		}
	}
	check("Title", n.Title, "Hello")
	check("Tags", n.Tags, []string{"one", "two"})
	check("Aliases", n.Aliases, []string{"First", "Second", "Third"})
	check("ID", n.ID, "42")
	check("Author", n.Author, "Ann")
	check("Entities", n.Entities, []string{"Acme"})
	check("DerivedFromIDs", n.DerivedFromIDs, []string{"a1", "7"})
	check("SourceURL", n.SourceURL, "https://example.com/x")
	check("date", n.Frontmatter["date"], "2024-05-06T00:00:00Z")
	check("when", n.Frontmatter["when"], "2024-05-06T07:08:09+02:00")
	check("nested", n.Frontmatter["nested"], map[string]any{"k": []any{1, 2.5, true, nil}})
	check("numeric key", n.Frontmatter["1"], "numeric key")
	check("nan", n.Frontmatter["nan"], "NaN")
	check("Body", p.Body, "Body")
	if _, err := json.Marshal(n.Frontmatter); err != nil {
		t.Errorf("frontmatter is not JSON-friendly: %v", err)
	}
}

// TestNumericFrontmatterTags: a frontmatter tag of digits alone is no tag,
// as an inline #1984 is not (Obsidian's rule).
func TestNumericFrontmatterTags(t *testing.T) {
	n := Parse("n.md", []byte("---\ntags: [123, 1984/05, 2024-05, 2024_05, １９８４, y1984, true]\n---\n#2024 and #2024-05 and #v2\n")).Note
	if !reflect.DeepEqual(n.Tags, []string{"y1984", "true", "v2"}) {
		t.Errorf("tags = %q", n.Tags)
	}
}

func TestNoteDescription(t *testing.T) {
	src := `---
title: Leave
Summary: Time off, and how to ask for it
keywords: vacation, sick days
subtitle: [jury duty, {not: text}]
excerpt: {en: a map is not text}
description: 42
---
Body`
	got := Parse("n.md", []byte(src)).Note.Description()
	want := []string{"42", "Time off, and how to ask for it", "vacation, sick days", "jury duty"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Description() = %q, want %q", got, want)
	}
	if got := Parse("m.md", []byte("no frontmatter")).Note.Description(); got != nil {
		t.Errorf("without frontmatter: %q", got)
	}
}

func TestParseFrontmatterEdges(t *testing.T) {
	tests := []struct {
		name, src     string
		body          string
		wantErr       bool
		wantTitle     string
		wantHeadings  int
		wantFirstLine int // line of the first heading
	}{
		{name: "invalid YAML", src: "---\ntitle: [unclosed\n---\n# Real\n", body: "# Real\n", wantErr: true, wantTitle: "Real", wantHeadings: 1, wantFirstLine: 4},
		{name: "not a mapping", src: "---\n- a\n- b\n---\ntext", body: "text", wantErr: true, wantTitle: "n"},
		{name: "empty block", src: "---\n---\n# H", body: "# H", wantTitle: "H", wantHeadings: 1, wantFirstLine: 3},
		{name: "frontmatter only", src: "---\ntitle: Only\n---\n", body: "", wantTitle: "Only"},
		{name: "no final newline", src: "---\ntitle: X\n---", body: "", wantTitle: "X"},
		{name: "unclosed is body", src: "---\ntitle: X\n\n# H\n", body: "---\ntitle: X\n\n# H\n", wantTitle: "H", wantHeadings: 1, wantFirstLine: 4},
		{name: "not at start", src: "\n---\ntitle: X\n---\n", body: "\n---\ntitle: X\n---\n", wantTitle: "n", wantHeadings: 1, wantFirstLine: 3},
		{name: "CRLF", src: "---\r\ntitle: X\r\n---\r\n# H\r\n", body: "# H\r\n", wantTitle: "X", wantHeadings: 1, wantFirstLine: 4},
		{name: "BOM", src: "\uFEFF---\ntitle: X\n---\nb", body: "b", wantTitle: "X"},
		{name: "blank lines inside", src: "---\na: 1\n\nb: 2\n---\nb", body: "b", wantTitle: "n"},
		{name: "comment markers inside", src: "---\ntitle: 50%% done\n---\n#yes", body: "#yes", wantTitle: "50%% done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parse("n.md", []byte(tt.src))
			if (p.Note.FrontmatterError != "") != tt.wantErr {
				t.Errorf("FrontmatterError = %q, want error %v", p.Note.FrontmatterError, tt.wantErr)
			}
			if p.Body != tt.body {
				t.Errorf("Body = %q, want %q", p.Body, tt.body)
			}
			if p.Note.Title != tt.wantTitle {
				t.Errorf("Title = %q, want %q", p.Note.Title, tt.wantTitle)
			}
			if len(p.Note.Headings) != tt.wantHeadings {
				t.Fatalf("headings = %+v, want %d", p.Note.Headings, tt.wantHeadings)
			}
			if tt.wantHeadings > 0 && p.Note.Headings[0].Line != tt.wantFirstLine {
				t.Errorf("first heading line = %d, want %d", p.Note.Headings[0].Line, tt.wantFirstLine)
			}
		})
	}
}

func TestParseBlocks(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Block
	}{
		{"paragraph end", "Some text ^abc-1", []Block{{"abc-1", 1}}},
		{"multi-line paragraph", "line one ^first\nline two ^second", []Block{{"first", 1}, {"second", 2}}},
		{"list items", "- a ^i1\n- b\n  ^i2\n1. c ^i3", []Block{{"i1", 1}, {"i2", 3}, {"i3", 4}}},
		{"own line", "| a |\n|---|\n\n^table-id", []Block{{"table-id", 4}}},
		{"trailing space", "text ^x   ", []Block{{"x", 1}}},
		{"CRLF", "text ^x\r\nmore\r\n", []Block{{"x", 1}}},
		{"not at end", "text ^x more", nil},
		{"no space", "text^x", nil},
		{"bad chars", "text ^a_b", nil},
		{"in heading", "# Title ^h", nil},
		{"in code", "`text ^c`\n```\ntext ^d\n```", nil},
		{"in comment", "%% text ^c %%", nil},
		{"footnote", "text[^1]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse("n.md", []byte(tt.src)).Note.Blocks
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("blocks = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Directive
	}{
		{"pending", "> [!ai] Summarise\n> the note\n> please", []Directive{{1, "Summarise", "the note\nplease", false}}},
		{"done", "text\n\n> [!AI-Done]- Old\n> answer", []Directive{{3, "Old", "answer", true}}},
		{"fold and no title", "> [!ai]+\n> body", []Directive{{1, "", "body", false}}},
		{"no body", "> [!ai] just a title", []Directive{{1, "just a title", "", false}}},
		{"structure kept", "> [!ai] T\n> - one\n>   - two\n>\n> ```\n> code\n> ```\n>\n\nafter", []Directive{{1, "T", "- one\n  - two\n\n```\ncode\n```", false}}},
		{"lazy line", "> [!ai] T\n> first\nlazy", []Directive{{1, "T", "first\nlazy", false}}},
		{"nested", "> outer\n>\n> > [!ai] Inner\n> > body", []Directive{{3, "Inner", "body", false}}},
		{"two", "> [!ai] A\n\n> [!ai] B\n> b", []Directive{{1, "A", "", false}, {3, "B", "b", false}}},
		{"CRLF", "> [!ai] T\r\n> body\r\n", []Directive{{1, "T", "body", false}}},
		{"other callout", "> [!note] Note\n> text", nil},
		{"not first line", "> text\n> [!ai] nope", nil},
		{"in code", "```\n> [!ai] nope\n```", nil},
		{"in comment", "%%\n> [!ai] nope\n%%", nil},
		{"not a quote", "[!ai] nope", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse("n.md", []byte(tt.src)).Note.Directives
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("directives =\n%s\nwant\n%s", jsonOf(got), jsonOf(tt.want))
			}
		})
	}
}

func TestParseMentions(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Mention
	}{
		{"simple", "ask @Alice today", []Mention{{"alice", 1, "ask @Alice today"}}},
		{"punctuation", "  (@bob), @carol. @dave-\n", []Mention{{"bob", 1, "(@bob), @carol. @dave-"}, {"carol", 1, "(@bob), @carol. @dave-"}, {"dave", 1, "(@bob), @carol. @dave-"}}},
		{"handle chars", "@team_x-1 @Ünïcode", []Mention{{"team_x-1", 1, "@team_x-1 @Ünïcode"}, {"ünïcode", 1, "@team_x-1 @Ünïcode"}}},
		{"line", "a\n\n- item @eve", []Mention{{"eve", 3, "- item @eve"}}},
		{"email", "mail foo@example.com or first.last@x.org", nil},
		{"after dot", "a.@b", nil},
		{"bare at", "meet @ 5", nil},
		{"code", "`@nope` ```@nope```\n```\n@nope\n```", nil},
		{"url", "https://x.com/@nope", nil},
		{"link destination", "[x](https://x.com/@nope)", nil},
		{"comment", "%% @nope %%", nil},
		{"CRLF", "hi @ann\r\n", []Mention{{"ann", 1, "hi @ann"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse("n.md", []byte(tt.src)).Note.Mentions
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("mentions = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseBasics(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		p := Parse("a/b.md", nil)
		if p.Note.Path != "a/b.md" || p.Note.Name != "b" || p.Note.Title != "b" || p.Body != "" || len(p.Passages) != 0 {
			t.Errorf("Parse(empty) = %+v", p)
		}
	})
	t.Run("invalid UTF-8", func(t *testing.T) {
		p := Parse("x.md", []byte("# Caf\xe9\n#t\xffag [[n\xfeo]]"))
		if p.Note.Title != "Caf\uFFFD" || p.Body != "# Caf\uFFFD\n#t\uFFFDag [[n\uFFFDo]]" {
			t.Errorf("title %q body %q", p.Note.Title, p.Body)
		}
		if len(p.Note.Links) != 1 || p.Note.Links[0].Target != "n\uFFFDo" {
			t.Errorf("links = %+v", p.Note.Links)
		}
	})
	t.Run("binary", func(t *testing.T) {
		src := []byte("\x00\x01\x02PK\x03\x04 [[x]] \xff\xfe# h\n\x00")
		p := Parse("bin.md", src)
		if p.Note.Path != "bin.md" {
			t.Errorf("path = %q", p.Note.Path)
		}
	})
	t.Run("lines of the whole file", func(t *testing.T) {
		src := "---\ntags: [x]\n---\n# H\n\n@m #t ^b\n"
		n := Parse("x.md", []byte(src)).Note
		if n.Headings[0].Line != 4 || n.Mentions[0].Line != 6 || n.Blocks[0].Line != 6 {
			t.Errorf("lines: headings %+v mentions %+v blocks %+v", n.Headings, n.Mentions, n.Blocks)
		}
	})
}

func TestParseLargeNote(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 5<<20; i++ {
		if i%50 == 0 {
			b.WriteString("## Section\n\n")
		}
		b.WriteString("A paragraph with a [[Link]] and #tag and @someone, then some more words to fill the line. ^b\n\n")
	}
	src := b.String()
	p := Parse("big.md", []byte(src))
	if len(p.Note.Links) == 0 || len(p.Passages) == 0 {
		t.Fatalf("links %d passages %d", len(p.Note.Links), len(p.Passages))
	}
	checkPassages(t, src, p)
	for _, ps := range p.Passages {
		if len(ps.Text) > unitMax {
			t.Fatalf("passage %d is %d bytes", ps.Ordinal, len(ps.Text))
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestParseHostile covers inputs that made earlier versions quadratic or
// crash; each finishes in milliseconds now and would time out otherwise.
func TestParseHostile(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(*Parsed) bool
	}{
		{"deep quotes", strings.Repeat("> ", 50000) + "x #t", func(p *Parsed) bool { return len(p.Passages) > 0 }},
		{"deep lists", strings.Repeat("- ", 50000) + "x", func(p *Parsed) bool { return len(p.Passages) > 0 }},
		{"repeated headings", strings.Repeat("# h\n", 20000), func(p *Parsed) bool {
			return len(p.Note.Headings) == 20000 && p.Note.Headings[19999].ID == "h-19999"
		}},
		{"mentions on one line", strings.Repeat("@a/ ", 100000), func(p *Parsed) bool {
			return len(p.Note.Mentions) == 100000 && len(p.Note.Mentions[50000].Context) <= 2*maxContext
		}},
		{"unclosed wikilinks", strings.Repeat("[[", 100000), func(p *Parsed) bool { return len(p.Note.Links) == 0 }},
		{"block ids", strings.Repeat("^a ", 500000), func(p *Parsed) bool { return len(p.Note.Blocks) == 1 }},
		{"huge frontmatter", "---\n" + strings.Repeat("a: b\n", 100000) + "---\n# T", func(p *Parsed) bool {
			return strings.Contains(p.Note.FrontmatterError, "larger than") && p.Note.Title == "T" && p.Body == "# T"
		}},
		{"duplicate frontmatter key", "---\ntags: a\ntags: b\n---\n#c", func(p *Parsed) bool {
			return p.Note.FrontmatterError != "" && slices.Equal(p.Note.Tags, []string{"c"})
		}},
		{"aliases bomb", "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n---\n", func(p *Parsed) bool {
			return p.Note.FrontmatterError != ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p := Parse("h.md", []byte(tt.src)); !tt.check(p) {
				t.Errorf("unexpected result: %s", jsonOf(p.Note)[:min(500, len(jsonOf(p.Note)))])
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"---\ntitle: T\ntags: [a, b]\n---\n# H\ntext #tag [[Link#H|a]] ![[e.png]] ^blk @who\n",
		"> [!ai]+ T\n> body\n>\n> ```\n> x\n> ```\n",
		"%% c [[x]] %%\n%%\n# h\n%%\n`[[c]]` ```\n#no\n```",
		"| a | b |\n|---|---|\n| [[x\\|y]] | #t |\r\n",
		"[t](<a b.md#h>) ![i](x%2.png) [r][1]\n\n[1]: y.md",
		"Title\n===\n\n- [ ] item ^b1\n  - nested #x/y/\n",
		"---\n: bad\n---\n\xff\xfe\x00 #t",
		strings.Repeat("word. ", 1000),
		"\uFEFF# BOM",
		" ",                // once cut a blank span past its end
		"---\n000000\n---", // frontmatter without a final newline
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p := parse("f.md", src, nil) // not Parse: panics must surface
		if b := Body(src); b != p.Body {
			t.Fatalf("Body = %q, Parse's Body %q", b, p.Body)
		}
		text := strings.TrimPrefix(strings.ToValidUTF8(string(src), "\uFFFD"), "\uFEFF")
		nlines := strings.Count(text, "\n") + 1
		n := p.Note
		inRange := func(what string, line int) {
			if line < 1 || line > nlines {
				t.Fatalf("%s line %d outside 1..%d", what, line, nlines)
			}
		}
		for _, h := range n.Headings {
			inRange("heading", h.Line)
		}
		for _, l := range n.Links {
			inRange("link", l.Line)
			if l.Key != LinkKey(l.Target) {
				t.Fatalf("link key %q != LinkKey(%q)", l.Key, l.Target)
			}
			if l.Kind != KindWikilink && l.Kind != KindMarkdown {
				t.Fatalf("link kind %q", l.Kind)
			}
		}
		for _, b := range n.Blocks {
			inRange("block", b.Line)
		}
		for _, d := range n.Directives {
			inRange("directive", d.Line)
		}
		for _, m := range n.Mentions {
			inRange("mention", m.Line)
			if m.Handle == "" {
				t.Fatal("empty mention")
			}
		}
		for _, tag := range n.Tags {
			if tag == "" || strings.HasPrefix(tag, "#") {
				t.Fatalf("bad tag %q", tag)
			}
		}
		if n.Title == "" {
			t.Fatal("empty title")
		}
		if !strings.HasSuffix(text, p.Body) {
			t.Fatal("body is not a suffix of the text")
		}
		if _, err := json.Marshal(n); err != nil {
			t.Fatalf("note does not marshal: %v", err)
		}
		checkPassages(t, text, p)
	})
}

// benchNote is a realistic ~5 KB note: frontmatter, nested headings,
// wikilinks, embeds, Markdown links, tags, a list, a table, code, a
// callout and a comment.
func benchNote() []byte {
	var b strings.Builder
	b.WriteString("---\ntitle: Weekly review\ntags: [review, project/alpha]\naliases: [Review W12]\nauthor: Ann\ndate: 2024-03-18\n---\n")
	b.WriteString("# Weekly review\n\nSummary of the week with [[Project Alpha]] and [[People/Bob|Bob]]. #status/green\n\n")
	for i := range 6 {
		fmt.Fprintf(&b, "## Topic %d\n\n", i)
		fmt.Fprintf(&b, "We discussed the [[Roadmap#Q%d]] plan with @carol and decided to keep the scope small. "+
			"See [the spec](specs/spec-%d.md#overview) and ![[diagram-%d.png]] for details. #decision ^topic-%d\n\n", i, i, i, i)
		b.WriteString("- [ ] follow up with [[Vendors/Acme]] about pricing #todo\n- [x] send notes to the team\n  - nested point about `code [[not a link]]`\n\n")
		b.WriteString("| Item | Owner |\n|---|---|\n| Budget | [[People/Dana\\|Dana]] |\n| Hiring | @erin |\n\n")
		if i%2 == 0 {
			b.WriteString("```go\nfunc main() { fmt.Println(\"#not-a-tag [[nope]]\") }\n```\n\n")
		}
		b.WriteString("Long prose follows to make the section realistic: the team agreed that quality matters more than speed, " +
			"and that every change should come with tests, docs and a short note in the changelog. %% private remark %%\n\n")
	}
	b.WriteString("> [!ai] Summarise this review\n> in three bullet points.\n")
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	src := benchNote()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Parse("reviews/2024-W12.md", src)
	}
}

// BenchmarkParseParallel measures throughput with GOMAXPROCS parsers, as
// the indexer runs them.
func BenchmarkParseParallel(b *testing.B) {
	src := benchNote()
	b.SetBytes(int64(len(src)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			Parse("reviews/2024-W12.md", src)
		}
	})
}

func TestBenchNote(t *testing.T) {
	src := benchNote()
	if len(src) < 4<<10 || len(src) > 7<<10 {
		t.Fatalf("bench note is %d bytes", len(src))
	}
	n := Parse("r.md", src).Note
	if len(n.Links) < 30 || len(n.Headings) != 7 || len(n.Directives) != 1 {
		t.Fatalf("links %d headings %d directives %d", len(n.Links), len(n.Headings), len(n.Directives))
	}
}
