package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults for Config's zero fields.
const (
	DefaultBatchSize      = 96
	DefaultMaxBatchTokens = 64_000
	DefaultMaxInputBytes  = 16_000
	DefaultTimeout        = 30 * time.Second
	DefaultMaxRetries     = 5
)

// Backoff between retries: full jitter over base·2^attempt, capped; a
// provider's Retry-After replaces it, capped at maxRetryAfter.
const (
	backoffBase   = 500 * time.Millisecond
	backoffCap    = 20 * time.Second
	maxRetryAfter = 60 * time.Second
)

// Config selects and tunes an OpenAI-compatible embeddings provider. Zero
// fields take the defaults above.
type Config struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1 (Ollama). A URL with no path gets /v1; a
	// trailing /embeddings is dropped; any other path is kept as given.
	BaseURL string
	// Model is the embedding model, e.g. text-embedding-3-small.
	Model string
	// APIKey is sent as "Authorization: Bearer" when set. Local servers need none.
	APIKey string
	// Dimensions asks models that support it (text-embedding-3-*) for shorter
	// vectors and is then enforced on every response. 0: the model's own length.
	Dimensions int
	// BatchSize caps the inputs per request (OpenAI allows 2048).
	BatchSize int
	// MaxBatchTokens caps the estimated tokens per request (OpenAI allows
	// 300,000). Tokens are estimated as bytes/3, which over-counts English
	// (about 4 bytes a token) and roughly matches CJK (3 bytes a character).
	MaxBatchTokens int
	// MaxInputBytes cuts longer inputs, at a character boundary, so that each
	// stays under the usual 8,192-token limit per input even for CJK text.
	MaxInputBytes int
	// Timeout bounds each request attempt, not the whole Embed call; an
	// attempt that times out is retried.
	Timeout time.Duration
	// MaxRetries is how many times a request is retried after a 408, 429,
	// 5xx or network failure. Negative: never retry.
	MaxRetries int
	// HTTPClient sends the requests; nil means a plain http.Client.
	HTTPClient *http.Client
}

// client is the OpenAI-compatible adapter.
type client struct {
	cfg  Config
	api  *openai.Client
	dims atomic.Int64 // 0 until known

	// Seams for tests.
	sleep  func(context.Context, time.Duration) error
	jitter func(max time.Duration) time.Duration
	now    func() time.Time
}

var _ Embedder = (*client)(nil)

