package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// KeysPath is where a vault keeps its API keys: an object in the vault's
// store (a file under the folder vault, an object in the bucket's prefix).
const KeysPath = ".sheaf/keys.json"

// MaxKeysFile bounds the keys file read.
const MaxKeysFile = 1 << 20

// KeyFile is the keys file as stored: JSON, every key hashed. It is the same
// document in every place it can live (a local file, the bucket's
// .sheaf/keys.json, an SSM parameter), so it can be copied between them.
type KeyFile struct {
	Version int   `json:"version"`
	Keys    []Key `json:"keys"`
}

// Key is one API key as stored. The secret itself is never stored: only its
// hash (see HashKey).
type Key struct {
	ID          string   `json:"id"`   // the public part of the key, 16 hex digits
	Name        string   `json:"name"` // a label for people
	Hash        string   `json:"hash"` // "sha256:" + hex of HashKey(secret)
	Scopes      []Scope  `json:"scopes"`
	Folders     []string `json:"folders,omitempty"` // allowlist rules (see Folders); empty: the whole vault
	ProposeOnly bool     `json:"propose_only,omitempty"`
	Profile     string   `json:"profile,omitempty"` // core or full; "": the server's
	// Owner marks the vault owner's key: it approves OAuth clients on the
	// built-in authorization server's consent page (and chooses what they
	// may do), and is refused as a bearer credential, so that the one
	// secret typed into a browser is no API key.
	Owner   bool       `json:"owner,omitempty"`
	Created time.Time  `json:"created"`
	Expires *time.Time `json:"expires,omitempty"`
	Revoked *time.Time `json:"revoked,omitempty"`
}

// Status is the key's state at now: "active", "expired" or "revoked".
func (k Key) Status(now time.Time) string {
	switch {
	case k.Revoked != nil:
		return "revoked"
	case k.Expires != nil && !now.Before(*k.Expires):
		return "expired"
	}
	return "active"
}

// A key as handed out is "sheaf_" + ID + "_" + secret: 16 hex digits that
// name the key (safe to log, used to revoke it) and 32 random bytes in
// base64url. The prefix lets secret scanners recognise leaked keys.
const keyPrefix = "sheaf_"

