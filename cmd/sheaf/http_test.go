package main

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func post(t *testing.T, url, token, origin, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestHTTPTokenOriginAndTopLevelKind(t *testing.T) {
	url := httpServer(t, sampleVault(t), "--token", "t0ken")
	resp, _ := post(t, url, "", "", initialize)
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp, _ := post(t, url, "wrong", "", initialize); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("bad token: %d", resp.StatusCode)
	}
	if resp, _ := post(t, url, "t0ken", "https://evil.example", initialize); resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: %d, want 403", resp.StatusCode)
	}
	if resp, body := post(t, url, "t0ken", "", initialize); resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize with the token: %d %s", resp.StatusCode, body)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"../etc/passwd"}}}`
	_, body := post(t, url, "t0ken", "", call)
	if !strings.Contains(body, `"kind":"path-invalid"`) || !strings.Contains(body, `"isError":true`) {
		t.Errorf("tool error without a top-level kind: %s", body)
	}
	// A protocol failure is a JSON-RPC error with a code.
	_, body = post(t, url, "t0ken", "", `{"jsonrpc":"2.0","id":3,"method":"no/such"}`)
	if !strings.Contains(body, `"code":-32601`) {
		t.Errorf("unknown method: %s", body)
	}
}

func TestServeRefusesOpenBindWithoutToken(t *testing.T) {
	out, err := exec.Command(bin, "serve", "--vault", sampleVault(t), "--http", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "without credentials") {
		t.Errorf("serve on 0.0.0.0 without a token: err %v, %s", err, out)
	}
}

func TestCoreProfile(t *testing.T) {
	c := toolstest.NewClient(t, stdioSession(t, sampleVault(t), "--profile", "core"))
	res, err := c.S.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Tools); n == 0 || n > 12 {
		t.Errorf("core profile lists %d tools", n)
	}
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestCursorBoundToCaller: a search_and_read cursor issued to one caller (a
// token over HTTP) is refused for another (stdio, the local caller), even
// by a server of the same vault, which shares the signing key.
func TestCursorBoundToCaller(t *testing.T) {
	vault := sampleVault(t)
	url := httpServer(t, vault, "--token", "caller-a-token")
	a := toolstest.NewClient(t, connect(t, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{"caller-a-token"}}}))
	a.WaitIndexed()
	args := map[string]any{"query": "soil", "k": 20, "max_bytes_per_item": 1 << 20, "response_format": "concise"}
	var page struct {
		NextCursor *string `json:"next_cursor"`
	}
	a.MustOK("search_and_read", args, &page)
	if page.NextCursor == nil {
		t.Fatal("no next_cursor: the test needs a query with more than one page")
	}
	args["cursor"] = *page.NextCursor
	a.MustOK("search_and_read", args, nil) // the same caller may use it

	b := toolstest.NewClient(t, stdioSession(t, vault))
	b.WaitIndexed()
	r := b.MustFail("args-invalid", "search_and_read", args)
	if !strings.Contains(r.Message, "caller") && !strings.Contains(r.Message, "arguments") {
		t.Errorf("another caller's cursor: %q should say it was issued to someone else", r.Message)
	}
}
