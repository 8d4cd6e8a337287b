// Package provider is the plumbing shared by the adapters for
// OpenAI-compatible HTTP providers (shared/embed, shared/llm): reading
// Retry-After hints, recovering the status and headers that go-openai drops
// from error responses, telling transient failures from final ones, the
// retry backoff, and the human-readable part of a provider's error.
package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Backoff between retries: full jitter over BackoffBase·2^attempt, capped at
// BackoffCap; a provider's Retry-After replaces it, capped at MaxRetryAfter.
const (
	BackoffBase   = 500 * time.Millisecond
	BackoffCap    = 20 * time.Second
	MaxRetryAfter = 60 * time.Second
)

// Backoff is the wait before retry number attempt+1 (attempt counts from 0):
// retryAfter when the provider sent one (at most MaxRetryAfter), else
// jitter(limit) with limit = BackoffBase·2^attempt, at most BackoffCap.
// jitter returns a duration in [0, limit]; Jitter is the production one.
func Backoff(attempt int, retryAfter time.Duration, jitter func(limit time.Duration) time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, MaxRetryAfter)
	}
	d := BackoffCap
	if attempt >= 0 && attempt < 10 {
		d = min(BackoffBase<<attempt, BackoffCap)
	}
	return jitter(d)
}

// Retrier repeats a call while it fails with a temporary error.
type Retrier struct {
	Name string // prefixes the errors Do makes itself: "embed", "llm"
	Max  int    // retries after the first attempt
	// Classify reports whether an attempt's error is temporary, and the
	// provider's Retry-After hint (0 for none).
	Classify func(error) (temporary bool, retryAfter time.Duration)
	// Sleep and Jitter are Sleep and Jitter, or test doubles.
	Sleep  func(context.Context, time.Duration) error
	Jitter func(limit time.Duration) time.Duration
}

// NewRetrier returns a Retrier that retries the errors that wrap a
// temporary E (an adapter's ProviderError) at most maxRetries times (none
// when negative), waiting for the hint retryAfter gives, else a Backoff.
func NewRetrier[E interface {
	error
	Temporary() bool
}](name string, maxRetries int, retryAfter func(E) time.Duration) Retrier {
	classify := func(err error) (bool, time.Duration) {
		var e E
		if errors.As(err, &e) && e.Temporary() {
			return true, retryAfter(e)
		}
		return false, 0
	}
	return Retrier{Name: name, Max: max(maxRetries, 0), Classify: classify, Sleep: Sleep, Jitter: Jitter}
}

// Do runs attempt until it succeeds, fails for good, or the retries run out,
// waiting Backoff between attempts. It returns nil, a final error as attempt
// returned it, the last temporary error as "NAME: giving up after N
// attempts: ERR", or ctx's error as "NAME: ERR" once ctx is done.
func (r Retrier) Do(ctx context.Context, attempt func(context.Context) error) error {
	for n := 0; ; n++ {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", r.Name, ctx.Err())
		}
		temporary, retryAfter := r.Classify(err)
		if !temporary {
			return err
		}
		if n >= r.Max {
			return fmt.Errorf("%s: giving up after %d attempts: %w", r.Name, n+1, err)
		}
		if err := r.Sleep(ctx, Backoff(n, retryAfter, r.Jitter)); err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
	}
}

// Jitter returns a uniformly random duration in [0, limit]; limit must not
// be negative.
func Jitter(limit time.Duration) time.Duration { return rand.N(limit + 1) }

// Sleep waits for d or until ctx is done, returning ctx's error then.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RetryAfter reads a Retry-After hint: Retry-After-Ms (OpenAI, Azure), else
// Retry-After in seconds or as an HTTP date (relative to now). It is 0 when
// the hint is absent, unreadable, not positive or absurdly long.
func RetryAfter(h http.Header, now time.Time) time.Duration {
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

// Configured checks that an adapter has a base URL and a model (both
// already trimmed), failing with notConfigured, the adapter's
// ErrNotConfigured, saying what is missing.
func Configured(baseURL, model string, notConfigured error) error {
	switch {
	case baseURL == "" && model == "":
		return notConfigured
	case baseURL == "":
		return fmt.Errorf("%w (the base URL is empty)", notConfigured)
	case model == "":
		return fmt.Errorf("%w (the model is empty)", notConfigured)
	}
	return nil
}

// APIRoot normalises a base URL to the API root go-openai appends endpoint
// paths to: http(s) only, no trailing slash, endpoint (e.g. "/embeddings",
// pasted by mistake) dropped, /v1 when no path is left, no fragment.
func APIRoot(raw, endpoint string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("base URL %q is not an http(s) URL", raw)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), endpoint)
	if u.Path == "" {
		u.Path = "/v1"
	}
	u.RawPath, u.Fragment = "", ""
	return u.String(), nil
}

