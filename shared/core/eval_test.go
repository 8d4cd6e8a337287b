package core

import (
	"bytes"
	"context"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/llm/llmtest"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestScoreRetrieval(t *testing.T) {
	for _, c := range []struct {
		expected, retrieved []string
		k                   int
		recall, prec, rr    float64
		hit                 bool
	}{
		// One expected, found at rank 2 of k=6: recall 1/1, precision 1/6, RR 1/2.
		{[]string{"a"}, []string{"x", "a", "y"}, 6, 1, 1.0 / 6, 0.5, true},
		// Two expected, one found at rank 3 of k=3: recall 1/2, precision 1/3, RR 1/3.
		{[]string{"a", "b"}, []string{"x", "y", "b"}, 3, 0.5, 1.0 / 3, 1.0 / 3, true},
		// Both found at ranks 1 and 2 of k=4: recall 1, precision 2/4, RR 1.
		{[]string{"a", "b"}, []string{"b", "a", "x", "y"}, 4, 1, 0.5, 1, true},
		// Found only beyond k: nothing counts.
		{[]string{"a"}, []string{"x", "y", "a"}, 2, 0, 0, 0, false},
		// Nothing retrieved.
		{[]string{"a"}, nil, 5, 0, 0, 0, false},
	} {
		r, p, rr, hit := scoreRetrieval(c.expected, c.retrieved, c.k)
		if !near(r, c.recall) || !near(p, c.prec) || !near(rr, c.rr) || hit != c.hit {
			t.Errorf("score(%v, %v, k=%d) = %v %v %v %v; want %v %v %v %v", c.expected, c.retrieved, c.k, r, p, rr, hit, c.recall, c.prec, c.rr, c.hit)
		}
	}
}

func TestAggregate(t *testing.T) {
	yes, no := true, false
	out := &EvalOut{PerQuestion: []EvalQuestion{
		{Recall: 1, Precision: 0.25, ReciprocalRank: 1, Hit: true, Faithful: &yes},
		{Recall: 0.5, Precision: 0.25, ReciprocalRank: 0.5, Hit: true, Faithful: &no},
		{Recall: 0, Precision: 0, ReciprocalRank: 0, Hit: false, AnswerError: "boom"},
	}}
	aggregate(out)
	if out.Count != 3 || !near(out.RecallAtK, 0.5) || !near(out.PrecisionAtK, 0.5/3) || !near(out.MRR, 0.5) || !near(out.HitRate, 2.0/3) {
		t.Errorf("aggregate %+v", out)
	}
	if out.FaithfulnessRate == nil || !near(*out.FaithfulnessRate, 0.5) {
		t.Errorf("faithfulness over the answered questions: %v", out.FaithfulnessRate)
	}
	empty := &EvalOut{}
	aggregate(empty)
	if empty.Count != 0 || empty.MRR != 0 || empty.FaithfulnessRate != nil {
		t.Errorf("empty %+v", empty)
	}
}

func TestFaithful(t *testing.T) {
	a := &AnswerOut{Answer: "The test showed pH  6.4\nin bed 4."}
	if !faithful(a, []string{"ph 6.4 in bed"}) || faithful(a, []string{"pH 7"}) {
		t.Error("must_contain is case- and whitespace-insensitive")
	}
	if faithful(&AnswerOut{Answer: "pH 6.4", DroppedCitations: []string{"x.md"}}, []string{"pH 6.4"}) {
		t.Error("citing a page it was not shown is unfaithful")
	}
	if faithful(&AnswerOut{Answer: "pH 6.4", Unstructured: true}, nil) {
		t.Error("an unstructured reply is unfaithful")
	}
}

func TestParseQuestions(t *testing.T) {
	cat := vault.NewCatalog()
	cat.Upsert(vault.Note{Path: "A.md", Name: "A"})
	data := "\uFEFF" + `{"question": "q1", "expected_paths": ["A"], "must_contain": ["x", " "]}` + "\n\n" +
		`not json` + "\n" +
		`{"question": "", "expected_paths": ["A.md"]}` + "\n" +
		`{"question": "q4"}` + "\n" +
		`{"question": "q5", "expected_paths": ["../etc/passwd"]}` + "\n" +
		`{"question": "q6", "expected_paths": ["B.md", "B.md"], "extra": 1}` + "\n" +
		`["an", "array"]` + "\r\n"
	cases, errs := parseQuestions([]byte(data), cat)
	want := []evalCase{
		{Question: "q1", Expected: []string{"A.md"}, MustContain: []string{"x"}},
		{Question: "q6", Expected: []string{"B.md"}},
	}
	if !reflect.DeepEqual(cases, want) {
		t.Errorf("cases %+v", cases)
	}
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Line)
	}
	if !reflect.DeepEqual(lines, []int{3, 4, 5, 6, 8}) {
		t.Errorf("bad lines %v (%+v)", lines, errs)
	}
}

func FuzzParseQuestions(f *testing.F) {
	f.Add([]byte(`{"question": "q", "expected_paths": ["a.md"], "must_contain": ["x"]}`))
	f.Add([]byte("{}\n\xff\n[]"))
	cat := vault.NewCatalog()
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, errs := parseQuestions(data, cat)
		for _, c := range cases {
			if c.Question == "" || len(c.Expected) == 0 {
				t.Fatalf("an unusable case was accepted: %+v", c)
			}
		}
		for _, e := range errs {
			if e.Line < 1 || e.Message == "" {
				t.Fatalf("bad error %+v", e)
			}
		}
	})
}

