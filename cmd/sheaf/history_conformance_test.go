package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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

// TestMergeWriterProcesses: eight `sheaf serve` processes on one vault
// folder (one history folder, shared), each appending its lines by
// overwriting the note from the text it last wrote, never re-reading it
// first, with on_conflict merge: every line lands once.
func TestMergeWriterProcesses(t *testing.T) {
	vault := sampleVault(t)
	const note, writers, each = "Merged.md", 8, 10
	start := "# Merged\n\n"
	if err := os.WriteFile(filepath.Join(vault, note), []byte(start), 0o644); err != nil {
		t.Fatal(err)
	}
	var sessions []*toolstest.Client
	for range writers {
		sessions = append(sessions, toolstest.NewClient(t, stdioSession(t, vault, "--no-watch")))
	}
	var merged atomic.Int64
	var wg sync.WaitGroup
	for w, c := range sessions {
		wg.Go(func() {
			var n struct {
				Content     string `json:"content"`
				ContentHash string `json:"content_hash"`
			}
			c.MustOK("read_note", map[string]any{"path": note}, &n)
			text, hash := n.Content, n.ContentHash
			for i := range each {
				next := text + fmt.Sprintf("writer %d line %d\n", w, i)
				var out struct {
					ContentHash string `json:"content_hash"`
					Merged      bool   `json:"merged"`
				}
				if r := c.Call("write_note", map[string]any{"path": note, "mode": "overwrite", "content": next, "expected_hash": hash, "on_conflict": "merge"}, &out); r.IsError {
					t.Errorf("writer %d line %d: %s %s", w, i, r.Kind, r.Message)
					return
				}
				text, hash = next, out.ContentHash
				if out.Merged { // the merge is not our text: read it
					merged.Add(1)
					c.MustOK("read_note", map[string]any{"path": note}, &n)
					text, hash = n.Content, n.ContentHash
				}
			}
		})
	}
	wg.Wait()
	b, err := os.ReadFile(filepath.Join(vault, note))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimPrefix(string(b), start)
	checkLines(t, got, writers, each)
	t.Logf("%d writers x %d appends over %d processes: %d merged", writers, each, writers, merged.Load())
}
