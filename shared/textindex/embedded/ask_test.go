package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// A question's words held by most notes are dropped only while another of
// its words is in some note: when the others are in none, the common words
// are all it can be found by, and it finds notes rather than nothing.
func TestAskKeepsCommonWordsWhenTheRestIsNowhere(t *testing.T) {
	ctx := context.Background()
	var docs []textindex.Doc
	for i := range 10 {
		body := "The orchard needs pruning."
		if i == 3 {
			body = "The orchard and the orchard gate need pruning; the orchard is old."
		}
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("n%d.md", i), Title: fmt.Sprintf("Note %d", i), Body: body})
	}
	docs = append(docs, textindex.Doc{Path: "gate.md", Title: "Gate", Body: "The gate squeaks."})
	ix := memIndex(t, docs...)
	for q, want := range map[string]string{
		"what do we know about the orchard?":      "n3.md",   // know: in no note
		"what do we know about the orchard gate?": "gate.md", // gate: in two notes, orchard dropped
	} {
		res, err := ix.Ask(ctx, textindex.ParseQuestion(q), textindex.Options{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Path != want {
			t.Errorf("%q: %v, want %s first", q, hitPaths(res), want)
		}
	}
}
