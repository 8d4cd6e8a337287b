package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth/oauthtest"
)

const resource = "https://notes.example.com/mcp"

func newVerifier(t testing.TB, as *oauthtest.Server, mod func(*oauth.Config)) *oauth.Verifier {
	t.Helper()
	cfg := oauth.Config{Issuer: as.URL, Audience: resource}
	if mod != nil {
		mod(&cfg)
	}
	v, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

func TestVerifyMapsClaims(t *testing.T) {
	as := oauthtest.New(t)
	v := newVerifier(t, as, nil)
	ctx := context.Background()

	id, err := v.Verify(ctx, as.Issue(jwt.MapClaims{"sub": "u1", "aud": resource, "scope": "openid sheaf:write", "client_id": "claude"}))
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "oauth:u1" || id.Name != "claude" || !id.Has(auth.ScopeWrite) || !id.Has(auth.ScopeRead) || id.Has(auth.ScopeAdmin) || id.Scoped() || id.ProposeOnly {
		t.Errorf("identity = %+v", id)
	}

	// scp as an array, Sheaf's claims, an audience list with a trailing slash.
	id, err = v.Verify(ctx, as.Issue(jwt.MapClaims{
		"sub": "u2", "aud": []string{"https://other.example.com", resource + "/"}, "scp": []string{"sheaf:read"},
		oauth.ClaimFolders: []string{"Projects/**", "!Projects/secret/**"}, oauth.ClaimProposeOnly: "true", oauth.ClaimProfile: "core",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !id.Has(auth.ScopeRead) || id.Has(auth.ScopeWrite) || !id.ProposeOnly || id.Profile != "core" ||
		!id.Folders.Allows("Projects/a.md") || id.Folders.Allows("Projects/secret/b.md") || id.Folders.Allows("Inbox/c.md") {
		t.Errorf("identity = %+v (folders %s)", id, id.Folders)
	}

	// A token without Sheaf scopes is valid but may do nothing.
	id, err = v.Verify(ctx, as.Issue(jwt.MapClaims{"sub": "u3", "aud": resource, "scope": "openid read"}))
	if err != nil || id.Has(auth.ScopeRead) {
		t.Errorf("no sheaf scope: %+v, %v", id, err)
	}

	// Claim names are exact: "SCOPE" and "Sheaf_Folders" are not ours.
	id, err = v.Verify(ctx, as.Issue(jwt.MapClaims{"sub": "u5", "aud": resource, "scope": "sheaf:read", "SCOPE": "sheaf:admin", "Sheaf_Folders": []string{"x/**"}}))
	if err != nil || id.Has(auth.ScopeWrite) || id.Scoped() {
		t.Errorf("differently-cased claims: %+v, %v", id, err)
	}

	// A custom scope prefix (Cognito resource servers: "sheaf/read").
	cv := newVerifier(t, as, func(c *oauth.Config) { c.ScopePrefix = "sheaf/" })
	if id, err := cv.Verify(ctx, as.Issue(jwt.MapClaims{"sub": "u4", "aud": resource, "scope": "sheaf/admin"})); err != nil || !id.Has(auth.ScopeAdmin) {
		t.Errorf("prefix sheaf/: %+v, %v", id, err)
	}
	if got := cv.Metadata().ScopesSupported; strings.Join(got, " ") != "sheaf/read sheaf/write sheaf/admin" {
		t.Errorf("scopes_supported = %v", got)
	}
}

func TestVerifyRejects(t *testing.T) {
	as := oauthtest.New(t)
	now := time.Now()
	v := newVerifier(t, as, nil)
	good := jwt.MapClaims{"sub": "u", "aud": resource, "scope": "sheaf:read"}
	with := func(k string, val any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for kk, vv := range good {
			c[kk] = vv
		}
		c[k] = val // nil: left out
		return c
	}
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": as.URL, "sub": "u", "aud": resource, "exp": now.Add(time.Hour).Unix()})
	hsTok, _ := hs.SignedString([]byte("guessable"))
	none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": as.URL, "sub": "u", "aud": resource, "exp": now.Add(time.Hour).Unix()})
	noneTok, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)

	cases := map[string]string{
		"expired":          as.Issue(with("exp", now.Add(-time.Hour).Unix())),
		"no exp":           as.Issue(with("exp", nil)),
		"another audience": as.Issue(with("aud", "https://notes.example.com/other")),
		"no audience":      as.Issue(with("aud", nil)),
		"another issuer":   as.Issue(with("iss", "https://evil.example.com")),
		"not yet valid":    as.Issue(with("nbf", now.Add(time.Hour).Unix())),
		"issued in future": as.Issue(with("iat", now.Add(time.Hour).Unix())),
		"no subject":       as.Issue(with("sub", nil)),
		"unknown key":      as.IssueForeign(good, false),
		"forged signature": as.IssueForeign(good, true),
		"HS256":            hsTok,
		"alg none":         noneTok,
		"bad folders":      as.Issue(with(oauth.ClaimFolders, "Projects/**")),
		"empty folders":    as.Issue(with(oauth.ClaimFolders, []string{})),
		"traversal folder": as.Issue(with(oauth.ClaimFolders, []string{"../x/**"})),
		"bad propose":      as.Issue(with(oauth.ClaimProposeOnly, "yes")),
		"bad profile":      as.Issue(with(oauth.ClaimProfile, "everything")),
		"bad scp":          as.Issue(with("scp", 7)),
		"Aud, not aud":     as.Issue(jwt.MapClaims{"sub": "u", "Aud": resource}),
		"garbage":          "a.b.c",
		"truncated":        as.Issue(good)[:40],
		"tampered payload": tamper(as.Issue(good)),
		"empty":            "",
	}
	for name, tok := range cases {
		if id, err := v.Verify(context.Background(), tok); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("%s: identity %+v, err %v; want ErrUnauthenticated", name, id, err)
		}
	}
	if _, err := v.Verify(context.Background(), as.Issue(good)); err != nil {
		t.Errorf("the good token: %v", err)
	}
}

// tamper swaps the payload of a token for another one, keeping the signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	c, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "admin", "aud": resource, "scope": "sheaf:admin"}).SigningString()
	return parts[0] + "." + strings.Split(c, ".")[1] + "." + parts[2]
}

func TestKeyRotationAndRateLimitedRefetch(t *testing.T) {
	as := oauthtest.New(t)
	v := newVerifier(t, as, nil)
	ctx := context.Background()
	claims := jwt.MapClaims{"sub": "u", "aud": resource, "scope": "sheaf:read"}

	// No network call before the first token.
	if n := as.JWKSFetches.Load(); n != 0 {
		t.Fatalf("%d JWKS fetches before any token", n)
	}
	if _, err := v.Verify(ctx, as.Issue(claims)); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := v.Verify(ctx, as.Issue(claims)); err != nil {
			t.Fatal(err)
		}
	}
	if n := as.JWKSFetches.Load(); n != 1 {
		t.Errorf("%d JWKS fetches for 21 tokens signed by one key, want 1 (cached)", n)
	}
	// The authorization server rotates: the first token with the new key id
	// refetches the keys and passes.
	as.Rotate()
	if _, err := v.Verify(ctx, as.Issue(claims)); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if n := as.JWKSFetches.Load(); n != 2 {
		t.Errorf("%d JWKS fetches after rotation, want 2", n)
	}
	// A flood of unknown key ids causes no more fetches within RefetchEvery,
	// and fails fast rather than waiting for the limiter.
	var wg sync.WaitGroup
	start := time.Now()
	for range 50 {
		wg.Go(func() {
			if _, err := v.Verify(ctx, as.IssueForeign(claims, false)); err == nil {
				t.Error("foreign key accepted")
			}
		})
	}
	wg.Wait()
	if n := as.JWKSFetches.Load(); n != 2 {
		t.Errorf("%d JWKS fetches after a flood of unknown key ids, want still 2", n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the flood took %v: unknown key ids must fail fast", d)
	}
	// Known keys keep working meanwhile.
	if _, err := v.Verify(ctx, as.Issue(claims)); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoveryAndMetadata(t *testing.T) {
	as := oauthtest.New(t)
	// Discovery follows the issuer's metadata to its jwks_uri.
	v := newVerifier(t, as, nil)
	if _, err := v.Verify(context.Background(), as.Issue(jwt.MapClaims{"sub": "u", "aud": resource})); err != nil {
		t.Fatal(err)
	}
	md := v.Metadata()
	if md.Resource != resource || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != as.URL {
		t.Errorf("metadata = %+v", md)
	}
	if got := v.MetadataURL(); got != "https://notes.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("metadata URL = %s", got)
	}
	if got := v.MetadataPaths(); len(got) != 2 || got[0] != "/.well-known/oauth-protected-resource" {
		t.Errorf("metadata paths = %v", got)
	}

	// Metadata naming another issuer is refused (a mix-up attack).
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer":"https://evil.example.com","jwks_uri":"` + as.JWKSURL() + `"}`))
	}))
	defer evil.Close()
	ev := newVerifier(t, as, func(c *oauth.Config) { c.Issuer = evil.URL })
	if _, err := ev.Verify(context.Background(), as.Issue(jwt.MapClaims{"iss": evil.URL, "sub": "u", "aud": resource})); err == nil {
		t.Error("a token verified through metadata that names another issuer")
	}
}

