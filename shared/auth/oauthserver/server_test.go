package oauthserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// The whole dance: metadata, registration, consent with the owner key
// choosing scope and folders, the token carrying them, refresh with
// rotation, revocation, and nothing secret in the logs.
func TestFlow(t *testing.T) {
	h := newHarness(t, nil)
	resp, err := http.Get(h.base + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	md := decode(t, resp)
	if md["issuer"] != h.base || md["token_endpoint"] != h.base+"/oauth/token" || md["client_id_metadata_document_supported"] != true ||
		!slices.Equal(toStrings(md["code_challenge_methods_supported"]), []string{"S256"}) {
		t.Errorf("metadata: %v", md)
	}

	c := h.register("none", "https://claude.ai/api/mcp/auth_callback")
	code, verifier := h.approve(c, "write", "Projects/**\n!Projects/secret/**")
	resp, tok := h.exchange(c, code, verifier)
	if resp.StatusCode != http.StatusOK || tok["token_type"] != "Bearer" || tok["refresh_token"] == nil || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("token: %d %v", resp.StatusCode, tok)
	}
	at := tok["access_token"].(string)
	status, id := h.call(at)
	if status != http.StatusOK || !id.Has(auth.ScopeWrite) || id.Has(auth.ScopeAdmin) || !id.Folders.Allows("Projects/a.md") ||
		id.Folders.Allows("Projects/secret/x.md") || id.Folders.Allows("Journal/x.md") || !strings.HasPrefix(id.Subject, "oauth:grant:") {
		t.Fatalf("the token's identity: %d %+v", status, id)
	}

	// Refresh rotates: a new pair, the old refresh token spent.
	rt1 := tok["refresh_token"].(string)
	resp, tok2 := h.tokenReq(c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt1}})
	if resp.StatusCode != http.StatusOK || tok2["refresh_token"] == rt1 {
		t.Fatalf("refresh: %d %v", resp.StatusCode, tok2)
	}
	if status, id2 := h.call(tok2["access_token"].(string)); status != http.StatusOK || id2.Subject != id.Subject {
		t.Errorf("refreshed token: %d %+v", status, id2)
	}

	// Revocation of the refresh token ends the grant: its access tokens too.
	resp, _ = h.formPost("/oauth/revoke", c, url.Values{"token": {tok2["refresh_token"].(string)}, "token_type_hint": {"refresh_token"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if status, _ := h.call(tok2["access_token"].(string)); status != http.StatusUnauthorized {
		t.Errorf("an access token of a revoked grant: %d", status)
	}
	resp, body := h.tokenReq(c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok2["refresh_token"].(string)}})
	oauthErr(t, "refresh after revocation", resp, body, http.StatusBadRequest, "invalid_grant")

	// Nothing secret reached the logs.
	logs := h.logs.String()
	for name, secret := range map[string]string{"owner key": h.owner, "code": code, "verifier": verifier, "access token": at,
		"refresh token": rt1, "new refresh token": tok2["refresh_token"].(string)} {
		if strings.Contains(logs, secret) {
			t.Errorf("the %s is in the logs", name)
		}
	}
	if !strings.Contains(logs, "access approved") {
		t.Errorf("the approval was not logged:\n%s", logs)
	}
}

func toStrings(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// A confidential client authenticates with its secret, by Basic or in the
// form; a wrong secret or an unknown client is invalid_client (401).
func TestConfidentialClient(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("client_secret_basic", "https://app.example.com/cb")
	if c.Secret == "" {
		t.Fatal("no secret for a confidential client")
	}
	code, verifier := h.approve(c, "read", "")
	wrong := c
	wrong.Secret = "sheafcs_wrong"
	resp, body := h.exchange(wrong, code, verifier)
	oauthErr(t, "wrong secret", resp, body, http.StatusUnauthorized, "invalid_client")
	if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("401 without WWW-Authenticate: Basic")
	}
	resp, body = h.exchange(c, code, verifier)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("right secret: %d %v", resp.StatusCode, body)
	}
	unknown := testClient{ID: "sheaf-" + strings.Repeat("ab", 16), Redirect: c.Redirect}
	resp, body = h.exchange(unknown, code, verifier)
	oauthErr(t, "unknown client", resp, body, http.StatusUnauthorized, "invalid_client")
	if strings.Contains(h.logs.String(), c.Secret) {
		t.Error("the client secret is in the logs")
	}
}

