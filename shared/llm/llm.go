// Package llm is the chat port: messages in, text out. The production
// adapter talks to any OpenAI-compatible /v1/chat/completions endpoint;
// tests use a scripted fake server. Sheaf uses a model only where the spec
// asks for one (answer, query expansion, listwise rerank, lint_semantic,
// suggest_tags, eval's faithfulness), and treats every reply as untrusted
// text: callers validate what comes back.
package llm

import (
	"context"
	"errors"
)

// Message is one chat turn. Role is "system", "user" or "assistant".
type Message struct {
	Role    string
	Content string
}

// Request is one completion.
type Request struct {
	Messages    []Message
	MaxTokens   int     // 0: adapter default
	Temperature float32 // 0 for the most deterministic reply
	JSON        bool    // ask for a JSON object reply (response_format json_object)
}

// Chat completes conversations.
type Chat interface {
	// Complete returns the assistant's reply text.
	Complete(ctx context.Context, r Request) (string, error)
	// Model names the model, for results and logs.
	Model() string
}

// Reranker scores documents against a query (a hosted cross-encoder).
type Reranker interface {
	// Rerank returns one relevance score per document, higher is better,
	// in the order of docs.
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// ErrNotConfigured is returned when no chat provider is set up. Every LLM
// tool reports it as the spec's "not configured" error.
var ErrNotConfigured = errors.New("no LLM provider configured: set SHEAF_LLM_BASE_URL and SHEAF_LLM_MODEL")
