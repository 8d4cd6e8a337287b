package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// checkPassages asserts the passage invariants: ordinals, hashes, line
// ranges within the file, ordered and non-overlapping (a shared line only
// when a line longer than unitMax was cut), every non-blank body line
// covered, and each Text taken from the lines it claims.
func checkPassages(t *testing.T, src string, p *Parsed) {
	t.Helper()
	lines := strings.Split(src, "\n")
	bodyFirst := strings.Count(src[:len(src)-len(p.Body)], "\n") + 1
	if p.Body == "" {
		bodyFirst = len(lines) + 1
	}
	covered := make([]bool, len(lines)+1)
	for i, ps := range p.Passages {
		if ps.Ordinal != i {
			t.Fatalf("passage %d has ordinal %d", i, ps.Ordinal)
		}
		if ps.StartLine < bodyFirst || ps.StartLine > ps.EndLine || ps.EndLine > len(lines) {
			t.Fatalf("passage %d lines %d-%d outside body %d-%d", i, ps.StartLine, ps.EndLine, bodyFirst, len(lines))
		}
		if i > 0 {
			prev := p.Passages[i-1]
			if prev.EndLine > ps.StartLine || (prev.EndLine == ps.StartLine && len(lines[ps.StartLine-1]) <= unitMax) {
				t.Fatalf("passages %d (%d-%d) and %d (%d-%d) overlap", i-1, prev.StartLine, prev.EndLine, i, ps.StartLine, ps.EndLine)
			}
		}
		sum := sha256.Sum256([]byte(ps.Text))
		if ps.Hash != hex.EncodeToString(sum[:]) {
			t.Fatalf("passage %d hash mismatch", i)
		}
		if strings.TrimSpace(ps.Text) == "" {
			t.Fatalf("passage %d is blank", i)
		}
		if !strings.Contains(strings.Join(lines[ps.StartLine-1:ps.EndLine], "\n"), ps.Text) {
			t.Fatalf("passage %d text is not from lines %d-%d: %q", i, ps.StartLine, ps.EndLine, ps.Text)
		}
		for l := ps.StartLine; l <= ps.EndLine; l++ {
			covered[l] = true
		}
	}
	for l := bodyFirst; l <= len(lines); l++ {
		if strings.TrimSpace(lines[l-1]) != "" && !covered[l] {
			t.Fatalf("line %d %q is in no passage", l, lines[l-1])
		}
	}
}

type passageShape struct {
	Path       []string
	ID         string
	Start, End int
}

func shapes(ps []Passage) []passageShape {
	out := make([]passageShape, len(ps))
	for i, p := range ps {
		out[i] = passageShape{p.HeadingPath, p.HeadingID, p.StartLine, p.EndLine}
	}
	return out
}

func TestPassagesSections(t *testing.T) {
	src := "---\ntitle: x\n---\nIntro text\n\n# One\nbody one\n## Two\n\nbody two\n### Three\n## Four\n\n\n# Five\n```\n# not a heading\n```\n"
	p := Parse("n.md", []byte(src))
	checkPassages(t, src, p)
	want := []passageShape{
		{[]string{}, "", 4, 4},
		{[]string{"One"}, "one", 6, 7},
		{[]string{"One", "Two"}, "two", 8, 10},
		{[]string{"One", "Two", "Three"}, "three", 11, 11},
		{[]string{"One", "Four"}, "four", 12, 12},
		{[]string{"Five"}, "five", 15, 18},
	}
	if got := shapes(p.Passages); !reflect.DeepEqual(got, want) {
		t.Errorf("passages =\n%+v\nwant\n%+v", got, want)
	}
	if p.Passages[1].Text != "# One\nbody one" {
		t.Errorf("text = %q", p.Passages[1].Text)
	}
	if p.Passages[0].Heading() != "" || p.Passages[3].Heading() != "Three" {
		t.Errorf("Heading() = %q, %q", p.Passages[0].Heading(), p.Passages[3].Heading())
	}
}

