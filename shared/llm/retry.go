package llm

import (
	"time"

	"github.com/sheaf-dev/sheaf/shared/internal/provider"
)

// newRetrier returns the retrier for Config.MaxRetries: 0 means
// DefaultMaxRetries, negative means never retry. Its Sleep and Jitter are
// seams for tests.
func newRetrier(maxRetries int) provider.Retrier {
	if maxRetries == 0 {
		maxRetries = DefaultMaxRetries
	}
	return provider.NewRetrier("llm", maxRetries, func(e *ProviderError) time.Duration { return e.RetryAfter })
}

// providerError classifies a failed go-openai attempt made under the
// context resp came from.
func providerError(resp *provider.Response, err error) *ProviderError {
	status, retryAfter := resp.Failure(err, time.Now())
	return &ProviderError{Status: status, RetryAfter: retryAfter, Err: err}
}
