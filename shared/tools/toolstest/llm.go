package toolstest

import (
	"math"
	"strings"
	"testing"
)

// LLMTools are the tools that need (or, for eval, use) a chat model.
var LLMTools = []string{"answer", "eval", "lint_semantic", "suggest_tags"}

type evalResult struct {
	K                int      `json:"k"`
	Mode             string   `json:"mode"`
	Count            int      `json:"count"`
	RecallAtK        float64  `json:"recallAtK"`
	PrecisionAtK     float64  `json:"precisionAtK"`
	MRR              float64  `json:"mrr"`
	HitRate          float64  `json:"hitRate"`
	FaithfulnessRate *float64 `json:"faithfulnessRate"`
	PerQuestion      []struct {
		Question       string   `json:"question"`
		Expected       []string `json:"expected"`
		Retrieved      []string `json:"retrieved"`
		ReciprocalRank float64  `json:"reciprocalRank"`
		Hit            bool     `json:"hit"`
		Faithful       *bool    `json:"faithful"`
	} `json:"perQuestion"`
	Errors []struct {
		Line int `json:"line"`
	} `json:"errors"`
}

// testLLMTools checks the LLM tools over MCP. On a server without a chat
// model (capabilities.llm false) answer, lint_semantic and suggest_tags
// fail with the not-configured error and eval is retrieval-only.
func testLLMTools(t *testing.T, c *Client) {
	var info struct {
		Capabilities struct {
			LLM        bool `json:"llm"`
			Embeddings bool `json:"embeddings"`
		} `json:"capabilities"`
	}
	c.MustOK("get_vault_info", nil, &info)
	c.MustFail("args-invalid", "answer", map[string]any{})
	c.MustFail("args-invalid", "answer", map[string]any{"query": "x", "limit": 0})
	c.MustFail("args-invalid", "answer", map[string]any{"query": "x", "rerankk": true})
	c.MustFail("args-invalid", "eval", map[string]any{"k": 0})
	c.MustFail("args-invalid", "eval", map[string]any{"mode": "graph"})
	c.MustFail("args-invalid", "suggest_tags", map[string]any{"limit": 51})

	if !info.Capabilities.LLM {
		for tool, args := range map[string]map[string]any{
			"answer":        {"query": "What pH did the soil test show?"},
			"lint_semantic": {},
			"suggest_tags":  {},
		} {
			r := c.MustFail("unsupported", tool, args)
			if r.Fields["reason"] != "not-configured" || !strings.Contains(r.Message, "LLM") {
				t.Errorf("%s without an LLM: want reason not-configured and a clear message, got %v: %s", tool, r.Fields, r.Message)
			}
		}
	}

	var ev evalResult
	c.MustOK("eval", map[string]any{"k": 6, "mode": "fulltext"}, &ev)
	// The sample vault's eval/questions.jsonl: at least 40 questions, some
	// with two expected notes.
	if ev.K != 6 || ev.Mode != "fulltext" || ev.Count < 40 || len(ev.PerQuestion) != ev.Count || len(ev.Errors) != 0 {
		t.Fatalf("eval over the sample vault's questions: k %d mode %q count %d (%d per question) errors %d", ev.K, ev.Mode, ev.Count, len(ev.PerQuestion), len(ev.Errors))
	}
	if ev.HitRate < 0.5 || ev.HitRate > 1 || ev.MRR > ev.HitRate || ev.RecallAtK > ev.HitRate+1e-9 ||
		ev.PrecisionAtK > ev.RecallAtK+1e-9 || ev.PrecisionAtK <= 0 {
		t.Errorf("eval numbers implausible: recall %v precision %v mrr %v hit %v",
			ev.RecallAtK, ev.PrecisionAtK, ev.MRR, ev.HitRate)
	}
	hits, rr := 0, 0.0
	for _, q := range ev.PerQuestion {
		if len(q.Retrieved) > 6 {
			t.Errorf("%q: %d retrieved for k=6", q.Question, len(q.Retrieved))
		}
		if q.Hit {
			hits++
		}
		rr += q.ReciprocalRank
		if !info.Capabilities.LLM && q.Faithful != nil {
			t.Errorf("%q: faithfulness without an LLM", q.Question)
		}
	}
	if n := float64(ev.Count); math.Abs(float64(hits)/n-ev.HitRate) > 1e-9 || math.Abs(rr/n-ev.MRR) > 1e-9 {
		t.Errorf("aggregates do not match the per-question scores")
	}
	if !info.Capabilities.LLM && ev.FaithfulnessRate != nil {
		t.Errorf("faithfulnessRate without an LLM: %v", *ev.FaithfulnessRate)
	}
	var again evalResult
	c.MustOK("eval", map[string]any{"k": 6, "mode": "fulltext"}, &again)
	if again.MRR != ev.MRR || again.HitRate != ev.HitRate {
		t.Errorf("eval is not reproducible: %v/%v then %v/%v", ev.MRR, ev.HitRate, again.MRR, again.HitRate)
	}
	if !info.Capabilities.Embeddings {
		c.MustFail("unsupported", "eval", map[string]any{"mode": "semantic"})
	}
}
