package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff between retries: full jitter over base·2^attempt, capped; a
// provider's Retry-After replaces it, capped at maxRetryAfter.
const (
	backoffBase   = 500 * time.Millisecond
	backoffCap    = 20 * time.Second
	maxRetryAfter = 60 * time.Second
)

// retrier repeats an attempt while it fails with a temporary ProviderError.
type retrier struct {
	max int // retries after the first attempt
	// Seams for tests.
	sleep  func(context.Context, time.Duration) error
	jitter func(max time.Duration) time.Duration
}

func newRetrier(maxRetries int) retrier {
	switch {
	case maxRetries == 0:
		maxRetries = DefaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	return retrier{
		max:    maxRetries,
		sleep:  sleepCtx,
		jitter: func(max time.Duration) time.Duration { return rand.N(max + 1) },
	}
}

// do runs attempt until it succeeds, fails for good, or retries run out.
func (r retrier) do(ctx context.Context, attempt func(context.Context) error) error {
	for n := 0; ; n++ {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("llm: %w", ctx.Err())
		}
		var pe *ProviderError
		if !errors.As(err, &pe) || !pe.Temporary() {
			return err
		}
		if n >= r.max {
			return fmt.Errorf("llm: giving up after %d attempts: %w", n+1, err)
		}
		if err := r.sleep(ctx, r.backoff(n, pe.RetryAfter)); err != nil {
			return fmt.Errorf("llm: %w", err)
		}
	}
}

// backoff is the wait before retry number attempt+1.
func (r retrier) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, maxRetryAfter)
	}
	d := backoffCap
	if attempt < 10 {
		d = min(backoffBase<<attempt, backoffCap)
	}
	return r.jitter(d)
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

// providerError classifies a failed go-openai attempt.
func providerError(info *responseInfo, err error) *ProviderError {
	status := info.status
	if status >= 200 && status < 300 && transient(err) {
		status = 0 // the body was cut off: as good as no answer
	}
	pe := &ProviderError{Status: status, Err: err}
	if info.header != nil {
		pe.RetryAfter = retryAfter(info.header, time.Now())
	}
	return pe
}

// transient reports whether err is a broken or timed-out connection.
func transient(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne)
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
