package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAfterFirstWrite: the function runs once, after the first write has
// reached the writer.
func TestAfterFirstWrite(t *testing.T) {
	var out bytes.Buffer
	var calls int
	var seen string
	w := &afterFirstWrite{w: &out, fn: func() { calls++; seen = out.String() }}
	for _, line := range []string{"{\"id\":1}\n", "{\"id\":2}\n"} {
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 || seen != "{\"id\":1}\n" {
		t.Errorf("fn ran %d times, first after %q; want once, after the first line", calls, seen)
	}
}

// TestServeRefusesAnUnopenableIndex: the embedded index opens while the
// tools are declared, and a server that cannot open it still refuses to
// start, with the reason, before it answers anything.
func TestServeRefusesAnUnopenableIndex(t *testing.T) {
	vault, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(vault, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(state, "index.db"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--vault", vault, "--state", state)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil || !strings.Contains(stderr.String(), "opening the text index") {
		t.Fatalf("serve with a folder for index.db: %v\nstderr: %s", err, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("it answered before refusing: %s", stdout.String())
	}
}
