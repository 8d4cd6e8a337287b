package auth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// Cursor errors, tested with errors.Is. Tools report each as args-invalid.
var (
	ErrCursorInvalid  = errors.New("cursor is invalid")
	ErrCursorExpired  = errors.New("cursor expired")
	ErrCursorMismatch = errors.New("cursor was issued for other arguments or another caller")
)

// Cursors signs and opens paging cursors: opaque, URL-safe tokens that carry
// a small state (e.g. the next offset) and are bound to the caller, the tool
// and the exact arguments of the call that issued them, with an expiry. No
// server state is kept, so any instance holding the key can open any cursor.
//
// A token is base64url(payload) "." base64url(HMAC-SHA256(key, payload)),
// where payload is {"v":1,"exp":unix seconds,"b":binding,"s":state} and
// binding is a keyed hash of (caller, tool, canonical arguments). The state
// is signed, not encrypted: never put secrets in it.
type Cursors struct {
	key []byte
	ttl time.Duration
	// Now is the clock; nil means time.Now. Tests inject one.
	Now func() time.Time
}

// NewCursors returns a signer with key (see LoadCursorKey) whose cursors
// live for ttl.
func NewCursors(key []byte, ttl time.Duration) *Cursors {
	return &Cursors{key: bytes.Clone(key), ttl: ttl}
}

// maxToken bounds the work Open does on hostile input.
const maxToken = 8192

// b64 decodes strictly: one encoding per value, so a token cannot be
// altered without failing its MAC.
var b64 = base64.RawURLEncoding.Strict()

type payload struct {
	V     int             `json:"v"`
	Exp   int64           `json:"exp"`
	Bind  []byte          `json:"b"`
	State json.RawMessage `json:"s"`
}

// Sign returns a cursor carrying state for caller's call of tool with args.
// args is any JSON-encodable value; a top-level "cursor" key is ignored, so
// the call that presents the cursor binds to the same arguments.
func (c *Cursors) Sign(caller, tool string, args any, state any) (string, error) {
	bind, err := c.binding(caller, tool, args)
	if err != nil {
		return "", err
	}
	st, err := json.Marshal(state)
	if err != nil {
		return "", fmt.Errorf("cursor state: %w", err)
	}
	raw, err := json.Marshal(payload{V: 1, Exp: c.now().Add(c.ttl).Unix(), Bind: bind, State: st})
	if err != nil {
		return "", err
	}
	body := base64.RawURLEncoding.EncodeToString(raw)
	return body + "." + base64.RawURLEncoding.EncodeToString(c.mac(body)), nil
}

// Open verifies token and decodes its state into state (a pointer, or nil to
// skip). It fails with ErrCursorInvalid (malformed or forged),
// ErrCursorMismatch (issued for another caller, tool or arguments) or
// ErrCursorExpired.
func (c *Cursors) Open(token, caller, tool string, args any, state any) error {
	if len(token) > maxToken {
		return ErrCursorInvalid
	}
	body, sig, ok := strings.Cut(token, ".")
	if !ok {
		return ErrCursorInvalid
	}
	mac, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, c.mac(body)) {
		return ErrCursorInvalid
	}
	raw, err := b64.DecodeString(body)
	if err != nil {
		return ErrCursorInvalid
	}
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil || p.V != 1 {
		return ErrCursorInvalid
	}
	bind, err := c.binding(caller, tool, args)
	if err != nil {
		return err
	}
	if !hmac.Equal(bind, p.Bind) {
		return ErrCursorMismatch
	}
	if c.now().Unix() > p.Exp {
		return ErrCursorExpired
	}
	if state != nil {
		if err := json.Unmarshal(p.State, state); err != nil {
			return ErrCursorInvalid
		}
	}
	return nil
}

func (c *Cursors) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// mac authenticates a token's payload.
func (c *Cursors) mac(body string) []byte {
	h := hmac.New(sha256.New, c.key)
	h.Write([]byte("sheaf cursor mac\x00"))
	h.Write([]byte(body))
	return h.Sum(nil)
}

// binding is a keyed hash of what a cursor is bound to. Each part is length
// prefixed, so no two different triples hash the same input.
func (c *Cursors) binding(caller, tool string, args any) ([]byte, error) {
	canon, err := canonicalArgs(args)
	if err != nil {
		return nil, err
	}
	h := hmac.New(sha256.New, c.key)
	h.Write([]byte("sheaf cursor binding\x00"))
	for _, part := range [][]byte{[]byte(caller), []byte(tool), canon} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)[:16], nil
}

// canonicalArgs is args as JSON with object keys sorted, numbers as written
// and a top-level "cursor" key removed.
func canonicalArgs(args any) ([]byte, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("cursor arguments: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("cursor arguments: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "cursor")
	}
	return json.Marshal(v)
}

// CursorKeyPath is the store object holding a vault's generated cursor key,
// shared by every server instance of the vault.
const CursorKeyPath = ".sheaf/keys/cursor"

// MinKeyBytes is the shortest cursor key accepted.
const MinKeyBytes = 16

// ParseKey decodes a configured key: hex when the whole string is hex (at
// least 2*MinKeyBytes digits), else the string's bytes. It must give at
// least MinKeyBytes bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	key := []byte(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) >= MinKeyBytes {
		key = b
	}
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("cursor key too short: %d bytes, want at least %d", len(key), MinKeyBytes)
	}
	return key, nil
}

// LoadCursorKey returns the cursor key: the configured one when set (e.g.
// SHEAF_CURSOR_KEY, see ParseKey), else the one stored at CursorKeyPath,
// creating it (32 random bytes, hex) when missing. Creation is a conditional
// write, so servers starting together agree: the loser of the race re-reads
// the winner's key.
func LoadCursorKey(ctx context.Context, st store.Store, configured string) ([]byte, error) {
	if configured != "" {
		return ParseKey(configured)
	}
	for attempt := 0; attempt < 3; attempt++ {
		data, _, err := st.Get(ctx, CursorKeyPath, 4096)
		switch {
		case err == nil:
			key, err := hex.DecodeString(strings.TrimSpace(string(data)))
			if err != nil || len(key) < MinKeyBytes {
				return nil, fmt.Errorf("%s is corrupt: want at least %d hex-encoded bytes", CursorKeyPath, MinKeyBytes)
			}
			return key, nil
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("reading %s: %w", CursorKeyPath, err)
		}
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		_, err = st.Put(ctx, CursorKeyPath, []byte(hex.EncodeToString(key)+"\n"), store.PutOptions{IfNoneMatch: true})
		switch {
		case err == nil:
			return key, nil
		case !errors.Is(err, store.ErrConflict):
			return nil, fmt.Errorf("creating %s: %w", CursorKeyPath, err)
		}
		// Another server created it first: read theirs.
	}
	return nil, fmt.Errorf("%s: gave up after repeated write conflicts", CursorKeyPath)
}