// New returns an Embedder for the provider cfg describes. It fails with
// ErrNotConfigured when BaseURL or Model is empty, and with a plain error when
// the configuration is invalid. It sends no request.
func New(cfg Config) (Embedder, error) {
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	cfg.Model = strings.TrimSpace(cfg.Model)
	switch {
	case cfg.BaseURL == "" && cfg.Model == "":
		return nil, ErrNotConfigured
	case cfg.BaseURL == "":
		return nil, fmt.Errorf("%w (the base URL is empty)", ErrNotConfigured)
	case cfg.Model == "":
		return nil, fmt.Errorf("%w (the model is empty)", ErrNotConfigured)
	case cfg.Dimensions < 0:
		return nil, fmt.Errorf("embed: dimensions %d is negative", cfg.Dimensions)
	}
	base, err := apiRoot(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = base
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.MaxBatchTokens <= 0 {
		cfg.MaxBatchTokens = DefaultMaxBatchTokens
	}
	if cfg.MaxInputBytes <= 0 {
		cfg.MaxInputBytes = DefaultMaxInputBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = base
	oc.HTTPClient = capturingDoer{hc}
	c := &client{
		cfg:    cfg,
		api:    openai.NewClientWithConfig(oc),
		sleep:  sleepCtx,
		jitter: func(max time.Duration) time.Duration { return rand.N(max + 1) },
		now:    time.Now,
	}
	c.dims.Store(int64(cfg.Dimensions))
	return c, nil
}

// apiRoot normalises a base URL to the root that /embeddings is appended to.
func apiRoot(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("embed: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("embed: base URL %q is not an http(s) URL", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.Path = strings.TrimSuffix(u.Path, "/embeddings")
	if u.Path == "" {
		u.Path = "/v1"
	}
	u.RawPath = ""
	u.Fragment = ""
	return u.String(), nil
}

func (c *client) Model() string   { return c.cfg.Model }
func (c *client) Dimensions() int { return int(c.dims.Load()) }

// Embed sends texts in batches, one after another, retrying each batch on
// temporary failures. Inputs are sent as they are, except that a blank text
// becomes a single space (providers reject empty input) and a text longer than
// MaxInputBytes is cut.
func (c *client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	inputs := make([]string, len(texts))
	for i, t := range texts {
		inputs[i] = prepare(t, c.cfg.MaxInputBytes)
	}
	out := make([][]float32, 0, len(texts))
	for _, b := range batches(inputs, c.cfg.BatchSize, c.cfg.MaxBatchTokens) {
		vecs, err := c.embedBatch(ctx, inputs[b[0]:b[1]])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// prepare makes one text acceptable to providers.
func prepare(s string, maxBytes int) string {
	s = truncate(strings.ToValidUTF8(s, "\uFFFD"), maxBytes)
	if strings.TrimSpace(s) == "" {
		return " "
	}
	return s
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// estimateTokens over-estimates a text's token count; see MaxBatchTokens.
func estimateTokens(s string) int { return len(s)/3 + 1 }

// batches splits inputs into [start, end) ranges of at most size inputs and
// maxTokens estimated tokens. A single input over maxTokens gets its own batch.
func batches(inputs []string, size, maxTokens int) [][2]int {
	var out [][2]int
	start, tokens := 0, 0
	for i, s := range inputs {
		t := estimateTokens(s)
		if i > start && (i-start >= size || tokens+t > maxTokens) {
			out = append(out, [2]int{start, i})
			start, tokens = i, 0
		}
		tokens += t
	}
	return append(out, [2]int{start, len(inputs)})
}

// embedBatch sends one batch, retrying temporary failures with backoff.
func (c *client) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	for attempt := 0; ; attempt++ {
		vecs, err := c.send(ctx, batch)
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embed: %w", ctx.Err())
		}
		var pe *ProviderError
		if !errors.As(err, &pe) || !pe.Temporary() {
			return nil, err
		}
		if attempt >= c.cfg.MaxRetries {
			return nil, fmt.Errorf("embed: giving up after %d attempts: %w", attempt+1, err)
		}
		if err := c.sleep(ctx, c.backoff(attempt, pe.RetryAfter)); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
	}
}

// backoff is the wait before retry number attempt+1.
func (c *client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, maxRetryAfter)
	}
	d := backoffCap
	if attempt < 10 {
		d = min(backoffBase<<attempt, backoffCap)
	}
	return c.jitter(d)
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send makes one request attempt and checks the response.
func (c *client) send(ctx context.Context, batch []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	info := new(responseInfo)
	ctx = context.WithValue(ctx, responseInfoKey{}, info)
	resp, err := c.api.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
		Input:      batch,
		Model:      openai.EmbeddingModel(c.cfg.Model),
		Dimensions: c.cfg.Dimensions,
	})
	if err != nil {
		return nil, c.providerError(info, err)
	}
	vecs, err := c.check(resp.Data, len(batch))
	if err != nil {
		return nil, &ProviderError{Status: info.status, Err: err}
	}
	return vecs, nil
}

// providerError classifies a failed attempt.
func (c *client) providerError(info *responseInfo, err error) *ProviderError {
	status := info.status
	if status >= 200 && status < 300 && transient(err) {
		status = 0 // the body was cut off: as good as no answer
	}
	pe := &ProviderError{Status: status, Err: err}
	if info.header != nil {
		pe.RetryAfter = retryAfter(info.header, c.now())
	}
	return pe
}

// transient reports whether err is a broken or timed-out connection.
func transient(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &ne)
}

// check validates a response's data and returns the vectors in input order.
func (c *client) check(data []openai.Embedding, n int) ([][]float32, error) {
	if len(data) != n {
		return nil, fmt.Errorf("got %d embeddings for %d inputs", len(data), n)
	}
	out := make([][]float32, n)
	for _, d := range data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("embedding index %d is out of range or repeated", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embedding %d is empty", d.Index)
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("embedding %d has a non-finite value", d.Index)
			}
		}
		out[d.Index] = d.Embedding
	}
	got := int64(len(out[0]))
	for _, v := range out {
		if int64(len(v)) != got {
			return nil, fmt.Errorf("embeddings of %d and %d dimensions in one response", got, len(v))
		}
	}
	if !c.dims.CompareAndSwap(0, got) {
		if want := c.dims.Load(); want != got {
			return nil, fmt.Errorf("embeddings have %d dimensions, want %d (did the model change?)", got, want)
		}
	}
	return out, nil
}

// retryAfter reads a Retry-After hint: retry-after-ms (OpenAI, Azure) or
// Retry-After in seconds or as an HTTP date. 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// capturingDoer records each response's status and headers into the
// request's responseInfo: go-openai drops the headers of error responses,
// and Retry-After lives there.
type capturingDoer struct{ hc *http.Client }

type responseInfoKey struct{}

type responseInfo struct {
	status int
	header http.Header
}

func (d capturingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.hc.Do(req)
	if err == nil {
		if info, ok := req.Context().Value(responseInfoKey{}).(*responseInfo); ok {
			info.status, info.header = resp.StatusCode, resp.Header
		}
	}
	return resp, err
}
