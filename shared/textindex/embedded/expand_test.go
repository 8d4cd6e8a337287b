package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// askPaths asks q with ao and returns each hit's features by path.
func askPaths(t *testing.T, ix *Index, q string, ao textindex.AskOptions) map[string]textindex.Features {
	t.Helper()
	res, err := ix.Ask(context.Background(), textindex.ParseQuestion(q), textindex.Options{Ask: ao})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]textindex.Features{}
	for _, h := range res.Hits {
		out[h.Path] = h.Features
	}
	return out
}

func expandIndex(t *testing.T) *Index {
	t.Helper()
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	docs := []textindex.Doc{
		{Path: "leave.md", Title: "Annual leave", Body: "Staff carry over at most 30 days of annual leave into the next year."},
		{Path: "holiday.md", Title: "Public holidays", Body: "The office closes on public holidays."},
		{Path: "hours.md", Title: "Working hours", Body: "Core hours are ten to four; log your hours weekly."},
	}
	for i := range 10 {
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("other%d.md", i), Title: fmt.Sprintf("Other %d", i), Body: "Bees, compost and the tool library."})
	}
	if err := ix.Upsert(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestExpansion: WordNet's relations of an English question's words find
// notes that use them instead ("vacation": "holiday", a kind of "leave"),
// weighted as asked, without changing the question's own shares.
func TestExpansion(t *testing.T) {
	ix := expandIndex(t)
	q := "how many unused vacation hours can I keep"
	off := askPaths(t, ix, q, textindex.DefaultAsk)
	if _, ok := off["leave.md"]; ok {
		t.Fatalf("without expansion leave.md matches: %v", off)
	}
	syn := textindex.DefaultAsk
	syn.Expand = textindex.Expansion{Synonyms: 0.5}
	got := askPaths(t, ix, q, syn)
	if got["holiday.md"].Body <= 0 {
		t.Errorf("with synonyms holiday.md is not found: %v", got)
	}
	if _, ok := got["leave.md"]; ok {
		t.Errorf("synonyms alone find the hypernym's note: %v", got)
	}
	hyp := textindex.DefaultAsk
	hyp.Expand = textindex.Expansion{Hypernyms: 0.5}
	got = askPaths(t, ix, q, hyp)
	if got["leave.md"].Body <= 0 {
		t.Errorf("with hypernyms leave.md is not found: %v", got)
	}
	if m := got["hours.md"].Matched; m != off["hours.md"].Matched {
		t.Errorf("expansion moved the question's share in hours.md: %v, was %v", m, off["hours.md"].Matched)
	}
	// Only English questions are expanded.
	de := askPaths(t, ix, "wie viele Urlaubstage kann ich behalten", hyp)
	if _, ok := de["leave.md"]; ok {
		t.Errorf("a German question was expanded: %v", de)
	}
}

// TestBM25Params: the body and passage features follow the K1 and B asked
// for; zero means the textbook 1.2 and 0.75.
func TestBM25Params(t *testing.T) {
	ix := expandIndex(t)
	q := "log working hours weekly"
	def := askPaths(t, ix, q, textindex.DefaultAsk)["hours.md"]
	same := textindex.DefaultAsk
	same.BM25 = textindex.BM25{K1: 1.2, B: 0.75}
	if got := askPaths(t, ix, q, same)["hours.md"]; got != def {
		t.Errorf("explicit 1.2/0.75 differ from the default: %+v, %+v", got, def)
	}
	// "hours" twice in hours.md: a smaller K1 saturates sooner, so the
	// note is nearer the most it could score.
	low := textindex.DefaultAsk
	low.BM25 = textindex.BM25{K1: 0.3}
	if got := askPaths(t, ix, q, low)["hours.md"]; got.Passage <= def.Passage {
		t.Errorf("K1 0.3 passage %v, not above K1 1.2's %v", got.Passage, def.Passage)
	}
}