// Registration refuses what is not a safe redirect URI or a supported
// client; flooding is stopped per source and in all; unused clients
// expire.
func TestRegistrationAbuse(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RegistrationsPerSource = 3; c.RegistrationsPerHour = 100 })
	for name, meta := range map[string]map[string]any{
		"no redirect":         {"client_name": "x"},
		"http":                {"redirect_uris": []string{"http://evil.example.com/cb"}, "token_endpoint_auth_method": "none"},
		"fragment":            {"redirect_uris": []string{"https://a.example.com/cb#x"}, "token_endpoint_auth_method": "none"},
		"userinfo":            {"redirect_uris": []string{"https://u:p@a.example.com/cb"}, "token_endpoint_auth_method": "none"},
		"javascript":          {"redirect_uris": []string{"javascript:alert(1)"}, "token_endpoint_auth_method": "none"},
		"relative":            {"redirect_uris": []string{"/cb"}, "token_endpoint_auth_method": "none"},
		"custom scheme":       {"redirect_uris": []string{"myapp://cb"}, "token_endpoint_auth_method": "none"},
		"too many":            {"redirect_uris": slices.Repeat([]string{"https://a.example.com/cb"}, 11), "token_endpoint_auth_method": "none"},
		"private_key_jwt":     {"redirect_uris": []string{"https://a.example.com/cb"}, "token_endpoint_auth_method": "private_key_jwt"},
		"implicit":            {"redirect_uris": []string{"https://a.example.com/cb"}, "grant_types": []string{"implicit"}},
		"client credentials":  {"redirect_uris": []string{"https://a.example.com/cb"}, "grant_types": []string{"client_credentials"}},
		"token response type": {"redirect_uris": []string{"https://a.example.com/cb"}, "response_types": []string{"token"}},
		"control in name":     {"redirect_uris": []string{"https://a.example.com/cb"}, "client_name": "a\x1b[31mb"},
	} {
		resp, body := h.postJSON("/oauth/register", meta)
		if resp.StatusCode != http.StatusBadRequest || (body["error"] != "invalid_redirect_uri" && body["error"] != "invalid_client_metadata") {
			t.Errorf("%s: %d %v", name, resp.StatusCode, body)
		}
	}
	resp, err := http.Post(h.base+"/oauth/register", "text/plain", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	oauthErr(t, "not JSON", resp, decode(t, resp), http.StatusBadRequest, "invalid_client_metadata")
	resp, err = http.Post(h.base+"/oauth/register", "application/json", strings.NewReader(`{"redirect_uris":["https://a.example.com/cb"],"client_name":"`+strings.Repeat("x", 20<<10)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	oauthErr(t, "too big", resp, decode(t, resp), http.StatusBadRequest, "invalid_client_metadata")

	// Loopback redirects are fine (native clients), any port later.
	loop := h.register("none", "http://127.0.0.1:33418/callback")
	h.register("none", "http://[::1]/cb")
	h.register("none", "http://localhost:9/cb")
	resp, body := h.postJSON("/oauth/register", map[string]any{"redirect_uris": []string{"https://a.example.com/cb"}})
	oauthErr(t, "the 4th registration from one source", resp, body, http.StatusTooManyRequests, "temporarily_unavailable")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// An hour later the source may register again.
	h.clock.add(time.Hour)
	h.register("none", "https://a.example.com/cb")

	// A client registered and never approved expires.
	h.clock.add(25 * time.Hour)
	if _, err := h.srv.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, challenge := pkce()
	f := h.authorize(loop.authParams(challenge))
	if f.resp.StatusCode != http.StatusBadRequest || !strings.Contains(f.page, "not registered") {
		t.Errorf("an expired client: %d %s", f.resp.StatusCode, f.page)
	}
	resp, body = h.exchange(loop, "x", strings.Repeat("v", 43))
	oauthErr(t, "an expired client at the token endpoint", resp, body, http.StatusUnauthorized, "invalid_client")
}

func TestRegistrationGlobalLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RegistrationsPerSource = 100; c.RegistrationsPerHour = 2 })
	h.register("none", "https://a.example.com/cb")
	h.register("none", "https://a.example.com/cb")
	resp, body := h.postJSON("/oauth/register", map[string]any{"redirect_uris": []string{"https://a.example.com/cb"}})
	oauthErr(t, "over the hourly limit", resp, body, http.StatusTooManyRequests, "temporarily_unavailable")
}

