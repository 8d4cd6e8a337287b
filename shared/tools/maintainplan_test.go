package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/llm/llmtest"
)

// plan is the model's reply: two valid edits and two it got wrong.
const plan = `{"edits": [
 {"tool": "apply_edits", "arguments": {"path": "Public/sub/c.md", "edits": [{"find": "Nothing here.", "replace": "Nothing here yet; see [[a]]."}]}, "reason": "adopt the orphan", "rule": "orphan"},
 {"tool": "write_note", "arguments": {"path": "Public/Hub.md", "content": "# Hub\n\n[[a]] [[b]] [[c]]\n"}, "reason": "a hub for Public", "rule": "missing-hub"},
 {"tool": "apply_edits", "arguments": {"path": "Public/none.md", "edits": [{"find": "x", "replace": "y"}]}, "reason": "a note that is not there"},
 {"tool": "delete_note", "arguments": {"path": "Public/b.md", "confirm": true}, "reason": "not a tool a plan may use"}
]}`

func TestWikiMaintain(t *testing.T) {
	s, dir, hs := gvault(t)
	check := schemaCheck(t, s)
	owner := ident("owner", auth.ScopeWrite)
	if o := callAs(t, hs, owner, "wiki_maintain", nil); o.kind != "unsupported" {
		t.Fatalf("without an LLM: %s", o.raw)
	}
	fake := llmtest.Start(t)
	chat, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.core.View(context.Background(), VaultArg{Vault: "g"})
	v.LLM = chat
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(dir, p)); return string(b) }
	before := read("Public/sub/c.md")

	// The plan only: two edits, two dropped, nothing written.
	fake.Queue(plan)
	o := callAs(t, hs, ident("reader", auth.ScopeRead), "wiki_maintain", map[string]any{"max_findings": 10})
	check("wiki_maintain", o)
	var out struct {
		Edits []struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
			Outcome   string         `json:"outcome"`
			Detail    string         `json:"detail"`
		} `json:"edits"`
		Dropped int  `json:"dropped"`
		Applied bool `json:"applied"`
		Budget  struct {
			Findings, Notes, LLMCalls int
			PromptBytes               int `json:"prompt_bytes"`
		} `json:"budget"`
	}
	_ = json.Unmarshal([]byte(mustMarshal(o.res)), &out)
	if o.kind != "" || len(out.Edits) != 2 || out.Dropped != 2 || out.Applied || out.Budget.Findings == 0 || out.Budget.PromptBytes == 0 {
		t.Fatalf("plan: %s", o.raw)
	}
	if out.Edits[0].Arguments["vault"] != "g" || read("Public/sub/c.md") != before {
		t.Errorf("plan: %+v, or the note changed", out.Edits[0])
	}
	prompt := fake.Requests()[0]
	if raw, _ := json.Marshal(prompt); !strings.Contains(string(raw), "Public/sub/c.md") {
		t.Errorf("the prompt does not show the findings: %s", raw)
	}

	// apply without the write scope is refused; a folder-scoped key too.
	if o := callAs(t, hs, ident("reader", auth.ScopeRead), "wiki_maintain", map[string]any{"apply": true}); o.kind != "insufficient-scope" {
		t.Errorf("apply as a reader: %s", o.raw)
	}
	if o := callAs(t, hs, ident("pub", auth.ScopeWrite, "Public/**"), "wiki_maintain", nil); o.kind != "forbidden" {
		t.Errorf("folder-scoped: %s", o.raw)
	}

	// A propose-only key's apply queues proposals; nothing is written.
	proposer := ident("proposer", auth.ScopeWrite)
	proposer.ProposeOnly = true
	fake.Queue(plan)
	o = callAs(t, hs, proposer, "wiki_maintain", map[string]any{"apply": true})
	_ = json.Unmarshal([]byte(mustMarshal(o.res)), &out)
	if !out.Applied || len(out.Edits) != 2 || out.Edits[0].Outcome != "proposed" || out.Edits[1].Outcome != "proposed" || read("Public/sub/c.md") != before {
		t.Errorf("propose-only apply: %s", o.raw)
	}

	// The owner's apply writes both.
	fake.Queue(plan)
	o = callAs(t, hs, owner, "wiki_maintain", map[string]any{"apply": true})
	check("wiki_maintain", o)
	_ = json.Unmarshal([]byte(mustMarshal(o.res)), &out)
	if out.Edits[0].Outcome != "applied" || out.Edits[1].Outcome != "applied" {
		t.Errorf("apply: %s", o.raw)
	}
	if !strings.Contains(read("Public/sub/c.md"), "see [[a]]") || !strings.Contains(read("Public/Hub.md"), "[[c]]") {
		t.Errorf("the edits did not land: %q %q", read("Public/sub/c.md"), read("Public/Hub.md"))
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
