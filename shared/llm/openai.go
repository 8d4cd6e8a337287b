package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/sheaf-dev/sheaf/shared/internal/provider"
)

// Defaults for Config's zero fields.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 4
	DefaultMaxTokens  = 1024
)

// Config selects and tunes an OpenAI-compatible chat provider. Zero fields
// take the defaults above.
type Config struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1 (Ollama). A URL with no path gets /v1; a
	// trailing /chat/completions is dropped; any other path is kept.
	BaseURL string
	// Model is the chat model, e.g. gpt-4o-mini or llama3.1.
	Model string
	// APIKey is sent as "Authorization: Bearer" when set.
	APIKey string
	// Timeout bounds each request attempt (not the whole Complete call); a
	// timed-out attempt is retried.
	Timeout time.Duration
	// MaxRetries is how many times a request is retried after a 408, 429,
	// 5xx or network failure. Negative: never retry.
	MaxRetries int
	// MaxTokens caps a reply when the Request does not.
	MaxTokens int
	// HTTPClient sends the requests; nil means a plain http.Client.
	HTTPClient *http.Client
}

// chat is the OpenAI-compatible adapter.
type chat struct {
	cfg Config
	api *openai.Client
	r   provider.Retrier
}

var _ Chat = (*chat)(nil)

// New returns a Chat for the provider c describes. It fails with
// ErrNotConfigured when BaseURL or Model is empty and with a plain error
// when the base URL is not http(s). It sends no request.
func New(c Config) (Chat, error) {
	c.BaseURL = strings.TrimSpace(c.BaseURL)
	c.Model = strings.TrimSpace(c.Model)
	if err := provider.Configured(c.BaseURL, c.Model, ErrNotConfigured); err != nil {
		return nil, err
	}
	base, err := provider.APIRoot(c.BaseURL, "/chat/completions")
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	c.BaseURL = base
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	return &chat{cfg: c, api: provider.NewClient(base, c.APIKey, c.HTTPClient), r: newRetrier(c.MaxRetries)}, nil
}

func (c *chat) Model() string { return c.cfg.Model }

// Complete sends one chat completion, retrying temporary failures. A reply
// with no choices or only whitespace is an error (Status 2xx).
func (c *chat) Complete(ctx context.Context, r Request) (string, error) {
	if len(r.Messages) == 0 {
		return "", errors.New("llm: a request needs at least one message")
	}
	req := c.request(r)
	var reply string
	err := c.r.Do(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
		ctx, info := provider.Capture(ctx)
		resp, err := c.api.CreateChatCompletion(ctx, req)
		if err != nil {
			return providerError(info, err)
		}
		if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Message.Content) == "" {
			return &ProviderError{Status: info.Status, Err: errors.New("the reply is empty")}
		}
		reply = strings.ToValidUTF8(resp.Choices[0].Message.Content, "\uFFFD")
		return nil
	})
	return reply, err
}

// request maps a Request onto go-openai's. Messages are made valid UTF-8.
// A temperature of 0 is sent as the smallest positive float32, because
// go-openai omits a zero temperature and providers then default to 1.
// Reasoning models (o1, o3, gpt-5, ...) take max_completion_tokens and no
// temperature.
func (c *chat) request(r Request) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: c.cfg.Model, MaxTokens: c.cfg.MaxTokens, Temperature: r.Temperature}
	if r.MaxTokens > 0 {
		req.MaxTokens = r.MaxTokens
	}
	if req.Temperature <= 0 {
		req.Temperature = math.SmallestNonzeroFloat32
	}
	for _, m := range r.Messages {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: m.Role, Content: strings.ToValidUTF8(m.Content, "\uFFFD")})
	}
	if r.JSON {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	if openai.NewReasoningValidator().Validate(req) != nil {
		req.MaxCompletionTokens, req.MaxTokens, req.Temperature = req.MaxTokens, 0, 0
	}
	return req
}

// ProviderError is a failed call to the chat or rerank provider.
//
// Status is the HTTP status the provider answered with, or 0 when no usable
// answer arrived (connection refused or reset, a timed-out attempt, a
// truncated body). A 2xx Status means an answer we cannot use (malformed
// JSON, no choices, an empty reply). RetryAfter is the provider's
// Retry-After hint, 0 when it sent none.
type ProviderError struct {
	Status     int
	RetryAfter time.Duration
	Err        error
}

func (e *ProviderError) Error() string {
	return provider.Describe("LLM provider", "an unusable response", e.Status, e.Err)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Temporary reports whether the same request may succeed later: network
// failures, 408, 429 and 5xx.
func (e *ProviderError) Temporary() bool { return provider.Temporary(e.Status) }
