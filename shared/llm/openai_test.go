package llm

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/llm/llmtest"
)

// newTestChat returns a chat on srv whose retries sleep not at all and
// record their waits.
func newTestChat(t *testing.T, url string, waits *[]time.Duration) *chat {
	t.Helper()
	c, err := New(Config{BaseURL: url, Model: "m1", APIKey: "sekrit", MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	ch := c.(*chat)
	ch.r.Sleep = func(_ context.Context, d time.Duration) error { *waits = append(*waits, d); return nil }
	ch.r.Jitter = func(max time.Duration) time.Duration { return max }
	return ch
}

func TestComplete(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Queue("  hello there ")
	var waits []time.Duration
	c := newTestChat(t, srv.URL, &waits)
	got, err := c.Complete(context.Background(), Request{
		Messages: []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi \xff"}},
		JSON:     true,
	})
	if err != nil || got != "  hello there " {
		t.Fatalf("Complete = %q, %v", got, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "m1" || !r.JSON() || r.System() != "be brief" || r.User() != "hi \uFFFD" || r.MaxTokens != DefaultMaxTokens {
		t.Errorf("request %+v", r)
	}
	if r.Temperature <= 0 || r.Temperature > 1e-30 {
		t.Errorf("temperature 0 must be sent as ~0, got %v", r.Temperature)
	}
	if r.Header.Get("Authorization") != "Bearer sekrit" {
		t.Errorf("auth header %q", r.Header.Get("Authorization"))
	}
	if c.Model() != "m1" || len(waits) != 0 {
		t.Errorf("model %q, waits %v", c.Model(), waits)
	}
}

func TestCompleteRetries(t *testing.T) {
	srv := llmtest.Start(t)
	srv.QueueReply(
		llmtest.Reply{Status: 429, Content: "slow down", Header: http.Header{"Retry-After": {"3"}}},
		llmtest.Reply{Status: 503, Content: "busy"},
		llmtest.Reply{Content: "ok"},
	)
	var waits []time.Duration
	c := newTestChat(t, srv.URL, &waits)
	got, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}})
	if err != nil || got != "ok" {
		t.Fatalf("Complete = %q, %v", got, err)
	}
	// Retry-After 3 s honoured, then full-jitter backoff at its cap (jitter returns max): 1 s for attempt 1.
	if len(waits) != 2 || waits[0] != 3*time.Second || waits[1] != time.Second {
		t.Errorf("waits %v", waits)
	}

	srv.QueueReply(llmtest.Reply{Status: 500, Content: "a"}, llmtest.Reply{Status: 500, Content: "b"}, llmtest.Reply{Status: 500, Content: "c"})
	waits = nil
	_, err = c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 || !strings.Contains(err.Error(), "giving up after 3 attempts") || len(waits) != 2 {
		t.Errorf("err %v, waits %v", err, waits)
	}
}

func TestCompleteFailsForGood(t *testing.T) {
	srv := llmtest.Start(t)
	var waits []time.Duration
	c := newTestChat(t, srv.URL, &waits)
	srv.QueueReply(llmtest.Reply{Status: 401, Content: "bad key"})
	_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 401 || pe.Temporary() || !strings.Contains(err.Error(), "bad key") || len(waits) != 0 {
		t.Errorf("401: %v (waits %v)", err, waits)
	}
	srv.Queue("   ")
	if _, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty reply: %v", err)
	}
	if _, err := c.Complete(context.Background(), Request{}); err == nil {
		t.Error("no messages must fail")
	}
}

func TestCompleteUnreachable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	var waits []time.Duration
	c := newTestChat(t, url, &waits)
	_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 0 || len(waits) != 2 {
		t.Errorf("err %v, waits %v", err, waits)
	}
}

func TestCompleteTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(release)
	c, err := New(Config{BaseURL: ts.URL, Model: "m", Timeout: 50 * time.Millisecond, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 0 || !pe.Temporary() {
		t.Errorf("timed-out attempt: %v", err)
	}
}

func TestNewConfig(t *testing.T) {
	for _, c := range []Config{{}, {BaseURL: "http://x"}, {Model: "m"}} {
		if _, err := New(c); !errors.Is(err, ErrNotConfigured) {
			t.Errorf("New(%+v) = %v, want ErrNotConfigured", c, err)
		}
	}
	if _, err := New(Config{BaseURL: "ftp://x", Model: "m"}); err == nil || errors.Is(err, ErrNotConfigured) {
		t.Errorf("ftp URL: %v", err)
	}
	for in, want := range map[string]string{
		"http://127.0.0.1:11434":                     "http://127.0.0.1:11434/v1",
		"https://api.openai.com/v1/":                 "https://api.openai.com/v1",
		"https://api.openai.com/v1/chat/completions": "https://api.openai.com/v1",
		"http://h/openai/deployments/x":              "http://h/openai/deployments/x",
	} {
		if c, err := New(Config{BaseURL: in, Model: "m"}); err != nil || c.(*chat).cfg.BaseURL != want {
			t.Errorf("base URL %q: %v; want %q", in, err, want)
		}
	}
}

func TestReasoningModelRequest(t *testing.T) {
	c, err := New(Config{BaseURL: "http://x", Model: "o3-mini"})
	if err != nil {
		t.Fatal(err)
	}
	req := c.(*chat).request(Request{Messages: []Message{{Role: "user", Content: "q"}}, MaxTokens: 50})
	if req.MaxTokens != 0 || req.MaxCompletionTokens != 50 || req.Temperature != 0 {
		t.Errorf("reasoning request %+v", req)
	}
	c, _ = New(Config{BaseURL: "http://x", Model: "llama3.1"})
	req = c.(*chat).request(Request{Messages: []Message{{Role: "user", Content: "q"}}, Temperature: 0.7})
	if req.MaxTokens != DefaultMaxTokens || req.MaxCompletionTokens != 0 || req.Temperature != 0.7 {
		t.Errorf("plain request %+v", req)
	}
}

func TestNewRetrier(t *testing.T) {
	for in, want := range map[int]int{0: DefaultMaxRetries, -1: 0, 7: 7} {
		if r := newRetrier(in); r.Max != want || r.Name != "llm" || r.Sleep == nil || r.Jitter == nil {
			t.Errorf("newRetrier(%d) = %+v, want %d retries", in, r, want)
		}
	}
}

func TestRerank(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Rerank(func(q string, docs []string) []float64 {
		out := make([]float64, len(docs))
		for i, d := range docs {
			if strings.Contains(d, q) {
				out[i] = 1
			}
		}
		return out
	})
	rr := NewReranker(srv.URL+"/rerank", "k")
	got, err := rr.Rerank(context.Background(), "bees", []string{"apples", "the bees hum", "pears"})
	if err != nil || len(got) != 3 || got[1] != 1 || got[0] != 0 {
		t.Fatalf("Rerank = %v, %v", got, err)
	}
	if got, err := rr.Rerank(context.Background(), "x", nil); err != nil || got != nil {
		t.Errorf("no docs: %v %v", got, err)
	}
}

func TestRerankWire(t *testing.T) {
	var calls atomic.Int32
	var body rerankRequest
	var auth string
	reply := `{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0.01")
			w.WriteHeader(503)
			return
		}
		auth = r.Header.Get("Authorization")
		_ = json.NewDecoder(r.Body).Decode(&body)
		if r.URL.RawQuery != "" {
			w.WriteHeader(400)
			return
		}
		_, _ = w.Write([]byte(reply))
	}))
	defer ts.Close()
	rr := NewReranker(ts.URL+"/v1/rerank?model=jina-x", "key1")
	got, err := rr.Rerank(context.Background(), "q", []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 0.1 || got[1] != 0.9 || !math.IsInf(got[2], -1) {
		t.Errorf("scores %v (a document left out scores -Inf)", got)
	}
	if body.Model != "jina-x" || body.TopN != 3 || body.Query != "q" || auth != "Bearer key1" || calls.Load() != 2 {
		t.Errorf("body %+v auth %q calls %d", body, auth, calls.Load())
	}
	for _, bad := range []string{
		`{"results":[{"index":5,"relevance_score":0.9}]}`,
		`{"results":[{"index":0,"relevance_score":0.9},{"index":0,"relevance_score":0.3}]}`,
		`{"results":[{"relevance_score":0.9}]}`,
		`{"nope":1}`,
		`not json`,
	} {
		reply = bad
		if _, err := rr.Rerank(context.Background(), "q", []string{"a", "b"}); err == nil {
			t.Errorf("reply %s: want an error", bad)
		}
	}
	reply = `[{"index":0,"score":2.5}]`
	if got, err := rr.Rerank(context.Background(), "q", []string{"a"}); err != nil || got[0] != 2.5 {
		t.Errorf("TEI bare array: %v %v", got, err)
	}
	if _, err := NewReranker("not a url", "").Rerank(context.Background(), "q", []string{"a"}); err == nil {
		t.Error("bad URL must fail")
	}
}

func TestExpand(t *testing.T) {
	srv := llmtest.Start(t)
	srv.Queue("Drip lines are flushed\n every two weeks   to clear sediment.")
	c, err := New(Config{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Expand(context.Background(), c, "how often flush drip lines?")
	if err != nil || got != "how often flush drip lines?\nDrip lines are flushed every two weeks to clear sediment." {
		t.Fatalf("Expand = %q, %v", got, err)
	}
	if r := srv.Requests()[0]; r.User() != "how often flush drip lines?" || !strings.Contains(r.System(), "plausibly") {
		t.Errorf("expand request %+v", r)
	}
	srv.Queue(strings.Repeat("word ", 1000))
	got, _ = Expand(context.Background(), c, "q")
	if len(got) > maxExpansion+10 {
		t.Errorf("expansion not bounded: %d bytes", len(got))
	}
	if _, err := Expand(context.Background(), nil, "q"); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("nil chat: %v", err)
	}
}
