package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// The question set eval reads, and its bounds.
const (
	EvalFile         = "eval/questions.jsonl"
	MaxEvalBytes     = 4 << 20
	maxEvalQuestions = 500
)

// EvalIn is eval's input.
type EvalIn struct {
	VaultArg
	K int `json:"k,omitempty" jsonschema:"Top-k cutoff." schema:"minimum=1,maximum=50,default=6"`
	// Mode is our extension: it picks the retrieval lane so lanes can be compared.
	Mode string `json:"mode,omitempty" jsonschema:"Retrieval lane to score: fulltext (BM25), semantic (vectors) or hybrid (fused). Default: hybrid when embeddings are configured, else fulltext. The textbook baseline is always scored beside it." schema:"enum=fulltext|semantic|hybrid"`
	// Explain is our extension: a question to trace through every lane.
	Explain int `json:"explain,omitempty" jsonschema:"1-based number of a question to explain: each lane's top 10 for it, with the features that placed each note." schema:"minimum=1,maximum=500"`
	// SkipAnswers scores retrieval only, even with an LLM (the CLI, when it
	// scores several lanes, answers in one of them). Not part of the tool.
	SkipAnswers bool `json:"-"`
	// Questions, when not nil, is the question set itself, read by the
	// CLI from a file outside the vault (--questions), instead of the
	// vault's EvalFile. Not part of the tool, which reads the vault only.
	Questions []byte `json:"-"`
}

// EvalQuestion is one question's scores.
type EvalQuestion struct {
	Question       string   `json:"question"`
	Expected       []string `json:"expected"`
	Retrieved      []string `json:"retrieved" jsonschema:"the top-k paths, best first"`
	Baseline       []string `json:"baseline,omitempty" jsonschema:"the textbook baseline's top-k paths, best first"`
	Recall         float64  `json:"recall"`
	Precision      float64  `json:"precision"`
	ReciprocalRank float64  `json:"reciprocalRank"`
	Hit            bool     `json:"hit"`
	Faithful       *bool    `json:"faithful,omitempty" jsonschema:"with an LLM: the answer cites only retrieved pages and contains every must_contain span"`
	Missing        []string `json:"missing,omitempty" jsonschema:"expected paths that are not notes of the vault"`
	AnswerError    string   `json:"answerError,omitempty"`
}

// EvalLineError is a line of the question set that could not be used.
type EvalLineError struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// EvalOut is eval's result.
type EvalOut struct {
	Coverage
	K                int      `json:"k"`
	Mode             string   `json:"mode" jsonschema:"the retrieval lane scored"`
	Count            int      `json:"count" jsonschema:"questions scored"`
	RecallAtK        float64  `json:"recallAtK"`
	PrecisionAtK     float64  `json:"precisionAtK"`
	MRR              float64  `json:"mrr"`
	HitRate          float64  `json:"hitRate"`
	FaithfulnessRate *float64 `json:"faithfulnessRate,omitempty" jsonschema:"with an LLM: the fraction of answered questions whose answer is faithful; absent without one"`
	// Baseline is the textbook lexical ranker every lane should beat,
	// scored on the same questions: BM25 over whole notes (SQLite FTS5's
	// formula), every word of the question OR'd, porter stems, titles x5.
	Baseline     *EvalScores     `json:"baseline,omitempty" jsonschema:"the textbook baseline (BM25 over whole notes, words OR'd, porter stems, title x5) on the same questions"`
	BaselineNote string          `json:"baselineNote,omitempty" jsonschema:"why the baseline was not scored"`
	Explain      *EvalExplain    `json:"explain,omitempty"`
	PerQuestion  []EvalQuestion  `json:"perQuestion"`
	Errors       []EvalLineError `json:"errors" jsonschema:"lines that could not be used; the rest were scored"`
	Skipped      int             `json:"skipped,omitempty" jsonschema:"valid questions beyond the 500 scored per call"`
}

// evalQuestions is the question set: given, or the vault's EvalFile.
func evalQuestions(ctx context.Context, v *Vault, given []byte) ([]byte, error) {
	if given != nil {
		if len(given) > MaxEvalBytes {
			return nil, newError(KindUnsupported, map[string]any{"max_bytes": MaxEvalBytes}, "the question set is larger than %d bytes", MaxEvalBytes)
		}
		return given, nil
	}
	data, _, err := v.Store.Get(ctx, EvalFile, MaxEvalBytes)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, newError(KindNoteNotFound, nil, "%s not found: write one JSON object per line, e.g. {\"question\": \"...\", \"expected_paths\": [\"Note.md\"], \"must_contain\": [\"...\"]}", EvalFile)
	case errors.Is(err, store.ErrTooLarge):
		return nil, newError(KindUnsupported, map[string]any{"max_bytes": MaxEvalBytes}, "%s is larger than %d bytes", EvalFile, MaxEvalBytes)
	}
	return data, err
}