// Redirect URIs are compared exactly (a loopback one's port aside); a bad
// client or redirect gets an error page and is never redirected to.
func TestRedirectChecks(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("none", "https://app.example.com/cb", "http://127.0.0.1:5000/cb")
	_, challenge := pkce()
	for name, redirect := range map[string]string{
		"another host":  "https://evil.example.com/cb",
		"another path":  "https://app.example.com/cb2",
		"a query":       "https://app.example.com/cb?x=1",
		"prefix":        "https://app.example.com/c",
		"trailing":      "https://app.example.com/cb/",
		"loopback path": "http://127.0.0.1:5001/other",
		"loopback host": "http://localhost:5000/cb",
	} {
		p := c.authParams(challenge)
		p.Set("redirect_uri", redirect)
		f := h.authorize(p)
		if f.resp.StatusCode != http.StatusBadRequest || f.resp.Header.Get("Location") != "" || f.request != "" {
			t.Errorf("%s: %d, Location %q", name, f.resp.StatusCode, f.resp.Header.Get("Location"))
		}
	}
	p := c.authParams(challenge)
	p.Set("redirect_uri", "http://127.0.0.1:61234/cb")
	if f := h.authorize(p); f.resp.StatusCode != http.StatusOK {
		t.Errorf("a loopback redirect on another port: %d", f.resp.StatusCode)
	}
	p.Set("client_id", "sheaf-"+strings.Repeat("00", 16))
	if f := h.authorize(p); f.resp.StatusCode != http.StatusBadRequest || f.resp.Header.Get("Location") != "" {
		t.Errorf("an unknown client: %d", f.resp.StatusCode)
	}
	p = c.authParams(challenge)
	p.Add("scope", "sheaf:admin")
	if f := h.authorize(p); f.resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a repeated parameter: %d", f.resp.StatusCode)
	}
}

// PKCE (S256) is required, the response type must be code, the resource
// must be this server: errors go back to the (checked) redirect URI.
func TestAuthorizeErrorsRedirect(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("none", "https://app.example.com/cb")
	_, challenge := pkce()
	for name, tc := range map[string]struct {
		set  map[string]string
		want string
	}{
		"no challenge":      {map[string]string{"code_challenge": ""}, "invalid_request"},
		"plain method":      {map[string]string{"code_challenge_method": "plain"}, "invalid_request"},
		"short challenge":   {map[string]string{"code_challenge": "abc"}, "invalid_request"},
		"token response":    {map[string]string{"response_type": "token"}, "unsupported_response_type"},
		"another resource":  {map[string]string{"resource": "https://elsewhere.example.com/mcp"}, "invalid_target"},
		"huge state":        {map[string]string{"state": strings.Repeat("s", 2000)}, "invalid_request"},
		"no response type":  {map[string]string{"response_type": ""}, "unsupported_response_type"},
		"no method at all":  {map[string]string{"code_challenge_method": ""}, "invalid_request"},
		"challenge garbage": {map[string]string{"code_challenge": strings.Repeat("!", 43)}, "invalid_request"},
	} {
		p := c.authParams(challenge)
		for k, v := range tc.set {
			if v == "" {
				p.Del(k)
			} else {
				p.Set(k, v)
			}
		}
		f := h.authorize(p)
		loc, _ := url.Parse(f.resp.Header.Get("Location"))
		if f.resp.StatusCode != http.StatusFound || loc == nil || !strings.HasPrefix(loc.String(), "https://app.example.com/cb?") || loc.Query().Get("error") != tc.want {
			t.Errorf("%s: %d %s", name, f.resp.StatusCode, f.resp.Header.Get("Location"))
		}
	}
}

