// Package oauthserver is Sheaf's built-in OAuth 2.1 authorization server,
// for hosted agents (claude.ai and other remote MCP clients) that must
// authorize with OAuth and for which nobody wants to run an identity
// provider. It serves RFC 8414 metadata, Dynamic Client Registration (RFC
// 7591) and Client ID Metadata Documents, the authorization code grant
// with PKCE (S256 only), refresh tokens rotated on every use, revocation
// (RFC 7009) and a JWKS; the consent page asks for the vault owner's key
// (auth.Key.Owner), and the owner chooses the client's scope and folders,
// which its access tokens (short-lived ES256 JWTs for this MCP endpoint
// only) then carry. Tokens are checked by the resource server of package
// oauth like any other issuer's, plus a look at the grant, so that a
// revoked grant or owner key stops its tokens at once.
//
// All state lives in the vault's store under Dir, written conditionally,
// so any instance of a stateless deployment (Lambda) serves any step; no
// request depends on memory left by another.
//
// Abuse it resists: registration floods (a limit per source address and
// an overall one per hour; clients never approved expire), redirect URIs
// compared exactly (https, or loopback with any port, RFC 8252), PKCE
// required, single-use codes that live a minute (a code used twice revokes
// what it granted), refresh token replay (revokes the grant), framing and
// cross-site posts of the consent page. Every refusal is an OAuth error
// (RFC 6749 §5.2); no secret is ever logged.
package oauthserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// Owners checks the vault owner's keys (auth.Key.Owner).
type Owners interface {
	// Owner returns the id of the active owner key key is; ok is false
	// for anything else.
	Owner(ctx context.Context, key string) (id string, ok bool, err error)
	// Active reports whether the owner key id is still active.
	Active(ctx context.Context, id string) (bool, error)
}

// KeyringOwners checks owner keys in a keyring.
type KeyringOwners struct{ Keys *auth.Keyring }

// Owner implements Owners.
func (k KeyringOwners) Owner(ctx context.Context, key string) (string, bool, error) {
	set, _, err := k.Keys.Keys(ctx)
	if err != nil {
		return "", false, err
	}
	o, ok := set.Owner(key, time.Now())
	return o.ID, ok, nil
}

// Active implements Owners.
func (k KeyringOwners) Active(ctx context.Context, id string) (bool, error) {
	set, _, err := k.Keys.Keys(ctx)
	if err != nil {
		return false, err
	}
	return set.OwnerActive(id, time.Now()), nil
}

// Config configures the server.
type Config struct {
	// Store is the vault's store; the state lives under Dir.
	Store store.Store
	// Audience is the MCP endpoint's public URL
	// (https://notes.example.com/mcp): tokens are for it alone.
	Audience string
	// Issuer is this server's issuer identifier; "" is Audience without
	// its last path segment (https://notes.example.com). Its endpoints are
	// Issuer + "/oauth/...", served by the handler at "/oauth/...".
	Issuer string
	// Owners checks owner keys on the consent page.
	Owners Owners
	// ScopePrefix is prepended to read, write and admin; "" is
	// oauth.DefaultScopePrefix.
	ScopePrefix string

	AccessTTL  time.Duration // access tokens; 0 is 15 minutes
	RefreshTTL time.Duration // a refresh token unused this long expires; 0 is 30 days
	GrantTTL   time.Duration // a grant ends this long after consent; 0 is 365 days
	CodeTTL    time.Duration // authorization codes; 0 is 1 minute
	ConsentTTL time.Duration // an authorization request awaiting consent; 0 is 10 minutes

	// RegistrationsPerSource bounds registrations from one address per
	// hour; 0 is 20. RegistrationsPerHour bounds them all; 0 is 300.
	RegistrationsPerSource int
	RegistrationsPerHour   int
	// UnusedClientTTL is how long a registered client that was never
	// approved is kept; 0 is 24 hours.
	UnusedClientTTL time.Duration

	// Fetcher fetches client metadata documents; nil is an HTTPS client
	// that refuses private, loopback and link-local addresses except
	// those of PrivateHosts, follows no redirect, waits at most 5 s and
	// reads at most 8 KiB.
	Fetcher *http.Client
	// PrivateHosts are host names whose client metadata documents may be
	// fetched from private or loopback addresses (an internal client).
	PrivateHosts []string

	Now func() time.Time // nil is time.Now
	Log *slog.Logger     // nil is slog.Default()
}

// Server is the authorization server: an http.Handler for the paths
// Paths lists.
type Server struct {
	cfg     Config
	issuer  *url.URL
	mux     *http.ServeMux
	checker *grantChecker
}

