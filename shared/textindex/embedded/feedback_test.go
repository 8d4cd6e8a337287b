package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// TestFeedback: pseudo-relevance feedback adds the leading note's telling
// words, so a note that shares them but none of the question's joins the
// ranking.
func TestFeedback(t *testing.T) {
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	docs := []textindex.Doc{
		{Path: "irrigation.md", Title: "Irrigation", Body: "Flush the drip lines every two weeks. Check the emitters and the filter screen; emitters clog."},
		{Path: "emitters.md", Title: "Emitter care", Body: "Emitters clog with silt: soak them, then check the filter screen."},
	}
	for i := range 10 {
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("other%d.md", i), Title: fmt.Sprintf("Other %d", i), Body: "Bees, compost and the tool library."})
	}
	if err := ix.Upsert(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	body := func(fb textindex.Feedback) map[string]float64 {
		ao := textindex.DefaultAsk
		ao.Feedback = fb
		res, err := ix.Ask(context.Background(), textindex.ParseQuestion("how often should the drip lines be flushed"), textindex.Options{Ask: ao})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, h := range res.Hits {
			out[h.Path] = h.Features.Body
		}
		return out
	}
	off := body(textindex.Feedback{})
	on := body(textindex.Feedback{Notes: 1, Terms: 3, Weight: 1})
	if _, ok := off["emitters.md"]; ok {
		t.Fatalf("without feedback emitters.md matches the question: %v", off)
	}
	if on["irrigation.md"] <= 0 {
		t.Errorf("with feedback irrigation.md lost its evidence: %v", on)
	}
	if on["emitters.md"] <= 0 {
		t.Errorf("with feedback emitters.md is not found: %v", on)
	}
}
