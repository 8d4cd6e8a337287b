package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rpcCodeCases are resources/read and prompts/get requests and the
// JSON-RPC code each answers (0: a result), on the sample vault.
var rpcCodeCases = []struct {
	name, method, params string
	code                 int
}{
	{"a note", "resources/read", `{"uri":"sheaf://sample-vault/Glossary.md"}`, 0},
	{"a missing note", "resources/read", `{"uri":"sheaf://sample-vault/No%20such.md"}`, -32002},
	{"Sheaf's own files", "resources/read", `{"uri":"sheaf://sample-vault/.sheaf/keys.json"}`, -32002},
	{"an unknown vault", "resources/read", `{"uri":"sheaf://other/Glossary.md"}`, -32002},
	// URIs the template does not match: mcp-go answers not found.
	{"another scheme", "resources/read", `{"uri":"file:///etc/passwd"}`, -32002},
	{"a bad escape", "resources/read", `{"uri":"sheaf://sample-vault/a%zz.md"}`, -32002},
	{"no path", "resources/read", `{"uri":"sheaf://sample-vault"}`, -32002},
	// A note URI whose path is not a vault path: invalid params.
	{"a dot-dot path", "resources/read", `{"uri":"sheaf://sample-vault/Projects/../../x.md"}`, -32602},
	{"an encoded dot-dot", "resources/read", `{"uri":"sheaf://sample-vault/Projects/%2E%2E/%2E%2E/x.md"}`, -32602},
	{"a prompt", "prompts/get", `{"name":"capture_source","arguments":{"url":"https://example.com/"}}`, 0},
	{"a prompt without its argument", "prompts/get", `{"name":"capture_source"}`, -32602},
}

// checkRPCCode checks one raw answer: the code (or a result), and no
// marker, server path or Go error text in it.
func checkRPCCode(t *testing.T, where, name, raw string, code int) {
	t.Helper()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Errorf("%s %s: not JSON-RPC: %q", where, name, raw)
		return
	}
	switch {
	case code == 0 && (r.Error != nil || r.Result == nil):
		t.Errorf("%s %s: %s, want a result", where, name, raw)
	case code != 0 && (r.Error == nil || r.Error.Code != code):
		t.Errorf("%s %s: %s, want error %d", where, name, raw, code)
	}
	for _, bad := range []string{`\u001f`, "sheaf-rpc", os.TempDir(), "request error"} {
		if strings.Contains(raw, bad) {
			t.Errorf("%s %s: %q on the wire: %s", where, name, bad, raw)
		}
	}
}

// TestRPCCodesHTTP: each code of resources/read and prompts/get over
// HTTP; a client of protocol 2026-07-28 gets -32602 for a resource not
// found, as that revision says.
func TestRPCCodesHTTP(t *testing.T) {
	endpoint := httpServer(t, sampleVault(t))
	post := func(body, version string) string {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		s := strings.TrimSpace(string(data))
		if d, ok := strings.CutPrefix(s[strings.LastIndex(s, "\n")+1:], "data: "); ok {
			s = d // an SSE answer: its one event
		}
		return s
	}
	for i, c := range rpcCodeCases {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, c.method, c.params)
		checkRPCCode(t, "http", c.name, post(body, ""), c.code)
	}
	modern := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"sheaf://sample-vault/No%20such.md","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	checkRPCCode(t, "http 2026-07-28", "a missing note", post(modern, "2026-07-28"), -32602)
}

// TestRPCCodesStdio: the same over stdio, one line at a time.
func TestRPCCodesStdio(t *testing.T) {
	cmd := exec.Command(bin, "serve", "--vault", sampleVault(t), "--log-level", "warn")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 8<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	call := func(body string) string {
		if _, err := io.WriteString(stdin, body+"\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case l := <-lines:
			return l
		case <-time.After(30 * time.Second):
			t.Fatal("no answer on stdio")
		}
		return ""
	}
	call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	for i, c := range rpcCodeCases {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, c.method, c.params)
		checkRPCCode(t, "stdio", c.name, call(body), c.code)
	}
}
