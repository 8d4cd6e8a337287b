package embedder_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/infra/embedder"
	"github.com/sheaf-dev/sheaf/shared/embed"
)

// newClient is the project's own embeddings client pointed at baseURL.
func newClient(t testing.TB, baseURL, key string) embed.Embedder {
	t.Helper()
	e, err := embed.New(embed.Config{BaseURL: baseURL, Model: embedder.Model, APIKey: key, MaxRetries: -1, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func embedTexts(t testing.TB, e embed.Embedder, texts ...string) [][]float32 {
	t.Helper()
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		checkVector(t, fmt.Sprintf("vector %d (%.40q)", i, texts[i]), v)
	}
	return vecs
}

// checkVector checks a vector's length, finiteness and (about) unit norm.
func checkVector(t testing.TB, what string, v []float32) {
	t.Helper()
	if len(v) != embedder.Dimensions {
		t.Fatalf("%s has %d dimensions, want %d", what, len(v), embedder.Dimensions)
	}
	var sum float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("%s has a non-finite value", what)
		}
		sum += float64(x) * float64(x)
	}
	if n := math.Sqrt(sum); n < 0.9 || n > 1.1 {
		t.Fatalf("%s has norm %v, want about 1", what, n)
	}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func maxDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// post sends body to path and returns the status and the decoded JSON answer.
func post(t testing.TB, baseURL, path, key string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, baseURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req, key)
}

func do(t testing.TB, req *http.Request, key string) (int, map[string]any) {
	t.Helper()
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, body %.200s", req.Method, req.URL.Path, ct, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: answer is not a JSON object: %v: %.200s", req.Method, req.URL.Path, err, raw)
	}
	return resp.StatusCode, out
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// embeddingsResponse is the OpenAI response shape, with the embedding kept
// raw so that both encodings decode.
type embeddingsResponse struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// rawEmbed posts an embeddings request and decodes a 200 answer into
// vectors, in input order, whatever the encoding.
func rawEmbed(t testing.TB, baseURL string, req map[string]any) (embeddingsResponse, [][]float32) {
	t.Helper()
	resp, err := http.Post(baseURL+"/v1/embeddings", "application/json", bytes.NewReader(mustJSON(t, req)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %.300s", resp.StatusCode, raw)
	}
	var r embeddingsResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float32, len(r.Data))
	for i, d := range r.Data {
		if d.Object != "embedding" || d.Index != i {
			t.Fatalf("data[%d] is object %q index %d", i, d.Object, d.Index)
		}
		var v []float32
		var s string
		if err := json.Unmarshal(d.Embedding, &v); err != nil {
			if err := json.Unmarshal(d.Embedding, &s); err != nil {
				t.Fatalf("data[%d].embedding is neither floats nor a string: %.80s", i, d.Embedding)
			}
			if v, err = decodeBase64(s); err != nil {
				t.Fatalf("data[%d].embedding: %v", i, err)
			}
		}
		vecs[i] = v
	}
	return r, vecs
}

// decodeBase64 reads OpenAI's base64 encoding: little-endian float32s.
func decodeBase64(s string) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of float32s", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func TestSemanticThroughClient(t *testing.T) {
	e := newClient(t, embedder.Start(t), "")
	vecs := embedTexts(t, e,
		"how do I water tomatoes",
		"irrigation schedule for tomato plants",
		"quarterly tax filing deadline",
	)
	if e.Dimensions() != embedder.Dimensions {
		t.Errorf("client learnt %d dimensions, want %d", e.Dimensions(), embedder.Dimensions)
	}
	near, far := cosine(vecs[0], vecs[1]), cosine(vecs[0], vecs[2])
	t.Logf("cos(water tomatoes, tomato irrigation) = %.3f; cos(water tomatoes, tax deadline) = %.3f", near, far)
	if near <= far {
		t.Errorf("related texts are not closer: %.3f <= %.3f", near, far)
	}
}

func TestDeterministic(t *testing.T) {
	base := embedder.Start(t)
	e := newClient(t, base, "")
	const text = "The compost pile needs turning every two weeks."
	first := embedTexts(t, e, text, text)
	again := embedTexts(t, e, text)
	if d := maxDiff(first[0], first[1]); d != 0 {
		t.Errorf("same text twice in one request differs by %g", d)
	}
	if d := maxDiff(first[0], again[0]); d != 0 {
		t.Errorf("same text in two identical requests differs by %g", d)
	}
	// In a batch with other texts the float rounding may change, no more.
	mixed := embedTexts(t, e, "short", text, strings.Repeat("a much longer neighbour sentence ", 20))
	if d := maxDiff(first[0], mixed[1]); d > 1e-5 {
		t.Errorf("same text in another batch differs by %g", d)
	}
}