func TestPassagesEdges(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []passageShape
	}{
		{"empty", "", []passageShape{}},
		{"blank only", "\n  \n\t\n", []passageShape{}},
		{"frontmatter only", "---\na: 1\n---\n\n", []passageShape{}},
		{"no headings", "a\n\nb", []passageShape{{[]string{}, "", 1, 3}}},
		{"heading only", "# H", []passageShape{{[]string{"H"}, "h", 1, 1}}},
		{"setext", "para\n\nTitle\n=====\ntext", []passageShape{{[]string{}, "", 1, 1}, {[]string{"Title"}, "title", 3, 5}}},
		{"quoted heading stays in section", "# A\n> ## Q\n> x", []passageShape{{[]string{"A"}, "a", 1, 3}}},
		{"CRLF", "# A\r\nx\r\n# B\r\ny\r\n", []passageShape{{[]string{"A"}, "a", 1, 2}, {[]string{"B"}, "b", 3, 4}}},
		{"commented heading", "# A\n%%\n# B\n%%\nx", []passageShape{{[]string{"A"}, "a", 1, 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parse("n.md", []byte(tt.src))
			checkPassages(t, tt.src, p)
			if got := shapes(p.Passages); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("passages = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := Parse("n.md", []byte("# A\r\nx\r\n")).Passages[0].Text; got != "# A\r\nx" {
		t.Errorf("CRLF text = %q", got)
	}
}

func TestPassagesSplitLongSection(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Long\n\n")
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d %s\n\n", i, strings.Repeat("word ", 30))
	}
	src := b.String()
	p := Parse("n.md", []byte(src))
	checkPassages(t, src, p)
	if len(p.Passages) < 4 {
		t.Fatalf("got %d passages", len(p.Passages))
	}
	for i, ps := range p.Passages {
		last := i == len(p.Passages)-1
		if len(ps.Text) > passageMax || (!last && len(ps.Text) < passageMin) {
			t.Errorf("passage %d has %d bytes", i, len(ps.Text))
		}
		if !reflect.DeepEqual(ps.HeadingPath, []string{"Long"}) || ps.HeadingID != "long" {
			t.Errorf("passage %d heading %v %q", i, ps.HeadingPath, ps.HeadingID)
		}
		if !strings.HasPrefix(ps.Text, "# Long") && !strings.HasPrefix(ps.Text, "Paragraph ") {
			t.Errorf("passage %d does not start at a paragraph: %q", i, ps.Text[:20])
		}
	}
}

func TestPassagesKeepFencesWhole(t *testing.T) {
	code := "```go\n" + strings.Repeat("x := 1\n\n", 150) + "```\n" // ~1.2 KB with blank lines
	src := "# Code\n\n" + strings.Repeat("intro words here. ", 50) + "\n\n" + code + "\n" + strings.Repeat("outro words. ", 60) + "\n"
	p := Parse("n.md", []byte(src))
	checkPassages(t, src, p)
	found := false
	for _, ps := range p.Passages {
		if strings.Contains(ps.Text, "```go") {
			found = true
			if strings.Count(ps.Text, "```") != 2 {
				t.Errorf("fenced block was split: %q", ps.Text)
			}
		}
	}
	if !found || len(p.Passages) < 2 {
		t.Fatalf("passages = %+v", shapes(p.Passages))
	}
}

func TestPassagesSplitLongParagraph(t *testing.T) {
	t.Run("lines", func(t *testing.T) {
		src := strings.Repeat("a line of a long paragraph without blank lines\n", 200)
		p := Parse("n.md", []byte(src))
		checkPassages(t, src, p)
		if len(p.Passages) < 5 {
			t.Fatalf("got %d passages", len(p.Passages))
		}
		for _, ps := range p.Passages {
			if len(ps.Text) > passageMax || !strings.HasPrefix(ps.Text, "a line") {
				t.Errorf("passage %d: %d bytes, %q...", ps.Ordinal, len(ps.Text), ps.Text[:10])
			}
		}
	})
	t.Run("sentences in one line", func(t *testing.T) {
		src := "intro\n\n" + strings.Repeat("This is one sentence of a long line. ", 200) + "\n\noutro"
		p := Parse("n.md", []byte(src))
		checkPassages(t, src, p)
		if len(p.Passages) < 5 {
			t.Fatalf("got %d passages", len(p.Passages))
		}
		var joined strings.Builder
		for _, ps := range p.Passages[1 : len(p.Passages)-1] {
			if ps.StartLine != 3 || ps.EndLine != 3 || len(ps.Text) > passageMax || !strings.HasPrefix(ps.Text, "This is") || !strings.HasSuffix(ps.Text, ".") {
				t.Errorf("passage %d: lines %d-%d, %d bytes", ps.Ordinal, ps.StartLine, ps.EndLine, len(ps.Text))
			}
			joined.WriteString(ps.Text + " ")
		}
		if got, want := strings.TrimSpace(joined.String()), strings.TrimSpace(strings.Split(src, "\n")[2]); got != want {
			t.Errorf("pieces do not rebuild the line")
		}
	})
	t.Run("CJK sentences", func(t *testing.T) {
		src := strings.Repeat("これは長い段落の一文です。", 200)
		p := Parse("n.md", []byte(src))
		checkPassages(t, src, p)
		if len(p.Passages) < 3 {
			t.Fatalf("got %d passages", len(p.Passages))
		}
		for _, ps := range p.Passages {
			if !strings.HasSuffix(ps.Text, "。") {
				t.Errorf("passage %d does not end a sentence", ps.Ordinal)
			}
		}
	})
	t.Run("no boundaries", func(t *testing.T) {
		src := strings.Repeat("é", 5000) // 10 KB, one word
		p := Parse("n.md", []byte(src))
		checkPassages(t, src, p)
		var joined string
		for _, ps := range p.Passages {
			if len(ps.Text) > passageMax+4 {
				t.Errorf("passage %d is %d bytes", ps.Ordinal, len(ps.Text))
			}
			joined += ps.Text
		}
		if joined != src {
			t.Errorf("pieces do not rebuild the text")
		}
	})
}
