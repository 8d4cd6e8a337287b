package auth

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

type testArgs struct {
	Query  string `json:"query"`
	K      int    `json:"k"`
	Cursor string `json:"cursor,omitempty"`
}

type testState struct {
	Offset int `json:"o"`
}

var testKey = []byte("0123456789abcdef0123456789abcdef")

func clockAt(t *time.Time) func() time.Time { return func() time.Time { return *t } }

func TestCursorRoundTrip(t *testing.T) {
	c := NewCursors(testKey, time.Minute)
	args := testArgs{Query: "soil", K: 5}
	tok, err := c.Sign("alice", "search_and_read", args, testState{Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(tok, "+/= ") {
		t.Errorf("token %q is not URL-safe", tok)
	}
	// The cursor field itself is not part of the binding.
	args.Cursor = tok
	var st testState
	if err := c.Open(tok, "alice", "search_and_read", args, &st); err != nil {
		t.Fatal(err)
	}
	if st.Offset != 3 {
		t.Errorf("state = %+v, want offset 3", st)
	}
	// Same arguments as a map, keys in another order: same binding.
	if err := c.Open(tok, "alice", "search_and_read", map[string]any{"k": 5, "query": "soil"}, nil); err != nil {
		t.Errorf("equivalent map arguments: %v", err)
	}
}

func TestCursorRejects(t *testing.T) {
	now := time.Date(2026, 5, 29, 12, 0, 0, 0, time.UTC)
	c := NewCursors(testKey, time.Minute)
	c.Now = clockAt(&now)
	args := testArgs{Query: "soil", K: 5}
	tok, err := c.Sign("alice", "search_and_read", args, testState{Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	open := func(tok, caller, tool string, args any) error {
		return c.Open(tok, caller, tool, args, &testState{})
	}

	// Every single-byte change is caught.
	for i := range len(tok) {
		for _, b := range []byte{'A', '_', '.', 'z'} {
			if tok[i] == b {
				continue
			}
			bad := tok[:i] + string(b) + tok[i+1:]
			if err := open(bad, "alice", "search_and_read", args); !errors.Is(err, ErrCursorInvalid) {
				t.Fatalf("byte %d changed to %q: err = %v, want ErrCursorInvalid", i, b, err)
			}
		}
	}
	for name, bad := range map[string]string{
		"empty": "", "no dot": "abc", "truncated": tok[:len(tok)-3], "extra": tok + "x",
		"two dots": tok + ".x", "huge": strings.Repeat("a", maxToken+1),
	} {
		if err := open(bad, "alice", "search_and_read", args); !errors.Is(err, ErrCursorInvalid) {
			t.Errorf("%s: err = %v, want ErrCursorInvalid", name, err)
		}
	}
	if err := open(tok, "bob", "search_and_read", args); !errors.Is(err, ErrCursorMismatch) {
		t.Errorf("another caller: err = %v, want ErrCursorMismatch", err)
	}
	if err := open(tok, "alice", "search", args); !errors.Is(err, ErrCursorMismatch) {
		t.Errorf("another tool: err = %v, want ErrCursorMismatch", err)
	}
	if err := open(tok, "alice", "search_and_read", testArgs{Query: "soils", K: 5}); !errors.Is(err, ErrCursorMismatch) {
		t.Errorf("changed query: err = %v, want ErrCursorMismatch", err)
	}
	if err := open(tok, "alice", "search_and_read", testArgs{Query: "soil", K: 6}); !errors.Is(err, ErrCursorMismatch) {
		t.Errorf("changed k: err = %v, want ErrCursorMismatch", err)
	}
	// Length prefixes: moving bytes between caller and tool changes the binding.
	if err := open(tok, "alicesearch_and_rea", "d", args); !errors.Is(err, ErrCursorMismatch) {
		t.Errorf("shifted caller/tool: err = %v, want ErrCursorMismatch", err)
	}
	other := NewCursors([]byte("another key, also 32 bytes long!"), time.Minute)
	if err := other.Open(tok, "alice", "search_and_read", args, nil); !errors.Is(err, ErrCursorInvalid) {
		t.Errorf("another key: err = %v, want ErrCursorInvalid", err)
	}

	now = now.Add(59 * time.Second)
	if err := open(tok, "alice", "search_and_read", args); err != nil {
		t.Errorf("before expiry: %v", err)
	}
	now = now.Add(2 * time.Second)
	if err := open(tok, "alice", "search_and_read", args); !errors.Is(err, ErrCursorExpired) {
		t.Errorf("after expiry: err = %v, want ErrCursorExpired", err)
	}
}

func TestCursorBadState(t *testing.T) {
	c := NewCursors(testKey, time.Minute)
	tok, err := c.Sign("a", "t", nil, "not an object")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Open(tok, "a", "t", nil, &testState{}); !errors.Is(err, ErrCursorInvalid) {
		t.Errorf("state of the wrong shape: err = %v, want ErrCursorInvalid", err)
	}
	if _, err := c.Sign("a", "t", func() {}, nil); err == nil {
		t.Error("unencodable arguments: no error")
	}
}

func FuzzCursorOpen(f *testing.F) {
	c := NewCursors(testKey, time.Hour)
	tok, _ := c.Sign("a", "t", testArgs{Query: "q"}, testState{Offset: 1})
	f.Add(tok)
	f.Add("")
	f.Add("a.b")
	f.Fuzz(func(t *testing.T, s string) {
		err := c.Open(s, "a", "t", testArgs{Query: "q"}, &testState{})
		if err == nil && s != tok {
			// Only a byte-identical token can pass: base64url without padding
			// has one encoding per value, and the MAC covers the payload.
			t.Fatalf("forged token accepted: %q", s)
		}
	})
}

func TestParseKey(t *testing.T) {
	hexKey := strings.Repeat("ab", 16)
	if k, err := ParseKey(hexKey); err != nil || len(k) != 16 || k[0] != 0xab {
		t.Errorf("hex key: %x, %v", k, err)
	}
	if k, err := ParseKey("a passphrase, not hex"); err != nil || string(k) != "a passphrase, not hex" {
		t.Errorf("string key: %q, %v", k, err)
	}
	for _, bad := range []string{"", "short", strings.Repeat("ab", 8)[:15]} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q): no error", bad)
		}
	}
}

func TestLoadCursorKey(t *testing.T) {
	ctx := context.Background()
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	// Servers starting together all end up with the one stored key.
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := LoadCursorKey(ctx, st, "")
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Fatalf("servers disagree on the key: %x vs %x", k, keys[0])
		}
	}
	again, err := LoadCursorKey(ctx, st, "")
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("reload: %x, %v; want %x", again, err, keys[0])
	}
	if k, err := LoadCursorKey(ctx, st, "configured key, 16+ bytes"); err != nil || string(k) != "configured key, 16+ bytes" {
		t.Errorf("configured key: %q, %v", k, err)
	}

	if _, err := st.Put(ctx, CursorKeyPath, []byte("zz\n"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCursorKey(ctx, st, ""); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupt key: err = %v", err)
	}
}

func TestIdentity(t *testing.T) {
	ctx := context.Background()
	if got := IdentityFrom(ctx).Subject; got != LocalSubject {
		t.Errorf("default subject %q, want %q", got, LocalSubject)
	}
	if got := IdentityFrom(WithIdentity(ctx, Identity{Subject: "tok-42"})).Subject; got != "tok-42" {
		t.Errorf("subject %q, want tok-42", got)
	}
	if got := IdentityFrom(WithIdentity(ctx, Identity{})).Subject; got != LocalSubject {
		t.Errorf("empty subject %q, want %q", got, LocalSubject)
	}
}
