// Package llmtest is a scripted fake of an OpenAI-compatible chat endpoint
// (POST /v1/chat/completions) for tests: it answers from a script function
// or a queue of replies and records every request, so a test can assert
// what the model was shown. It also serves a fake hosted reranker at
// POST /v1/rerank (see Server.Rerank).
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Message is one chat turn as the server received it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one received chat completion request.
type Request struct {
	Model          string    `json:"model"`
	Messages       []Message `json:"messages"`
	MaxTokens      int       `json:"max_tokens"`
	Temperature    float64   `json:"temperature"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Header http.Header `json:"-"`
}

// JSON reports whether the request asked for a JSON object reply.
func (r Request) JSON() bool {
	return r.ResponseFormat != nil && r.ResponseFormat.Type == "json_object"
}

// System is the concatenated system messages.
func (r Request) System() string { return r.join("system") }

// User is the concatenated user messages.
func (r Request) User() string { return r.join("user") }

// Last is the last message's content.
func (r Request) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

func (r Request) join(role string) string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == role {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// Reply is one scripted answer: Content with Status (0 means 200). A
// status other than 2xx sends an OpenAI error body with Content as its
// message; Header is added to the response (e.g. Retry-After).
type Reply struct {
	Content string
	Status  int
	Header  http.Header
}

// Script answers a request; status 0 means 200.
type Script func(Request) (reply string, status int)

// Server is the fake. Its zero script answers 500 with "no reply
// scripted", so a test that forgets to script fails loudly.
type Server struct {
	// URL is the base URL to configure a client with (it ends in /v1).
	URL string

	mu       sync.Mutex
	script   Script
	queue    []Reply
	requests []Request
	rerank   func(query string, docs []string) []float64
	reranks  int
}

// Start serves the fake on 127.0.0.1 until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/rerank", s.rerankHandler)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	s.URL = ts.URL + "/v1"
	return s
}

// Script answers every later request with fn (after any queued replies).
func (s *Server) Script(fn Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = fn
}

// Queue appends replies (status 200) answered in order, before the script.
func (s *Server) Queue(replies ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range replies {
		s.queue = append(s.queue, Reply{Content: r})
	}
}

// QueueReply appends full replies (status, headers) answered in order.
func (s *Server) QueueReply(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Requests returns every chat request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Rerank makes POST /v1/rerank answer with fn's scores (one per document)
// in the Cohere format {"results": [{"index", "relevance_score"}]}.
func (s *Server) Rerank(fn func(query string, docs []string) []float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rerank = fn
}

// RerankCalls counts the rerank requests received.
func (s *Server) RerankCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reranks
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: bad request body: "+err.Error())
		return
	}
	req.Header = r.Header.Clone()
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var rep Reply
	switch {
	case len(s.queue) > 0:
		rep, s.queue = s.queue[0], s.queue[1:]
	case s.script != nil:
		fn := s.script
		s.mu.Unlock()
		rep.Content, rep.Status = fn(req)
		s.mu.Lock()
	default:
		rep = Reply{Status: http.StatusInternalServerError, Content: "llmtest: no reply scripted"}
	}
	s.mu.Unlock()
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if rep.Status != 0 && rep.Status/100 != 2 {
		writeError(w, rep.Status, rep.Content)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion", "created": 0, "model": req.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rep.Content},
		}},
		"usage": map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	})
}

func (s *Server) rerankHandler(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: bad rerank body: "+err.Error())
		return
	}
	s.mu.Lock()
	s.reranks++
	fn := s.rerank
	s.mu.Unlock()
	if fn == nil {
		writeError(w, http.StatusInternalServerError, "llmtest: no rerank scripted")
		return
	}
	scores := fn(req.Query, req.Documents)
	results := make([]map[string]any, 0, len(scores))
	for i, sc := range scores {
		results = append(results, map[string]any{"index": i, "relevance_score": sc})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"results": results})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "llmtest", "code": fmt.Sprint(status),
	}})
}