var (
	// compiled on first use (sync.OnceValue), not at start-up
	idPattern    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })
	hashPattern  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })
	tokenPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sheaf_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$`) })
)

// HashKey is the stored hash of a key: SHA-256 over a domain tag and the
// whole key string.
//
// Not a slow password hash, on purpose: a key carries 256 random bits, so
// even someone holding the keys file cannot search for a preimage (2^256
// guesses at any speed), which is the only attack a slow hash slows down;
// bcrypt or Argon2 would instead cost tens of milliseconds of CPU on every
// request of a stateless server and hand attackers a cheap way to burn it.
// Passwords, which people choose, would need one; these are never chosen.
func HashKey(key string) string {
	h := sha256.New()
	h.Write([]byte("sheaf api key v1\x00"))
	h.Write([]byte(key))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// NewKeyOptions describe a key to add.
type NewKeyOptions struct {
	Name        string
	Scopes      []Scope
	Folders     []string
	ProposeOnly bool
	Profile     string
	Owner       bool      // an owner key (see Key.Owner): admin, the whole vault
	Expires     time.Time // zero: never
}

// ParseKeyFile reads and validates a keys file. Unknown fields are errors:
// a misspelt "propose_only" must not silently give a key more than meant.
// An empty document (zero bytes) is a file with no keys.
func ParseKeyFile(data []byte) (*KeyFile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &KeyFile{Version: 1}, nil
	}
	if len(data) > MaxKeysFile {
		return nil, fmt.Errorf("keys file: larger than %d bytes", MaxKeysFile)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var kf KeyFile
	if err := dec.Decode(&kf); err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("keys file: trailing data after the JSON document")
	}
	if kf.Version != 1 {
		return nil, fmt.Errorf("keys file: version %d, want 1", kf.Version)
	}
	seen := map[string]bool{}
	for i, k := range kf.Keys {
		if err := k.validate(); err != nil {
			return nil, fmt.Errorf("keys file: key %d (%q): %w", i, k.ID, err)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("keys file: two keys with id %s", k.ID)
		}
		seen[k.ID] = true
	}
	return &kf, nil
}

func (k Key) validate() error {
	switch {
	case !idPattern().MatchString(k.ID):
		return errors.New("id must be 16 lower-case hex digits")
	case !hashPattern().MatchString(k.Hash):
		return errors.New(`hash must be "sha256:" and 64 hex digits`)
	case !utf8.ValidString(k.Name) || len(k.Name) > 200:
		return errors.New("name must be UTF-8 text of at most 200 bytes")
	case len(k.Scopes) == 0:
		return errors.New("no scopes")
	case k.Profile != "" && k.Profile != ProfileCore && k.Profile != ProfileFull:
		return fmt.Errorf("profile %q (core or full)", k.Profile)
	}
	for _, s := range k.Scopes {
		if s.rank() < 0 {
			return fmt.Errorf("unknown scope %q (read, write or admin)", s)
		}
	}
	if k.Owner && (len(k.Scopes) != 1 || k.Scopes[0] != ScopeAdmin || len(k.Folders) > 0 || k.ProposeOnly || k.Profile != "") {
		return errors.New("an owner key has the admin scope over the whole vault, and nothing else")
	}
	if _, err := ParseFolders(k.Folders); err != nil {
		return err
	}
	return nil
}

// Marshal encodes the keys file, indented, with a final newline.
func (kf *KeyFile) Marshal() []byte {
	if kf.Version == 0 {
		kf.Version = 1
	}
	if kf.Keys == nil {
		kf.Keys = []Key{}
	}
	data, _ := json.MarshalIndent(kf, "", "  ") // plain data always encodes
	return append(data, '\n')
}

// Add creates a key, appends it and returns the key string: the only time
// it exists outside the caller's hands.
func (kf *KeyFile) Add(o NewKeyOptions, now time.Time) (string, Key, error) {
	var id [8]byte
	var secret [32]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", Key{}, err
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return "", Key{}, err
	}
	token := keyPrefix + hex.EncodeToString(id[:]) + "_" + base64.RawURLEncoding.EncodeToString(secret[:])
	k := Key{
		ID: hex.EncodeToString(id[:]), Name: o.Name, Hash: HashKey(token),
		Scopes: slices.Clone(o.Scopes), Folders: slices.Clone(o.Folders), ProposeOnly: o.ProposeOnly,
		Profile: o.Profile, Owner: o.Owner, Created: now.UTC().Truncate(time.Second),
	}
	if !o.Expires.IsZero() {
		exp := o.Expires.UTC().Truncate(time.Second)
		k.Expires = &exp
	}
	if err := k.validate(); err != nil {
		return "", Key{}, err
	}
	if slices.ContainsFunc(kf.Keys, func(o Key) bool { return o.ID == k.ID }) {
		return "", Key{}, errors.New("key id collision; try again")
	}
	kf.Keys = append(kf.Keys, k)
	return token, k, nil
}

// Revoke marks the key named by idOrName (its id, or a name no other key
// has) revoked at now. Revoking a revoked key is not an error.
func (kf *KeyFile) Revoke(idOrName string, now time.Time) (Key, error) {
	var hits []int
	for i, k := range kf.Keys {
		if k.ID == idOrName {
			hits = []int{i}
			break
		}
		if k.Name == idOrName {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 0:
		return Key{}, fmt.Errorf("no key with id or name %q", idOrName)
	case 1:
	default:
		return Key{}, fmt.Errorf("%d keys are named %q: revoke one by its id", len(hits), idOrName)
	}
	k := &kf.Keys[hits[0]]
	if k.Revoked == nil {
		t := now.UTC().Truncate(time.Second)
		k.Revoked = &t
	}
	return *k, nil
}

// KeySet is a parsed keys file ready to authenticate against.
type KeySet struct {
	keys map[string]compiledKey // by id
}

type compiledKey struct {
	Key
	hash    []byte
	folders *Folders
}

// NewKeySet compiles a validated keys file.
func NewKeySet(kf *KeyFile) (*KeySet, error) {
	ks := &KeySet{keys: make(map[string]compiledKey, len(kf.Keys))}
	for _, k := range kf.Keys {
		f, err := ParseFolders(k.Folders)
		if err != nil {
			return nil, err
		}
		h, _ := hex.DecodeString(strings.TrimPrefix(k.Hash, "sha256:"))
		ks.keys[k.ID] = compiledKey{Key: k, hash: h, folders: f}
	}
	return ks, nil
}

// Len is the number of keys, revoked and expired ones included.
func (ks *KeySet) Len() int {
	if ks == nil {
		return 0
	}
	return len(ks.keys)
}

// LooksLikeKey reports whether token has the shape of a Sheaf API key.
func LooksLikeKey(token string) bool { return tokenPattern().MatchString(token) }

// Authenticate returns the identity of an active key; ok is false for
// anything else (malformed, unknown, revoked, expired, an owner key),
// without saying which. The hash comparison takes constant time.
func (ks *KeySet) Authenticate(token string, now time.Time) (id Identity, ok bool) {
	k, ok := ks.active(token, now)
	if !ok || k.Owner {
		return Identity{}, false
	}
	return Identity{
		Subject: "key:" + k.ID, Name: k.Name, Granted: slices.Clone(k.Scopes),
		Folders: k.folders, ProposeOnly: k.ProposeOnly, Profile: k.Profile,
	}, true
}

// active returns the active key token is.
func (ks *KeySet) active(token string, now time.Time) (compiledKey, bool) {
	if ks == nil {
		return compiledKey{}, false
	}
	m := tokenPattern().FindStringSubmatch(token)
	if m == nil {
		return compiledKey{}, false
	}
	k, found := ks.keys[m[1]]
	got, _ := hex.DecodeString(strings.TrimPrefix(HashKey(token), "sha256:"))
	if !found || subtle.ConstantTimeCompare(got, k.hash) != 1 || k.Status(now) != "active" {
		return compiledKey{}, false
	}
	return k, true
}

// Owner returns the active owner key token is; ok is false for anything
// else, without saying which.
func (ks *KeySet) Owner(token string, now time.Time) (Key, bool) {
	k, ok := ks.active(token, now)
	if !ok || !k.Owner {
		return Key{}, false
	}
	return k.Key, true
}

// OwnerActive reports whether the owner key with this id is still active
// (not revoked, not expired): what the grants it approved live by.
func (ks *KeySet) OwnerActive(id string, now time.Time) bool {
	if ks == nil {
		return false
	}
	k, ok := ks.keys[id]
	return ok && k.Owner && k.Status(now) == "active"
}

// Owners counts the active owner keys at now.
func (ks *KeySet) Owners(now time.Time) int {
	n := 0
	if ks != nil {
		for _, k := range ks.keys {
			if k.Owner && k.Status(now) == "active" {
				n++
			}
		}
	}
	return n
}

// TokenIdentity is the identity of the single shared --token (SHEAF_TOKEN),
// kept from before keys: every scope, the whole vault. Its subject is a
// hash of the token, as it always was, so cursors issued to it stay valid.
func TokenIdentity(token string) Identity {
	sum := sha256.Sum256([]byte(token))
	return Identity{Subject: "token:" + hex.EncodeToString(sum[:8]), Name: "token", Granted: []Scope{ScopeAdmin}}
}