// evalCase is one usable line of the question set.
type evalCase struct {
	Question    string
	Expected    []string
	MustContain []string
}

// Eval implements eval.
func (s *Core) Eval(ctx context.Context, in EvalIn) (*EvalOut, error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if in.K <= 0 {
		in.K = 6
	}
	mode := in.Mode
	switch {
	case (mode == "semantic" || mode == "hybrid") && v.Embedder == nil:
		return nil, notConfigured("eval mode "+mode, "no embeddings provider is set up (SHEAF_EMBED_BASE_URL and SHEAF_EMBED_MODEL); use mode fulltext")
	case mode == "" && v.Embedder != nil:
		mode = "hybrid"
	case mode == "":
		mode = "fulltext"
	}
	data, err := evalQuestions(ctx, v, in.Questions)
	if err != nil {
		return nil, err
	}
	cases, lineErrs := parseQuestions(data, cat)
	out := &EvalOut{K: in.K, Mode: mode, PerQuestion: []EvalQuestion{}, Errors: lineErrs}
	if len(cases) > maxEvalQuestions {
		out.Skipped = len(cases) - maxEvalQuestions
		cases = cases[:maxEvalQuestions]
	}
	retrieveMode := in.Mode // "" lets retrieve pick, as answer does
	base, bnote := evalBaseline(ctx, v, cat)
	out.BaselineNote = bnote
	if in.Explain > 0 {
		if in.Explain > len(cases) {
			return nil, newError(KindArgsInvalid, map[string]any{"argument": "explain"}, "explain: there are %d questions, not %d", len(cases), in.Explain)
		}
		if out.Explain, err = s.explainQuestion(ctx, v, cat, in.Explain, cases[in.Explain-1], base, bnote); err != nil {
			return nil, err
		}
	}
	var llmFailed error
	for _, c := range cases {
		cands, err := s.retrieve(ctx, v, cat, c.Question, RetrieveOptions{Limit: in.K, Mode: retrieveMode})
		if err != nil {
			return nil, err
		}
		q := EvalQuestion{Question: c.Question, Expected: c.Expected, Retrieved: []string{}}
		for _, cd := range cands {
			if len(q.Retrieved) < in.K && !slices.Contains(q.Retrieved, cd.Path) {
				q.Retrieved = append(q.Retrieved, cd.Path)
			}
		}
		for _, e := range c.Expected {
			if _, ok := cat.Note(e); !ok {
				q.Missing = append(q.Missing, e)
			}
		}
		q.Recall, q.Precision, q.ReciprocalRank, q.Hit = scoreRetrieval(c.Expected, q.Retrieved, in.K)
		if base != nil {
			q.Baseline = baselinePaths(base, c.Question, in.K)
		}
		if v.LLM != nil && !in.SkipAnswers {
			if llmFailed != nil {
				q.AnswerError = "not asked: the LLM failed on an earlier question: " + llmFailed.Error()
			} else {
				a, err := s.answer(ctx, v, cat, AnswerIn{Query: c.Question, Limit: in.K}, retrieveMode)
				switch {
				case ctx.Err() != nil:
					return nil, ctx.Err()
				case err != nil:
					llmFailed = err
					q.AnswerError = err.Error()
				default:
					f := faithful(a, c.MustContain)
					q.Faithful = &f
				}
			}
		}
		out.PerQuestion = append(out.PerQuestion, q)
	}
	aggregate(out)
	if base != nil {
		out.Baseline = baselineScores(out.PerQuestion, in.K)
	}
	return out, nil
}

// baselineScores averages the baseline's scores over the questions.
func baselineScores(qs []EvalQuestion, k int) *EvalScores {
	sc := &EvalScores{}
	if len(qs) == 0 {
		return sc
	}
	for _, q := range qs {
		r, p, rr, hit := scoreRetrieval(q.Expected, q.Baseline, k)
		sc.RecallAtK += r
		sc.PrecisionAtK += p
		sc.MRR += rr
		if hit {
			sc.HitRate++
		}
	}
	n := float64(len(qs))
	sc.RecallAtK, sc.PrecisionAtK, sc.MRR, sc.HitRate = sc.RecallAtK/n, sc.PrecisionAtK/n, sc.MRR/n, sc.HitRate/n
	return sc
}

