// Package oauth makes Sheaf's HTTP door an OAuth 2.1 resource server, as
// the MCP authorization spec asks of remote servers: it publishes Protected
// Resource Metadata (RFC 9728) naming the authorization server, and accepts
// JWT access tokens (RFC 9068) that the authorization server signed, for
// this resource (the audience, RFC 8707), unexpired, and maps their scopes
// and Sheaf claims to an auth.Identity.
//
// Signing keys come from the authorization server's JWKS (its jwks_uri,
// configured or discovered from its metadata on first use, never at
// start-up), cached; the cache is re-read hourly, and at once when a token
// names a key id it has not seen (at most once per RefetchEvery), so key
// rotation needs no restart and forged key ids cannot hammer the server.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/time/rate"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// Claims Sheaf reads besides the registered ones. An authorization server
// adds them to access tokens to narrow a caller (Auth0 Actions, a Cognito
// pre-token-generation trigger, Keycloak mappers, ...).
const (
	ClaimFolders     = "sheaf_folders"      // array of allowlist rules (auth.Folders)
	ClaimProposeOnly = "sheaf_propose_only" // true: writes become proposals
	ClaimProfile     = "sheaf_profile"      // "core" or "full"
)

// DefaultScopePrefix is what token scopes start with: "sheaf:read",
// "sheaf:write", "sheaf:admin".
const DefaultScopePrefix = "sheaf:"

// RefetchEvery is the least time between two JWKS fetches caused by
// unknown key ids.
const RefetchEvery = 30 * time.Second

// Config configures the resource server.
type Config struct {
	// Issuer is the authorization server's issuer identifier, compared
	// exactly with each token's "iss" (e.g. https://tenant.auth0.com/,
	// https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf).
	Issuer string
	// Audience is this resource's identifier: the canonical URL of the MCP
	// endpoint (https://notes.example.com/mcp). Tokens must carry it in
	// "aud" (RFC 8707 resource indicators); Protected Resource Metadata
	// names it as "resource".
	Audience string
	// Audiences are more values of "aud" accepted besides Audience, for
	// authorization servers that name a resource their own way: Entra ID
	// puts the API's application (client) id in its v2 tokens' "aud".
	Audiences []string
	// ClientIDs, for authorization servers whose access tokens carry no
	// "aud" at all (Amazon Cognito), accept such a token when its
	// "client_id" is one of these: the app clients made for this server
	// alone. A token that has an "aud" must still name this resource, and
	// one whose "token_use" says it is no access token is refused.
	ClientIDs []string
	// JWKSURL is where the signing keys are; "" discovers it from the
	// issuer's metadata (RFC 8414 or OpenID Connect discovery).
	JWKSURL string
	// ScopePrefix is prepended to read, write and admin to make the scope
	// names tokens carry; "" means DefaultScopePrefix.
	ScopePrefix string
	// Leeway tolerates clock skew on exp, nbf and iat; 0 means 30 s.
	Leeway time.Duration
	// Client fetches metadata and keys; nil means a client with a 10 s
	// timeout.
	Client *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Check, when set, is asked about every token that passed the other
	// checks, with its claims: an error refuses the token (a grant revoked
	// since the token was signed, for the built-in authorization server).
	Check func(ctx context.Context, claims map[string]any) error
}

// Verifier validates access tokens; it implements auth.TokenVerifier.
type Verifier struct {
	cfg     Config
	methods []string

	mu   sync.Mutex
	keys keyfunc.Keyfunc // nil until the first token
	ctx  context.Context // ends the JWKS refresh goroutine
	stop context.CancelFunc
}

var _ auth.TokenVerifier = (*Verifier)(nil)

