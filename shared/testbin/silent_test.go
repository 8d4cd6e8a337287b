package testbin

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestSilent: a request to the silent server waits until its own deadline,
// and the server is gone once the test that started it ends.
func TestSilent(t *testing.T) {
	var url string
	t.Run("server", func(t *testing.T) {
		url = Silent(t)
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("the silent server answered %s", resp.Status)
		}
		if ctx.Err() == nil {
			t.Errorf("the request failed after %v before its deadline", time.Since(start))
		}
	})
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("%s still accepts requests after the test ended", url)
	}
}
