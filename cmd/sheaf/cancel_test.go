package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancelKeepsSessionHTTP: the official Go SDK client cancels a long
// await_directives (its context ends: it aborts the POST and sends
// notifications/cancelled), then calls again on the same session, which
// must still work; the server must have stopped the cancelled call.
func TestCancelKeepsSessionHTTP(t *testing.T) {
	endpoint := httpServer(t, sampleVault(t))
	s := httpSession(t, endpoint)
	for round := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "await_directives", Arguments: map[string]any{"cursor": 1, "timeout_ms": 20000}})
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: a cancelled await_directives returned %v", round, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("round %d: the cancelled call took %v to return", round, took)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_vault_info", Arguments: map[string]any{}})
		cancel()
		if err != nil || res.IsError {
			t.Fatalf("round %d: the next call on the same session failed: %v %+v", round, err, res)
		}
	}
}
