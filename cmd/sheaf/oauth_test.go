package main

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth/oauth/oauthtest"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// freeAddr picks a loopback port for a server that must know its own URL
// before it starts (the OAuth audience).
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// oauthServe starts an authorization server and `sheaf serve --http` as
// its resource server. It returns both and the MCP URL.
func oauthServe(t *testing.T, vault string) (*oauthtest.Server, string) {
	as := oauthtest.New(t)
	addr := freeAddr(t)
	mcpURL := "http://" + addr + "/mcp"
	httpServerAt(t, vault, addr, "--oauth-issuer", as.URL, "--oauth-audience", mcpURL)
	return as, mcpURL
}

// TestOAuthResourceServer: protected resource metadata, the 401 that names
// it, tokens accepted for this audience only, and claims that narrow the
// caller, through the official Go SDK client.
func TestOAuthResourceServer(t *testing.T) {
	as, url := oauthServe(t, sampleVault(t))
	base := strings.TrimSuffix(url, "/mcp")

	resp, _ := post(t, url, "", "", initialize)
	want := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("no token: %d %q, want %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		err = json.NewDecoder(r.Body).Decode(&md)
		r.Body.Close()
		if err != nil || md.Resource != url || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != as.URL || len(md.ScopesSupported) != 3 {
			t.Errorf("%s: %+v %v", p, md, err)
		}
	}

	claims := func(extra jwt.MapClaims) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "alice", "aud": url, "scope": "sheaf:read"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	for name, tok := range map[string]string{
		"expired":          as.Issue(claims(jwt.MapClaims{"exp": 1})),
		"another audience": as.Issue(claims(jwt.MapClaims{"aud": "http://127.0.0.1:1/mcp"})),
		"unknown key":      as.IssueForeign(claims(nil), false),
	} {
		resp, body := post(t, url, tok, "", initialize)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) ||
			strings.Contains(body, "expired") || strings.Contains(body, "audience") {
			t.Errorf("%s: %d %q %s", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	c := toolstest.NewClient(t, connect(t, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{as.Issue(claims(nil))}}}))
	c.WaitIndexed()
	var info struct{ NoteCount int }
	c.MustOK("get_vault_info", map[string]any{}, &info)
	if info.NoteCount == 0 {
		t.Error("no notes through an OAuth session")
	}
}

// TestOAuthTypeScriptClient: the official TypeScript SDK discovers the
// metadata from the 401 and calls tools with the token it gets (client
// credentials, and authorization code with PKCE after dynamic
// registration).
func TestOAuthTypeScriptClient(t *testing.T) {
	as, url := oauthServe(t, sampleVault(t))
	as.RunTypeScriptClient(t, url)
}