// NewClient returns a go-openai client for the API root base that sends
// through a Doer over hc (nil: a plain http.Client), with apiKey as the
// bearer token when it is set.
func NewClient(base, apiKey string, hc *http.Client) *openai.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	oc := openai.DefaultConfig(apiKey)
	oc.BaseURL = base
	oc.HTTPClient = Doer{Client: hc}
	return openai.NewClientWithConfig(oc)
}

// Response is the status and headers of the last response a Doer received
// for a request made under a context from Capture. Status is 0 and Header
// nil while no response has arrived.
type Response struct {
	Status int
	Header http.Header
}

type responseKey struct{}

// Capture returns a context under which a Doer records the response of a
// request into the returned Response.
func Capture(ctx context.Context) (context.Context, *Response) {
	r := new(Response)
	return context.WithValue(ctx, responseKey{}, r), r
}

// Failure classifies a failed call made under the context r came from: the
// status to report, which is 0 when no usable answer arrived (including a
// 2xx whose body was cut off), and the response's Retry-After hint.
func (r *Response) Failure(err error, now time.Time) (status int, retryAfter time.Duration) {
	status = r.Status
	if status >= 200 && status < 300 && Transient(err) {
		status = 0 // the body was cut off: as good as no answer
	}
	if r.Header != nil {
		retryAfter = RetryAfter(r.Header, now)
	}
	return status, retryAfter
}

// MaxResponseBytes bounds a provider's response body: a broken or hostile
// endpoint streaming without end fails instead of exhausting memory. (A
// full embeddings batch is a few tens of megabytes of JSON at most.)
const MaxResponseBytes = 256 << 20

// ErrResponseTooLarge is what reading a body past the bound returns.
var ErrResponseTooLarge = errors.New("the provider's response is too large")

// Doer sends requests with Client (an openai.HTTPDoer) and records each
// response's status and headers into the request context's Response, if it
// has one: go-openai drops the headers of error responses, and Retry-After
// lives there. A response body longer than Max bytes (0: MaxResponseBytes)
// fails with ErrResponseTooLarge when read past it.
type Doer struct {
	Client *http.Client
	Max    int64
}

// Do implements openai.HTTPDoer.
func (d Doer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.Client.Do(req)
	if err == nil {
		if r, ok := req.Context().Value(responseKey{}).(*Response); ok {
			r.Status, r.Header = resp.StatusCode, resp.Header
		}
		limit := d.Max
		if limit <= 0 {
			limit = MaxResponseBytes
		}
		resp.Body = &limitedBody{ReadCloser: resp.Body, left: limit}
	}
	return resp, err
}

// limitedBody fails a read that goes past left bytes.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrResponseTooLarge
	}
	// Read one byte past the bound to tell "exactly left" from "more".
	p = p[:min(int64(len(p)), b.left+1)]
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), ErrResponseTooLarge
	}
	return n, err
}

// Transient reports whether err is a broken or timed-out connection.
func Transient(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne)
}

// Temporary reports whether a request that failed with status (0: no usable
// answer) may succeed later: network failures, 408, 429 and 5xx.
func Temporary(status int) bool {
	return status == 0 || status == 408 || status == 429 || status >= 500
}

// Describe is the text of a failed call to the provider named who (e.g.
// "LLM provider"): unreachable (status 0), a 2xx answer that is unusable
// (described by bad, e.g. "an invalid response"), or an HTTP error with the
// provider's Message.
func Describe(who, bad string, status int, err error) string {
	switch {
	case status == 0:
		return fmt.Sprintf("%s unreachable: %v", who, err)
	case status >= 200 && status < 300:
		return fmt.Sprintf("%s sent %s: %v", who, bad, err)
	default:
		return fmt.Sprintf("%s returned HTTP %d: %s", who, status, Message(err))
	}
}

// maxMessage bounds a raw error body quoted by Message.
const maxMessage = 300

// Message is the human part of a provider's error: the "message" of an
// OpenAI error body, else the start of the raw body (at most 300 bytes, cut
// at a character boundary), else the HTTP status line, else err's text.
func Message(err error) string {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return apiErr.Message
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		if body := Clip(strings.TrimSpace(string(reqErr.Body)), maxMessage); body != "" {
			return body
		}
		return reqErr.HTTPStatus
	}
	if err == nil {
		return "no message"
	}
	return err.Error()
}

// Clip makes s valid UTF-8 and cuts it to at most n bytes at a character
// boundary, marking a cut with "…" (so the result may be n+3 bytes).
func Clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	return Truncate(s, n) + "…"
}

// Truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
