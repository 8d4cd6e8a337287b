package embed

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// A provider that never answers: the caller's cancel ends Embed at once,
// without a retry.
func TestCancelDuringHangingRequest(t *testing.T) {
	f, srv := newFakeOpenAI(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.script = func(int, http.ResponseWriter, embeddingRequest) bool {
		<-release
		return true
	}
	c, slept := newTestClient(t, Config{BaseURL: srv.URL, Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Embed returned %v after the deadline", d)
	}
	if len(*slept) != 0 || f.count() != 1 {
		t.Errorf("%d sleeps, %d requests after the caller gave up", len(*slept), f.count())
	}
}
