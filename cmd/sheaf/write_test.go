package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// run runs sheaf with args (stdin from input), returning stdout and the
// error with stderr in it.
func run(t *testing.T, input string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(input)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, stderr.String())
	}
	return string(out), nil
}

func TestWriteCommands(t *testing.T) {
	vault := sampleVault(t)
	out, err := run(t, "# From the shell\n\nquasar\n", "write", vault, "Inbox/Shell.md")
	if err != nil || !strings.Contains(out, "created Inbox/Shell.md") {
		t.Fatalf("write: %v\n%s", err, out)
	}
	if _, err := run(t, "x", "write", vault, "Inbox/Shell.md"); err == nil || !strings.Contains(err.Error(), "note-exists") {
		t.Errorf("write over an existing note: %v", err)
	}
	out, err = run(t, "x", "write", "--json", "--vault", vault, "Inbox/Shell.md")
	var te map[string]any
	if err == nil || json.Unmarshal([]byte(out), &te) != nil || te["kind"] != "note-exists" || te["current_hash"] == nil {
		t.Errorf("write --json over an existing note: %v %s", err, out)
	}
	if _, err := run(t, "y", "write", "--mode", "overwrite", vault, "Inbox/Shell.md"); err == nil || !strings.Contains(err.Error(), "args-invalid") {
		t.Errorf("overwrite without a hash: %v", err)
	}
	if _, err := run(t, "# Replaced\n", "write", "--mode", "overwrite", "--force", vault, "Inbox/Shell.md"); err != nil {
		t.Errorf("overwrite --force: %v", err)
	}
	for range 2 {
		if _, err := run(t, "once", "write", "--mode", "append", "--key", "k1", vault, "Inbox/Shell.md"); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "Inbox/Shell.md")); string(b) != "# Replaced\nonce" {
		t.Errorf("after the appends: %q", b)
	}
	file := filepath.Join(t.TempDir(), "in.md")
	os.WriteFile(file, []byte("from a file\n"), 0o644)
	if _, err := run(t, "", "write", vault, "Inbox/From file.md", file); err != nil {
		t.Errorf("write FILE: %v", err)
	}

	out, err = run(t, "", "mv", "--dry-run", vault, "Projects/Garden/Compost.md", "Archive/Heap.md")
	if err != nil || !strings.Contains(out, "would move") || !strings.Contains(out, "[[Compost]]  ->  [[Heap]]") {
		t.Errorf("mv --dry-run: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(vault, "Archive/Heap.md")); err == nil {
		t.Error("mv --dry-run moved the note")
	}
	out, err = run(t, "", "mv", vault, "Projects/Garden/Compost.md", "Archive/Heap.md")
	if err != nil || !strings.Contains(out, "moved Projects/Garden/Compost.md -> Archive/Heap.md") {
		t.Fatalf("mv: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "Link zoo.md")); !strings.Contains(string(b), "- Plain: [[Heap]]") {
		t.Errorf("mv did not rewrite the links:\n%s", b)
	}
	if _, err := run(t, "", "rm", vault, "Archive/Heap.md"); err == nil || !strings.Contains(err.Error(), "--yes") {
		t.Errorf("rm without --yes: %v", err)
	}
	out, err = run(t, "", "rm", "--yes", "--json", vault, "Archive/Heap.md")
	var del struct {
		TrashPath string `json:"trash_path"`
	}
	if err != nil || json.Unmarshal([]byte(out), &del) != nil || !strings.HasPrefix(del.TrashPath, ".sheaf/trash/") {
		t.Fatalf("rm --yes: %v\n%s", err, out)
	}
	if out, err := run(t, "", "restore", vault, del.TrashPath); err != nil || !strings.Contains(out, "restored Archive/Heap.md") {
		t.Errorf("restore: %v\n%s", err, out)
	}
	log, _ := os.ReadFile(filepath.Join(vault, "log.md"))
	for _, op := range []string{"write: Inbox/Shell.md (create)", "move: Projects/Garden/Compost.md -> Archive/Heap.md", "delete: Archive/Heap.md", "restore: Archive/Heap.md"} {
		if !strings.Contains(string(log), op) {
			t.Errorf("log.md lacks %q:\n%s", op, log)
		}
	}
}

// writersEach is how many read-modify-write appends each concurrent writer
// makes: the 200 with SHEAF_TEST_FULL_WRITERS=1, fewer otherwise.
func writersEach() int {
	if os.Getenv("SHEAF_TEST_FULL_WRITERS") != "" {
		return 200
	}
	return 25
}

// rmwAppends has one MCP session make n read-modify-write appends to note:
// read_note, then write_note overwrite with its content_hash, again on
// proposal-stale. It returns how many conflicts it retried.
func rmwAppends(t *testing.T, s *mcp.ClientSession, writer, n int, note string) (int, error) {
	conflicts := 0
	for i := range n {
		line := fmt.Sprintf("writer %d line %d", writer, i)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_note", Arguments: map[string]any{"path": note}})
			cancel()
			if err != nil || res.IsError {
				return conflicts, fmt.Errorf("read_note: %v %v", err, res)
			}
			var rn struct {
				Content     string `json:"content"`
				ContentHash string `json:"content_hash"`
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(raw, &rn); err != nil {
				return conflicts, err
			}
			ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
			res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{
				"path": note, "mode": "overwrite", "content": rn.Content + line + "\n", "expected_hash": rn.ContentHash}})
			cancel()
			if err != nil {
				return conflicts, err
			}
			if !res.IsError {
				break
			}
			if kind, _ := res.Meta["sheaf/error"].(map[string]any)["kind"].(string); kind != "proposal-stale" {
				return conflicts, fmt.Errorf("write_note: %v", res.Meta)
			}
			conflicts++
		}
	}
	return conflicts, nil
}

