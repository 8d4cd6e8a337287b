package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/embed/embedtest"
)

// listedTools is the names of the tools s lists and the bytes of the listing.
func listedTools(t *testing.T, s *mcp.ClientSession) ([]string, int) {
	t.Helper()
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	b, _ := json.Marshal(res)
	return names, len(b)
}

// TestToolsListSizedToProviders: a tool that needs a provider is listed
// only when one is configured; without it the tool is not offered, a call
// of it still answers unsupported, and get_vault_info says what is off
// and how to turn it on.
func TestToolsListSizedToProviders(t *testing.T) {
	vault := t.TempDir()
	writeFile(t, vault, "a.md", "# A\nalpha\n")
	needEmbeddings := []string{"semantic_search", "related_notes", "find_duplicates"}
	needLLM := []string{"answer", "lint_semantic", "suggest_tags", "wiki_maintain"}

	plain := stdioSession(t, vault)
	names, size := listedTools(t, plain)
	for _, n := range append(needEmbeddings, needLLM...) {
		if slices.Contains(names, n) {
			t.Errorf("%s is listed with no provider configured", n)
		}
	}
	for _, n := range []string{"search", "read_note", "write_note", "get_vault_info", "search_and_read"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s is not listed", n)
		}
	}
	t.Logf("no provider: %d tools, tools/list %d bytes", len(names), size)
	if kind, _ := callKind(t, plain, "semantic_search", map[string]any{"query": "alpha"}); kind != "unsupported" {
		t.Errorf("semantic_search without embeddings: kind %q, want unsupported", kind)
	}
	var info struct {
		Capabilities struct {
			Embeddings    bool   `json:"embeddings"`
			LLM           bool   `json:"llm"`
			EmbeddingsOff string `json:"embeddingsOff"`
			LLMOff        string `json:"llmOff"`
		} `json:"capabilities"`
	}
	callJSON(t, plain, "get_vault_info", map[string]any{}, &info)
	if c := info.Capabilities; c.Embeddings || c.LLM || c.EmbeddingsOff == "" || c.LLMOff == "" {
		t.Errorf("capabilities without providers: %+v", c)
	}

	core, _ := listedTools(t, stdioSession(t, vault, "--profile", "core"))
	t.Logf("core profile: %d tools", len(core))

	emb := embedtest.Start(t)
	withEmb := stdioSession(t, vault, emb.Flags()...)
	names, size = listedTools(t, withEmb)
	for _, n := range needEmbeddings {
		if !slices.Contains(names, n) {
			t.Errorf("%s is not listed with embeddings configured", n)
		}
	}
	for _, n := range needLLM {
		if slices.Contains(names, n) {
			t.Errorf("%s is listed with no LLM configured", n)
		}
	}
	t.Logf("embeddings: %d tools, tools/list %d bytes", len(names), size)
	info.Capabilities.EmbeddingsOff = ""
	callJSON(t, withEmb, "get_vault_info", map[string]any{}, &info)
	if c := info.Capabilities; !c.Embeddings || c.EmbeddingsOff != "" || c.LLMOff == "" {
		t.Errorf("capabilities with embeddings: %+v", c)
	}
}