// New checks cfg and returns the server. It makes no network call and
// touches no store.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Owners == nil {
		return nil, errors.New("oauthserver: a store and an owners check are needed")
	}
	aud, err := url.Parse(cfg.Audience)
	if err != nil || aud.Host == "" || aud.Fragment != "" || aud.RawQuery != "" || (aud.Scheme != "https" && !loopbackHTTP(aud)) {
		return nil, fmt.Errorf("oauthserver: the audience %q must be the MCP endpoint's https URL (http only on loopback)", cfg.Audience)
	}
	if cfg.Issuer == "" {
		iu := *aud
		iu.Path = strings.TrimSuffix(iu.Path, "/")
		if i := strings.LastIndexByte(iu.Path, '/'); i >= 0 {
			iu.Path = iu.Path[:i]
		}
		iu.RawPath = ""
		cfg.Issuer = iu.String()
	}
	iss, err := url.Parse(cfg.Issuer)
	if err != nil || iss.Host == "" || iss.Fragment != "" || iss.RawQuery != "" || (iss.Scheme != "https" && !loopbackHTTP(iss)) {
		return nil, fmt.Errorf("oauthserver: the issuer %q must be an https URL (http only on loopback)", cfg.Issuer)
	}
	if cfg.ScopePrefix == "" {
		cfg.ScopePrefix = oauth.DefaultScopePrefix
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.AccessTTL, 15*time.Minute)
	def(&cfg.RefreshTTL, 30*24*time.Hour)
	def(&cfg.GrantTTL, 365*24*time.Hour)
	def(&cfg.CodeTTL, time.Minute)
	def(&cfg.ConsentTTL, 10*time.Minute)
	def(&cfg.UnusedClientTTL, 24*time.Hour)
	if cfg.RegistrationsPerSource <= 0 {
		cfg.RegistrationsPerSource = 20
	}
	if cfg.RegistrationsPerHour <= 0 {
		cfg.RegistrationsPerHour = 300
	}
	if cfg.Fetcher == nil {
		cfg.Fetcher = metadataFetcher(cfg.PrivateHosts)
	}
	s := &Server{cfg: cfg, issuer: iss}
	s.checker = &grantChecker{s: s, cache: map[string]checked{}}
	mux := http.NewServeMux()
	for _, p := range s.metadataPaths() {
		mux.HandleFunc("GET "+p, s.metadata)
	}
	mux.HandleFunc("GET /oauth/jwks", s.jwks)
	mux.HandleFunc("POST /oauth/register", s.register)
	mux.HandleFunc("GET /oauth/authorize", s.authorize)
	mux.HandleFunc("POST /oauth/authorize", s.consent)
	mux.HandleFunc("POST /oauth/token", s.token)
	mux.HandleFunc("POST /oauth/revoke", s.revoke)
	mux.HandleFunc("OPTIONS /oauth/{endpoint}", preflight)
	mux.HandleFunc("/oauth/", func(w http.ResponseWriter, r *http.Request) {
		oauthError(w, http.StatusNotFound, "invalid_request", "no such endpoint, or not with this method")
	})
	s.mux = mux
	return s, nil
}

func loopbackHTTP(u *url.URL) bool {
	h := u.Hostname()
	return u.Scheme == "http" && (h == "localhost" || h == "127.0.0.1" || h == "::1")
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Paths are the paths (http.ServeMux patterns) the server answers: its
// metadata's well-known paths and the /oauth/ endpoints.
func (s *Server) Paths() []string { return append(s.metadataPaths(), "/oauth/") }

// SetLog sets the logger (before the server serves).
func (s *Server) SetLog(l *slog.Logger) { s.cfg.Log = l }

// Issuer is the issuer identifier.
func (s *Server) Issuer() string { return s.cfg.Issuer }

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

func (s *Server) log() *slog.Logger {
	if s.cfg.Log != nil {
		return s.cfg.Log
	}
	return slog.Default()
}

// endpoint is the public URL of an /oauth/ endpoint.
func (s *Server) endpoint(name string) string {
	return strings.TrimSuffix(s.cfg.Issuer, "/") + "/oauth/" + name
}

// metadataPaths are where the RFC 8414 metadata is served: the well-known
// path, and with an issuer path, the path-inserted form.
func (s *Server) metadataPaths() []string {
	paths := []string{"/.well-known/oauth-authorization-server"}
	if p := strings.Trim(s.issuer.Path, "/"); p != "" {
		paths = append(paths, "/.well-known/oauth-authorization-server/"+p)
	}
	return paths
}

// scopeNames are the token scope names, weakest first.
func (s *Server) scopeNames() []string {
	out := make([]string, len(auth.Scopes))
	for i, sc := range auth.Scopes {
		out[i] = s.cfg.ScopePrefix + string(sc)
	}
	return out
}

// metadata serves the authorization server metadata (RFC 8414).
func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         s.cfg.Issuer,
		"authorization_endpoint":                         s.endpoint("authorize"),
		"token_endpoint":                                 s.endpoint("token"),
		"registration_endpoint":                          s.endpoint("register"),
		"revocation_endpoint":                            s.endpoint("revoke"),
		"jwks_uri":                                       s.endpoint("jwks"),
		"scopes_supported":                               s.scopeNames(),
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          authMethods,
		"revocation_endpoint_auth_methods_supported":     authMethods,
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
		"protected_resources":                            []string{s.cfg.Audience},
		"service_documentation":                          "https://github.com/sheaf-dev/sheaf/blob/main/docs/claude-ai.md",
	})
}

// authMethods are the client authentication methods of the token and
// revocation endpoints.
var authMethods = []string{"none", "client_secret_basic", "client_secret_post"}

// writeJSON writes v with no-store caching, as token responses need.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthError writes an OAuth error response (RFC 6749 §5.2).
func oauthError(w http.ResponseWriter, status int, code, description string) {
	body := map[string]string{"error": code}
	if description != "" {
		body["error_description"] = description
	}
	writeJSON(w, status, body)
}

// serverError logs err (never a secret: callers pass store and key
// errors) and answers a temporarily_unavailable error.
func (s *Server) serverError(w http.ResponseWriter, what string, err error) {
	s.log().Error("oauth: "+what, "err", err)
	w.Header().Set("Retry-After", "5")
	oauthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", what+" failed; try again")
}

// preflight answers CORS preflights of the endpoints browser-based
// clients call (they carry no cookies: any origin may).
func preflight(w http.ResponseWriter, r *http.Request) {
	switch r.PathValue("endpoint") {
	case "token", "register", "revoke", "jwks":
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "POST, GET")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusForbidden)
	}
}