// sampleServer indexes a copy of infra/sample-vault.
func sampleServer(t *testing.T) (*Core, *Vault) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../infra/sample-vault")); err != nil {
		t.Fatal(err)
	}
	ix := indexFolder(t, dir)
	v := &Vault{ID: "sample", Store: ix.Store, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}}
	s, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func TestEvalSampleVault(t *testing.T) {
	s, _ := sampleServer(t)
	out, err := s.Eval(context.Background(), EvalIn{K: 6})
	if err != nil {
		t.Fatal(err)
	}
	n := len(loadQuestions(t, "../../infra/sample-vault"))
	if out.Count != n || len(out.PerQuestion) != n || len(out.Errors) != 0 || out.Mode != "fulltext" || out.K != 6 {
		t.Fatalf("eval: count %d, errors %+v, mode %s", out.Count, out.Errors, out.Mode)
	}
	// Every question has one or two expected notes, so recall is at most
	// the hit rate and precision@6 at most twice the hits over 6.
	if out.HitRate < 0.7 || out.MRR < 0.5 || out.MRR > out.HitRate || out.RecallAtK > out.HitRate+1e-9 ||
		out.PrecisionAtK < out.HitRate/6-1e-9 || out.PrecisionAtK > out.HitRate/3+1e-9 || out.FaithfulnessRate != nil {
		t.Errorf("implausible numbers: recall %.3f precision %.3f mrr %.3f hit %.3f", out.RecallAtK, out.PrecisionAtK, out.MRR, out.HitRate)
	}
	for _, q := range out.PerQuestion {
		if len(q.Retrieved) > 6 || len(q.Missing) != 0 || q.Faithful != nil {
			t.Errorf("question %+v", q)
		}
	}
	again, err := s.Eval(context.Background(), EvalIn{K: 6, Mode: "fulltext"})
	if err != nil || !reflect.DeepEqual(out, again) {
		t.Errorf("eval is not reproducible")
	}
	t.Logf("sample vault, fulltext, k=6: recall %.3f precision %.3f mrr %.3f hit %.3f", out.RecallAtK, out.PrecisionAtK, out.MRR, out.HitRate)

	k1, err := s.Eval(context.Background(), EvalIn{K: 1})
	if err != nil || k1.HitRate > out.HitRate || !near(k1.PrecisionAtK, k1.HitRate) {
		t.Errorf("k=1: %+v %v", k1, err)
	}
	if _, err := s.Eval(context.Background(), EvalIn{K: 6, Mode: "semantic"}); toError(err).Kind != KindUnsupported {
		t.Errorf("semantic without embeddings: %v", err)
	}
}

func TestEvalWithLLM(t *testing.T) {
	s, v := sampleServer(t)
	fake := llmtest.Start(t)
	chat, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	v.LLM = chat
	// The fake always cites a page it was not shown: never faithful.
	fake.Script(func(r llmtest.Request) (string, int) {
		return `{"answer": "The soil test showed pH 6.4.", "citations": ["AGENTS.md", "Not/Shown.md"]}`, 0
	})
	out, err := s.Eval(context.Background(), EvalIn{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if out.FaithfulnessRate == nil || *out.FaithfulnessRate != 0 {
		t.Errorf("citing a page it was not shown must be unfaithful: %v", out.FaithfulnessRate)
	}
	// Now a fixed answer, faithful exactly where must_contain is "pH 6.4".
	fake.Script(func(r llmtest.Request) (string, int) {
		return `{"answer": "The soil test showed pH 6.4.", "citations": []}`, 0
	})
	out, err = s.Eval(context.Background(), EvalIn{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	n := float64(len(loadQuestions(t, "../../infra/sample-vault")))
	if out.FaithfulnessRate == nil || !near(*out.FaithfulnessRate, 1/n) || out.PerQuestion[0].Faithful == nil || !*out.PerQuestion[0].Faithful {
		t.Errorf("one of %v answers contains its span: %v", n, *out.FaithfulnessRate)
	}

	fake.Script(func(r llmtest.Request) (string, int) { return "bad key", 401 })
	calls := len(fake.Requests())
	out, err = s.Eval(context.Background(), EvalIn{K: 3})
	if err != nil || out.FaithfulnessRate != nil || len(fake.Requests()) != calls+1 || !strings.Contains(out.PerQuestion[1].AnswerError, "earlier question") {
		t.Errorf("a failing provider is asked once and reported per question: %v, %d calls", err, len(fake.Requests())-calls)
	}
}

func TestEvalMissingFile(t *testing.T) {
	s, _ := indexedServer(t, map[string]string{"a.md": "# A\n"}, nil)
	if _, err := s.Eval(context.Background(), EvalIn{K: 6}); toError(err).Kind != KindNoteNotFound {
		t.Errorf("no question set: %v", err)
	}
}

// A question set given (the CLI's --questions) is scored instead of the
// vault's, which need not exist; one too large is refused.
func TestEvalGivenQuestions(t *testing.T) {
	s, _ := indexedServer(t, map[string]string{
		"Apples.md": "# Apples\n\nApple trees need pruning in winter.\n",
		"Bees.md":   "# Bees\n\nThree hives by the hedge.\n",
	}, nil)
	set := []byte(`{"question": "when are apple trees pruned?", "expected_paths": ["Apples.md"]}
{"question": "how many hives are there?", "expected_paths": ["Bees.md"]}
{"question": "no expected paths"}
`)
	out, err := s.Eval(context.Background(), EvalIn{K: 1, Questions: set})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 2 || out.HitRate != 1 || len(out.Errors) != 1 || out.Errors[0].Line != 3 {
		t.Errorf("given questions: %+v", out)
	}
	big := bytes.Repeat([]byte(" "), MaxEvalBytes+1)
	if _, err := s.Eval(context.Background(), EvalIn{K: 1, Questions: big}); toError(err).Kind != KindUnsupported {
		t.Errorf("a question set over %d bytes: %v", MaxEvalBytes, err)
	}
}
