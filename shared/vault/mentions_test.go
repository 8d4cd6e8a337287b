package vault

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFoldCase(t *testing.T) {
	// Pairs GNU grep -i (UTF-8 locale) treats as equal, and pairs it does not;
	// shared/tools checks the whole behaviour against grep itself.
	same := [][2]string{
		{"Compost", "COMPOST"}, {"café", "CAFÉ"}, {"größe", "GRÖßE"}, {"пожалуйста", "ПОЖАЛУЙСТА"},
		{"i", "ı"}, {"I", "ı"}, {"s", "ſ"}, {"σ", "ς"}, {"Σ", "ς"}, {"μ", "µ"}, {"ǆ", "ǅ"}, {"ι", "\u0345"},
		{"κήπος", "ΚΉΠΟΣ"}, {"Ǆ", "ǆ"},
	}
	for _, p := range same {
		if a, b := FoldCase(nil, []byte(p[0])), FoldCase(nil, []byte(p[1])); !bytes.Equal(a, b) {
			t.Errorf("%q and %q fold to %q and %q", p[0], p[1], a, b)
		}
	}
	differ := [][2]string{
		{"i", "İ"}, {"k", "\u212a"}, {"ß", "ẞ"}, {"ss", "ß"}, {"é", "e\u0301"}, {"ω", "\u2126"}, {"a", "b"},
	}
	for _, p := range differ {
		if a, b := FoldCase(nil, []byte(p[0])), FoldCase(nil, []byte(p[1])); bytes.Equal(a, b) {
			t.Errorf("%q and %q must not fold together (%q)", p[0], p[1], a)
		}
	}
	if got := FoldCase([]byte("x:"), []byte("Ab\xffC\n\xe6\x97D")); string(got) != "x:ab\xffc\n\xe6\x97d" {
		t.Errorf("invalid bytes must be kept: %q", got)
	}
}

func TestFoldCaseMap(t *testing.T) {
	src := []byte("Aı\xffΣ日")
	folded, from := FoldCaseMap(src)
	if !bytes.Equal(folded, FoldCase(nil, src)) {
		t.Fatalf("FoldCaseMap %q differs from FoldCase %q", folded, FoldCase(nil, src))
	}
	// "a" from 0, "i" (from the 2-byte "ı") from 1, 0xff from 3, "Σ" from 4, "日" from 6.
	want := []int{0, 1, 3, 4, 4, 6, 6, 6, 9}
	if !slices.Equal(from, want) {
		t.Errorf("offsets %v, want %v", from, want)
	}
}

func TestProse(t *testing.T) {
	src := "---\ntitle: Front Matter\ntags: [x]\n---\n" +
		"# Heading words\n\n" +
		"Some *emphasis* and **strong** text with `code span` inside.\n" +
		"A [[Wiki link|shown]] and ![[Embed]] and [markdown](target.md) and <https://auto.link>.\n" +
		"A bare https://example.org/path and www.example.com here. #tag @handle ^block\n\n" +
		"```\nfenced code\n```\n\n" +
		"    indented code\n\n" +
		"<div>html block</div>\n\n" +
		"%%a comment%% after\r\n" +
		"Escaped \\*star\\* &amp; entity.\n"
	got := Prose([]byte(src))
	for _, want := range []string{"Heading words", "emphasis", "strong", "text with", "inside", "after", "*star*", "& entity", "here"} {
		if !strings.Contains(got, want) {
			t.Errorf("prose lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"Front", "code span", "Wiki", "shown", "Embed", "markdown", "auto.link", "example",
		"tag", "handle", "block", "fenced", "indented", "html", "comment", "\r"} {
		if strings.Contains(got, bad) {
			t.Errorf("prose holds %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(Prose([]byte("no frontmatter\n---\nstill text")), "still text") {
		t.Error("a thematic break is not frontmatter")
	}
	if p := Prose([]byte("bad \xff byte")); !utf8.ValidString(p) || !strings.Contains(p, "byte") {
		t.Errorf("invalid UTF-8: %q", p)
	}
}

func TestNameMatcher(t *testing.T) {
	names := []string{"Compost", "Compost heap", "Ideas 💡", "💡 first", "C++", "Müller", "日本", "--"}
	m := NewNameMatcher(names)
	prose := "Compost, compost heap and COMPOST-heap; composting, decompost.\n" +
		"Ideas 💡 and ideas 💡! 💡 first. C++ and c++x.\n" +
		"über-Müller, Müllers, MÜLLER.\n" +
		"日本語 and 日本 here.\nCompost\nheap"
	got := m.Count(prose)
	want := []int{
		3, // Compost: "Compost,", "COMPOST-heap" and "Compost\nheap" (no space), never in "composting"
		1, // Compost heap: the longer name wins over Compost
		2, // Ideas 💡
		1, // 💡 first
		2, // C++: it ends in '+', so "c++x" counts too
		2, // Müller: "über-Müller" and "MÜLLER", not "Müllers"
		1, // 日本 alone; 日本語 is a longer word
		0, // "--" has no letter or digit: never found
	}
	if !slices.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if c := NewNameMatcher(nil).Count("anything"); len(c) != 0 {
		t.Errorf("no names: %v", c)
	}
}

func FuzzFoldCase(f *testing.F) {
	for _, s := range []string{"", "Abc", "ıİſσς", "\xff\xe6\x97", "日本\r\n", "ǅµ\u0345"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		folded := FoldCase(nil, src)
		if bytes.Count(folded, []byte("\n")) != bytes.Count(src, []byte("\n")) {
			t.Fatalf("lines changed: %q -> %q", src, folded)
		}
		again, from := FoldCaseMap(src)
		if !bytes.Equal(again, folded) || len(from) != len(folded)+1 || from[len(folded)] != len(src) {
			t.Fatalf("FoldCaseMap disagrees: %q %v", again, from)
		}
		if !slices.IsSorted(from) {
			t.Fatalf("offsets not monotonic: %v", from)
		}
		if utf8.Valid(src) && !bytes.Equal(FoldCase(nil, folded), folded) {
			t.Fatalf("folding is not idempotent: %q", src)
		}
	})
}

func FuzzProseAndNames(f *testing.F) {
	f.Add([]byte("---\na: b\n---\n# T\n[[x]] `c` Compost heap\n"), "Compost heap")
	f.Add([]byte("%%\n```\n> [!ai]\n"), "ai")
	f.Fuzz(func(t *testing.T, src []byte, name string) {
		p := Prose(src)
		if !utf8.ValidString(p) {
			t.Fatalf("invalid UTF-8 prose from %q", src)
		}
		m := NewNameMatcher([]string{name, strings.ToUpper(name)})
		for _, c := range m.Count(p) {
			if c < 0 || c > len(p) {
				t.Fatalf("count %d", c)
			}
		}
	})
}