// The consent page cannot be framed, posted from elsewhere, or answered
// without its CSRF cookie; a wrong key gets the page again, no code.
func TestConsentDefences(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("none", "https://app.example.com/cb")
	_, challenge := pkce()
	f := h.authorize(c.authParams(challenge))
	hd := f.resp.Header
	if !strings.Contains(hd.Get("Content-Security-Policy"), "frame-ancestors 'none'") || hd.Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(hd.Get("Content-Security-Policy"), "form-action 'self' https://app.example.com") || hd.Get("Cache-Control") != "no-store" {
		t.Errorf("consent page headers: %v", hd)
	}
	if f.cookie == nil || !f.cookie.HttpOnly || f.cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("CSRF cookie: %+v", f.cookie)
	}
	if !strings.Contains(f.page, "Test client") || !strings.Contains(f.page, "https://app.example.com") {
		t.Errorf("the page does not say who asks and where the answer goes:\n%s", f.page)
	}
	approve := url.Values{"owner_key": {h.owner}, "scope": {"read"}, "action": {"approve"}}
	noCookie := f
	noCookie.cookie = nil
	wrongCSRF := f
	wrongCSRF.csrf = "x" + f.csrf[1:]
	for name, tc := range map[string]struct {
		f       consentForm
		headers map[string]string
	}{
		"no cookie":          {noCookie, nil},
		"wrong csrf":         {wrongCSRF, nil},
		"cross-site origin":  {f, map[string]string{"Origin": "https://evil.example.com"}},
		"cross-site fetch":   {f, map[string]string{"Origin": "", "Sec-Fetch-Site": "cross-site"}},
		"null origin":        {f, map[string]string{"Origin": "null"}},
		"same-site neighbor": {f, map[string]string{"Origin": "", "Sec-Fetch-Site": "same-site"}},
	} {
		resp := h.submit(tc.f, approve, tc.headers)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d %s", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// Keys that are no owner key: the page again, with a message.
	plain := ""
	if err := h.keys.Update(context.Background(), func(kf *auth.KeyFile) error {
		var err error
		plain, _, err = kf.Add(auth.NewKeyOptions{Name: "agent", Scopes: []auth.Scope{auth.ScopeAdmin}}, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]string{"empty": "", "garbage": "hunter2", "a plain key": plain} {
		form := url.Values{"owner_key": {key}, "scope": {"read"}, "action": {"approve"}}
		resp := h.submit(f, form, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d", name, resp.StatusCode)
		}
	}
	// Folders that do not parse, a scope above what was asked.
	p := c.authParams(challenge)
	p.Set("scope", "sheaf:read")
	g := h.authorize(p)
	for name, form := range map[string]url.Values{
		"bad folders": {"owner_key": {h.owner}, "scope": {"read"}, "folders": {"a/[b"}, "action": {"approve"}},
		"more scope":  {"owner_key": {h.owner}, "scope": {"admin"}, "action": {"approve"}},
	} {
		resp := h.submit(g, form, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d", name, resp.StatusCode)
		}
	}
	// Deny sends access_denied; the request cannot be answered again.
	resp := h.submit(f, url.Values{"action": {"deny"}}, nil)
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc.Query().Get("error") != "access_denied" {
		t.Errorf("deny: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp = h.submit(f, approve, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("a request answered twice: %d", resp.StatusCode)
	}
	// An expired request.
	e := h.authorize(c.authParams(challenge))
	h.clock.add(11 * time.Minute)
	resp = h.submit(e, approve, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an expired request: %d", resp.StatusCode)
	}
}

// Codes are single-use (a second use revokes what the first got), live a
// minute, and need the right verifier, client and redirect URI.
func TestCodeAbuse(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("none", "https://app.example.com/cb")
	other := h.register("none", "https://app.example.com/cb")

	code, verifier := h.approve(c, "read", "")
	resp, tok := h.exchange(c, code, verifier)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("exchange: %d %v", resp.StatusCode, tok)
	}
	resp, body := h.exchange(c, code, verifier)
	oauthErr(t, "a code used twice", resp, body, http.StatusBadRequest, "invalid_grant")
	if status, _ := h.call(tok["access_token"].(string)); status != http.StatusUnauthorized {
		t.Errorf("the token the replayed code got still works: %d", status)
	}

	for name, tc := range map[string]struct {
		c        testClient
		verifier string
		redirect string
	}{
		"wrong verifier": {c, strings.Repeat("a", 43), ""},
		"other client":   {other, "", ""},
		"other redirect": {c, "", "https://app.example.com/cb2"},
	} {
		code, v := h.approve(c, "read", "")
		if tc.verifier != "" {
			v = tc.verifier
		}
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {v}, "redirect_uri": {c.Redirect}}
		if tc.redirect != "" {
			form.Set("redirect_uri", tc.redirect)
		}
		resp, body := h.tokenReq(tc.c, form)
		oauthErr(t, name, resp, body, http.StatusBadRequest, "invalid_grant")
		// A failed attempt spends the code.
		resp, body = h.exchange(c, code, v)
		oauthErr(t, name+", then the right one", resp, body, http.StatusBadRequest, "invalid_grant")
	}
	code, verifier = h.approve(c, "read", "")
	resp, body = h.tokenReq(c, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.Redirect}})
	oauthErr(t, "no verifier", resp, body, http.StatusBadRequest, "invalid_request")
	code, verifier = h.approve(c, "read", "")
	h.clock.add(2 * time.Minute)
	resp, body = h.exchange(c, code, verifier)
	oauthErr(t, "an expired code", resp, body, http.StatusBadRequest, "invalid_grant")
	resp, body = h.exchange(c, "sheafac_nonsense", verifier)
	oauthErr(t, "an unknown code", resp, body, http.StatusBadRequest, "invalid_grant")
}

