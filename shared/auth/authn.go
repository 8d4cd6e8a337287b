package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"strings"
	"time"
)

// ErrUnauthenticated means the request carries no acceptable credential:
// none, malformed, unknown, revoked or expired. Transports answer 401 with
// WWW-Authenticate and never say which.
var ErrUnauthenticated = errors.New("missing or invalid credentials")

// TokenVerifier checks an OAuth access token and maps it to an Identity.
// Any token it cannot accept fails with an error wrapping
// ErrUnauthenticated.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (Identity, error)
}

// Authenticator turns a request's bearer credential into an Identity. It
// knows three kinds: API keys from a Keyring, OAuth access tokens (JWTs)
// for a TokenVerifier, and the single shared Token kept from before keys.
type Authenticator struct {
	Token string        // the shared --token; "" for none
	Keys  *Keyring      // API keys; nil for none
	OAuth TokenVerifier // OAuth access tokens; nil for none
	// Require demands a credential even while no keys file exists (a
	// server listening beyond loopback, or keys configured explicitly).
	// Otherwise a server with no Token, no OAuth and no keys file serves
	// everyone as Local, as a loopback-only server always did.
	Require bool
	Now     func() time.Time // nil: time.Now
}

func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Required reports whether requests must carry a credential right now.
func (a *Authenticator) Required(ctx context.Context) (bool, error) {
	if a == nil {
		return false, nil
	}
	if a.Require || a.Token != "" || a.OAuth != nil {
		return true, nil
	}
	if a.Keys == nil {
		return false, nil
	}
	_, found, err := a.Keys.Keys(ctx)
	return found, err
}

// Authenticate returns the caller behind bearer ("" when the request had
// no Authorization: Bearer header). It fails with ErrUnauthenticated for a
// credential it does not accept, or with another error when the keys cannot
// be read at all (the transport answers 503 then).
func (a *Authenticator) Authenticate(ctx context.Context, bearer string) (Identity, error) {
	required, err := a.Required(ctx)
	if err != nil {
		return Identity{}, err
	}
	switch {
	case !required && bearer == "":
		return Local(), nil
	case !required:
		// Nothing is configured: everyone is the local user, but callers
		// with different tokens still get their own cursors.
		id := TokenIdentity(bearer)
		id.Name = LocalSubject
		return id, nil
	case bearer == "" || len(bearer) > maxBearer:
		return Identity{}, ErrUnauthenticated
	}
	if LooksLikeKey(bearer) && a.Keys != nil {
		set, _, err := a.Keys.Keys(ctx)
		if err != nil {
			return Identity{}, err
		}
		if id, ok := set.Authenticate(bearer, a.now()); ok {
			return id, nil
		}
		return Identity{}, ErrUnauthenticated
	}
	if a.OAuth != nil && LooksLikeJWT(bearer) {
		id, err := a.OAuth.Verify(ctx, bearer)
		if err != nil {
			return Identity{}, ErrUnauthenticated
		}
		return id, nil
	}
	if a.Token != "" && tokenEqual(bearer, a.Token) {
		return TokenIdentity(a.Token), nil
	}
	return Identity{}, ErrUnauthenticated
}

// maxBearer bounds the credential examined; real JWTs stay well below it.
const maxBearer = 16 << 10

// tokenEqual compares in time independent of where the strings differ.
func tokenEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// LooksLikeJWT reports whether s has a compact JWS's shape: three
// base64url segments separated by dots.
func LooksLikeJWT(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		for _, r := range p {
			if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
