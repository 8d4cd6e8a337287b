package vault

import (
	"bytes"
	"regexp"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/parser"
)

func TestHeadingID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Hello World", "hello-world"},
		{"  Trimmed  ", "trimmed"},
		{"Hello - World", "hello---world"},
		{"snake_case and kebab-case", "snake_case-and-kebab-case"},
		{"What's new? (2024)", "whats-new-2024"},
		{"C++ & Go: notes!", "c--go-notes"},
		{"日本語の見出し", "日本語の見出し"},
		{"Привет, Мир", "привет-мир"},
		{"Ελληνικά Κεφάλαια", "ελληνικά-κεφάλαια"},
		{"हिन्दी शीर्षक", "हिन्दी-शीर्षक"},
		{"Emoji 🚀 launch ✅", "emoji--launch-"},
		{"Cafe\u0301", "caf\u00e9"},
		{"tab\there", "tab-here"},
		{"", ""},
		{"!!!", ""},
	}
	for _, tt := range tests {
		if got := HeadingID(tt.in); got != tt.want {
			t.Errorf("HeadingID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHeadingIDsDuplicates(t *testing.T) {
	ids := newHeadingIDs()
	var got []string
	for _, title := range []string{"Intro", "Intro", "intro", "Intro 1", "Intro", "", ""} {
		got = append(got, ids.next(title))
	}
	want := []string{"intro", "intro-1", "intro-2", "intro-1-1", "intro-3", "", "-1"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ids = %q, want %q", got, want)
		}
	}
}

// TestHeadingIDsRendered checks that goldmark, given our parser.IDs,
// renders the anchors Parse reports.
func TestHeadingIDsRendered(t *testing.T) {
	src := "# Intro\n## Intro\n## Über uns\n### 日本語 見出し\n## Intro\n"
	var html bytes.Buffer
	md := goldmark.New(goldmark.WithParserOptions(parser.WithAutoHeadingID()))
	ctx := parser.NewContext(parser.WithIDs(newHeadingIDs()))
	if err := md.Convert([]byte(src), &html, parser.WithContext(ctx)); err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, m := range regexp.MustCompile(`id="([^"]*)"`).FindAllStringSubmatch(html.String(), -1) {
		rendered = append(rendered, m[1])
	}
	hs := Parse("n.md", []byte(src)).Note.Headings
	if len(rendered) != len(hs) {
		t.Fatalf("rendered %q, parsed %+v", rendered, hs)
	}
	for i, h := range hs {
		if rendered[i] != h.ID {
			t.Errorf("heading %d: rendered %q, parsed %q", i, rendered[i], h.ID)
		}
	}
}

func FuzzHeadingID(f *testing.F) {
	for _, s := range []string{"Hello World", "日本語 見出し", "Émoji 🚀", "a\u0301 B\u0308", "İstanbul", "ǅ", "\xff\xfe", " - _ "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id := HeadingID(s)
		if !utf8.ValidString(id) {
			t.Fatalf("HeadingID(%q) = %q is not UTF-8", s, id)
		}
		for _, r := range id {
			if !(r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r)) {
				t.Fatalf("HeadingID(%q) = %q holds %q", s, id, r)
			}
		}
		if again := HeadingID(id); again != id {
			t.Fatalf("HeadingID not idempotent: %q -> %q -> %q", s, id, again)
		}
	})
}