// New checks cfg and returns a Verifier. It makes no network call.
func New(cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oauth: both the issuer and the audience (this server's MCP URL) must be set")
	}
	for name, u := range map[string]string{"issuer": cfg.Issuer, "audience": cfg.Audience, "JWKS URL": cfg.JWKSURL} {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || p.Host == "" || (p.Scheme != "https" && !loopbackHTTP(p)) || p.Fragment != "" {
			return nil, fmt.Errorf("oauth: %s %q must be an https URL (http only on loopback), without a fragment", name, u)
		}
	}
	if cfg.ScopePrefix == "" {
		cfg.ScopePrefix = DefaultScopePrefix
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	// Asymmetric algorithms only: a shared-secret HS256 token would let
	// anyone holding the public JWKS forge tokens, and "none" is no signature.
	return &Verifier{cfg: cfg, ctx: ctx, stop: stop, methods: []string{
		"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
	}}, nil
}

func loopbackHTTP(u *url.URL) bool {
	h := u.Hostname()
	return u.Scheme == "http" && (h == "localhost" || h == "127.0.0.1" || h == "::1")
}

// Close stops the background JWKS refresh.
func (v *Verifier) Close() { v.stop() }

// Scopes are the scope names tokens carry, weakest first.
func (v *Verifier) Scopes() []string {
	out := make([]string, len(auth.Scopes))
	for i, s := range auth.Scopes {
		out[i] = v.cfg.ScopePrefix + string(s)
	}
	return out
}

// Metadata is this resource's Protected Resource Metadata (RFC 9728).
func (v *Verifier) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.cfg.Audience,
		AuthorizationServers:   []string{v.cfg.Issuer},
		ScopesSupported:        v.Scopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Sheaf",
	}
}

// MetadataPaths are the paths that serve the metadata: the path-inserted
// well-known URL of RFC 9728 §3.1 for the resource's path, and the root one
// clients fall back to.
func (v *Verifier) MetadataPaths() []string {
	paths := []string{"/.well-known/oauth-protected-resource"}
	if u, err := url.Parse(v.cfg.Audience); err == nil && strings.Trim(u.Path, "/") != "" {
		paths = append(paths, "/.well-known/oauth-protected-resource/"+strings.Trim(u.Path, "/"))
	}
	return paths
}

// MetadataURL is the absolute URL of the metadata, for WWW-Authenticate.
func (v *Verifier) MetadataURL() string {
	u, err := url.Parse(v.cfg.Audience)
	if err != nil {
		return ""
	}
	u.Path = v.MetadataPaths()[len(v.MetadataPaths())-1]
	u.RawQuery, u.RawPath = "", ""
	return u.String()
}

