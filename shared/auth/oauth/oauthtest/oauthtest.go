// Package oauthtest is an OAuth 2.1 authorization server for tests, on
// 127.0.0.1: metadata (RFC 8414 and OpenID Connect discovery), a JWKS that
// can rotate, dynamic client registration (RFC 7591), the authorization
// code grant with PKCE (auto-approved: there is no user to ask) and the
// client credentials grant, both honouring resource indicators (RFC 8707)
// by putting the requested resource in "aud". It signs JWT access tokens
// (RFC 9068) with ES256. It is a test double of Auth0, Cognito or Keycloak,
// not an authorization server to deploy.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/sheaf-dev/sheaf/shared/testbin"
)

// Client is a registered client: its secret ("" for a public client), the
// scopes a client credentials grant gets when it asks for none (as Auth0
// and Cognito grant a machine client all its allowed scopes), and the
// extra claims every token issued to it carries (e.g. sheaf_folders).
type Client struct {
	ID, Secret   string
	RedirectURIs []string
	Scope        string
	Claims       map[string]any
}

// Profile shapes the server like a provider's (see Profiles): where its
// issuer and keys are, and what its access tokens hold.
type Profile struct {
	Name string
	// IssuerPath is appended to the server's base URL to make the issuer
	// ("/TENANT/v2.0" for Entra ID, "/REGION_POOL" for Cognito); its
	// metadata is served at both RFC 8414's inserted path and OpenID
	// Connect's appended one.
	IssuerPath string
	// TrailingSlash makes the issuer end in "/" (Auth0).
	TrailingSlash bool
	// MetadataPaths, when set, are the only paths the metadata is served
	// at, as the provider serves it (most only OpenID Connect discovery,
	// appended to the issuer's path).
	MetadataPaths []string
	// JWKSPath is where the keys are under the base URL; "" is "/jwks".
	JWKSPath string
	// Token builds an access token's claims for client c granted scope
	// (the token endpoint's scope names) for resource; nil is RFC 9068's
	// shape (sub and client_id the client, aud the resource, scope).
	Token func(c *Client, scope, resource string) jwt.MapClaims
}

// Server is the authorization server.
type Server struct {
	URL  string // the issuer: http://127.0.0.1:port (and the profile's path)
	Base string // the server's base URL

	srv     *httptest.Server
	ttl     time.Duration
	profile Profile

	mu      sync.Mutex
	keys    []signingKey // published; the last one signs
	clients map[string]*Client
	codes   map[string]grant

	// JWKSFetches counts GETs of the JWKS.
	JWKSFetches atomic.Int64
}

type signingKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

// grant is an issued authorization code.
type grant struct {
	client, redirect, challenge, resource, scope string
}

// New starts a server, stopped when the test ends. Its tokens live for
// 5 minutes.
func New(tb testing.TB) *Server { return NewProfile(tb, Profile{}) }

// NewProfile starts a server shaped by p, stopped when the test ends.
func NewProfile(tb testing.TB, p Profile) *Server {
	tb.Helper()
	if p.JWKSPath == "" {
		p.JWKSPath = "/jwks"
	}
	s := &Server{ttl: 5 * time.Minute, clients: map[string]*Client{}, codes: map[string]grant{}, profile: p}
	s.Rotate()
	mux := http.NewServeMux()
	for _, wk := range []string{"oauth-authorization-server", "openid-configuration"} {
		if p.MetadataPaths != nil {
			break
		}
		mux.HandleFunc("GET /.well-known/"+wk+p.IssuerPath, s.metadata)
		if p.IssuerPath != "" {
			mux.HandleFunc("GET "+p.IssuerPath+"/.well-known/"+wk, s.metadata)
		}
	}
	for _, mp := range p.MetadataPaths {
		mux.HandleFunc("GET "+mp, s.metadata)
	}
	mux.HandleFunc("GET "+p.JWKSPath, s.jwks)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	s.srv.Start()
	s.Base = s.srv.URL
	s.URL = s.srv.URL + p.IssuerPath
	if p.TrailingSlash {
		s.URL += "/"
	}
	tb.Cleanup(s.srv.Close)
	return s
}

// JWKSURL is where the keys are published.
func (s *Server) JWKSURL() string { return s.Base + s.profile.JWKSPath }

// AddClient registers a client.
func (s *Server) AddClient(c Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cc := c
	s.clients[c.ID] = &cc
}

// Rotate publishes a new signing key, which signs from now on; old keys
// stay published.
func (s *Server) Rotate() string {
	k := newKey()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, k)
	return k.kid
}

// Issue signs claims with the current key. Defaults are filled in for iss,
// iat, exp (5 minutes from now) and jti when absent; a claim set to nil is
// left out.
func (s *Server) Issue(claims jwt.MapClaims) string {
	s.mu.Lock()
	k := s.keys[len(s.keys)-1]
	s.mu.Unlock()
	return s.sign(k, claims)
}

// IssueForeign signs claims with a key the JWKS does not hold. sameKID
// gives it the current key's id (a forged signature); otherwise a fresh id
// (an unknown key).
func (s *Server) IssueForeign(claims jwt.MapClaims, sameKID bool) string {
	k := newKey()
	if sameKID {
		s.mu.Lock()
		k.kid = s.keys[len(s.keys)-1].kid
		s.mu.Unlock()
	}
	return s.sign(k, claims)
}

