package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/tools"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// fakeEmbeddings serves an OpenAI-compatible /v1/embeddings with
// embed.NewFake vectors on 127.0.0.1, and counts the texts it embedded.
type fakeEmbeddings struct {
	URL   string
	texts atomic.Int64
}

func startFakeEmbeddings(t testing.TB) *fakeEmbeddings {
	t.Helper()
	f := &fakeEmbeddings{}
	model := embed.NewFake(64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input json.RawMessage `json:"input"`
			Model string          `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var texts []string
		if err := json.Unmarshal(req.Input, &texts); err != nil {
			var one string
			if err := json.Unmarshal(req.Input, &one); err != nil {
				http.Error(w, "input must be a string or a list of strings", http.StatusBadRequest)
				return
			}
			texts = []string{one}
		}
		vecs, err := model.Embed(r.Context(), texts)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		f.texts.Add(int64(len(texts)))
		type datum struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]datum, len(vecs))
		for i, v := range vecs {
			data[i] = datum{Object: "embedding", Index: i, Embedding: v}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": 0, "total_tokens": 0}})
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL + "/v1"
	return f
}

func (f *fakeEmbeddings) flags() []string {
	return []string{"--embed-base-url", f.URL, "--embed-model", "fake-hash-64"}
}

func TestSemanticConformanceStdio(t *testing.T) {
	vault := sampleVault(t)
	emb := startFakeEmbeddings(t)
	toolstest.Run(t, func(t *testing.T) *mcp.ClientSession { return stdioSession(t, vault, emb.flags()...) })
	if emb.texts.Load() == 0 {
		t.Error("the server never called the embeddings provider")
	}
}

func TestPaidToolsRateLimitedOverStdio(t *testing.T) {
	vault := sampleVault(t)
	emb := startFakeEmbeddings(t)
	c := toolstest.NewClient(t, stdioSession(t, vault, emb.flags()...))
	c.WaitIndexed()
	for i := range tools.PaidCallsPerMinute {
		if r := c.Call("reindex_embeddings", nil, nil); r.IsError {
			t.Fatalf("call %d: %s %s", i+1, r.Kind, r.Message)
		}
	}
	r := c.MustFail("rate-limited", "semantic_search", map[string]any{"query": "soil"})
	ms, _ := r.Fields["retry_after_ms"].(float64)
	if ms <= 0 || ms > 60_000 {
		t.Errorf("retry_after_ms = %v, want 1..60000", r.Fields["retry_after_ms"])
	}
	c.MustOK("search", map[string]any{"query": "soil"}, nil) // free tools are not limited
}

func TestEmbedAndRelatedCommands(t *testing.T) {
	vault := sampleVault(t)
	emb := startFakeEmbeddings(t)
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(context.Background(), bin, args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		return string(out), err
	}
	var counts core.ReindexOut
	out, err := run(append([]string{"embed", vault}, emb.flags()...)...)
	if err != nil || json.Unmarshal([]byte(out), &counts) != nil {
		t.Fatalf("sheaf embed: %v\n%s", err, out)
	}
	if counts.Notes != 43 || counts.Passages != int(emb.texts.Load()) {
		t.Errorf("sheaf embed: %+v, want 43 notes and every passage sent (%d)", counts, emb.texts.Load())
	}
	if _, err := os.Stat(filepath.Join(stateOf(t, vault), "vectors.bin")); err != nil {
		t.Errorf("vectors not persisted: %v", err)
	}
	out, err = run(append([]string{"embed", "--vault", vault}, emb.flags()...)...)
	if err != nil || json.Unmarshal([]byte(out), &counts) != nil || counts.Notes != 0 || counts.Passages != 0 {
		t.Errorf("a second sheaf embed should reuse the persisted vectors: %v %s", err, out)
	}

	// sheaf eval scores every configured lane, side by side.
	out, err = run(append([]string{"eval", vault, "--json"}, emb.flags()...)...)
	var ev struct {
		Lanes []struct {
			Mode  string `json:"mode"`
			Count int    `json:"count"`
		} `json:"lanes"`
	}
	if err != nil || json.Unmarshal([]byte(out), &ev) != nil || len(ev.Lanes) != 3 {
		t.Fatalf("sheaf eval --json with embeddings: %v\n%s", err, out)
	}
	for i, want := range []string{"fulltext", "semantic", "hybrid"} {
		if ev.Lanes[i].Mode != want || ev.Lanes[i].Count < 40 {
			t.Errorf("sheaf eval lane %d: %+v, want %s over the sample questions", i, ev.Lanes[i], want)
		}
	}
	if out, err = run(append([]string{"eval", vault}, emb.flags()...)...); err != nil || !strings.Contains(out, "hybrid") || !strings.Contains(out, "semantic") {
		t.Errorf("sheaf eval table with embeddings: %v\n%s", err, out)
	}

	const note = "Projects/Garden/Compost.md"
	out, err = run(append([]string{"related", vault, note, "--json", "--limit", "3"}, emb.flags()...)...)
	var rel struct {
		Items []struct {
			Path string `json:"path"`
		} `json:"items"`
	}
	if err != nil || json.Unmarshal([]byte(out), &rel) != nil || len(rel.Items) == 0 || len(rel.Items) > 3 {
		t.Fatalf("sheaf related --json: %v\n%s", err, out)
	}
	for _, it := range rel.Items {
		if it.Path == note {
			t.Errorf("related lists the note itself: %s", out)
		}
	}
	out, err = run(append([]string{"related", "--vault", vault, note}, emb.flags()...)...)
	if err != nil || !strings.Contains(out, "1. ") {
		t.Errorf("sheaf related: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "related", vault, note)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SHEAF_EMBED") })
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "not configured") {
		t.Errorf("related without a provider should fail clearly: %v\n%s", err, msg)
	}
	if err := exec.Command(bin, "embed", vault).Run(); err == nil {
		t.Error("embed without a provider should fail")
	}
}
