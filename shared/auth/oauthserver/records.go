package oauthserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// Dir is where the authorization server keeps its state in the vault's
// store: under .sheaf/, which no tool and no index reads.
const Dir = ".sheaf/oauth/"

// The state's folders, each record one small JSON object named after an
// id or a hash of a secret (never the secret itself).
const (
	clientsDir  = Dir + "clients/"  // registered clients, by client id
	cimdDir     = Dir + "cimd/"     // fetched client metadata documents, by hash of the URL
	requestsDir = Dir + "requests/" // authorization requests awaiting consent, by request id
	codesDir    = Dir + "codes/"    // authorization codes, by hash
	refreshDir  = Dir + "refresh/"  // refresh tokens, by hash
	grantsDir   = Dir + "grants/"   // grants (a refresh token family), by id
	limitsDir   = Dir + "limits/"   // registration counters
	signingPath = Dir + "signing.json"
	sweepPath   = Dir + "sweep.json"
)

// maxRecord bounds a record read.
const maxRecord = 256 << 10

// client is a registered client, or one known by its metadata document.
type client struct {
	ID           string     `json:"client_id"`
	SecretHash   string     `json:"secret_hash,omitempty"` // hashSecret of the secret; "" for a public client
	Name         string     `json:"client_name,omitempty"`
	URI          string     `json:"client_uri,omitempty"`
	RedirectURIs []string   `json:"redirect_uris"`
	AuthMethod   string     `json:"token_endpoint_auth_method"`
	GrantTypes   []string   `json:"grant_types"`
	Created      time.Time  `json:"created"`
	Used         *time.Time `json:"used,omitempty"` // the first consent; unused clients expire
	Source       string     `json:"source,omitempty"`
	Metadata     bool       `json:"metadata_document,omitempty"` // a client id metadata document
	Expires      time.Time  `json:"expires,omitzero"`            // of a cached metadata document
}

// request is an authorization request awaiting the owner's consent.
type request struct {
	ID          string       `json:"id"`
	ClientID    string       `json:"client_id"`
	RedirectURI string       `json:"redirect_uri"`
	Redirected  bool         `json:"redirect_uri_given,omitempty"` // the request named it (the token request must too)
	State       string       `json:"state,omitempty"`
	Challenge   string       `json:"code_challenge"`
	Scopes      []auth.Scope `json:"scopes"` // asked for, weakest first
	CSRFHash    string       `json:"csrf_hash"`
	Expires     time.Time    `json:"expires"`
}

// grant is what the owner approved for a client: every token issued under
// it carries it. Its id names the refresh token family.
type grant struct {
	ID          string     `json:"id"`
	ClientID    string     `json:"client_id"`
	ClientName  string     `json:"client_name,omitempty"`
	Owner       string     `json:"owner"` // the approving owner key's id
	Scope       auth.Scope `json:"scope"`
	Folders     []string   `json:"folders,omitempty"`
	ProposeOnly bool       `json:"propose_only,omitempty"`
	Created     time.Time  `json:"created"`
	Expires     time.Time  `json:"expires"`
	Revoked     *time.Time `json:"revoked,omitempty"`
	Why         string     `json:"why,omitempty"` // why it was revoked
}

// code is an authorization code, single-use.
type code struct {
	ClientID    string    `json:"client_id"`
	RedirectURI string    `json:"redirect_uri"`
	Redirected  bool      `json:"redirect_uri_given,omitempty"`
	Challenge   string    `json:"code_challenge"`
	Grant       grant     `json:"grant"`
	Expires     time.Time `json:"expires"`
	Used        bool      `json:"used,omitempty"`
}

// refresh is a refresh token; rotated (Used) on every use.
type refresh struct {
	Grant    string    `json:"grant"`
	ClientID string    `json:"client_id"`
	Expires  time.Time `json:"expires"`
	Used     bool      `json:"used,omitempty"`
}

// randomToken is prefix followed by 32 random bytes in base64url.
func randomToken(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// randomID is n random bytes in hex.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// hashSecret names a record after a secret without storing the secret:
// the secrets are 256 random bits, so a fast hash is enough (see
// auth.HashKey).
func hashSecret(kind, secret string) string {
	h := sha256.New()
	h.Write([]byte("sheaf oauth " + kind + "\x00"))
	h.Write([]byte(secret))
	return hex.EncodeToString(h.Sum(nil))
}

// load reads the record at p into v; found is false when there is none.
func (s *Server) load(ctx context.Context, p string, v any) (etag string, found bool, err error) {
	data, obj, err := s.cfg.Store.Get(ctx, p, maxRecord)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return "", false, fmt.Errorf("oauth state %s: %w", p, err)
	}
	return obj.ETag, true, nil
}

// save writes v at p under opts' condition (store.ErrConflict when it
// fails) and returns the new ETag.
func (s *Server) save(ctx context.Context, p string, v any, opts store.PutOptions) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	obj, err := s.cfg.Store.Put(ctx, p, data, opts)
	return obj.ETag, err
}
