package auth

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func TestKeyLifecycle(t *testing.T) {
	kf := &KeyFile{Version: 1}
	exp := t0.Add(24 * time.Hour)
	tok, k, err := kf.Add(NewKeyOptions{Name: "phone", Scopes: []Scope{ScopeRead}, Folders: []string{"Projects/**"}, ProposeOnly: true, Profile: "core", Expires: exp}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !LooksLikeKey(tok) || !strings.Contains(tok, k.ID) {
		t.Fatalf("key %q does not have the documented shape", tok)
	}
	data := kf.Marshal()
	if strings.Contains(string(data), strings.SplitN(tok, "_", 3)[2]) { // the secret may hold "_" itself
		t.Fatal("the keys file holds the secret")
	}
	parsed, err := ParseKeyFile(data)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewKeySet(parsed)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := set.Authenticate(tok, t0)
	if !ok || id.Subject != "key:"+k.ID || id.Name != "phone" || !id.Has(ScopeRead) || id.Has(ScopeWrite) ||
		!id.ProposeOnly || id.Profile != "core" || !id.Folders.Allows("Projects/x.md") || id.Folders.Allows("x.md") {
		t.Fatalf("identity = %+v, ok %v", id, ok)
	}
	// Expired at its expiry, not before.
	if _, ok := set.Authenticate(tok, exp.Add(-time.Second)); !ok {
		t.Error("rejected before expiry")
	}
	if _, ok := set.Authenticate(tok, exp); ok {
		t.Error("accepted at expiry")
	}
	// Any change to the key fails.
	for _, bad := range []string{tok[:len(tok)-1] + "A", tok + "A", strings.Replace(tok, k.ID, "0000000000000000", 1), "", "sheaf_", tok[:20]} {
		if bad == tok {
			continue
		}
		if _, ok := set.Authenticate(bad, t0); ok {
			t.Errorf("accepted %q", bad)
		}
	}
	// Revoked, by name or id.
	if _, err := parsed.Revoke("phone", t0); err != nil {
		t.Fatal(err)
	}
	set, _ = NewKeySet(parsed)
	if _, ok := set.Authenticate(tok, t0); ok {
		t.Error("revoked key accepted")
	}
	if got := parsed.Keys[0].Status(t0); got != "revoked" {
		t.Errorf("status = %s", got)
	}
	if _, err := parsed.Revoke("nobody", t0); err == nil {
		t.Error("revoking an unknown key: no error")
	}
	// Two keys with one name: revoke needs the id.
	_, _, _ = parsed.Add(NewKeyOptions{Name: "dup", Scopes: []Scope{ScopeRead}}, t0)
	_, k3, _ := parsed.Add(NewKeyOptions{Name: "dup", Scopes: []Scope{ScopeRead}}, t0)
	if _, err := parsed.Revoke("dup", t0); err == nil {
		t.Error("ambiguous name revoked")
	}
	if _, err := parsed.Revoke(k3.ID, t0); err != nil {
		t.Error(err)
	}
	if _, _, err := parsed.Add(NewKeyOptions{Name: "x", Scopes: []Scope{"root"}}, t0); err == nil {
		t.Error("unknown scope accepted")
	}
	if _, _, err := parsed.Add(NewKeyOptions{Name: "x", Scopes: []Scope{ScopeRead}, Folders: []string{"../**"}}, t0); err == nil {
		t.Error("bad folder accepted")
	}
}

func TestScopesNest(t *testing.T) {
	for _, c := range []struct {
		granted []Scope
		want    string // which of read, write, admin it has
	}{
		{nil, ""}, {[]Scope{ScopeRead}, "r"}, {[]Scope{ScopeWrite}, "rw"}, {[]Scope{ScopeAdmin}, "rwa"}, {[]Scope{"bogus"}, ""},
	} {
		id := Identity{Granted: c.granted}
		got := ""
		for s, l := range map[Scope]string{ScopeRead: "r", ScopeWrite: "w", ScopeAdmin: "a"} {
			if id.Has(s) {
				got += l
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%v: has %q, want %q", c.granted, got, c.want)
		}
	}
	if !Local().Has(ScopeAdmin) || Local().Scoped() {
		t.Error("the local identity must hold everything")
	}
}

func TestParseKeyFileRejects(t *testing.T) {
	good := `{"version":1,"keys":[{"id":"0123456789abcdef","name":"a","hash":"sha256:` + strings.Repeat("0", 64) + `","scopes":["read"],"created":"2026-01-01T00:00:00Z"}]}`
	if _, err := ParseKeyFile([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"not json":      "{",
		"version":       strings.Replace(good, `"version":1`, `"version":2`, 1),
		"unknown field": strings.Replace(good, `"name":"a"`, `"name":"a","propse_only":true`, 1),
		"bad id":        strings.Replace(good, "0123456789abcdef", "XYZ", 1),
		"bad hash":      strings.Replace(good, "sha256:", "md5:", 1),
		"no scopes":     strings.Replace(good, `["read"]`, `[]`, 1),
		"unknown scope": strings.Replace(good, `["read"]`, `["root"]`, 1),
		"bad folder":    strings.Replace(good, `"scopes"`, `"folders":["/etc/**"],"scopes"`, 1),
		"bad profile":   strings.Replace(good, `"scopes"`, `"profile":"all","scopes"`, 1),
		"duplicate id":  strings.Replace(good, `}]}`, `},`+good[strings.Index(good, `{"id"`):len(good)-2]+`]}`, 1),
		"trailing":      good + "{}",
		"huge":          `{"version":1,"keys":[],"x":"` + strings.Repeat("a", MaxKeysFile) + `"}`,
	} {
		if _, err := ParseKeyFile([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if kf, err := ParseKeyFile(nil); err != nil || len(kf.Keys) != 0 {
		t.Errorf("empty file: %v, %v", kf, err)
	}
}

func FuzzParseKeyFile(f *testing.F) {
	kf := &KeyFile{}
	_, _, _ = kf.Add(NewKeyOptions{Name: "n", Scopes: []Scope{ScopeWrite}, Folders: []string{"a/**", "!a/b/**"}, Expires: t0}, t0)
	f.Add(kf.Marshal())
	f.Add([]byte(`{"version":1,"keys":[]}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		kf, err := ParseKeyFile(data)
		if err != nil {
			return
		}
		// What parses compiles, round-trips, and never authenticates a
		// token that is not a key.
		set, err := NewKeySet(kf)
		if err != nil {
			t.Fatalf("parsed but does not compile: %v", err)
		}
		again, err := ParseKeyFile(kf.Marshal())
		if err != nil || len(again.Keys) != len(kf.Keys) {
			t.Fatalf("does not round-trip: %v", err)
		}
		for _, k := range kf.Keys {
			if _, ok := set.Authenticate(k.ID, t0); ok {
				t.Fatal("a key id authenticated")
			}
			if _, ok := set.Authenticate(k.Hash, t0); ok {
				t.Fatal("a stored hash authenticated")
			}
		}
	})
}

func FuzzAuthenticateToken(f *testing.F) {
	kf := &KeyFile{}
	tok, _, _ := kf.Add(NewKeyOptions{Name: "n", Scopes: []Scope{ScopeRead}}, t0)
	set, _ := NewKeySet(kf)
	a := &Authenticator{Keys: NewKeyring(staticKeys(kf.Marshal()), time.Hour), Token: "legacy-shared-token"}
	f.Add(tok)
	f.Add("legacy-shared-token")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if _, ok := set.Authenticate(s, t0); ok && s != tok {
			t.Fatalf("accepted %q", s)
		}
		id, err := a.Authenticate(context.Background(), s)
		if err == nil && s != tok && s != "legacy-shared-token" {
			t.Fatalf("authenticator accepted %q as %+v", s, id)
		}
		if err != nil && !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("%q: %v", s, err)
		}
	})
}

// staticKeys is a KeySource holding one document.
type staticKeys []byte

func (s staticKeys) Load(context.Context) ([]byte, bool, error) { return s, true, nil }
func (s staticKeys) String() string                             { return "static" }

// countingKeys counts loads and can fail them.
type countingKeys struct {
	data  atomic.Pointer[[]byte]
	loads atomic.Int64
	fail  atomic.Bool
}

func (c *countingKeys) Load(context.Context) ([]byte, bool, error) {
	c.loads.Add(1)
	if c.fail.Load() {
		return nil, false, errors.New("boom")
	}
	d := c.data.Load()
	if d == nil {
		return nil, false, nil
	}
	return *d, true, nil
}
func (c *countingKeys) String() string { return "counting" }

func TestKeyringRefreshes(t *testing.T) {
	src := &countingKeys{}
	now := t0
	kr := NewKeyring(src, time.Second)
	kr.now = func() time.Time { return now }
	ctx := context.Background()

	set, found, err := kr.Keys(ctx)
	if err != nil || found || set.Len() != 0 {
		t.Fatalf("no file: %v %v %v", set, found, err)
	}
	kf := &KeyFile{}
	tok, _, _ := kf.Add(NewKeyOptions{Name: "n", Scopes: []Scope{ScopeRead}}, t0)
	data := kf.Marshal()
	src.data.Store(&data)
	// Within the interval: the old (empty) set.
	if set, _, _ := kr.Keys(ctx); set.Len() != 0 {
		t.Error("re-read within the interval")
	}
	now = now.Add(2 * time.Second)
	set, found, err = kr.Keys(ctx)
	if err != nil || !found || set.Len() != 1 {
		t.Fatalf("after the interval: %v %v %v", set, found, err)
	}
	if _, ok := set.Authenticate(tok, now); !ok {
		t.Error("new key not accepted")
	}
	// A failing source keeps the last good keys.
	src.fail.Store(true)
	now = now.Add(2 * time.Second)
	if set, _, err := kr.Keys(ctx); err != nil || set.Len() != 1 {
		t.Errorf("failing re-read: %v %v", set, err)
	}
	// Concurrent callers share one load.
	src.fail.Store(false)
	now = now.Add(2 * time.Second)
	before := src.loads.Load()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { _, _, _ = kr.Keys(ctx) })
	}
	wg.Wait()
	if n := src.loads.Load() - before; n != 1 {
		t.Errorf("%d loads for 16 concurrent callers, want 1", n)
	}
	// A keyring that never loaded fails.
	bad := &countingKeys{}
	bad.fail.Store(true)
	if _, _, err := NewKeyring(bad, time.Second).Keys(ctx); err == nil {
		t.Error("failing first load: no error")
	}
}

func TestStoreKeysUpdate(t *testing.T) {
	dir := t.TempDir()
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := StoreKeys{Store: st}
	ctx := context.Background()
	var tok string
	if err := src.Update(ctx, func(kf *KeyFile) error {
		var err error
		tok, _, err = kf.Add(NewKeyOptions{Name: "a", Scopes: []Scope{ScopeWrite}}, t0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	data, found, err := src.Load(ctx)
	if err != nil || !found {
		t.Fatal(found, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	a := &Authenticator{Keys: NewKeyring(src, time.Millisecond)}
	if id, err := a.Authenticate(ctx, tok); err != nil || !id.Has(ScopeWrite) {
		t.Fatalf("the added key: %+v %v", id, err)
	}
	if err := src.Update(ctx, func(kf *KeyFile) error { _, err := kf.Revoke("a", t0); return err }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := a.Authenticate(ctx, tok); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("revoked key: %v", err)
	}
	// A broken file is an error, never "no keys".
	if _, err := st.Put(ctx, KeysPath, []byte("{broken"), storePut()); err != nil {
		t.Fatal(err)
	}
	if err := src.Update(ctx, func(*KeyFile) error { return nil }); err == nil {
		t.Error("updating a broken file: no error")
	}
}

func TestAuthenticatorModes(t *testing.T) {
	ctx := context.Background()
	// Nothing configured: everyone is local (loopback only; the mains refuse
	// to listen wider), callers still told apart by their tokens.
	open := &Authenticator{}
	if id, err := open.Authenticate(ctx, ""); err != nil || id.Subject != LocalSubject {
		t.Errorf("open, no token: %+v %v", id, err)
	}
	a, _ := open.Authenticate(ctx, "x")
	b, _ := open.Authenticate(ctx, "y")
	if a.Subject == b.Subject || !a.Has(ScopeAdmin) {
		t.Errorf("open with tokens: %+v %+v", a, b)
	}
	// Require without keys: nothing gets in.
	closed := &Authenticator{Require: true}
	for _, tok := range []string{"", "x", strings.Repeat("a", maxBearer+1)} {
		if _, err := closed.Authenticate(ctx, tok); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("required, %q: %v", tok, err)
		}
	}
	// The single token of old: a full-scope identity whose subject is
	// what it always was.
	legacy := &Authenticator{Token: "s3cret"}
	id, err := legacy.Authenticate(ctx, "s3cret")
	if err != nil || !id.Has(ScopeAdmin) || id.Scoped() || id.Subject != TokenIdentity("s3cret").Subject || !strings.HasPrefix(id.Subject, "token:") {
		t.Errorf("legacy token: %+v %v", id, err)
	}
	if _, err := legacy.Authenticate(ctx, "s3cre"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("wrong legacy token: %v", err)
	}
	// A keys file that appears makes keys required.
	src := &countingKeys{}
	dyn := &Authenticator{Keys: NewKeyring(src, 0)}
	if req, _ := dyn.Required(ctx); req {
		t.Error("required without a keys file")
	}
	empty := (&KeyFile{}).Marshal()
	src.data.Store(&empty)
	if req, _ := dyn.Required(ctx); !req {
		t.Error("not required with a keys file")
	}
	// Keys that cannot be read at all are an error, not a 401.
	src.fail.Store(true)
	broken := &Authenticator{Keys: NewKeyring(src, 0)}
	if _, err := broken.Authenticate(ctx, "sheaf_0123456789abcdef_"+strings.Repeat("A", 43)); err == nil || errors.Is(err, ErrUnauthenticated) {
		t.Errorf("unreadable keys: %v", err)
	}
}

func storePut() store.PutOptions { return store.PutOptions{} }

// BenchmarkAuthenticateKey is a request's API key check against a keys
// file of 1,000 keys (SHA-256 of the key, a map lookup, a constant-time
// compare), the keys already loaded.
func BenchmarkAuthenticateKey(b *testing.B) {
	kf := &KeyFile{}
	var tok string
	for i := range 1000 {
		t, _, err := kf.Add(NewKeyOptions{Name: "k", Scopes: []Scope{ScopeRead}, Folders: []string{"a/**"}}, t0)
		if err != nil {
			b.Fatal(err)
		}
		if i == 500 {
			tok = t
		}
	}
	a := &Authenticator{Keys: NewKeyring(staticKeys(kf.Marshal()), time.Hour)}
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// An owner key approves OAuth clients and is nothing else: no bearer
// credential, admin over the whole vault only.
func TestOwnerKey(t *testing.T) {
	now := time.Now()
	kf := &KeyFile{}
	owner, ok, err := kf.Add(NewKeyOptions{Name: "me", Scopes: []Scope{ScopeAdmin}, Owner: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := kf.Add(NewKeyOptions{Name: "agent", Scopes: []Scope{ScopeAdmin}}, now)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]NewKeyOptions{
		"read owner":    {Name: "x", Scopes: []Scope{ScopeRead}, Owner: true},
		"folder owner":  {Name: "x", Scopes: []Scope{ScopeAdmin}, Folders: []string{"a/**"}, Owner: true},
		"propose owner": {Name: "x", Scopes: []Scope{ScopeAdmin}, ProposeOnly: true, Owner: true},
	} {
		if _, _, err := (&KeyFile{}).Add(o, now); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	parsed, err := ParseKeyFile(kf.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	ks, err := NewKeySet(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ks.Authenticate(owner, now); ok {
		t.Error("an owner key was accepted as a bearer credential")
	}
	if k, ok2 := ks.Owner(owner, now); !ok2 || k.ID != ok.ID {
		t.Errorf("Owner(owner key) = %+v, %v", k, ok2)
	}
	if _, ok := ks.Owner(plain, now); ok {
		t.Error("a plain key approved as the owner")
	}
	if !ks.OwnerActive(ok.ID, now) {
		t.Error("the owner key is not active")
	}
	if _, err := kf.Revoke(ok.ID, now); err != nil {
		t.Fatal(err)
	}
	ks, _ = NewKeySet(kf)
	if _, ok2 := ks.Owner(owner, now); ok2 || ks.OwnerActive(ok.ID, now) {
		t.Error("a revoked owner key still approves")
	}
}
