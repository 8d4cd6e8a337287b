package vault

import (
	"fmt"
	"testing"
)

func TestSummary(t *testing.T) {
	c := NewCatalog()
	if s := c.Summary(); s.Notes != 0 || s.HasIndex || s.Problems != nil {
		t.Fatalf("empty catalog: %+v", s)
	}
	c.Upsert(Note{Path: "INDEX.md"})
	c.Upsert(Note{Path: "a.md", Directives: []Directive{{Title: "x"}, {Title: "y", Done: true}, {Title: "z"}}})
	c.Upsert(Note{Path: "b.md", Directives: []Directive{{Title: "w"}}})
	c.UpsertAttachment(Attachment{Path: "p.png"})
	for i := range 60 {
		c.SetProblem(fmt.Sprintf("skipped/%02d.md", 59-i), "binary content in a .md file, not indexed")
	}
	c.SetProblem("a.md", "frontmatter: bad") // indexed all the same
	c.SetProblem("data.bin", "unreadable")   // not a note
	s := c.Summary()
	if s.Notes != 3 || s.Attachments != 1 || !s.HasIndex || s.PendingDirectives != 3 {
		t.Errorf("summary %+v", s)
	}
	if s.ProblemCount != 62 || s.Unindexed != 60 || s.Unindexed != c.CountUnindexed() {
		t.Errorf("%d problems, %d unindexed (CountUnindexed %d)", s.ProblemCount, s.Unindexed, c.CountUnindexed())
	}
	if len(s.Problems) != SummaryProblems || s.Problems[0].Path != "a.md" || s.Problems[1].Path != "data.bin" || s.Problems[2].Path != "skipped/00.md" {
		t.Errorf("problems listed: %d, from %+v", len(s.Problems), s.Problems[:3])
	}
	c.Upsert(Note{Path: "index.md"}) // two case variants: neither is "the" index
	if !c.Summary().HasIndex {
		t.Error("index.md present, HasIndex false")
	}
}
