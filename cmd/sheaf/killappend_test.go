package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestKillBetweenAppendAndRecord: a real sheaf serve is killed (SIGKILL)
// after an idempotent append wrote the note and before it recorded the
// key as done (SHEAF_TEST_HANG_AFTER_APPEND holds it there); a person then
// edits the note above and below the text; a new process gets the retry
// with the same key: the text is in the note exactly once, and the retry
// says it replayed the first call.
func TestKillBetweenAppendAndRecord(t *testing.T) {
	root := filepath.Join(t.TempDir(), "v")
	writeFile(t, root, "Garden.md", "# Garden\n\nBeds one to four get compost in March.\n")
	marker := filepath.Join(t.TempDir(), "landed")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--vault", root, "--http", addr, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "SHEAF_TEST_HANG_AFTER_APPEND="+marker)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not come up")
		}
	}
	const text = "- [ ] water the tomatoes (appended once)"
	args := map[string]any{"path": "Garden.md", "content": text, "mode": "append", "idempotency_key": "kill-9"}
	s := httpSession(t, "http://"+addr+"/mcp")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = s.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: args}) }()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the append never reached the point between its note write and its record")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	cancel()
	note := filepath.Join(root, "Garden.md")
	got, err := os.ReadFile(note)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(got), text); n != 1 {
		t.Fatalf("after kill -9 the note holds the text %d times:\n%s", n, got)
	}
	// A person edits the note between the crash and the retry.
	edited := "Pinned: read me first.\n\n" + strings.Replace(string(got), "Beds", "Raised beds", 1) + "\n- [ ] and the beans\n"
	if err := os.WriteFile(note, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := httpSession(t, httpServer(t, root))
	for try := range 2 {
		var out struct {
			Replayed bool `json:"replayed"`
		}
		callJSON(t, s2, "write_note", args, &out)
		got, err := os.ReadFile(note)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(got), text); n != 1 || !out.Replayed {
			t.Errorf("retry %d in a new process: the text is in the note %d times (replayed %v):\n%s", try+1, n, out.Replayed, got)
		}
		if !strings.Contains(string(got), "and the beans") || !strings.HasPrefix(string(got), "Pinned") {
			t.Errorf("retry %d lost the person's edit:\n%s", try+1, got)
		}
	}
}
