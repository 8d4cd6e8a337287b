package rank

import (
	"math"
	"slices"
	"testing"
)

func TestCrossValidate(t *testing.T) {
	// Each set prefers x = its own best value; a fold must pick from the
	// other sets only, and the final fit from all of them.
	best := []float64{0.1, 0.3, 0.3, 0.5}
	params := []Param{{Name: "x", Values: []float64{0, 0.1, 0.3, 0.5}}, {Name: "unused", Values: []float64{1, 2}}}
	calls := 0
	eval := func(x []float64, set int) Metrics {
		calls++
		s := 1 - math.Abs(x[0]-best[set])
		return Metrics{N: 10, Recall: s, MRR: s}
	}
	cv := CrossValidate([]string{"a", "b", "c", "d"}, params, 3, eval)
	if len(cv.Folds) != 4 {
		t.Fatalf("%d folds", len(cv.Folds))
	}
	// Leaving out b (0.3), the others' mean is best at 0.3 (a 0.1, c 0.3, d 0.5).
	for i, want := range []float64{0.3, 0.3, 0.3, 0.3} {
		if got := cv.Folds[i].Values[0]; got != want {
			t.Errorf("fold %s chose %v, want %v", cv.Folds[i].Held, got, want)
		}
		if cv.Folds[i].Values[1] != 1 {
			t.Errorf("fold %s moved a parameter that changes nothing: %v", cv.Folds[i].Held, cv.Folds[i].Values)
		}
	}
	if h := cv.Folds[0].Score; math.Abs(h.Recall-0.8) > 1e-9 {
		t.Errorf("held-out score of a with 0.3: %v, want 0.8", h)
	}
	if !slices.Equal(cv.All, []float64{0.3, 1}) {
		t.Errorf("fit on all sets: %v", cv.All)
	}
	if calls == 0 {
		t.Error("eval never called")
	}
}

func TestMeasure(t *testing.T) {
	qs := []Judged{
		{Question: "a", Expected: []string{"x", "y"}},
		{Question: "b", Expected: []string{"z"}, NoTitleWord: true},
	}
	rs := [][]string{{"q", "x", "w", "v", "u", "y"}, {"z"}}
	m := Measure(qs, rs, 5, nil)
	if m.N != 2 || math.Abs(m.Recall-0.75) > 1e-9 || math.Abs(m.MRR-0.75) > 1e-9 {
		t.Errorf("all: %+v, want recall 0.75 (y past 5), MRR 0.75", m)
	}
	if m := Measure(qs, rs, 5, func(q Judged) bool { return q.NoTitleWord }); m.N != 1 || m.Recall != 1 || m.MRR != 1 {
		t.Errorf("subset: %+v", m)
	}
}

func TestSharesNoTitleWord(t *testing.T) {
	for _, c := range []struct {
		q, title string
		want     bool
	}{
		{"How do I export my notes as a printable document?", "Export to PDF", false}, // export
		{"I need to hand someone a printable document", "Export to PDF", true},
		{"Can several of us edit at once?", "Real-time collaboration", true},
		{"Which plants grow well next to tomatoes?", "Companion planting: tomato", false}, // by stem
	} {
		if got := SharesNoTitleWord(c.q, c.title); got != c.want {
			t.Errorf("SharesNoTitleWord(%q, %q) = %v", c.q, c.title, got)
		}
	}
}