func TestLargeBatchKeepsOrder(t *testing.T) {
	base := embedder.Start(t)
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = fmt.Sprintf("note %d: %s", i, passage(i, 12))
	}
	// Through the client: several requests.
	vecs := embedTexts(t, newClient(t, base, ""), texts...)
	// One request of 300: several model batches inside the server.
	r, raw := rawEmbed(t, base, map[string]any{"input": texts, "model": "anything"})
	if len(raw) != len(texts) {
		t.Fatalf("got %d vectors for %d inputs", len(raw), len(texts))
	}
	if r.Object != "list" || r.Model != embedder.Model {
		t.Errorf("object %q model %q, want list %q", r.Object, r.Model, embedder.Model)
	}
	if r.Usage.PromptTokens < len(texts) || r.Usage.TotalTokens != r.Usage.PromptTokens {
		t.Errorf("usage %+v for %d texts", r.Usage, len(texts))
	}
	for i := range texts {
		if d := maxDiff(vecs[i], raw[i]); d > 1e-5 {
			t.Fatalf("vector %d differs by %g between the client's batches and one request", i, d)
		}
	}
	// Neighbours differ: the order is not scrambled into copies.
	if d := maxDiff(raw[0], raw[299]); d < 1e-3 {
		t.Errorf("vectors 0 and 299 are nearly equal (%g)", d)
	}
}

func TestHostileTexts(t *testing.T) {
	base := embedder.Start(t)
	texts := []string{
		"🍅🌱💧 tomatoes 🍅",
		"東京の天気は晴れです。明日は雨が降るでしょう。",
		"Привет, как дела? Ελληνικά. العربية. עברית. हिन्दी",
		"Cafe\u0301 re\u0301sume\u0301 (NFD)",
		"ﷺﷺﷺ", // expands 18-fold under NFKC
		" ", "\t\n", "\u200b", "\x00\x01\x7f",
		"invalid \xff\xfe utf-8",
		"\ufeffbyte order mark",
		strings.Repeat("long ", 20_000),
		strings.Repeat("長", 30_000),
	}
	vecs := embedTexts(t, newClient(t, base, ""), texts...)
	if d := maxDiff(vecs[0], vecs[1]); d == 0 {
		t.Error("emoji and Japanese texts gave the same vector")
	}
	// Past the client's own cut: the server truncates.
	_, raw := rawEmbed(t, base, map[string]any{"input": []string{
		strings.Repeat("x y ", 100_000),
		strings.Repeat("ﷺ", 1_000_000), // 18 million characters after NFKC
	}})
	checkVector(t, "400,000-character input", raw[0])
	checkVector(t, "NFKC bomb", raw[1])
}

func TestBase64EqualsFloat(t *testing.T) {
	base := embedder.Start(t)
	input := []string{"base64 is little-endian float32", "ünïcödé 🍅"}
	_, floats := rawEmbed(t, base, map[string]any{"input": input, "encoding_format": "float"})
	_, b64 := rawEmbed(t, base, map[string]any{"input": input, "encoding_format": "base64"})
	for i := range input {
		checkVector(t, "base64 vector", b64[i])
		if d := maxDiff(floats[i], b64[i]); d != 0 {
			t.Errorf("input %d: base64 and float differ by %g", i, d)
		}
	}
}

func TestErrors(t *testing.T) {
	base := embedder.StartWith(t, embedder.Options{Env: []string{"EMBED_MAX_BODY_BYTES=65536"}})
	tooMany := make([]string, 2049)
	for i := range tooMany {
		tooMany[i] = "x"
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   string
		status int
		param  string
	}{
		{"bad JSON", "POST", "/v1/embeddings", `{"input": "x"`, 400, ""},
		{"not an object", "POST", "/v1/embeddings", `["x"]`, 400, ""},
		{"no input", "POST", "/v1/embeddings", `{"model": "m"}`, 400, "input"},
		{"empty array", "POST", "/v1/embeddings", `{"input": []}`, 400, "input"},
		{"empty string", "POST", "/v1/embeddings", `{"input": ""}`, 400, "input"},
		{"empty string in array", "POST", "/v1/embeddings", `{"input": ["a", ""]}`, 400, "input"},
		{"number input", "POST", "/v1/embeddings", `{"input": 42}`, 400, "input"},
		{"token arrays", "POST", "/v1/embeddings", `{"input": [[1, 2, 3]]}`, 400, "input"},
		{"null in array", "POST", "/v1/embeddings", `{"input": ["a", null]}`, 400, "input"},
		{"too many inputs", "POST", "/v1/embeddings", string(mustJSON(t, map[string]any{"input": tooMany})), 400, "input"},
		{"bad model type", "POST", "/v1/embeddings", `{"input": "x", "model": 3}`, 400, "model"},
		{"bad encoding", "POST", "/v1/embeddings", `{"input": "x", "encoding_format": "int8"}`, 400, "encoding_format"},
		{"other dimensions", "POST", "/v1/embeddings", `{"input": "x", "dimensions": 256}`, 400, "dimensions"},
		{"body too large", "POST", "/v1/embeddings", `{"input": "` + strings.Repeat("x", 70_000) + `"}`, 413, ""},
		{"unknown path", "GET", "/v1/chat/completions", "", 404, ""},
		{"wrong method", "GET", "/v1/embeddings", "", 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			status, out := do(t, req, "")
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, out)
			}
			checkError(t, out, tc.param)
		})
	}
	// The server is still fine.
	_, vecs := rawEmbed(t, base, map[string]any{"input": "still alive"})
	checkVector(t, "vector after errors", vecs[0])
}

