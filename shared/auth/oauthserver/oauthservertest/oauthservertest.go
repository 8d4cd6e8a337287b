// Package oauthservertest helps test a server running the built-in
// authorization server (sheaf serve --oauth-builtin, the MCP function with
// SHEAF_OAUTH_BUILTIN): an owner key, a client ID metadata document served
// over TLS on 127.0.0.1, and the official TypeScript SDK's whole OAuth
// dance against it (infra/smoke/oauth-builtin.mjs).
package oauthservertest

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/testbin"
)

// Redirect is the redirect URI the TypeScript client registers: claude.ai's.
const Redirect = "https://claude.ai/api/mcp/auth_callback"

// OwnerKeyFile returns a keys file holding one owner key, and the key.
func OwnerKeyFile(t testing.TB) ([]byte, string) {
	t.Helper()
	kf := &auth.KeyFile{}
	key, _, err := kf.Add(auth.NewKeyOptions{Name: "owner", Scopes: []auth.Scope{auth.ScopeAdmin}, Owner: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return kf.Marshal(), key
}

// MetadataDocument serves a client ID metadata document for a public
// client redirecting to Redirect, over TLS on 127.0.0.1, until the test
// ends. It returns the document's URL (the client id) and a PEM file of
// the server's certificate, for the server under test to trust
// (SSL_CERT_FILE); that server must also allow 127.0.0.1 as a private
// client host.
func MetadataDocument(t testing.TB) (string, string) {
	t.Helper()
	var docURL string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sheaf-smoke/client.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": "sheaf smoke (metadata document)", "redirect_uris": []string{Redirect},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
			"token_endpoint_auth_method": "none",
		})
	}))
	t.Cleanup(srv.Close)
	docURL = srv.URL + "/sheaf-smoke/client.json"
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return docURL, ca
}

// Run says what RunTypeScriptClient does.
type Run struct {
	MCPURL   string // the endpoint
	OwnerKey string // submitted on the consent page
	Folder   string // the one folder approved (read access)
	CIMDURL  string // a client ID metadata document's URL: that flow too; "" for none
	Question string // a search query whose hits must all be in Folder; "" for none
}

// RunTypeScriptClient runs infra/smoke/oauth-builtin.mjs against the MCP
// endpoint: registration, consent with the owner key (read access to the
// folder), token, tool calls in the folder only (and the question, when
// set), refresh, revocation and the 401 after it; with a metadata document
// URL, a client identified by it too. It needs node and
// infra/smoke/node_modules (make tools): skipped without them, failed
// under CI.
func RunTypeScriptClient(t *testing.T, r Run) {
	t.Helper()
	node := testbin.Require(t, "node", "", "apt-get install nodejs")
	smoke := filepath.Join(testbin.RepoRoot(t), "infra", "smoke")
	if _, err := os.Stat(filepath.Join(smoke, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		testbin.Missing(t, fmt.Errorf("%w; run make tools", err))
	}
	cmd := exec.Command(node, filepath.Join(smoke, "oauth-builtin.mjs"))
	cmd.Env = append(os.Environ(), "SHEAF_HTTP_URL="+r.MCPURL, "SHEAF_OWNER_KEY="+r.OwnerKey, "SHEAF_FOLDER="+r.Folder,
		"SHEAF_CIMD_URL="+r.CIMDURL, "SHEAF_QUESTION="+r.Question)
	out, err := cmd.CombinedOutput()
	t.Logf("oauth-builtin.mjs:\n%s", out)
	want := "3 passed, 0 failed"
	if r.CIMDURL != "" {
		want = "4 passed, 0 failed"
	}
	if err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("oauth-builtin.mjs: %v", err)
	}
	if strings.Contains(string(out), r.OwnerKey) {
		t.Error("the owner key was printed")
	}
}
