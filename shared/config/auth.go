package config

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauthserver"
	"github.com/sheaf-dev/sheaf/shared/auth/ssmkeys"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

// How often each kind of keys source is re-read, so that added and revoked
// keys take effect without a restart: a local file costs nothing, an S3 GET
// a little, an SSM call counts against the account's API rate.
const (
	fileKeysEvery  = time.Second
	cloudKeysEvery = 10 * time.Second
	ssmKeysEvery   = time.Minute
)

// KeySource returns where the API keys live and whether --keys named them
// explicitly: a file, an SSM parameter (ssm:NAME), or by default KeysPath in
// the vault's own store (vaultStore). "none" gives a nil source. It makes no
// network call.
func (c *Config) KeySource(ctx context.Context, vaultStore store.Store) (src auth.KeySource, explicit bool, every time.Duration, err error) {
	switch {
	case c.Keys == "none":
		return nil, false, 0, nil
	case c.Keys == "":
		if vaultStore == nil {
			return nil, false, 0, nil
		}
		every := fileKeysEvery
		if IsCloud(c.Vault) {
			every = cloudKeysEvery
		}
		name := auth.KeysPath + " in the vault"
		if w, ok := vaultStore.(interface{ Where(string) string }); ok && w.Where(auth.KeysPath) != "" {
			name = w.Where(auth.KeysPath) // a folder vault's keys, kept outside it
		}
		return auth.StoreKeys{Store: vaultStore, Name: name}, false, every, nil
	case ssmkeys.IsURL(c.Keys):
		u, err := ssmkeys.ParseURL(c.Keys)
		if err != nil {
			return nil, false, 0, err
		}
		s, err := ssmkeys.Open(ctx, u)
		return s, true, ssmKeysEvery, err
	}
	abs, err := filepath.Abs(c.Keys)
	if err != nil {
		return nil, false, 0, err
	}
	dir, name := filepath.Split(abs)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, 0, fmt.Errorf("--keys %s: %w", c.Keys, err)
	}
	st, err := fs.OpenWith(dir, fs.Options{Private: true, LockFile: abs + ".lock"})
	if err != nil {
		return nil, false, 0, fmt.Errorf("--keys %s: %w", c.Keys, err)
	}
	return auth.StoreKeys{Store: st, Path: name, Name: abs}, true, fileKeysEvery, nil
}

// HTTPAuth is who may call the HTTP endpoint.
type HTTPAuth struct {
	Auth     *auth.Authenticator
	Resource *oauth.Verifier     // nil without OAuth
	Builtin  *oauthserver.Server // the built-in authorization server; nil without --oauth-builtin
}

// OpenAuth wires the HTTP endpoint's authentication from the keys source
// (see KeySource), the shared --token and the OAuth settings. require
// demands a credential even while no keys file exists (a server reachable
// beyond loopback). It makes no network call.
func OpenAuth(ctx context.Context, c *Config, vaultStore store.Store, require bool) (*HTTPAuth, error) {
	src, explicit, every, err := c.KeySource(ctx, vaultStore)
	if err != nil {
		return nil, err
	}
	a := &auth.Authenticator{Token: c.Token, Require: require || explicit}
	if src != nil {
		a.Keys = auth.NewKeyring(src, every)
	}
	h := &HTTPAuth{Auth: a}
	switch {
	case c.OAuthBuiltin:
		if err := h.openBuiltin(c, vaultStore); err != nil {
			return nil, err
		}
	case c.OAuthIssuer != "" || c.OAuthAudience != "":
		v, err := oauth.New(oauth.Config{Issuer: c.OAuthIssuer, Audience: c.OAuthAudience, JWKSURL: c.OAuthJWKSURL, ScopePrefix: c.OAuthScopePrefix,
			Audiences: c.OAuthAudiences, ClientIDs: c.OAuthClientIDs})
		if err != nil {
			return nil, fmt.Errorf("--oauth-issuer/--oauth-audience: %w", err)
		}
		a.OAuth, h.Resource = v, v
	case c.OAuthJWKSURL != "":
		return nil, errors.New("--oauth-jwks-url needs --oauth-issuer and --oauth-audience")
	}
	return h, nil
}

// openBuiltin wires the built-in authorization server over the vault's
// store and its resource server.
func (h *HTTPAuth) openBuiltin(c *Config, vaultStore store.Store) error {
	switch {
	case c.OAuthIssuer != "" || c.OAuthJWKSURL != "" || len(c.OAuthAudiences) > 0 || len(c.OAuthClientIDs) > 0:
		return errors.New("--oauth-builtin is its own issuer: leave --oauth-issuer, --oauth-jwks-url, --oauth-token-audiences and --oauth-client-ids unset")
	case c.OAuthAudience == "":
		return errors.New("--oauth-builtin needs --oauth-audience: this server's public MCP URL (https://.../mcp)")
	case h.Auth.Keys == nil:
		return errors.New("--oauth-builtin needs the keys file (an owner key approves each client): not with --keys none")
	case vaultStore == nil:
		return errors.New("--oauth-builtin needs the vault's store for its state")
	}
	srv, err := oauthserver.New(oauthserver.Config{
		Store: vaultStore, Audience: c.OAuthAudience, ScopePrefix: c.OAuthScopePrefix,
		Owners: oauthserver.KeyringOwners{Keys: h.Auth.Keys}, PrivateHosts: c.OAuthPrivateHosts,
	})
	if err != nil {
		return fmt.Errorf("--oauth-builtin: %w", err)
	}
	v, err := srv.Verifier()
	if err != nil {
		return fmt.Errorf("--oauth-builtin: %w", err)
	}
	h.Auth.OAuth, h.Resource, h.Builtin = v, v, srv
	return nil
}

// HasCredentials reports whether anyone can authenticate at all: a token,
// OAuth, or at least one key (it reads the keys).
func (h *HTTPAuth) HasCredentials(ctx context.Context) (bool, error) {
	if h.Auth.Token != "" || h.Auth.OAuth != nil {
		return true, nil
	}
	if h.Auth.Keys == nil {
		return false, nil
	}
	set, _, err := h.Auth.Keys.Keys(ctx)
	return set.Len() > 0, err
}

// Routes are the handlers to serve beside the endpoint with no credential
// asked: the built-in authorization server's, by path; nil without it.
func (h *HTTPAuth) Routes() map[string]http.Handler {
	if h.Builtin == nil {
		return nil
	}
	routes := map[string]http.Handler{}
	for _, p := range h.Builtin.Paths() {
		routes[p] = h.Builtin
	}
	return routes
}

// Close stops background work (the JWKS refresh).
func (h *HTTPAuth) Close() {
	if h.Resource != nil {
		h.Resource.Close()
	}
}
