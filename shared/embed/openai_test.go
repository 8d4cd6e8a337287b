package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// fakeOpenAI is a scripted OpenAI-compatible server. It answers
// POST <prefix>/v1/embeddings as OpenAI does, with vectors from a Fake (so
// tests can check which vector belongs to which text) and data shuffled (so
// clients must sort by index). script, when set, answers request n (from 0)
// instead; returning false falls through to the normal answer.
type fakeOpenAI struct {
	t      *testing.T
	path   string
	dim    int
	script func(n int, w http.ResponseWriter, req embeddingRequest) bool

	mu       sync.Mutex
	requests []embeddingRequest
	auth     []string
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
	User           string   `json:"user"`
}

func newFakeOpenAI(t *testing.T) (*fakeOpenAI, *httptest.Server) {
	f := &fakeOpenAI{t: t, path: "/v1/embeddings", dim: 8}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != f.path {
		writeError(w, http.StatusNotFound, "unknown endpoint "+r.Method+" "+r.URL.Path)
		return
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	var req embeddingRequest
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad body: "+err.Error())
		return
	}
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if f.script != nil && f.script(n, w, req) {
		return
	}
	if req.Model == "" || len(req.Input) == 0 {
		writeError(w, http.StatusBadRequest, "model and input are required")
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		writeError(w, http.StatusBadRequest, "unsupported encoding_format")
		return
	}
	for _, in := range req.Input {
		if in == "" {
			writeError(w, http.StatusBadRequest, "'$.input' is invalid: empty string")
			return
		}
	}
	dim := f.dim
	if req.Dimensions > 0 {
		dim = req.Dimensions
	}
	vecs, _ := NewFake(dim).Embed(context.Background(), req.Input)
	writeData(w, req.Model, vecs, rand.Perm(len(vecs)))
}

