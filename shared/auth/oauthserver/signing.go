package oauthserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// Signing keys rotate: each signs access tokens for keyLifetime. Its
// successor is published publishAhead before it starts signing, so that
// verifiers (which re-read the keys hourly, and at once for an unknown key
// id) know it before they meet a token it signed; a key stays published
// until every token it signed has expired.
const (
	keyLifetime  = 30 * 24 * time.Hour
	publishAhead = 2 * time.Hour
)

// signingFile is the signing keys as stored (private: under .sheaf/, in a
// private bucket).
type signingFile struct {
	Keys []signingKey `json:"keys"`
}

// signingKey is one ES256 key.
type signingKey struct {
	KID       string    `json:"kid"`
	Created   time.Time `json:"created"`
	Activates time.Time `json:"activates"` // signs from then until its successor activates
	PKCS8     string    `json:"pkcs8"`     // base64 of the PKCS #8 DER private key

	priv *ecdsa.PrivateKey
}

func newSigningKey(now, activates time.Time) (signingKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return signingKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return signingKey{}, err
	}
	return signingKey{KID: randomID(8), Created: now, Activates: activates, PKCS8: base64.StdEncoding.EncodeToString(der), priv: priv}, nil
}

func (k *signingKey) private() (*ecdsa.PrivateKey, error) {
	if k.priv != nil {
		return k.priv, nil
	}
	der, err := base64.StdEncoding.DecodeString(k.PKCS8)
	if err != nil {
		return nil, err
	}
	p, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, err
	}
	priv, ok := p.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, errors.New("oauth signing key: not an ECDSA P-256 key")
	}
	k.priv = priv
	return priv, nil
}

// current is the key that signs at now: the newest one activated.
func (f *signingFile) current(now time.Time) *signingKey {
	var cur *signingKey
	for i := range f.Keys {
		k := &f.Keys[i]
		if !k.Activates.After(now) && (cur == nil || k.Activates.After(cur.Activates)) {
			cur = k
		}
	}
	return cur
}

// rotate adds a key when none signs or the current one's successor is
// due to be published, and drops keys whose tokens have all expired. It
// reports whether it changed f.
func (f *signingFile) rotate(now time.Time, tokenTTL time.Duration) (bool, error) {
	changed := false
	cur := f.current(now)
	next := false
	for _, k := range f.Keys {
		if k.Activates.After(now) {
			next = true
		}
	}
	switch {
	case cur == nil:
		k, err := newSigningKey(now, now)
		if err != nil {
			return false, err
		}
		f.Keys, changed = append(f.Keys, k), true
	case !next && now.After(cur.Activates.Add(keyLifetime-publishAhead)):
		k, err := newSigningKey(now, cur.Activates.Add(keyLifetime))
		if err != nil {
			return false, err
		}
		f.Keys, changed = append(f.Keys, k), true
	}
	// A key is retired once a successor has been signing for longer than
	// a token lives (and a margin for clock skew): no token it signed is
	// valid any more.
	before := len(f.Keys)
	f.Keys = slices.DeleteFunc(slices.Clone(f.Keys), func(k signingKey) bool {
		for _, succ := range f.Keys {
			if succ.Activates.After(k.Activates) && now.Sub(succ.Activates) > tokenTTL+10*time.Minute {
				return true
			}
		}
		return false
	})
	return changed || len(f.Keys) != before, nil
}

// signer returns the key that signs now, rotating the stored keys when
// due. Concurrent instances race with conditional writes; the loser reads
// the winner's keys.
func (s *Server) signer(ctx context.Context) (*signingKey, error) {
	for range 4 {
		var f signingFile
		etag, found, err := s.load(ctx, signingPath, &f)
		if err != nil {
			return nil, err
		}
		changed, err := f.rotate(s.now(), s.cfg.AccessTTL)
		if err != nil {
			return nil, err
		}
		if changed {
			opts := store.PutOptions{IfMatch: etag}
			if !found {
				opts = store.PutOptions{IfNoneMatch: true}
			}
			if _, err := s.save(ctx, signingPath, f, opts); errors.Is(err, store.ErrConflict) {
				continue
			} else if err != nil {
				return nil, err
			}
			s.log().Info("oauth: signing keys rotated", "keys", len(f.Keys))
		}
		cur := f.current(s.now())
		if _, err := cur.private(); err != nil {
			return nil, err
		}
		return cur, nil
	}
	return nil, errors.New("oauth: the signing keys keep changing; try again")
}

// sign signs claims with k as an RFC 9068 access token.
func (k *signingKey) sign(claims jwt.MapClaims) (string, error) {
	priv, err := k.private()
	if err != nil {
		return "", err
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = k.KID
	tok.Header["typ"] = "at+jwt"
	return tok.SignedString(priv)
}

// jwks serves the public keys.
func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	var f signingFile
	if _, _, err := s.load(r.Context(), signingPath, &f); err != nil {
		s.serverError(w, "reading the signing keys", err)
		return
	}
	set := jwkset.NewMemoryStorage()
	for i := range f.Keys {
		priv, err := f.Keys[i].private()
		if err != nil {
			s.serverError(w, "reading the signing keys", err)
			return
		}
		jwk, err := jwkset.NewJWKFromKey(&priv.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{
			KID: f.Keys[i].KID, ALG: jwkset.AlgES256, USE: jwkset.UseSig}})
		if err != nil {
			s.serverError(w, "publishing the signing keys", err)
			return
		}
		if err := set.KeyWrite(r.Context(), jwk); err != nil {
			s.serverError(w, "publishing the signing keys", err)
			return
		}
	}
	data, err := set.JSONPublic(r.Context())
	if err != nil {
		s.serverError(w, "publishing the signing keys", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(data)
}

func (k signingKey) String() string { return fmt.Sprintf("key %s", k.KID) }
