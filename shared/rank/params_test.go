package rank

import (
	"math"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

func TestVectorShare(t *testing.T) {
	p := Params{VectorWeight: 0.4, VectorFloor: 0.1}
	for _, c := range []struct{ conf, want float64 }{{0, 0.5}, {1, 0.1}, {0.5, 0.3}, {-1, 0.5}, {2, 0.1}} {
		if got := p.VectorShare(c.conf); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("VectorShare(%v) = %v, want %v", c.conf, got, c.want)
		}
	}
	if got := (Params{VectorWeight: 1, VectorFloor: 0.5}).VectorShare(0); got != 1 {
		t.Errorf("share above 1: %v", got)
	}
}

type links map[string][]Anchor // outgoing, by source

func (l links) Incoming(path string) (int, []string) {
	n := 0
	var out []string
	for _, as := range l {
		for _, a := range as {
			if a.Target == path {
				n++
				if a.Text != "" {
					out = append(out, a.Text)
				}
			}
		}
	}
	return n, out
}

func (l links) Outgoing(path string) []Anchor { return l[path] }

func TestLexical(t *testing.T) {
	q := textindex.ParseQuestion("a printable document of my note")
	hits := []textindex.Hit{{Path: "Index.md", Score: -1}, {Path: "Other.md", Score: -0.5}}
	l := links{"Index.md": {{Target: "Export.md", Text: "printable document"}, {Target: "Other.md", Text: "other"}}}
	// Without the anchor weight: only the link prior, no note joins.
	got := Lexical(Params{LinkWeight: 0.1}, q, append([]textindex.Hit(nil), hits...), l)
	if len(got) != 2 || got[1].Score >= -0.5 {
		t.Errorf("link prior: %+v", got)
	}
	got = Lexical(Params{AnchorWeight: 2}, q, append([]textindex.Hit(nil), hits...), l)
	if len(got) != 3 || got[2].Path != "Export.md" {
		t.Fatalf("Export.md should join through Index.md's link: %+v", got)
	}
	if e := got[2]; e.Features.Anchor <= 0.5 || math.Abs(e.Score+2*e.Features.Anchor) > 1e-9 {
		t.Errorf("Export.md: %+v", e)
	}
	if got[1].Features.Anchor != 0 {
		t.Errorf("Other.md's anchor %q shares no word: %+v", "other", got[1])
	}
}