// checkError checks OpenAI's error shape.
func checkError(t testing.TB, out map[string]any, param string) {
	t.Helper()
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object: %v", out)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("error without message: %v", e)
	}
	if typ, _ := e["type"].(string); typ == "" {
		t.Errorf("error without type: %v", e)
	}
	if _, ok := e["code"]; !ok {
		t.Errorf("error without code: %v", e)
	}
	if got, _ := e["param"].(string); param != "" && got != param {
		t.Errorf("error param %q, want %q", got, param)
	}
}

func TestAPIKey(t *testing.T) {
	const key = "s3cret key+ü"
	base := embedder.StartWith(t, embedder.Options{APIKey: key})
	body := []byte(`{"input": "hello"}`)
	for _, k := range []string{"", "wrong", key + "x"} {
		status, out := post(t, base, "/v1/embeddings", k, body)
		if status != http.StatusUnauthorized {
			t.Errorf("key %q: status %d, want 401", k, status)
		}
		checkError(t, out, "")
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/models", nil)
	if status, _ := do(t, req, ""); status != http.StatusUnauthorized {
		t.Errorf("/v1/models without key: status %d, want 401", status)
	}
	req, _ = http.NewRequest(http.MethodGet, base+"/healthz", nil)
	if status, _ := do(t, req, ""); status != http.StatusOK {
		t.Errorf("/healthz without key: status %d, want 200", status)
	}

	embedTexts(t, newClient(t, base, key), "the right key works")
	_, err := newClient(t, base, "wrong").Embed(context.Background(), []string{"x"})
	var pe *embed.ProviderError
	if !errors.As(err, &pe) || pe.Status != http.StatusUnauthorized || pe.Temporary() {
		t.Errorf("wrong key through the client: %v, want a permanent 401 ProviderError", err)
	}
}

func TestModelsAndHealth(t *testing.T) {
	base := embedder.Start(t)
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/models", nil)
	status, out := do(t, req, "")
	data, _ := out["data"].([]any)
	if status != 200 || out["object"] != "list" || len(data) != 1 {
		t.Fatalf("/v1/models: %d %v", status, out)
	}
	if m, _ := data[0].(map[string]any); m["id"] != embedder.Model || m["object"] != "model" {
		t.Errorf("/v1/models lists %v", m)
	}
	req, _ = http.NewRequest(http.MethodGet, base+"/healthz", nil)
	if status, out := do(t, req, ""); status != 200 || out["status"] != "ok" {
		t.Errorf("/healthz: %d %v", status, out)
	}
}

func TestConcurrentRequestsAndDisconnects(t *testing.T) {
	base := embedder.Start(t)
	e := newClient(t, base, "")
	const text = "concurrent requests queue for the single model"
	want := embedTexts(t, e, text)[0]

	// A client that gives up mid-request.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	long := make([]string, 200)
	for i := range long {
		long[i] = passage(i, 60)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/embeddings",
		bytes.NewReader(mustJSON(t, map[string]any{"input": long})))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Log("the long request finished before its deadline")
	}

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			vecs, err := e.Embed(context.Background(), []string{text, passage(i, 20)})
			switch {
			case err != nil:
				errs <- err
			case maxDiff(vecs[0], want) > 1e-5:
				errs <- fmt.Errorf("request %d: vector differs by %g", i, maxDiff(vecs[0], want))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCleanupStopsServer(t *testing.T) {
	var base string
	t.Run("server", func(t *testing.T) { base = embedder.Start(t) })
	if base == "" {
		t.Skip("no server started")
	}
	c := http.Client{Timeout: 5 * time.Second}
	if resp, err := c.Get(base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("the server still answers after its test ended")
	}
}

// passage is a deterministic pseudo-random passage of n words.
func passage(seed, n int) string {
	words := strings.Fields(`the garden needs water every morning while tomatoes grow slowly under
		summer sun and the gardener writes notes about compost soil seeds harvest weather rain frost
		pruning basil peppers beans autumn spring planning invoices taxes meetings project deadline
		budget review travel train station museum history recipe bread flour oven`)
	var b strings.Builder
	x := uint32(seed*2654435761 + 1)
	for i := range n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[x%uint32(len(words))])
	}
	return b.String()
}

// BenchmarkEmbed measures throughput for 64-text batches of 60-word passages
// (and of 10-word sentences, for comparison).
func BenchmarkEmbed(b *testing.B) {
	base := embedder.Start(b)
	e, err := embed.New(embed.Config{BaseURL: base, Model: embedder.Model, BatchSize: 64, Timeout: 5 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	for _, words := range []int{60, 10} {
		b.Run(fmt.Sprintf("words=%d", words), func(b *testing.B) {
			batch := make([]string, 64)
			for i := range batch {
				batch[i] = passage(i, words)
			}
			embedTexts(b, e, batch[0]) // warm up
			texts := 0
			for b.Loop() {
				if _, err := e.Embed(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
				texts += len(batch)
			}
			b.ReportMetric(float64(texts)/b.Elapsed().Seconds(), "texts/s")
		})
	}
}
