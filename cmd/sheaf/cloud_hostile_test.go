package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/testbin"
)

// callKind calls a tool and returns the kind of its error result ("" on
// success); the call must come back within the deadline.
func callKind(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (kind, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	start := time.Now()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v (after %v)", tool, err, time.Since(start))
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if !res.IsError {
		return "", text
	}
	if m, ok := res.Meta["sheaf/error"].(map[string]any); ok {
		kind, _ = m["kind"].(string)
	}
	if kind == "" {
		t.Fatalf("%s: error result without a kind: %s", tool, text)
	}
	return kind, text
}

func cloudServe(t *testing.T, v *cloudVault, bucket string) *mcp.ClientSession {
	cmd := exec.Command(bin, "serve", "--vault", v.s3.URL(bucket, "notes"), "--search", v.meili.URL, "--log-level", "error")
	cmd.Env = append(os.Environ(), v.s3.Env()...)
	return connect(t, &mcp.CommandTransport{Command: cmd})
}

// TestServeCloudHostile: a missing bucket, a fresh deployment with no
// snapshot, and Meilisearch down give tool results with a stable kind,
// promptly, never a hang or a crash.
func TestServeCloudHostile(t *testing.T) {
	v := newCloudVault(t, "")
	v.put(t, "a.md", "# A\nalpha")

	t.Run("fresh deployment", func(t *testing.T) {
		s := cloudServe(t, v, "vault")
		if kind, text := callKind(t, s, "list_notes", map[string]any{}); kind != "" {
			t.Errorf("list_notes: %s %s", kind, text)
		}
		if kind, text := callKind(t, s, "read_note", map[string]any{"path": "a.md"}); kind != "" || !strings.Contains(text, "alpha") {
			t.Errorf("read_note: %s %s", kind, text)
		}
	})
	t.Run("no bucket", func(t *testing.T) {
		s := cloudServe(t, v, "no-such-bucket")
		for tool, args := range map[string]map[string]any{
			"list_notes": {}, "read_note": {"path": "a.md"}, "search": {"query": "alpha"},
		} {
			kind, text := callKind(t, s, tool, args)
			if kind == "" || !strings.Contains(text, "no-such-bucket") {
				t.Errorf("%s: kind %q: %.300s", tool, kind, text)
			}
		}
	})
	t.Run("search down", func(t *testing.T) {
		s := cloudServe(t, v, "vault")
		v.meili.Close()
		kind, text := callKind(t, s, "search", map[string]any{"query": "alpha"})
		if kind == "" {
			t.Errorf("search with Meilisearch down: %.300s", text)
		}
		t.Logf("search down: %s: %.200s", kind, text)
	})
}

// TestServeCloudHangingServices: an S3 endpoint that accepts connections
// and never answers fails tool calls with a kind, within the timeout and
// the SDK's retries.
func TestServeCloudHangingServices(t *testing.T) {
	v := newCloudVault(t, "")
	v.put(t, "a.md", "# A\nalpha")
	hang := testbin.Silent(t)
	for name, tc := range map[string]struct {
		vault, search, tool string
		args                map[string]any
	}{
		// (A silent Meilisearch is bounded by config.SearchTimeout, see
		// shared/config.)
		"s3 hangs, read":   {"s3://vault/notes?endpoint=" + hang + "&path_style=true&region=us-east-1&timeout=300ms", v.meili.URL, "read_note", map[string]any{"path": "a.md"}},
		"s3 hangs, search": {"s3://vault/notes?endpoint=" + hang + "&path_style=true&region=us-east-1&timeout=300ms", v.meili.URL, "search", map[string]any{"query": "alpha"}},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, "serve", "--vault", tc.vault, "--search", tc.search, "--log-level", "error")
			cmd.Env = append(os.Environ(), v.s3.Env()...)
			s := connect(t, &mcp.CommandTransport{Command: cmd})
			start := time.Now()
			kind, text := callKind(t, s, tc.tool, tc.args)
			if kind == "" {
				t.Errorf("%s succeeded against a silent server: %.200s", tc.tool, text)
			}
			t.Logf("%s after %v: %s %.200s", tc.tool, time.Since(start), kind, text)
		})
	}
}
