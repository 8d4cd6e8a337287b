package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// sheafCmd runs the binary and returns its stdout, failing the test on error.
func sheafCmd(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("sheaf %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestKeysCommandAndServe: keys made with `sheaf keys` are what `sheaf
// serve --http` accepts, a revoked one stops working without a restart, and
// every refusal is the same 401.
func TestKeysCommandAndServe(t *testing.T) {
	vault := sampleVault(t)
	reader := strings.TrimSpace(sheafCmd(t, "keys", "add", "reader", "--vault", vault))
	writer := strings.TrimSpace(sheafCmd(t, "keys", "add", "writer", "--vault", vault, "--scopes", "write", "--folder", "Projects/**", "--expires", "30d"))
	short := strings.TrimSpace(sheafCmd(t, "keys", "add", "short", "--vault", vault, "--expires", "2s"))
	for _, k := range []string{reader, writer, short} {
		if !strings.HasPrefix(k, "sheaf_") || strings.Contains(k, "\n") {
			t.Fatalf("keys add printed %q, want just the key", k)
		}
	}
	var listed []struct {
		ID, Name, Hash string
		Scopes         []string
		Folders        []string
	}
	if err := json.Unmarshal([]byte(sheafCmd(t, "keys", "list", "--vault", vault, "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 3 || listed[1].Name != "writer" || listed[1].Folders[0] != "Projects/**" || listed[0].Hash != "" {
		t.Errorf("keys list --json = %+v", listed)
	}
	table := sheafCmd(t, "keys", "list", "--vault", vault)
	for _, k := range []string{reader, writer} {
		secret := strings.SplitN(k, "_", 3)[2] // base64url: may itself hold "_"
		if strings.Contains(table, secret) {
			t.Error("keys list shows a secret")
		}
	}

	// Loopback, no --token: the keys file makes keys required.
	url := httpServer(t, vault)
	for name, tok := range map[string]string{"none": "", "garbage": "nope", "near miss": reader[:len(reader)-1] + "x"} {
		resp, _ := post(t, url, tok, "", initialize)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: %d %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	session := func(tok string) *toolstest.Client {
		return toolstest.NewClient(t, connect(t, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearer{tok}}}))
	}
	r := session(reader)
	r.WaitIndexed()
	r.MustOK("list_notes", map[string]any{}, nil)
	// A core-profile key lists and may call only the core tools.
	core := strings.TrimSpace(sheafCmd(t, "keys", "add", "core", "--vault", vault, "--profile", "core"))
	time.Sleep(1100 * time.Millisecond) // the server re-reads the keys file at most once a second
	c := session(core)
	tl, err := c.S.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tl.Tools); n == 0 || n > 12 {
		t.Errorf("a core key lists %d tools", n)
	}
	c.MustOK("read_note", map[string]any{"path": "Glossary.md"}, nil)
	// For it, the others are unsupported: a tool result, not a protocol
	// error.
	c.MustFail("unsupported", "lint", map[string]any{})

	// The expired key: refused once its time is up, with the same 401.
	time.Sleep(2 * time.Second)
	resp, body := post(t, url, short, "", initialize)
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(strings.ToLower(body), "expired") {
		t.Errorf("expired key: %d %s", resp.StatusCode, body)
	}

	// Revoked while the server runs: refused within the re-read interval.
	sheafCmd(t, "keys", "revoke", "reader", "--vault", vault)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body := post(t, url, reader, "", initialize)
		if resp.StatusCode == http.StatusUnauthorized {
			if strings.Contains(strings.ToLower(body), "revoked") {
				t.Errorf("the 401 says why: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoked key still accepted: %d", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if resp, _ := post(t, url, writer, "", initialize); resp.StatusCode != http.StatusOK {
		t.Errorf("the other key after a revocation: %d", resp.StatusCode)
	}
}

// TestKeysFileFlag: --keys names a file elsewhere; serve refuses a broken
// one at start.
func TestKeysFileFlag(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	k := strings.TrimSpace(sheafCmd(t, "keys", "add", "ci", "--keys", keys, "--scopes", "admin"))
	url := httpServer(t, sampleVault(t), "--keys", keys)
	if resp, body := post(t, url, k, "", initialize); resp.StatusCode != http.StatusOK {
		t.Errorf("key from --keys: %d %s", resp.StatusCode, body)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":1,"keys":[{"id":"x"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "serve", "--vault", sampleVault(t), "--http", "127.0.0.1:0", "--keys", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "keys file") {
		t.Errorf("a broken keys file: err %v, %s", err, out)
	}
}

// TestKeysFirstKeyWarns: the vault's first key says that HTTP servers of
// the vault now ask for a key; later ones do not repeat it.
func TestKeysFirstKeyWarns(t *testing.T) {
	vault := sampleVault(t)
	for i, want := range []bool{true, false} {
		cmd := exec.Command(bin, "keys", "add", fmt.Sprintf("k%d", i), "--vault", vault)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("keys add: %v\n%s", err, stderr.String())
		}
		if got := strings.Contains(stderr.String(), "first key"); got != want {
			t.Errorf("key %d: warned %v, want %v:\n%s", i, got, want, stderr.String())
		}
	}
}
