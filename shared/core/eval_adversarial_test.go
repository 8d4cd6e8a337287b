package core

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A hostile question set: BOM, CRLF, blank and huge lines, non-objects,
// missing expected notes, duplicates, and more questions than the cap.
func TestEvalHostileQuestionSet(t *testing.T) {
	var b strings.Builder
	b.WriteString("\uFEFF")
	for i := range maxEvalQuestions + 100 {
		fmt.Fprintf(&b, `{"question": "apples %d", "expected_paths": ["Apples", "Gone.md"]}`+"\r\n", i)
		if i%100 == 0 {
			b.WriteString("\r\n   \n")
			b.WriteString(`{"question": "` + strings.Repeat("x", 5000) + `", "expected_paths": ["Apples.md"]}` + "\n")
			b.WriteString("42\n[1]\nnull\n\"s\"\n")
		}
	}
	s, _ := indexedServer(t, map[string]string{
		"Apples.md":             "# Apples\n\napples grow here\n",
		EvalFile:                b.String(),
		"sub/" + EvalFile:       `{"question": "x", "expected_paths": ["Apples.md"]}`,
		"Pears.md":              "# Pears\n\npears\n",
		"eval/questions.md":     "# not the set\n",
		"eval/questions.jsonl~": "junk",
	}, nil)
	out, err := s.Eval(context.Background(), EvalIn{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != maxEvalQuestions || out.Skipped != 100 {
		t.Errorf("count %d skipped %d, want %d and 100", out.Count, out.Skipped, maxEvalQuestions)
	}
	if len(out.Errors) != 6*5 {
		t.Errorf("%d line errors, want 30: %+v", len(out.Errors), out.Errors[:min(5, len(out.Errors))])
	}
	q := out.PerQuestion[0]
	if q.Question != "apples 0" || len(q.Missing) != 1 || q.Missing[0] != "Gone.md" || q.Expected[0] != "Apples.md" || !q.Hit || q.Recall != 0.5 {
		t.Errorf("first question %+v", q)
	}
}