// writeData answers with vecs, listed in the given order of indexes.
func writeData(w http.ResponseWriter, model string, vecs [][]float32, order []int) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, 0, len(order))
	for _, i := range order {
		data = append(data, item{"embedding", i, vecs[i]})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  model,
		"usage":  map[string]int{"prompt_tokens": 1, "total_tokens": 1},
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`, msg)
}

func (f *fakeOpenAI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// newTestClient builds a client whose sleeps are recorded, not slept.
func newTestClient(t *testing.T, cfg Config) (*client, *[]time.Duration) {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "text-embedding-3-small"
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := e.(*client)
	var slept []time.Duration
	c.retry.Sleep = func(ctx context.Context, d time.Duration) error {
		slept = append(slept, d)
		return ctx.Err()
	}
	c.retry.Jitter = func(max time.Duration) time.Duration { return max }
	return c, &slept
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("passage %d about topic %d", i, i%7)
	}
	return out
}

func TestEmbedBatchesInOrder(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	c, _ := newTestClient(t, Config{BaseURL: srv.URL + "/v1"})
	in := texts(250)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewFake(f.dim).Embed(context.Background(), in)
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("vector %d is not the one for %q", i, in[i])
		}
	}
	var sizes []int
	for _, r := range f.requests {
		sizes = append(sizes, len(r.Input))
		if r.Model != "text-embedding-3-small" || r.Dimensions != 0 {
			t.Errorf("request model %q dimensions %d", r.Model, r.Dimensions)
		}
	}
	if !slices.Equal(sizes, []int{96, 96, 58}) {
		t.Errorf("batch sizes %v, want [96 96 58]", sizes)
	}
	if c.Dimensions() != f.dim {
		t.Errorf("Dimensions() = %d, want %d", c.Dimensions(), f.dim)
	}
}

func TestEmbedBatchesByTokens(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	const maxTokens = 1000
	c, _ := newTestClient(t, Config{BaseURL: srv.URL, MaxBatchTokens: maxTokens, MaxInputBytes: 2400})
	var in []string
	for i := range 40 {
		in = append(in, strings.Repeat(fmt.Sprintf("word%d ", i), 1+i*20)) // up to ~5,400 bytes, cut to 2,400
	}
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	var sent []string
	for _, r := range f.requests {
		tokens := 0
		for _, s := range r.Input {
			if len(s) > 2400 {
				t.Errorf("input of %d bytes was not cut to 2400", len(s))
			}
			tokens += estimateTokens(s)
		}
		if tokens > maxTokens {
			t.Errorf("request of %d estimated tokens, limit %d", tokens, maxTokens)
		}
		sent = append(sent, r.Input...)
	}
	if len(f.requests) < 10 || len(sent) != len(in) {
		t.Errorf("%d requests carried %d inputs; want many requests carrying %d", len(f.requests), len(sent), len(in))
	}
	for i := range in {
		if !strings.HasPrefix(in[i], sent[i]) {
			t.Fatalf("input %d sent out of order", i)
		}
	}
}

func TestBatchesSplits(t *testing.T) {
	in := []string{strings.Repeat("x", 299), "a", strings.Repeat("y", 3000), "b", "c"}
	// estimates: 100, 1, 1001, 1, 1
	got := batches(in, 2, 150)
	want := [][2]int{{0, 2}, {2, 3}, {3, 5}}
	if !slices.Equal(got, want) {
		t.Errorf("batches = %v, want %v", got, want)
	}
	if got := batches([]string{"a"}, 96, 1); !slices.Equal(got, [][2]int{{0, 1}}) {
		t.Errorf("single input over the token cap: %v", got)
	}
}

func TestRetryAfter429(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	f.script = func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, "Rate limit reached")
			return true
		}
		return false
	}
	c, slept := newTestClient(t, Config{BaseURL: srv.URL})
	got, err := c.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || f.count() != 2 {
		t.Errorf("got %d vectors after %d requests", len(got), f.count())
	}
	if !slices.Equal(*slept, []time.Duration{time.Second}) {
		t.Errorf("slept %v, want [1s]", *slept)
	}
}

func Test503RetriedWithBackoff(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	f.script = func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "upstream overloaded")
			return true
		}
		return false
	}
	c, slept := newTestClient(t, Config{BaseURL: srv.URL})
	if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	if !slices.Equal(*slept, want) {
		t.Errorf("slept %v, want %v", *slept, want)
	}
}

func Test400FailsAtOnce(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	f.script = func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		writeError(w, http.StatusBadRequest, "This model's maximum context length is 8192 tokens")
		return true
	}
	c, slept := newTestClient(t, Config{BaseURL: srv.URL})
	_, err := c.Embed(context.Background(), []string{"a"})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Temporary() {
		t.Fatalf("err = %v, want a permanent 400 ProviderError", err)
	}
	if !strings.Contains(err.Error(), "maximum context length is 8192 tokens") {
		t.Errorf("error %q lacks the provider's message", err)
	}
	if f.count() != 1 || len(*slept) != 0 {
		t.Errorf("%d requests, %d sleeps; want 1, 0", f.count(), len(*slept))
	}
}

func TestRetriesExhausted(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	f.script = func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		writeError(w, http.StatusInternalServerError, "boom")
		return true
	}
	c, slept := newTestClient(t, Config{BaseURL: srv.URL, MaxRetries: 2})
	_, err := c.Embed(context.Background(), []string{"a"})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want the last 500", err)
	}
	if f.count() != 3 || len(*slept) != 2 {
		t.Errorf("%d requests, %d sleeps; want 3, 2", f.count(), len(*slept))
	}

	f2, srv2 := newFakeOpenAI(t)
	f2.script = f.script
	c2, _ := newTestClient(t, Config{BaseURL: srv2.URL, MaxRetries: -1})
	if _, err := c2.Embed(context.Background(), []string{"a"}); err == nil || f2.count() != 1 {
		t.Errorf("MaxRetries -1: err %v after %d requests, want an error after 1", err, f2.count())
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, srv := newFakeOpenAI(t)
	f.script = func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusTooManyRequests, "slow down")
		time.AfterFunc(20*time.Millisecond, cancel)
		return true
	}
	e, err := New(Config{BaseURL: srv.URL, Model: "m"}) // the real sleep
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = e.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Embed took %v after cancel", d)
	}
	if f.count() != 1 {
		t.Errorf("%d requests, want 1", f.count())
	}
}

func TestNetworkErrorsRetried(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	f.script = func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		switch n {
		case 0: // connection dropped before any answer
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
			}
			conn.Close()
			return true
		case 1: // slower than the per-attempt timeout
			time.Sleep(300 * time.Millisecond)
			return false
		case 2: // a 200 whose body is cut off
			w.Header().Set("Content-Length", "1000")
			fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,`)
			return true
		}
		return false
	}
	c, slept := newTestClient(t, Config{BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
	got, err := c.Embed(context.Background(), []string{"a"})
	if err != nil || len(got) != 1 {
		t.Fatalf("got %d vectors, err %v", len(got), err)
	}
	if f.count() != 4 || len(*slept) != 3 {
		t.Errorf("%d requests, %d sleeps; want 4, 3", f.count(), len(*slept))
	}
}

func TestDimensions(t *testing.T) {
	t.Run("requested and enforced", func(t *testing.T) {
		f, srv := newFakeOpenAI(t)
		c, _ := newTestClient(t, Config{BaseURL: srv.URL, Dimensions: 4})
		if c.Dimensions() != 4 {
			t.Errorf("Dimensions() = %d before any call, want 4", c.Dimensions())
		}
		got, err := c.Embed(context.Background(), []string{"a"})
		if err != nil || len(got[0]) != 4 || f.requests[0].Dimensions != 4 {
			t.Fatalf("err %v, vector %v, request %+v", err, got, f.requests[0])
		}
		f.script = func(n int, w http.ResponseWriter, req embeddingRequest) bool {
			vecs, _ := NewFake(6).Embed(context.Background(), req.Input) // ignores "dimensions"
			writeData(w, req.Model, vecs, []int{0})
			return true
		}
		_, err = c.Embed(context.Background(), []string{"a"})
		var pe *ProviderError
		if !errors.As(err, &pe) || pe.Temporary() || !strings.Contains(err.Error(), "6 dimensions, want 4") {
			t.Errorf("err = %v, want a dimension mismatch", err)
		}
	})
	t.Run("changes between batches", func(t *testing.T) {
		f, srv := newFakeOpenAI(t)
		f.script = func(n int, w http.ResponseWriter, req embeddingRequest) bool {
			f.dim = 8 + 8*n
			return false
		}
		c, _ := newTestClient(t, Config{BaseURL: srv.URL, BatchSize: 2})
		if c.Dimensions() != 0 {
			t.Errorf("Dimensions() = %d before any call, want 0", c.Dimensions())
		}
		_, err := c.Embed(context.Background(), texts(3))
		if err == nil || !strings.Contains(err.Error(), "16 dimensions, want 8") {
			t.Errorf("err = %v, want a dimension change", err)
		}
		if f.count() != 2 {
			t.Errorf("%d requests, want 2 (no retry)", f.count())
		}
	})
}

func TestInvalidResponses(t *testing.T) {
	cases := map[string]string{
		"too few":          `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,0]}]}`,
		"repeated index":   `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,0]},{"object":"embedding","index":0,"embedding":[1,0]}]}`,
		"index past end":   `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,0]},{"object":"embedding","index":2,"embedding":[1,0]}]}`,
		"empty vector":     `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[]},{"object":"embedding","index":1,"embedding":[]}]}`,
		"ragged":           `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,0]},{"object":"embedding","index":1,"embedding":[1]}]}`,
		"not json":         `<html>gateway</html>`,
		"wrong json shape": `{"data":"nope"}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			f, srv := newFakeOpenAI(t)
			f.script = func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
				return true
			}
			c, _ := newTestClient(t, Config{BaseURL: srv.URL})
			_, err := c.Embed(context.Background(), []string{"a", "b"})
			var pe *ProviderError
			if !errors.As(err, &pe) || pe.Status != 200 || pe.Temporary() {
				t.Fatalf("err = %v, want a permanent invalid-response error", err)
			}
			if f.count() != 1 {
				t.Errorf("%d requests, want 1", f.count())
			}
		})
	}
}

func TestAPIKeySentOnlyWhenSet(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	for _, key := range []string{"sk-test", ""} {
		c, _ := newTestClient(t, Config{BaseURL: srv.URL, APIKey: key})
		if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(f.auth, []string{"Bearer sk-test", ""}) {
		t.Errorf("Authorization headers %q", f.auth)
	}
}

func TestBaseURLForms(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/v1", srv.URL + "/v1/", srv.URL + "/v1/embeddings"} {
		c, _ := newTestClient(t, Config{BaseURL: base, MaxRetries: -1})
		if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
			t.Errorf("base %q: %v", base, err)
		}
	}
	f.path = "/proxy/openai/embeddings"
	c, _ := newTestClient(t, Config{BaseURL: srv.URL + "/proxy/openai", MaxRetries: -1})
	if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
		t.Errorf("base with its own path: %v", err)
	}
}

func TestNotConfigured(t *testing.T) {
	for _, cfg := range []Config{{}, {BaseURL: "http://localhost:11434"}, {Model: "nomic-embed-text"}, {BaseURL: "  ", Model: " "}} {
		if _, err := New(cfg); !errors.Is(err, ErrNotConfigured) {
			t.Errorf("New(%+v) = %v, want ErrNotConfigured", cfg, err)
		}
	}
	for _, base := range []string{"localhost:11434", "ftp://host/v1", "http://", "http://[::1"} {
		_, err := New(Config{BaseURL: base, Model: "m"})
		if err == nil || errors.Is(err, ErrNotConfigured) {
			t.Errorf("New with base %q = %v, want an invalid-URL error", base, err)
		}
	}
	if _, err := New(Config{BaseURL: "http://x", Model: "m", Dimensions: -1}); err == nil {
		t.Error("negative dimensions accepted")
	}
}

func TestInputsPrepared(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	c, _ := newTestClient(t, Config{BaseURL: srv.URL, MaxInputBytes: 10})
	in := []string{"", "  \n", "日本語のテキスト", "bad \xff utf8", "short"}
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	sent := f.requests[0].Input
	want := []string{" ", " ", "日本語", "bad \uFFFD ut", "short"}
	if !slices.Equal(sent, want) {
		t.Errorf("sent %q, want %q", sent, want)
	}
	if got, err := c.Embed(context.Background(), nil); got != nil || err != nil || f.count() != 1 {
		t.Errorf("Embed(nil) = %v, %v after %d requests", got, err, f.count())
	}
}

// Prefixes go before every text, queries' and documents' apart, the
// name sent stays the model's, and only a document prefix changes Model
// (the stored vectors' identity).
func TestPrefixes(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	c, _ := newTestClient(t, Config{BaseURL: srv.URL, Model: "nomic-embed-text", QueryPrefix: "search_query: ", DocumentPrefix: "search_document: "})
	if _, err := c.Embed(context.Background(), []string{"a passage", ""}); err != nil {
		t.Fatal(err)
	}
	if _, err := Query(context.Background(), c, []string{"a question?"}); err != nil {
		t.Fatal(err)
	}
	if got, want := f.requests[0].Input, []string{"search_document: a passage", "search_document: "}; !slices.Equal(got, want) {
		t.Errorf("documents sent as %q, want %q", got, want)
	}
	if got, want := f.requests[1].Input, []string{"search_query: a question?"}; !slices.Equal(got, want) {
		t.Errorf("queries sent as %q, want %q", got, want)
	}
	for _, r := range f.requests {
		if r.Model != "nomic-embed-text" {
			t.Errorf("model sent as %q", r.Model)
		}
	}
	if got, want := c.Model(), `nomic-embed-text (document prefix "search_document: ")`; got != want {
		t.Errorf("Model() = %q, want %q", got, want)
	}
	q, _ := newTestClient(t, Config{BaseURL: srv.URL, Model: "m", QueryPrefix: "query: "})
	if q.Model() != "m" {
		t.Errorf("a query prefix alone changed Model() to %q", q.Model())
	}
	// An embedder with no EmbedQuery embeds queries as documents.
	fake := NewFake(4)
	a, _ := Query(context.Background(), fake, []string{"x"})
	b, _ := fake.Embed(context.Background(), []string{"x"})
	if !slices.Equal(a[0], b[0]) {
		t.Error("Query of a plain Embedder differs from its Embed")
	}
}

func FuzzPrepare(f *testing.F) {
	f.Add("", "", 1)
	f.Add("日本語のテキスト", "", 4)
	f.Add("a\xffb", "", 2)
	f.Add("text", "query: ", 9)
	f.Add("", "\xff", 3)
	f.Fuzz(func(t *testing.T, s, prefix string, n int) {
		if n < 1 || n > 1<<20 {
			return
		}
		got := prepare(s, prefix, n)
		if got == "" || !utf8.ValidString(got) || (len(got) > n && got != " ") {
			t.Fatalf("prepare(%q, %q, %d) = %q", s, prefix, n, got)
		}
		if got != " " && utf8.ValidString(prefix+s) && !strings.HasPrefix(prefix+s, got) {
			t.Fatalf("prepare(%q, %q, %d) = %q, not a prefix", s, prefix, n, got)
		}
	})
}
