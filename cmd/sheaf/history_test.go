package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHistoryCommands(t *testing.T) {
	vault := sampleVault(t)
	note := "Inbox/Hist.md"
	if _, err := run(t, "one\n", "write", "--transaction", "t1", "--vault", vault, note); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "two\n", "write", "--mode", "overwrite", "--force", "--transaction", "t1", "--vault", vault, note); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "", "log", "--vault", vault, note)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 2 || !strings.Contains(lines[0], "  overwrite  ") || !strings.Contains(lines[0], "tool=sheaf write") ||
		!strings.Contains(lines[0], "tx=t1") || !strings.Contains(lines[0], "  local  ") || !strings.Contains(lines[1], "  write  ") {
		t.Fatalf("log: %v\n%s", err, out)
	}
	out, err = run(t, "", "log", "--json", "--vault", vault, note)
	var h struct {
		Versions []struct {
			ID string `json:"id"`
		} `json:"versions"`
	}
	if err != nil || json.Unmarshal([]byte(out), &h) != nil || len(h.Versions) != 2 {
		t.Fatalf("log --json: %v\n%s", err, out)
	}
	first := h.Versions[1].ID
	if out, err = run(t, "", "diff", "--vault", vault, note, first); err != nil || !strings.Contains(out, "-one\n+two\n") {
		t.Errorf("diff: %v\n%s", err, out)
	}
	if out, err = run(t, "", "restore", "--vault", vault, "--version", first, note); err != nil || !strings.Contains(out, "restored version "+first) {
		t.Fatalf("restore --version: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, note)); string(b) != "one\n" {
		t.Errorf("after restore: %q", b)
	}
	// The restore wrote since t1: undo refuses, naming the note.
	if out, err = run(t, "", "undo", "--vault", vault, "t1"); err == nil || !strings.Contains(out, "conflict  "+note) || !strings.Contains(err.Error(), "proposal-stale") {
		t.Errorf("undo after a later write: %v\n%s", err, out)
	}
	if _, err := run(t, "new\n", "write", "--transaction", "t2", "--vault", vault, "Inbox/Undone.md"); err != nil {
		t.Fatal(err)
	}
	if out, err = run(t, "", "undo", "--dry-run", "--vault", vault, "t2"); err != nil || !strings.Contains(out, "would revert  delete  Inbox/Undone.md") {
		t.Errorf("undo --dry-run: %v\n%s", err, out)
	}
	if out, err = run(t, "", "undo", "--vault", vault, "t2"); err != nil || !strings.Contains(out, "reverted  delete  Inbox/Undone.md") {
		t.Errorf("undo: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(vault, "Inbox/Undone.md")); !os.IsNotExist(err) {
		t.Errorf("Inbox/Undone.md after undo: %v", err)
	}
}