func TestNewChecksConfig(t *testing.T) {
	for _, cfg := range []oauth.Config{
		{},
		{Issuer: "https://as.example.com"},
		{Audience: resource},
		{Issuer: "http://as.example.com", Audience: resource},
		{Issuer: "https://as.example.com", Audience: "notes.example.com/mcp"},
		{Issuer: "https://as.example.com", Audience: resource, JWKSURL: "ftp://x/jwks"},
	} {
		if _, err := oauth.New(cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
}

// BenchmarkVerify is the cost a request pays for its access token once the
// JWKS is cached: parse, ES256 signature check, claims.
func BenchmarkVerify(b *testing.B) {
	as := oauthtest.New(b)
	v := newVerifier(b, as, nil)
	tok := as.Issue(jwt.MapClaims{"sub": "u", "aud": resource, "scope": "sheaf:write", oauth.ClaimFolders: []string{"Projects/**"}})
	if _, err := v.Verify(context.Background(), tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzVerifyToken(f *testing.F) {
	as := oauthtest.New(f)
	v := newVerifier(f, as, nil)
	good := as.Issue(jwt.MapClaims{"sub": "u", "aud": resource})
	f.Add(good)
	f.Add("a.b.c")
	f.Add(tamper(good))
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := v.Verify(context.Background(), tok); err == nil && tok != good {
			t.Fatalf("accepted %q", tok)
		}
	})
}

// FuzzVerifyClaims signs arbitrary payloads with the real key: whatever the
// claims say, the verifier never panics and only accepts tokens for this
// audience, from this issuer, unexpired, with a subject.
func FuzzVerifyClaims(f *testing.F) {
	as := oauthtest.New(f)
	v := newVerifier(f, as, nil)
	f.Add([]byte(`{"sub":"u","aud":"` + resource + `","scope":"sheaf:read","sheaf_folders":["a/**"]}`))
	f.Add([]byte(`{"sub":"u","aud":["` + resource + `"],"scp":"sheaf:write","sheaf_propose_only":true,"sheaf_profile":"core"}`))
	f.Add([]byte(`{"sub":"","aud":7,"exp":"soon","sheaf_folders":{"a":1}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var c jwt.MapClaims
		if json.Unmarshal(payload, &c) != nil || c == nil {
			return
		}
		id, err := v.Verify(context.Background(), as.Issue(c))
		if err != nil {
			if !errors.Is(err, auth.ErrUnauthenticated) {
				t.Fatalf("error not ErrUnauthenticated: %v", err)
			}
			return
		}
		if id.Subject == "oauth:" {
			t.Fatal("accepted without a subject")
		}
		aud, _ := c.GetAudience()
		if !slices.ContainsFunc(aud, func(a string) bool { return strings.TrimSuffix(a, "/") == resource }) {
			t.Fatalf("accepted audience %v", aud)
		}
		if iss, _ := c.GetIssuer(); iss != "" && iss != as.URL {
			t.Fatalf("accepted issuer %q", iss)
		}
	})
}
