// Package embedtest serves an OpenAI-compatible /v1/embeddings on
// 127.0.0.1 for tests, with the deterministic vectors of embed.NewFake, so
// that a process under test (a server, a Lambda function) can be pointed at
// it by URL.
package embedtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/embed"
)

// Model is the model name the server reports (any name is accepted).
const Model = "fake-hash-64"

// Server is a running fake embeddings provider.
type Server struct {
	URL   string // the base URL, ending in /v1
	texts atomic.Int64
}

// Start starts a server, closed at the test's cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	f := &Server{}
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

// Texts counts the texts embedded so far.
func (f *Server) Texts() int64 { return f.texts.Load() }

// Flags are the command-line flags that point a server at f.
func (f *Server) Flags() []string {
	return []string{"--embed-base-url", f.URL, "--embed-model", Model}
}

// Env is the environment that points a process at f.
func (f *Server) Env() []string {
	return []string{"SHEAF_EMBED_BASE_URL=" + f.URL, "SHEAF_EMBED_MODEL=" + Model}
}
