package embed

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/sheaf-dev/sheaf/shared/internal/provider"
)

// Defaults for Config's zero fields.
const (
	DefaultBatchSize      = 96
	DefaultMaxBatchTokens = 64_000
	DefaultMaxInputBytes  = 16_000
	DefaultTimeout        = 30 * time.Second
	DefaultMaxRetries     = 5
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
	// QueryPrefix and DocumentPrefix are put before every search query
	// (EmbedQuery) and every other text (Embed), for models trained with
	// task prefixes: "search_query: " and "search_document: " for nomic,
	// "query: " and "passage: " for e5. Both are sent as given, spaces
	// included. A DocumentPrefix is part of Model: stored vectors made
	// with another are stale.
	QueryPrefix, DocumentPrefix string
}

// client is the OpenAI-compatible adapter.
type client struct {
	cfg  Config
	api  *openai.Client
	dims atomic.Int64 // 0 until known

	retry provider.Retrier // its Sleep and Jitter are seams for tests
	now   func() time.Time // a seam for tests
}

var _ QueryEmbedder = (*client)(nil)

// New returns an Embedder for the provider cfg describes. It fails with
// ErrNotConfigured when BaseURL or Model is empty, and with a plain error when
// the configuration is invalid. It sends no request.
func New(cfg Config) (Embedder, error) {
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	cfg.Model = strings.TrimSpace(cfg.Model)
	if err := provider.Configured(cfg.BaseURL, cfg.Model, ErrNotConfigured); err != nil {
		return nil, err
	}
	if cfg.Dimensions < 0 {
		return nil, fmt.Errorf("embed: dimensions %d is negative", cfg.Dimensions)
	}
	base, err := provider.APIRoot(cfg.BaseURL, "/embeddings")
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
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
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	cfg.MaxRetries = max(cfg.MaxRetries, 0)
	c := &client{
		cfg:   cfg,
		api:   provider.NewClient(base, cfg.APIKey, cfg.HTTPClient),
		retry: provider.NewRetrier("embed", cfg.MaxRetries, func(e *ProviderError) time.Duration { return e.RetryAfter }),
		now:   time.Now,
	}
	c.dims.Store(int64(cfg.Dimensions))
	return c, nil
}

// Model is the model's name, and the document prefix when there is one
// (the vectors of passages embedded with and without it differ), e.g.
// `nomic-embed-text (document prefix "search_document: ")`. The
// provider is sent the name alone.
func (c *client) Model() string {
	if c.cfg.DocumentPrefix == "" {
		return c.cfg.Model
	}
	return fmt.Sprintf("%s (document prefix %q)", c.cfg.Model, c.cfg.DocumentPrefix)
}

func (c *client) Dimensions() int { return int(c.dims.Load()) }

// Embed sends texts in batches, one after another, retrying each batch on
// temporary failures. Inputs are sent as they are, after DocumentPrefix,
// except that a blank text becomes a single space (providers reject empty
// input) and a text longer than MaxInputBytes is cut.
func (c *client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, c.cfg.DocumentPrefix, texts)
}

// EmbedQuery is Embed with QueryPrefix instead of DocumentPrefix.
func (c *client) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, c.cfg.QueryPrefix, texts)
}

func (c *client) embed(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	inputs := make([]string, len(texts))
	for i, t := range texts {
		inputs[i] = prepare(t, prefix, c.cfg.MaxInputBytes)
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

// prepare makes one text acceptable to providers, after prefix.
func prepare(s, prefix string, maxBytes int) string {
	s = provider.Truncate(strings.ToValidUTF8(prefix+s, "\uFFFD"), maxBytes)
	if strings.TrimSpace(s) == "" {
		return " "
	}
	return s
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
	var vecs [][]float32
	err := c.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		vecs, err = c.send(ctx, batch)
		return err
	})
	return vecs, err
}

// send makes one request attempt and checks the response.
func (c *client) send(ctx context.Context, batch []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	ctx, info := provider.Capture(ctx)
	resp, err := c.api.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
		Input:      batch,
		Model:      openai.EmbeddingModel(c.cfg.Model),
		Dimensions: c.cfg.Dimensions,
	})
	if err != nil {
		status, retryAfter := info.Failure(err, c.now())
		return nil, &ProviderError{Status: status, RetryAfter: retryAfter, Err: err}
	}
	vecs, err := c.check(resp.Data, len(batch))
	if err != nil {
		return nil, &ProviderError{Status: info.Status, Err: err}
	}
	return vecs, nil
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