// Verify implements auth.TokenVerifier: signature by a key of the
// authorization server's JWKS, iss, aud, exp (required), nbf and iat, then
// the claims' mapping. Every failure wraps auth.ErrUnauthenticated.
//
// Claims are read by their exact names (a map, not a struct: encoding/json
// would match "Scope" or "SHEAF_FOLDERS" to a struct field too, and an
// authorization server may let users set differently-cased claims).
func (v *Verifier) Verify(ctx context.Context, token string) (auth.Identity, error) {
	kf, err := v.keyfunc(ctx)
	if err != nil {
		return auth.Identity{}, fmt.Errorf("%w: %v", auth.ErrUnauthenticated, err)
	}
	c := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(token, c, kf.KeyfuncCtx(ctx),
		jwt.WithValidMethods(v.methods),
		jwt.WithIssuer(v.cfg.Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(v.cfg.Leeway),
		jwt.WithTimeFunc(v.cfg.Now),
	)
	if err != nil {
		return auth.Identity{}, fmt.Errorf("%w: %v", auth.ErrUnauthenticated, err)
	}
	id, err := v.identity(c)
	if err != nil {
		return auth.Identity{}, fmt.Errorf("%w: %v", auth.ErrUnauthenticated, err)
	}
	if v.cfg.Check != nil {
		if err := v.cfg.Check(ctx, c); err != nil {
			return auth.Identity{}, fmt.Errorf("%w: %v", auth.ErrUnauthenticated, err)
		}
	}
	return id, nil
}

// identity maps validated claims to the caller.
func (v *Verifier) identity(c jwt.MapClaims) (auth.Identity, error) {
	if err := v.audience(c); err != nil {
		return auth.Identity{}, err
	}
	sub, err := c.GetSubject()
	if err != nil || sub == "" {
		return auth.Identity{}, errors.New("token has no subject")
	}
	scopes, err := tokenScopes(c)
	if err != nil {
		return auth.Identity{}, err
	}
	clientID, _ := c["client_id"].(string)
	azp, _ := c["azp"].(string)
	id := auth.Identity{Subject: "oauth:" + sub, Name: cmpOr(clientID, azp, sub)}
	for _, s := range auth.Scopes {
		if slices.Contains(scopes, v.cfg.ScopePrefix+string(s)) {
			id.Granted = append(id.Granted, s)
		}
	}
	if raw, ok := c[ClaimFolders]; ok && raw != nil {
		rules, ok := stringList(raw)
		if !ok {
			return auth.Identity{}, fmt.Errorf("%s must be an array of strings", ClaimFolders)
		}
		if id.Folders, err = auth.ParseFolders(rules); err != nil {
			return auth.Identity{}, err
		}
		if !id.Folders.Limited() {
			// An empty list in a claim meant to narrow the caller narrows
			// it to nothing rather than widening it to everything.
			return auth.Identity{}, fmt.Errorf("%s is empty", ClaimFolders)
		}
	}
	if id.ProposeOnly, err = boolClaim(c[ClaimProposeOnly]); err != nil {
		return auth.Identity{}, fmt.Errorf("%s: %v", ClaimProposeOnly, err)
	}
	profile, ok := c[ClaimProfile].(string)
	switch {
	case c[ClaimProfile] == nil:
	case ok && (profile == auth.ProfileCore || profile == auth.ProfileFull):
		id.Profile = profile
	default:
		return auth.Identity{}, fmt.Errorf("%s %v (core or full)", ClaimProfile, c[ClaimProfile])
	}
	return id, nil
}

// audience checks that the token is for this resource: its "aud" names
// Audience (or one of Audiences), or it has no "aud" and its "client_id"
// is one of ClientIDs.
func (v *Verifier) audience(c jwt.MapClaims) error {
	if use, ok := c["token_use"]; ok && use != "access" {
		return fmt.Errorf("token_use %v: not an access token", use)
	}
	aud, err := c.GetAudience()
	if err != nil {
		return fmt.Errorf("aud: %v", err)
	}
	if len(aud) == 0 {
		if cid, _ := c["client_id"].(string); cid != "" && slices.Contains(v.cfg.ClientIDs, cid) {
			return nil
		}
		return fmt.Errorf("token names no audience, and its client is not one of this server's")
	}
	if oauthex.MatchesResource(aud, v.cfg.Audience) {
		return nil
	}
	for _, a := range aud {
		if slices.Contains(v.cfg.Audiences, a) {
			return nil
		}
	}
	return fmt.Errorf("token is for %v, not %s", []string(aud), v.cfg.Audience)
}

// tokenScopes reads "scope" (RFC 9068: a space-separated string) and
// "scp" (Okta, Entra ID: a string or an array of strings).
func tokenScopes(c jwt.MapClaims) ([]string, error) {
	var out []string
	for _, name := range []string{"scope", "scp"} {
		switch v := c[name].(type) {
		case nil:
		case string:
			out = append(out, strings.Fields(v)...)
		default:
			list, ok := stringList(v)
			if !ok || name == "scope" {
				return nil, fmt.Errorf("%s must be a string%s", name, map[bool]string{true: "", false: " or an array of strings"}[name == "scope"])
			}
			out = append(out, list...)
		}
	}
	return out, nil
}

// stringList reads a JSON array of strings.
func stringList(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(arr))
	for i, x := range arr {
		if out[i], ok = x.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// boolClaim reads a JSON boolean, or the strings "true" and "false" (some
// authorization servers only add string claims).
func boolClaim(v any) (bool, error) {
	switch b := v.(type) {
	case nil:
		return false, nil
	case bool:
		return b, nil
	case string:
		if b == "true" || b == "false" {
			return b == "true", nil
		}
	}
	return false, errors.New("must be true or false")
}

func cmpOr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// keyfunc returns the JWKS cache, creating it on first use (discovering
// the JWKS URL when none is configured). A failed discovery is retried by
// the next token.
func (v *Verifier) keyfunc(ctx context.Context) (keyfunc.Keyfunc, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys != nil {
		return v.keys, nil
	}
	jwksURL := v.cfg.JWKSURL
	if jwksURL == "" {
		var err error
		if jwksURL, err = discoverJWKS(ctx, v.cfg.Client, v.cfg.Issuer); err != nil {
			return nil, err
		}
	}
	noFail := true
	kf, err := keyfunc.NewDefaultOverrideCtx(v.ctx, []string{jwksURL}, keyfunc.Override{
		Client:                    limitedClient(v.cfg.Client),
		HTTPTimeout:               10 * time.Second,
		NoErrorReturnFirstHTTPReq: &noFail, // a failed first fetch is retried as an unknown key id
		RefreshInterval:           time.Hour,
		RefreshUnknownKID:         rate.NewLimiter(rate.Every(RefetchEvery), 1),
		RateLimitWaitMax:          time.Second, // never hold a request for the limiter
	})
	if err != nil {
		return nil, err
	}
	v.keys = kf
	return kf, nil
}

// maxDocument bounds metadata and JWKS documents.
const maxDocument = 1 << 20

// discoverJWKS reads the issuer's metadata (RFC 8414, then OpenID Connect
// discovery; path-inserted and path-appended forms) and returns its
// jwks_uri. The metadata must name the same issuer.
func discoverJWKS(ctx context.Context, c *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	path := strings.Trim(u.Path, "/")
	var candidates []string
	for _, wk := range []string{"oauth-authorization-server", "openid-configuration"} {
		m := *u
		m.Path = "/.well-known/" + wk
		if path != "" {
			m.Path += "/" + path
		}
		candidates = append(candidates, m.String())
	}
	if path != "" { // OpenID Connect's own form: appended
		m := *u
		m.Path = "/" + path + "/.well-known/openid-configuration"
		candidates = append(candidates, m.String())
	}
	var errs []error
	for _, mu := range candidates {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		status, err := getJSON(ctx, c, mu, &meta)
		switch {
		case err != nil:
			errs = append(errs, err)
			continue
		case status == http.StatusNotFound:
			continue
		case meta.Issuer != issuer:
			return "", fmt.Errorf("%s names issuer %q, not %q", mu, meta.Issuer, issuer)
		case meta.JWKSURI == "":
			return "", fmt.Errorf("%s has no jwks_uri", mu)
		}
		return meta.JWKSURI, nil
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("discovering the JWKS of %s: %w", issuer, errors.Join(errs...))
	}
	return "", fmt.Errorf("discovering the JWKS of %s: no metadata found (set the JWKS URL)", issuer)
}

// getJSON fetches a JSON document into v; a 404 is returned as a status,
// not an error.
func getJSON(ctx context.Context, c *http.Client, u string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return resp.StatusCode, nil
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDocument)).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s: %w", u, err)
	}
	return resp.StatusCode, nil
}

// limitedClient is c with response bodies cut at maxDocument, so a broken
// or hostile JWKS endpoint cannot make the cache read without end.
func limitedClient(c *http.Client) *http.Client {
	cc := *c
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	cc.Transport = limitTransport{rt}
	return &cc
}

type limitTransport struct{ rt http.RoundTripper }

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		resp.Body = limitedBody{io.LimitReader(resp.Body, maxDocument), resp.Body}
	}
	return resp, err
}

type limitedBody struct {
	io.Reader
	io.Closer
}
