package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// historySession serves vault over HTTP and connects the official Go SDK
// client with a write key named historian: every version it writes is
// that key's.
func historySession(t *testing.T, vault string, extra ...string) *toolstest.Client {
	key := strings.TrimSpace(sheafCmd(t, "keys", "add", "historian", "--vault", vault, "--scopes", "write"))
	url := httpServer(t, vault, extra...)
	c := toolstest.NewClient(t, connect(t, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{key}, Timeout: 60 * time.Second}}))
	c.WaitIndexed()
	return c
}

// TestHistoryConformanceFolder: the history tools on a folder vault (the
// versions in the state folder), through `sheaf serve --http`.
func TestHistoryConformanceFolder(t *testing.T) {
	c := historySession(t, sampleVault(t))
	toolstest.RunHistory(t, c, "key:", "historian")
}

// TestHistoryConformanceS3: the same on an S3 vault whose bucket keeps
// versions (versitygw with versioning), the history being the bucket's
// object versions.
func TestHistoryConformanceS3(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{Versioning: true})
	srv.CreateBucket(t, "vault")
	srv.EnableVersioning(t, "vault")
	v := &cloudVault{s3: srv, meili: meilifake.New(t)}
	v.put(t, "Start.md", "# Start\n")
	if out, err := v.command().CombinedOutput(); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	for _, kv := range v.s3.Env() {
		k, val, _ := strings.Cut(kv, "=")
		t.Setenv(k, val)
	}
	c := historySession(t, v.s3.URL("vault", "notes"), "--search", v.meili.URL)
	toolstest.RunHistory(t, c, "key:", "historian")
}
