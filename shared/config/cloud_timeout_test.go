package config

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// TestSearchBounded: a Meilisearch that accepts connections and never
// answers fails the tools' searches after the bound instead of hanging.
func TestSearchBounded(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "a")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "b")
	cl, err := OpenCloud(t.Context(), &Config{Vault: "s3://b/p?region=us-east-1", Search: testbin.Silent(t)}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	bt, ok := cl.Vault.Text.(boundedText)
	if !ok || bt.timeout != SearchTimeout {
		t.Fatalf("the tools' text index is %T, not bounded", cl.Vault.Text)
	}
	bt.timeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err = bt.Search(ctx, textindex.ParseQuery("alpha"), textindex.Options{})
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("Search against a silent server: %v (context %v)", err, ctx.Err())
	}
	if _, err := bt.Paths(ctx); err == nil || ctx.Err() != nil {
		t.Errorf("Paths against a silent server: %v (context %v)", err, ctx.Err())
	}
	// The caller's own cancellation is not blamed on the service.
	cctx, ccancel := context.WithCancel(t.Context())
	ccancel()
	if _, err := bt.Search(cctx, textindex.ParseQuery("alpha"), textindex.Options{}); err == nil || strings.Contains(err.Error(), "did not answer") {
		t.Errorf("cancelled search: %v", err)
	}
}
