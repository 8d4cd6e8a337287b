package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSigtermMidMoveCompletes: `sheaf serve --http` told to stop (SIGTERM)
// while a move is rewriting the notes that link to the moved note waits
// for it: no link is left pointing at the old name.
func TestSigtermMidMoveCompletes(t *testing.T) {
	vault := t.TempDir()
	const n = 300
	put := func(name, body string) {
		if err := os.WriteFile(filepath.Join(vault, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("Hub.md", "# Hub\n")
	for i := range n {
		put(fmt.Sprintf("L%03d.md", i), fmt.Sprintf("# Linker %d\n\nSee [[Hub]] and [the hub](Hub.md).\n", i))
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve", "--vault", vault, "--http", addr, "--log-level", "warn", "--no-watch")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	s := httpSession(t, waitHealthy(t, addr))
	go func() {
		_, _ = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "move_note",
			Arguments: map[string]any{"path": "Hub.md", "new_path": "Moved Hub.md"}})
	}()
	// Stop the server once the move has begun writing: the new note is
	// there, the links not yet all rewritten.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(vault, "Moved Hub.md")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the move did not begin")
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(shutdownWait + 10*time.Second):
		t.Fatal("the server did not stop")
	}
	if _, err := os.Stat(filepath.Join(vault, "Hub.md")); err == nil {
		t.Error("Hub.md is still there beside Moved Hub.md")
	}
	left := 0
	for i := range n {
		data, err := os.ReadFile(filepath.Join(vault, fmt.Sprintf("L%03d.md", i)))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "[[Hub]]") || strings.Contains(string(data), "(Hub.md)") {
			left++
		}
	}
	if left > 0 {
		t.Errorf("%d of %d notes still link to Hub after the server stopped mid-move", left, n)
	}
}
