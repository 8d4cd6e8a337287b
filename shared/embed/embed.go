// Package embed is the embeddings port: text in, vectors out.
//
// The one production adapter (New, in openai.go) talks to any
// OpenAI-compatible /v1/embeddings endpoint: OpenAI, Ollama, LM Studio, a
// local shim. NewFake (fake.go) is a deterministic embedder for other
// packages' tests. Vectors are returned exactly as the provider sent them:
// nothing here normalises them, so similarity code must not assume unit length.
package embed

import (
	"context"
	"errors"
	"time"

	"github.com/sheaf-dev/sheaf/shared/internal/provider"
)

// Embedder turns texts into vectors.
type Embedder interface {
	// Embed returns exactly one vector per text, in the order of texts, all of
	// the same length. An empty texts gives an empty result and no request.
	// It fails as a whole: no partial results.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model the vectors come from; vectors of different
	// models must never be compared.
	Model() string
	// Dimensions is the vector length. It is 0 until it is known: an adapter
	// not told the length learns it from the first successful Embed.
	Dimensions() int
}

// QueryEmbedder is an Embedder that embeds search queries apart from the
// passages they are compared with: models trained with task prefixes
// (nomic's "search_query: ", e5's "query: ") want the two told apart.
type QueryEmbedder interface {
	Embedder
	// EmbedQuery is Embed for texts that are search queries.
	EmbedQuery(ctx context.Context, texts []string) ([][]float32, error)
}

// Query embeds texts as search queries: with e's EmbedQuery when it has
// one, else with Embed.
func Query(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	if q, ok := e.(QueryEmbedder); ok {
		return q.EmbedQuery(ctx, texts)
	}
	return e.Embed(ctx, texts)
}

// ErrNotConfigured is returned by New when no provider is set up. Every
// embedding tool reports it as the spec's "not configured" error.
var ErrNotConfigured = errors.New("embeddings provider not configured: set SHEAF_EMBED_BASE_URL and SHEAF_EMBED_MODEL")

// ProviderError is a failed call to the embeddings provider.
//
// Status is the HTTP status the provider answered with, or 0 when no usable
// answer arrived (connection refused or reset, a timed-out attempt, a
// truncated body). A 2xx Status means the provider answered with a response
// we cannot use (malformed JSON, wrong vector count, changed dimensions).
// RetryAfter is the provider's Retry-After hint, 0 when it sent none.
type ProviderError struct {
	Status     int
	RetryAfter time.Duration
	Err        error
}

func (e *ProviderError) Error() string {
	return provider.Describe("embeddings provider", "an invalid response", e.Status, e.Err)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Temporary reports whether the same request may succeed later: network
// failures, 408, 429 and 5xx.
func (e *ProviderError) Temporary() bool { return provider.Temporary(e.Status) }