func (s *Server) sign(k signingKey, claims jwt.MapClaims) string {
	c := jwt.MapClaims{"iss": s.URL, "iat": time.Now().Unix(), "exp": time.Now().Add(s.ttl).Unix(), "jti": randomHex(8)}
	maps.Copy(c, claims)
	maps.DeleteFunc(c, func(_ string, v any) bool { return v == nil }) // a nil claim: leave it out
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = k.kid
	tok.Header["typ"] = "at+jwt"
	out, err := tok.SignedString(k.priv)
	if err != nil {
		panic(err)
	}
	return out
}

func newKey() signingKey {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return signingKey{kid: randomHex(6), priv: priv}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.URL,
		"authorization_endpoint":                s.Base + "/authorize",
		"token_endpoint":                        s.Base + "/token",
		"registration_endpoint":                 s.Base + "/register",
		"jwks_uri":                              s.JWKSURL(),
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	s.JWKSFetches.Add(1)
	s.mu.Lock()
	keys := append([]signingKey(nil), s.keys...)
	s.mu.Unlock()
	set := jwkset.NewMemoryStorage()
	for _, k := range keys {
		jwk, err := jwkset.NewJWKFromKey(&k.priv.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: k.kid, ALG: jwkset.AlgES256, USE: jwkset.UseSig}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = set.KeyWrite(r.Context(), jwk)
	}
	data, err := set.JSONPublic(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// register is dynamic client registration: public clients (no secret),
// since the MCP clients that register are native or browser apps.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
		ClientName   string   `json:"client_name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	c := Client{ID: "dyn-" + randomHex(6), RedirectURIs: meta.RedirectURIs}
	s.AddClient(c)
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": c.ID, "client_id_issued_at": time.Now().Unix(), "redirect_uris": c.RedirectURIs,
		"client_name": meta.ClientName, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code"}, "response_types": []string{"code"},
	})
}

// authorize approves at once and redirects back with a code.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	c := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	switch {
	case c == nil || !contains(c.RedirectURIs, redirect):
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "need response_type=code with an S256 code_challenge", http.StatusBadRequest)
		return
	}
	code := randomHex(16)
	s.mu.Lock()
	s.codes[code] = grant{client: c.ID, redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope")}
	s.mu.Unlock()
	u, _ := url.Parse(redirect)
	rq := u.Query()
	rq.Set("code", code)
	if st := q.Get("state"); st != "" {
		rq.Set("state", st)
	}
	rq.Set("iss", s.URL)
	u.RawQuery = rq.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	c := s.clients[id]
	s.mu.Unlock()
	if c == nil || c.Secret != secret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	var resource, scope string
	switch r.PostForm.Get("grant_type") {
	case "client_credentials":
		if c.Secret == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unauthorized_client"})
			return
		}
		resource, scope = r.PostForm.Get("resource"), cmpOr(r.PostForm.Get("scope"), c.Scope)
	case "authorization_code":
		s.mu.Lock()
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.client != c.ID || g.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		resource, scope = cmpOr(r.PostForm.Get("resource"), g.resource), g.scope
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	claims := jwt.MapClaims{"sub": c.ID, "client_id": c.ID, "scope": scope}
	if resource != "" {
		claims["aud"] = resource
	}
	if s.profile.Token != nil {
		claims = s.profile.Token(c, scope, resource)
	}
	maps.Copy(claims, c.Claims)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": s.Issue(claims), "token_type": "Bearer", "expires_in": int(s.ttl.Seconds()), "scope": scope,
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// String names the server in test output.
func (s *Server) String() string {
	return fmt.Sprintf("oauthtest %s", strings.TrimPrefix(s.URL, "http://"))
}

// RunTypeScriptClient runs infra/smoke/oauth.mjs, the official TypeScript
// MCP SDK's OAuth flows (client credentials; authorization code with PKCE
// after dynamic registration), against the MCP endpoint mcpURL, whose
// authorization server s is. It needs node and infra/smoke/node_modules
// (make tools): the test is skipped without them, failed under CI.
func (s *Server) RunTypeScriptClient(t *testing.T, mcpURL string) {
	t.Helper()
	node := testbin.Require(t, "node", "", "apt-get install nodejs")
	smoke := filepath.Join(testbin.RepoRoot(t), "infra", "smoke")
	if _, err := os.Stat(filepath.Join(smoke, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		testbin.Missing(t, fmt.Errorf("%w; run make tools", err))
	}
	s.AddClient(Client{ID: "smoke-m2m", Secret: "smoke-m2m-secret", Scope: "sheaf:read sheaf:write"})
	foreign := s.Issue(jwt.MapClaims{"sub": "x", "aud": "https://elsewhere.example.com/mcp", "scope": "sheaf:read"})
	cmd := exec.Command(node, filepath.Join(smoke, "oauth.mjs"))
	cmd.Env = append(os.Environ(), "SHEAF_HTTP_URL="+mcpURL, "SHEAF_OAUTH_ISSUER="+s.URL,
		"SHEAF_OAUTH_CLIENT_ID=smoke-m2m", "SHEAF_OAUTH_CLIENT_SECRET=smoke-m2m-secret", "SHEAF_OAUTH_FOREIGN_TOKEN="+foreign)
	out, err := cmd.CombinedOutput()
	t.Logf("oauth.mjs:\n%s", out)
	if err != nil || !strings.Contains(string(out), "3 passed, 0 failed") {
		t.Fatalf("oauth.mjs: %v", err)
	}
}
