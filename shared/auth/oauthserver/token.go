package oauthserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// maxTokenForm bounds a token or revocation request.
const maxTokenForm = 16 << 10

// tokenError is a refusal of the token or revocation endpoint.
type tokenError struct {
	status      int
	code        string
	description string
	basic       bool // the client authenticated with HTTP Basic: say so in WWW-Authenticate
}

func (e *tokenError) Error() string { return e.code + ": " + e.description }

func invalidGrant(d string) *tokenError {
	return &tokenError{status: http.StatusBadRequest, code: "invalid_grant", description: d}
}

func invalidRequest(d string) *tokenError {
	return &tokenError{status: http.StatusBadRequest, code: "invalid_request", description: d}
}

func (s *Server) writeTokenError(w http.ResponseWriter, err error) {
	var te *tokenError
	if !errors.As(err, &te) {
		s.serverError(w, "answering the token request", err)
		return
	}
	if te.status == http.StatusUnauthorized && te.basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="sheaf"`)
	}
	oauthError(w, te.status, te.code, te.description)
}

// readForm parses a form post of the token or revocation endpoint: form
// encoded, bounded, no parameter twice (RFC 6749 §3.2).
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return nil, invalidRequest("send the parameters as application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenForm)
	if err := r.ParseForm(); err != nil {
		return nil, invalidRequest("the form could not be read")
	}
	if len(r.URL.RawQuery) > 0 {
		return nil, invalidRequest("parameters go in the body, not the URL")
	}
	for k, vs := range r.PostForm {
		if len(vs) > 1 {
			return nil, invalidRequest("the parameter " + k + " is repeated")
		}
	}
	return r.PostForm, nil
}

// authenticateClient finds the calling client: HTTP Basic or form
// credentials for a confidential one, client_id alone for a public one.
// Every failure is invalid_client (401), which tells clients such as
// claude.ai to register again.
func (s *Server) authenticateClient(ctx context.Context, r *http.Request, f url.Values) (client, error) {
	id, secret, basic := r.BasicAuth()
	if basic {
		if f.Get("client_secret") != "" {
			return client{}, invalidRequest("send the client's credentials one way, not two")
		}
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return client{}, &tokenError{status: http.StatusUnauthorized, code: "invalid_client", description: "malformed client credentials", basic: true}
		}
		if fid := f.Get("client_id"); fid != "" && fid != id {
			return client{}, invalidRequest("client_id differs from the credentials")
		}
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	unknown := &tokenError{status: http.StatusUnauthorized, code: "invalid_client", description: "unknown client, or wrong credentials; register again", basic: basic}
	if id == "" {
		return client{}, &tokenError{status: http.StatusUnauthorized, code: "invalid_client", description: "client_id is required", basic: basic}
	}
	if isMetadataURL(id) {
		if secret != "" {
			return client{}, unknown // a metadata document's client is public
		}
		return client{ID: id, AuthMethod: "none", Metadata: true}, nil
	}
	c, ok, err := s.lookupClient(ctx, id)
	if err != nil {
		return client{}, err
	}
	if !ok {
		return client{}, unknown
	}
	switch {
	case c.AuthMethod == "none" && secret == "":
		return c, nil
	case c.AuthMethod == "none" || c.SecretHash == "":
		return client{}, unknown
	}
	got, want := hashSecret("client secret", secret), c.SecretHash
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return client{}, unknown
	}
	return c, nil
}

// token is the token endpoint: the authorization code grant (with PKCE)
// and the refresh token grant (rotating the token).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	f, err := readForm(w, r)
	if err != nil {
		s.writeTokenError(w, err)
		return
	}
	ctx := r.Context()
	c, err := s.authenticateClient(ctx, r, f)
	if err != nil {
		s.writeTokenError(w, err)
		return
	}
	if res := f.Get("resource"); res != "" && res != s.cfg.Audience {
		s.writeTokenError(w, &tokenError{status: http.StatusBadRequest, code: "invalid_target", description: "this server issues tokens for " + s.cfg.Audience + " only"})
		return
	}
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		g, err = s.redeemCode(ctx, c, f)
	case "refresh_token":
		g, err = s.redeemRefresh(ctx, c, f)
	case "":
		err = invalidRequest("grant_type is required")
	default:
		err = &tokenError{status: http.StatusBadRequest, code: "unsupported_grant_type", description: "authorization_code and refresh_token only: every client is approved by the vault's owner"}
	}
	if err != nil {
		s.writeTokenError(w, err)
		return
	}
	resp, err := s.issue(ctx, g)
	if err != nil {
		s.writeTokenError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// validVerifier reports whether v is a PKCE code verifier: 43 to 128
// unreserved characters.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, r := range v {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// redeemCode exchanges an authorization code once. A code presented again
// revokes the grant it led to (RFC 6749 §4.1.2): whoever holds it twice
// may have stolen it.
func (s *Server) redeemCode(ctx context.Context, c client, f url.Values) (grant, error) {
	ac, verifier := f.Get("code"), f.Get("code_verifier")
	if ac == "" || len(ac) > 200 {
		return grant{}, invalidRequest("code is required")
	}
	if !validVerifier(verifier) {
		return grant{}, invalidRequest("code_verifier (43 to 128 characters) is required: PKCE")
	}
	p := codesDir + hashSecret("code", ac) + ".json"
	var rec code
	etag, found, err := s.load(ctx, p, &rec)
	if err != nil {
		return grant{}, err
	}
	if !found {
		return grant{}, invalidGrant("unknown or expired authorization code")
	}
	if rec.Used {
		s.revokeGrant(ctx, rec.Grant.ID, "authorization code used twice")
		return grant{}, invalidGrant("the authorization code was used already; what it granted is revoked")
	}
	rec.Used = true
	if _, err := s.save(ctx, p, rec, store.PutOptions{IfMatch: etag}); errors.Is(err, store.ErrConflict) {
		s.revokeGrant(ctx, rec.Grant.ID, "authorization code used twice at once")
		return grant{}, invalidGrant("the authorization code was used already; what it granted is revoked")
	} else if err != nil {
		return grant{}, err
	}
	sum := sha256.Sum256([]byte(verifier))
	switch {
	case s.now().After(rec.Expires):
		return grant{}, invalidGrant("the authorization code expired")
	case rec.ClientID != c.ID:
		return grant{}, invalidGrant("the authorization code was issued to another client")
	case f.Get("redirect_uri") != rec.RedirectURI && (rec.Redirected || f.Has("redirect_uri")):
		return grant{}, invalidGrant("redirect_uri differs from the authorization request's")
	case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(rec.Challenge)) != 1:
		return grant{}, invalidGrant("code_verifier does not match the code_challenge")
	}
	g := rec.Grant
	if _, err := s.save(ctx, grantsDir+g.ID+".json", g, store.PutOptions{IfNoneMatch: true}); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return grant{}, invalidGrant("the authorization code was used already")
		}
		return grant{}, err
	}
	s.sweepSometimes(ctx)
	return g, nil
}

// redeemRefresh rotates a refresh token: the token is spent and a new one
// issued. A spent token presented again, or one presented by another
// client, revokes the grant: it was stolen or replayed.
func (s *Server) redeemRefresh(ctx context.Context, c client, f url.Values) (grant, error) {
	rt := f.Get("refresh_token")
	if rt == "" || len(rt) > 200 {
		return grant{}, invalidRequest("refresh_token is required")
	}
	p := refreshDir + hashSecret("refresh token", rt) + ".json"
	var rec refresh
	etag, found, err := s.load(ctx, p, &rec)
	if err != nil {
		return grant{}, err
	}
	if !found {
		return grant{}, invalidGrant("unknown or expired refresh token")
	}
	if rec.ClientID != c.ID {
		s.revokeGrant(ctx, rec.Grant, "refresh token presented by another client")
		return grant{}, invalidGrant("the refresh token belongs to another client; the grant is revoked")
	}
	if rec.Used {
		s.revokeGrant(ctx, rec.Grant, "refresh token replayed")
		return grant{}, invalidGrant("the refresh token was used already; the grant is revoked")
	}
	if s.now().After(rec.Expires) {
		return grant{}, invalidGrant("the refresh token expired")
	}
	var g grant
	if _, found, err := s.load(ctx, grantsDir+rec.Grant+".json", &g); err != nil {
		return grant{}, err
	} else if !found || g.Revoked != nil || s.now().After(g.Expires) {
		return grant{}, invalidGrant("the grant was revoked or expired; authorize again")
	}
	if active, err := s.cfg.Owners.Active(ctx, g.Owner); err != nil {
		return grant{}, err
	} else if !active {
		s.revokeGrant(ctx, g.ID, "the owner key that approved it is revoked")
		return grant{}, invalidGrant("the owner key that approved this client was revoked; authorize again")
	}
	if sc := f.Get("scope"); sc != "" {
		for _, want := range s.askedScopes(sc) {
			if slices.Index(auth.Scopes, want) > slices.Index(auth.Scopes, g.Scope) {
				return grant{}, &tokenError{status: http.StatusBadRequest, code: "invalid_scope", description: "more than the owner granted"}
			}
		}
	}
	rec.Used = true
	if _, err := s.save(ctx, p, rec, store.PutOptions{IfMatch: etag}); errors.Is(err, store.ErrConflict) {
		s.revokeGrant(ctx, rec.Grant, "refresh token used twice at once")
		return grant{}, invalidGrant("the refresh token was used already; the grant is revoked")
	} else if err != nil {
		return grant{}, err
	}
	return g, nil
}

// issue signs an access token for g and stores a new refresh token.
func (s *Server) issue(ctx context.Context, g grant) (map[string]any, error) {
	k, err := s.signer(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var scopes []string
	for _, sc := range auth.Scopes {
		scopes = append(scopes, s.cfg.ScopePrefix+string(sc))
		if sc == g.Scope {
			break
		}
	}
	claims := jwt.MapClaims{
		"iss": s.cfg.Issuer, "sub": "grant:" + g.ID, "aud": s.cfg.Audience, "client_id": g.ClientID,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(s.cfg.AccessTTL).Unix(), "jti": randomID(12),
		"scope": strings.Join(scopes, " "), claimGrant: g.ID,
	}
	if len(g.Folders) > 0 {
		claims[oauth.ClaimFolders] = g.Folders
	}
	if g.ProposeOnly {
		claims[oauth.ClaimProposeOnly] = true
	}
	at, err := k.sign(claims)
	if err != nil {
		return nil, err
	}
	rt := randomToken("sheafrt_")
	exp := now.Add(s.cfg.RefreshTTL)
	if g.Expires.Before(exp) {
		exp = g.Expires
	}
	rec := refresh{Grant: g.ID, ClientID: g.ClientID, Expires: exp.UTC()}
	if _, err := s.save(ctx, refreshDir+hashSecret("refresh token", rt)+".json", rec, store.PutOptions{IfNoneMatch: true}); err != nil {
		return nil, err
	}
	return map[string]any{
		"access_token": at, "token_type": "Bearer", "expires_in": int(s.cfg.AccessTTL.Seconds()),
		"refresh_token": rt, "scope": strings.Join(scopes, " "),
	}, nil
}

// claimGrant names the grant in access tokens: what revocation checks.
const claimGrant = "sheaf_grant"

// revokeGrant marks grant id revoked (a missing grant is recorded revoked,
// so that a code exchanged after it cannot bring it back).
func (s *Server) revokeGrant(ctx context.Context, id, why string) {
	if id == "" || len(id) != 32 || !isHex(id) {
		return
	}
	p := grantsDir + id + ".json"
	for range 4 {
		var g grant
		etag, found, err := s.load(ctx, p, &g)
		if err != nil {
			s.log().Error("oauth: revoking a grant", "grant", id, "err", err)
			return
		}
		if found && g.Revoked != nil {
			break
		}
		now := s.now().UTC()
		opts := store.PutOptions{IfMatch: etag}
		if !found {
			g = grant{ID: id, Created: now, Expires: now.Add(s.cfg.RefreshTTL)}
			opts = store.PutOptions{IfNoneMatch: true}
		}
		g.Revoked, g.Why = &now, why
		if _, err := s.save(ctx, p, g, opts); errors.Is(err, store.ErrConflict) {
			continue
		} else if err != nil {
			s.log().Error("oauth: revoking a grant", "grant", id, "err", err)
			return
		}
		s.log().Warn("oauth: grant revoked", "grant", id, "client_id", safeLog(g.ClientID), "why", why)
		break
	}
	s.checker.forget(id)
}

// revoke is token revocation (RFC 7009): a refresh token or an access
// token of the calling client ends its grant. Tokens it does not know, or
// of other clients, are answered the same (200) and left alone.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	f, err := readForm(w, r)
	if err != nil {
		s.writeTokenError(w, err)
		return
	}
	ctx := r.Context()
	c, err := s.authenticateClient(ctx, r, f)
	if err != nil {
		s.writeTokenError(w, err)
		return
	}
	tok := f.Get("token")
	if tok == "" {
		s.writeTokenError(w, invalidRequest("token is required"))
		return
	}
	if len(tok) <= 200 {
		var rec refresh
		if _, found, err := s.load(ctx, refreshDir+hashSecret("refresh token", tok)+".json", &rec); err != nil {
			s.serverError(w, "revoking the token", err)
			return
		} else if found {
			if rec.ClientID == c.ID {
				s.revokeGrant(ctx, rec.Grant, "revoked by the client")
			}
			w.WriteHeader(http.StatusOK)
			return
		}
	}
	if auth.LooksLikeJWT(tok) && len(tok) < 16<<10 {
		if claims, err := s.ownToken(ctx, tok); err == nil {
			if cid, _ := claims["client_id"].(string); cid == c.ID {
				g, _ := claims[claimGrant].(string)
				s.revokeGrant(ctx, g, "revoked by the client")
			}
		}
	}
	w.WriteHeader(http.StatusOK)
}

// ownToken checks the signature and issuer of an access token this server
// signed (expired or not: revoking one is harmless) and returns its
// claims.
func (s *Server) ownToken(ctx context.Context, tok string) (jwt.MapClaims, error) {
	var f signingFile
	if _, _, err := s.load(ctx, signingPath, &f); err != nil {
		return nil, err
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(tok, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		for i := range f.Keys {
			if f.Keys[i].KID == kid {
				priv, err := f.Keys[i].private()
				if err != nil {
					return nil, err
				}
				return &priv.PublicKey, nil
			}
		}
		return nil, fmt.Errorf("unknown key %q", kid)
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(s.cfg.Issuer), jwt.WithoutClaimsValidation())
	return claims, err
}

// checked is a grant's state as last read.
type checked struct {
	err error
	at  time.Time
}

// grantChecker answers the resource server's question about each access
// token this server signed: is its grant still good (not revoked, not
// expired, its owner key active)? Answers are remembered briefly, so a
// busy client costs a store read every few seconds, not every call; a
// revocation by this instance takes effect at once, by another within
// grantCheckTTL.
type grantChecker struct {
	s     *Server
	mu    sync.Mutex
	cache map[string]checked
}

// grantCheckTTL is how long a grant's state is trusted.
const grantCheckTTL = 5 * time.Second

func (gc *grantChecker) lock()   { gc.mu.Lock() }
func (gc *grantChecker) unlock() { gc.mu.Unlock() }

func (gc *grantChecker) forget(id string) {
	gc.lock()
	delete(gc.cache, id)
	gc.unlock()
}

// check implements oauth.Config.Check.
func (gc *grantChecker) check(ctx context.Context, claims map[string]any) error {
	id, _ := claims[claimGrant].(string)
	if id == "" || len(id) != 32 || !isHex(id) {
		return errors.New("no grant in the token")
	}
	now := gc.s.now()
	gc.lock()
	if c, ok := gc.cache[id]; ok && now.Sub(c.at) < grantCheckTTL {
		gc.unlock()
		return c.err
	}
	gc.unlock()
	err := gc.read(ctx, id)
	if errors.Is(err, errTransient) {
		return err // not remembered
	}
	gc.lock()
	if len(gc.cache) > 10000 {
		clear(gc.cache)
	}
	gc.cache[id] = checked{err: err, at: now}
	gc.unlock()
	return err
}

var errTransient = errors.New("the grant cannot be read right now")

func (gc *grantChecker) read(ctx context.Context, id string) error {
	var g grant
	_, found, err := gc.s.load(ctx, grantsDir+id+".json", &g)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", errTransient, err)
	case !found:
		return errors.New("unknown grant")
	case g.Revoked != nil:
		return errors.New("the grant was revoked")
	case gc.s.now().After(g.Expires):
		return errors.New("the grant expired")
	}
	active, err := gc.s.cfg.Owners.Active(ctx, g.Owner)
	if err != nil {
		return fmt.Errorf("%w: %v", errTransient, err)
	}
	if !active {
		return errors.New("the owner key that approved the grant was revoked")
	}
	return nil
}