// parseQuestions reads the question set: one JSON object per line with a
// non-empty "question", a non-empty "expected_paths" array of vault paths
// and an optional "must_contain" array; blank lines are skipped and other
// keys ignored. A path without ".md" names the note with it when that
// exists. Unusable lines are returned as errors, with 1-based numbers.
func parseQuestions(data []byte, cat *vault.Catalog) ([]evalCase, []EvalLineError) {
	var cases []evalCase
	errs := []EvalLineError{}
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if i == 0 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			continue
		}
		c, err := parseQuestion(line, cat)
		if err != nil {
			errs = append(errs, EvalLineError{Line: i + 1, Message: err.Error()})
			continue
		}
		cases = append(cases, c)
	}
	return cases, errs
}

func parseQuestion(line []byte, cat *vault.Catalog) (evalCase, error) {
	var raw struct {
		Question    *string  `json:"question"`
		Expected    []string `json:"expected_paths"`
		MustContain []string `json:"must_contain"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return evalCase{}, fmt.Errorf("not a JSON object of the expected shape: %v", err)
	}
	if raw.Question == nil || strings.TrimSpace(*raw.Question) == "" {
		return evalCase{}, errors.New(`"question" is missing or empty`)
	}
	if len(*raw.Question) > 2000 {
		return evalCase{}, errors.New(`"question" is longer than 2000 bytes`)
	}
	if len(raw.Expected) == 0 {
		return evalCase{}, errors.New(`"expected_paths" is missing or empty`)
	}
	c := evalCase{Question: strings.TrimSpace(*raw.Question)}
	for _, e := range raw.Expected {
		p, err := store.CleanPath(e)
		var pe *store.PathError
		if errors.As(err, &pe) {
			return evalCase{}, fmt.Errorf("expected path %q %s", e, humanReason(pe.Reason))
		}
		if !vault.IsNotePath(p) {
			if _, ok := cat.Note(p + ".md"); ok {
				p += ".md"
			}
		}
		if !slices.Contains(c.Expected, p) {
			c.Expected = append(c.Expected, p)
		}
	}
	for _, m := range raw.MustContain {
		if strings.TrimSpace(m) != "" {
			c.MustContain = append(c.MustContain, m)
		}
	}
	return c, nil
}

// scoreRetrieval scores the top k of retrieved against expected (both
// without duplicates): recall = |expected ∩ top-k| / |expected|,
// precision = |expected ∩ top-k| / k, reciprocal rank = 1 / (1-based rank
// of the first expected path in the top k), 0 when there is none, and hit
// when the intersection is not empty.
func scoreRetrieval(expected, retrieved []string, k int) (recall, precision, rr float64, hit bool) {
	if len(retrieved) > k {
		retrieved = retrieved[:k]
	}
	found := 0
	for i, p := range retrieved {
		if slices.Contains(expected, p) {
			found++
			if rr == 0 {
				rr = 1 / float64(i+1)
			}
		}
	}
	if len(expected) > 0 {
		recall = float64(found) / float64(len(expected))
	}
	if k > 0 {
		precision = float64(found) / float64(k)
	}
	return recall, precision, rr, found > 0
}

// aggregate averages the per-question scores over the questions scored;
// the faithfulness rate is over the questions answered.
func aggregate(out *EvalOut) {
	out.Count = len(out.PerQuestion)
	if out.Count == 0 {
		return
	}
	answered, faithfulN := 0, 0
	for _, q := range out.PerQuestion {
		out.RecallAtK += q.Recall
		out.PrecisionAtK += q.Precision
		out.MRR += q.ReciprocalRank
		if q.Hit {
			out.HitRate++
		}
		if q.Faithful != nil {
			answered++
			if *q.Faithful {
				faithfulN++
			}
		}
	}
	n := float64(out.Count)
	out.RecallAtK /= n
	out.PrecisionAtK /= n
	out.MRR /= n
	out.HitRate /= n
	if answered > 0 {
		r := float64(faithfulN) / float64(answered)
		out.FaithfulnessRate = &r
	}
}

// faithful reports whether an answer cites only pages it was shown (the
// model's own citations, before validation dropped any), came back in the
// JSON asked for, and contains every must_contain span, compared after
// lower-casing and collapsing whitespace.
func faithful(a *AnswerOut, mustContain []string) bool {
	if a.Unstructured || len(a.DroppedCitations) > 0 {
		return false
	}
	text := foldForContains(a.Answer)
	for _, m := range mustContain {
		if !strings.Contains(text, foldForContains(m)) {
			return false
		}
	}
	return true
}

func foldForContains(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