// checkLines checks that note holds writers x each distinct lines.
func checkLines(t *testing.T, content string, writers, each int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Errorf("line %q landed twice", l)
		}
		seen[l] = true
	}
	for w := range writers {
		for i := range each {
			if !seen[fmt.Sprintf("writer %d line %d", w, i)] {
				t.Errorf("writer %d line %d was lost", w, i)
			}
		}
	}
	if len(lines) != writers*each {
		t.Errorf("%d lines, want %d", len(lines), writers*each)
	}
}

// concurrentWriters runs 8 writers, each over its own session, and reports
// the conflict rate and throughput.
func concurrentWriters(t *testing.T, sessions []*mcp.ClientSession, note string) {
	t.Helper()
	each := writersEach()
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w, s := range sessions {
		wg.Go(func() {
			n, err := rmwAppends(t, s, w, each, note)
			conflicts.Add(int64(n))
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	total := len(sessions) * each
	t.Logf("%d writers x %d read-modify-write appends: %d conflicts retried (%.2f per write), %.0f writes/s, %v",
		len(sessions), each, conflicts.Load(), float64(conflicts.Load())/float64(total), float64(total)/el.Seconds(), el.Round(time.Millisecond))
}

// TestConcurrentWriterProcesses: eight `sheaf serve` processes on one
// vault folder, each driven by its own MCP client; every append lands once.
func TestConcurrentWriterProcesses(t *testing.T) {
	vault := sampleVault(t)
	os.WriteFile(filepath.Join(vault, "Counter.md"), nil, 0o644)
	var sessions []*mcp.ClientSession
	for range 8 {
		sessions = append(sessions, stdioSession(t, vault, "--no-watch"))
	}
	concurrentWriters(t, sessions, "Counter.md")
	b, _ := os.ReadFile(filepath.Join(vault, "Counter.md"))
	checkLines(t, string(b), 8, writersEach())
}

// TestConcurrentWritersHTTP: eight sessions of one server over HTTP
// (goroutines in one process).
func TestConcurrentWritersHTTP(t *testing.T) {
	vault := sampleVault(t)
	os.WriteFile(filepath.Join(vault, "Counter.md"), nil, 0o644)
	endpoint := httpServer(t, vault)
	var sessions []*mcp.ClientSession
	for range 8 {
		sessions = append(sessions, httpSession(t, endpoint))
	}
	concurrentWriters(t, sessions, "Counter.md")
	b, _ := os.ReadFile(filepath.Join(vault, "Counter.md"))
	checkLines(t, string(b), 8, writersEach())
}

// TestConcurrentWriterProcessesS3: eight `sheaf serve --vault s3://...`
// processes over versitygw: S3 conditional writes keep every append.
func TestConcurrentWriterProcessesS3(t *testing.T) {
	v := sampleCloudVault(t)
	v.put(t, "Counter.md", "")
	var sessions []*mcp.ClientSession
	for range 8 {
		sessions = append(sessions, cloudStdioSession(t, v))
	}
	concurrentWriters(t, sessions, "Counter.md")
	data := v.s3.Get(t, "vault", "notes/Counter.md")
	checkLines(t, string(data), 8, writersEach())
}

// TestServeRefusesCaseTwin: `sheaf serve` holds the catalog in memory, so
// write_note refuses a note whose path differs from another's only in case
// (the core test covers the rule; this one that the server's catalog is
// the resident one it needs).
func TestServeRefusesCaseTwin(t *testing.T) {
	vault := t.TempDir()
	if err := os.WriteFile(filepath.Join(vault, "Alpha.md"), []byte("# Alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := toolstest.NewClient(t, stdioSession(t, vault, "--no-watch"))
	c.WaitIndexed()
	c.MustFail("note-exists", "write_note", map[string]any{"path": "alpha.md", "content": "# twin\n"})
	if entries, _ := os.ReadDir(vault); len(entries) != 1 {
		t.Errorf("the vault holds %d entries, want Alpha.md alone", len(entries))
	}
}
