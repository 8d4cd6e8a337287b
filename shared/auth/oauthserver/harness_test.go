package oauthserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// lockedBuffer collects log output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// harness is an authorization server over a folder store, behind an
// httptest server that also serves a protected endpoint (/mcp) answering
// the caller's identity as the MCP transport establishes it.
type harness struct {
	t        testing.TB
	store    store.Store
	keys     auth.StoreKeys
	owner    string // the owner key
	ownerID  string
	srv      *Server
	verifier *oauth.Verifier
	http     *httptest.Server
	base     string
	clock    *clock
	logs     *lockedBuffer

	mu   sync.Mutex
	last auth.Identity // the last caller /mcp let in
}

func newHarness(t testing.TB, tweak func(*Config)) *harness {
	t.Helper()
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, store: st, keys: auth.StoreKeys{Store: st}, clock: &clock{t: time.Now()}, logs: &lockedBuffer{}}
	var owner auth.Key
	if err := h.keys.Update(context.Background(), func(kf *auth.KeyFile) error {
		var err error
		h.owner, owner, err = kf.Add(auth.NewKeyOptions{Name: "me", Scopes: []auth.Scope{auth.ScopeAdmin}, Owner: true}, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h.ownerID = owner.ID
	var mux http.ServeMux
	h.http = httptest.NewServer(&mux)
	t.Cleanup(h.http.Close)
	h.base = h.http.URL
	cfg := Config{
		Store: st, Audience: h.base + "/mcp", Owners: KeyringOwners{Keys: auth.NewKeyring(h.keys, 0)},
		Now: h.clock.now, Log: slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	h.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.verifier, err = h.srv.Verifier()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.verifier.Close)
	for _, p := range h.srv.Paths() {
		mux.Handle(p, h.srv)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		id, err := h.verifier.Verify(r.Context(), tok)
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.mu.Lock()
		h.last = id
		h.mu.Unlock()
	})
	return h
}

// client is an OAuth client under test.
type testClient struct {
	ID, Secret, Redirect string
}

// noRedirects is an HTTP client that reports redirects instead of
// following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (h *harness) postJSON(path string, body any) (*http.Response, map[string]any) {
	h.t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(h.base+path, "application/json", bytes.NewReader(data))
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, decode(h.t, resp)
}

func decode(t testing.TB, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if len(data) > 0 && strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("not JSON: %q", data)
		}
	}
	if out == nil {
		out = map[string]any{"_body": string(data)}
	}
	return out
}

// register registers a client with these redirect URIs and auth method.
func (h *harness) register(method string, redirects ...string) testClient {
	h.t.Helper()
	resp, body := h.postJSON("/oauth/register", map[string]any{"client_name": "Test client", "redirect_uris": redirects,
		"token_endpoint_auth_method": method, "grant_types": []string{"authorization_code", "refresh_token"}})
	if resp.StatusCode != http.StatusCreated {
		h.t.Fatalf("register: %d %v", resp.StatusCode, body)
	}
	c := testClient{ID: body["client_id"].(string), Redirect: redirects[0]}
	c.Secret, _ = body["client_secret"].(string)
	return c
}

// pkce returns a verifier and its S256 challenge.
func pkce() (string, string) {
	v := randomToken("") + randomToken("")[:21]
	sum := sha256.Sum256([]byte(v))
	return v, base64.RawURLEncoding.EncodeToString(sum[:])
}

// consentForm is a consent page's hidden fields and its cookie.
type consentForm struct {
	request, csrf string
	cookie        *http.Cookie
	resp          *http.Response
	page          string
}

var (
	requestRE = regexp.MustCompile(`name="request" value="([0-9a-f]+)"`)
	csrfRE    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// authorize opens the authorization endpoint and reads the consent page.
func (h *harness) authorize(params url.Values) consentForm {
	h.t.Helper()
	resp, err := noRedirects.Get(h.base + "/oauth/authorize?" + params.Encode())
	if err != nil {
		h.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	f := consentForm{resp: resp, page: string(body)}
	if m := requestRE.FindStringSubmatch(f.page); m != nil {
		f.request = m[1]
	}
	if m := csrfRE.FindStringSubmatch(f.page); m != nil {
		f.csrf = m[1]
	}
	for _, c := range resp.Cookies() {
		if strings.Contains(c.Name, "sheaf_csrf_") {
			f.cookie = c
		}
	}
	return f
}

func (c testClient) authParams(challenge string) url.Values {
	return url.Values{"client_id": {c.ID}, "redirect_uri": {c.Redirect}, "response_type": {"code"}, "state": {"st-123"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"sheaf:read sheaf:write sheaf:admin"}}
}

// submit posts the consent form with the given fields added.
func (h *harness) submit(f consentForm, fields url.Values, headers map[string]string) *http.Response {
	h.t.Helper()
	form := url.Values{"request": {f.request}, "csrf": {f.csrf}}
	for k, v := range fields {
		form[k] = v
	}
	req, _ := http.NewRequest(http.MethodPost, h.base+"/oauth/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", h.base)
	if f.cookie != nil {
		req.AddCookie(f.cookie)
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// approve runs the authorization step for c up to the code.
func (h *harness) approve(c testClient, scope, folders string) (code, verifier string) {
	h.t.Helper()
	verifier, challenge := pkce()
	f := h.authorize(c.authParams(challenge))
	if f.resp.StatusCode != http.StatusOK || f.request == "" {
		h.t.Fatalf("authorize: %d %s", f.resp.StatusCode, f.page)
	}
	resp := h.submit(f, url.Values{"owner_key": {h.owner}, "scope": {scope}, "folders": {folders}, "action": {"approve"}}, nil)
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Query().Get("code") == "" {
		h.t.Fatalf("consent: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if loc.Query().Get("state") != "st-123" || loc.Query().Get("iss") != h.srv.Issuer() {
		h.t.Errorf("the answer lacks state or iss: %s", loc)
	}
	return loc.Query().Get("code"), verifier
}

// tokenReq posts to the token endpoint as client c.
func (h *harness) tokenReq(c testClient, form url.Values) (*http.Response, map[string]any) {
	h.t.Helper()
	return h.formPost("/oauth/token", c, form)
}

func (h *harness) formPost(path string, c testClient, form url.Values) (*http.Response, map[string]any) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.Secret != "" {
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	} else if form.Get("client_id") == "" {
		form.Set("client_id", c.ID)
		req, _ = http.NewRequest(http.MethodPost, h.base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, decode(h.t, resp)
}

// exchange redeems a code.
func (h *harness) exchange(c testClient, code, verifier string) (*http.Response, map[string]any) {
	h.t.Helper()
	return h.tokenReq(c, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"redirect_uri": {c.Redirect}, "resource": {h.base + "/mcp"}})
}

// call calls the protected endpoint with token; it returns the status
// and the identity.
func (h *harness) call(token string) (int, auth.Identity) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.last
	h.last = auth.Identity{}
	return resp.StatusCode, id
}

// oauthErr asserts an OAuth error response.
func oauthErr(t *testing.T, what string, resp *http.Response, body map[string]any, status int, code string) {
	t.Helper()
	if resp.StatusCode != status || body["error"] != code || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%s: %d %v (%s), want %d %s", what, resp.StatusCode, body, resp.Header.Get("Content-Type"), status, code)
	}
}

func base64RawURL(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