// A refresh token replayed, or presented by another client, revokes the
// whole grant; so does revoking the owner key that approved it.
func TestRefreshAbuse(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("none", "https://app.example.com/cb")
	other := h.register("none", "https://app.example.com/cb")
	refreshWith := func(c testClient, rt string) (*http.Response, map[string]any) {
		return h.tokenReq(c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	}

	code, verifier := h.approve(c, "read", "")
	_, tok := h.exchange(c, code, verifier)
	rt1 := tok["refresh_token"].(string)
	_, tok2 := refreshWith(c, rt1)
	rt2 := tok2["refresh_token"].(string)
	resp, body := refreshWith(c, rt1) // the stolen, older token
	oauthErr(t, "replayed refresh token", resp, body, http.StatusBadRequest, "invalid_grant")
	resp, body = refreshWith(c, rt2) // the legitimate newer one dies with the family
	oauthErr(t, "the family after a replay", resp, body, http.StatusBadRequest, "invalid_grant")
	if status, _ := h.call(tok2["access_token"].(string)); status != http.StatusUnauthorized {
		t.Errorf("an access token of a replayed family: %d", status)
	}

	code, verifier = h.approve(c, "read", "")
	_, tok = h.exchange(c, code, verifier)
	resp, body = refreshWith(other, tok["refresh_token"].(string))
	oauthErr(t, "another client's refresh token", resp, body, http.StatusBadRequest, "invalid_grant")
	resp, body = refreshWith(c, tok["refresh_token"].(string))
	oauthErr(t, "the family after a theft", resp, body, http.StatusBadRequest, "invalid_grant")

	code, verifier = h.approve(c, "read", "")
	_, tok = h.exchange(c, code, verifier)
	resp, body = h.tokenReq(c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "scope": {"sheaf:admin"}})
	oauthErr(t, "a refresh widening the scope", resp, body, http.StatusBadRequest, "invalid_scope")
	if err := h.keys.Update(context.Background(), func(kf *auth.KeyFile) error {
		_, err := kf.Revoke(h.ownerID, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h.clock.add(grantCheckTTL + time.Second)
	if status, _ := h.call(tok["access_token"].(string)); status != http.StatusUnauthorized {
		t.Errorf("an access token approved by a revoked owner key: %d", status)
	}
	resp, body = refreshWith(c, tok["refresh_token"].(string))
	oauthErr(t, "refresh after the owner key's revocation", resp, body, http.StatusBadRequest, "invalid_grant")
}

// Every refusal of the token endpoint is an OAuth error in JSON.
func TestTokenErrors(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("none", "https://app.example.com/cb")
	for name, tc := range map[string]struct {
		form   url.Values
		status int
		code   string
	}{
		"no grant type":      {url.Values{"client_id": {c.ID}}, 400, "invalid_request"},
		"client credentials": {url.Values{"client_id": {c.ID}, "grant_type": {"client_credentials"}}, 400, "unsupported_grant_type"},
		"password":           {url.Values{"client_id": {c.ID}, "grant_type": {"password"}, "username": {"a"}}, 400, "unsupported_grant_type"},
		"no client":          {url.Values{"grant_type": {"authorization_code"}}, 401, "invalid_client"},
		"another resource":   {url.Values{"client_id": {c.ID}, "grant_type": {"refresh_token"}, "refresh_token": {"x"}, "resource": {"https://evil.example.com/mcp"}}, 400, "invalid_target"},
		"secret for public":  {url.Values{"client_id": {c.ID}, "client_secret": {"x"}, "grant_type": {"refresh_token"}}, 401, "invalid_client"},
		"no refresh token":   {url.Values{"client_id": {c.ID}, "grant_type": {"refresh_token"}}, 400, "invalid_request"},
	} {
		req, _ := http.NewRequest(http.MethodPost, h.base+"/oauth/token", strings.NewReader(tc.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		oauthErr(t, name, resp, decode(t, resp), tc.status, tc.code)
	}
	resp, err := http.Post(h.base+"/oauth/token", "application/json", strings.NewReader(`{"grant_type":"authorization_code"}`))
	if err != nil {
		t.Fatal(err)
	}
	oauthErr(t, "JSON body", resp, decode(t, resp), 400, "invalid_request")
	resp, err = http.Post(h.base+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=a&grant_type=b&client_id="+c.ID))
	if err != nil {
		t.Fatal(err)
	}
	oauthErr(t, "repeated parameter", resp, decode(t, resp), 400, "invalid_request")
	resp, err = http.Get(h.base + "/oauth/token")
	if err != nil {
		t.Fatal(err)
	}
	if b := decode(t, resp); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /oauth/token: %d %v", resp.StatusCode, b)
	}
	resp, body := h.formPost("/oauth/revoke", c, url.Values{})
	oauthErr(t, "revoke without a token", resp, body, 400, "invalid_request")
	resp, _ = h.formPost("/oauth/revoke", c, url.Values{"token": {"sheafrt_unknown"}})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("revoking an unknown token: %d", resp.StatusCode)
	}
}

// Any instance serves any step: two servers over one store share
// everything through it.
func TestStatelessInstances(t *testing.T) {
	h := newHarness(t, nil)
	b, err := New(h.srv.cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := h.register("none", "https://app.example.com/cb")
	code, verifier := h.approve(c, "read", "")
	// The exchange on the other instance, as another Lambda would.
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "redirect_uri": {c.Redirect}, "client_id": {c.ID}}
	req, _ := http.NewRequest(http.MethodPost, "/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := &buffer{header: http.Header{}, code: 200}
	b.ServeHTTP(rec, req)
	var tok map[string]any
	if err := json.Unmarshal(rec.body.Bytes(), &tok); err != nil || rec.code != http.StatusOK {
		t.Fatalf("the exchange on another instance: %d %s", rec.code, rec.body.String())
	}
	bv, err := b.Verifier()
	if err != nil {
		t.Fatal(err)
	}
	defer bv.Close()
	if _, err := bv.Verify(context.Background(), tok["access_token"].(string)); err != nil {
		t.Errorf("the other instance's verifier: %v", err)
	}
	if status, _ := h.call(tok["access_token"].(string)); status != http.StatusOK {
		t.Errorf("the first instance refuses the other's token: %d", status)
	}
}

// Signing keys rotate: a successor is published before it signs, tokens of
// the old key stay valid until they expire, then the old key goes.
func TestKeyRotation(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("none", "https://app.example.com/cb")
	code, verifier := h.approve(c, "read", "")
	_, tok := h.exchange(c, code, verifier)
	kids := func() []string {
		var f signingFile
		if _, _, err := h.srv.load(context.Background(), signingPath, &f); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range f.Keys {
			out = append(out, k.KID)
		}
		return out
	}
	first := kids()
	if len(first) != 1 {
		t.Fatalf("keys: %v", first)
	}
	h.clock.add(keyLifetime - publishAhead + time.Minute)
	rt := tok["refresh_token"].(string)
	resp, tok2 := h.tokenReq(c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("refresh: %v", tok2)
	}
	if ks := kids(); len(ks) != 2 {
		t.Fatalf("no successor published ahead: %v", ks)
	}
	if kidOf(t, tok2["access_token"].(string)) != first[0] {
		t.Error("the successor signs before its time")
	}
	h.clock.add(publishAhead)
	_, tok3 := h.tokenReq(c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok2["refresh_token"].(string)}})
	if kidOf(t, tok3["access_token"].(string)) == first[0] {
		t.Error("the successor does not sign after its time")
	}
	if status, _ := h.call(tok3["access_token"].(string)); status != http.StatusOK {
		t.Errorf("a token of the new key: %d", status)
	}
	h.clock.add(time.Hour)
	h.tokenReq(c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok3["refresh_token"].(string)}})
	if ks := kids(); len(ks) != 1 || ks[0] == first[0] {
		t.Errorf("the old key was not retired: %v", ks)
	}
}

func kidOf(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	var hdr struct {
		Kid string `json:"kid"`
	}
	data, _ := base64RawURL(parts[0])
	_ = json.Unmarshal(data, &hdr)
	return hdr.Kid
}

// A client with one redirect URI may leave it out of the authorization
// request, and then of the token request (OAuth 2.1 §4.1.3); named in the
// first, it is required in the second.
func TestRedirectOmitted(t *testing.T) {
	h := newHarness(t, nil)
	c := h.register("none", "https://app.example.com/cb")
	verifier, challenge := pkce()
	p := c.authParams(challenge)
	p.Del("redirect_uri")
	f := h.authorize(p)
	resp := h.submit(f, url.Values{"owner_key": {h.owner}, "scope": {"read"}, "action": {"approve"}}, nil)
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if !strings.HasPrefix(loc.String(), c.Redirect+"?") {
		t.Fatalf("answered at %s", loc)
	}
	resp, tok := h.tokenReq(c, url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {verifier}})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("token without the redirect URI it was not asked for: %d %v", resp.StatusCode, tok)
	}
	code, verifier := h.approve(c, "read", "")
	resp, body := h.tokenReq(c, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}})
	oauthErr(t, "token without the redirect URI the request named", resp, body, http.StatusBadRequest, "invalid_grant")
}
