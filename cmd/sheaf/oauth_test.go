package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth/oauth/oauthtest"
	"github.com/sheaf-dev/sheaf/shared/auth/oauthserver/oauthservertest"
	"github.com/sheaf-dev/sheaf/shared/testbin"
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

// TestOAuthBuiltin: `sheaf serve --oauth-builtin` is its own authorization
// server. The official TypeScript SDK registers (and, in a second run,
// uses a client ID metadata document), the test submits the consent form
// with the owner key `sheaf keys add --owner` printed, choosing read
// access to Projects/, and the SDK's session then sees that folder only;
// it refreshes, revokes, and gets a 401 naming the resource metadata.
func TestOAuthBuiltin(t *testing.T) {
	vault := sampleVault(t)
	out, err := exec.Command(bin, "keys", "add", "me", "--owner", "--vault", vault).Output()
	if err != nil {
		t.Fatalf("keys add --owner: %v", err)
	}
	owner := strings.TrimSpace(string(out))
	doc, ca := oauthservertest.MetadataDocument(t)
	t.Setenv("SSL_CERT_FILE", ca) // the server trusts the metadata document's host
	addr := freeAddr(t)
	url := httpServerAt(t, vault, addr, "--oauth-builtin", "--oauth-private-client-hosts", "127.0.0.1")
	base := strings.TrimSuffix(url, "/mcp")
	resp, _ := post(t, url, "", "", initialize)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	md, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var prm struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	_ = json.NewDecoder(md.Body).Decode(&prm)
	md.Body.Close()
	if len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != base {
		t.Errorf("protected resource metadata names %v, want %s", prm.AuthorizationServers, base)
	}
	// The owner key is no API key.
	if resp, _ := post(t, url, owner, "", initialize); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the owner key as a bearer credential: %d", resp.StatusCode)
	}
	oauthservertest.RunTypeScriptClient(t, oauthservertest.Run{MCPURL: url, OwnerKey: owner, Folder: "Projects", CIMDURL: doc})
}

// TestOAuthBuiltinRefuses: the built-in server needs its audience beyond
// loopback, and is no second issuer.
func TestOAuthBuiltinRefuses(t *testing.T) {
	vault := sampleVault(t)
	for name, args := range map[string][]string{
		"with an issuer":  {"--oauth-builtin", "--oauth-issuer", "https://a.example.com/"},
		"wide, no url":    {"--oauth-builtin", "--http", "0.0.0.0:0"},
		"http audience":   {"--oauth-builtin", "--oauth-audience", "http://notes.example.com/mcp"},
		"keys none":       {"--oauth-builtin", "--keys", "none"},
		"audience w/ tok": {"--oauth-builtin", "--oauth-audience", "https://notes.example.com/mcp?x=1"},
	} {
		a := append([]string{"serve", "--vault", vault, "--http", "127.0.0.1:0"}, args...)
		cmd := exec.Command(bin, a...)
		done := make(chan error, 1)
		var buf testbin.Output
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: exited without an error:\n%s", name, buf.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%s: started:\n%s", name, buf.String())
		}
	}
}
