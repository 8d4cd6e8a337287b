package mcphttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth/oauthtest"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/tools"
	"github.com/sheaf-dev/sheaf/shared/tools/mcphttp"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// BenchmarkHTTPAuth is one tools/call (get_vault_info on an empty vault:
// the cheapest tool) through the HTTP handler with each kind of
// credential. The difference to "open" is what authentication adds per
// call: the shared token, an API key (SHA-256 and a map lookup), an OAuth
// access token (ES256 signature and claims, JWKS cached), and an OAuth
// token whose folder claim makes the call work in a filtered view.
func BenchmarkHTTPAuth(b *testing.B) {
	st, err := fs.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s, err := tools.NewServer(&tools.Vault{ID: "b", Store: st, Catalogs: tools.LiveCatalog{C: vault.NewCatalog()}})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := s.MCPServer("bench", "")
	if err != nil {
		b.Fatal(err)
	}
	kf := &auth.KeyFile{}
	key, _, _ := kf.Add(auth.NewKeyOptions{Name: "k", Scopes: []auth.Scope{auth.ScopeRead}}, time.Now())
	as := oauthtest.New(b)
	const aud = "http://127.0.0.1:1/mcp"
	v, err := oauth.New(oauth.Config{Issuer: as.URL, Audience: aud})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(v.Close)
	jwtTok := as.Issue(jwt.MapClaims{"sub": "u", "aud": aud, "scope": "sheaf:read"})
	scopedTok := as.Issue(jwt.MapClaims{"sub": "u", "aud": aud, "scope": "sheaf:read", "sheaf_folders": []string{"Projects/**"}})
	keys := auth.NewKeyring(staticSource(kf.Marshal()), time.Hour)
	for _, c := range []struct {
		name  string
		a     *auth.Authenticator
		token string
	}{
		{"open", &auth.Authenticator{}, ""},
		{"token", &auth.Authenticator{Token: "a-shared-token-of-old"}, "a-shared-token-of-old"},
		{"key", &auth.Authenticator{Keys: keys, Require: true}, key},
		{"jwt", &auth.Authenticator{OAuth: v, Require: true}, jwtTok},
		{"jwt-folders", &auth.Authenticator{OAuth: v, Require: true}, scopedTok},
	} {
		h := mcphttp.HTTPHandler(srv, mcphttp.HTTPOptions{Auth: c.a})
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_vault_info","arguments":{}}}`
		do := func() {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			if c.token != "" {
				r.Header.Set("Authorization", "Bearer "+c.token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"noteCount"`) {
				b.Fatalf("%s: %d %s", c.name, w.Code, w.Body.String())
			}
		}
		do() // the JWKS fetch and key load happen here, not in the loop
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				do()
			}
		})
	}
}

type staticSource []byte

func (s staticSource) Load(context.Context) ([]byte, bool, error) { return s, true, nil }
func (s staticSource) String() string                             { return "static" }
