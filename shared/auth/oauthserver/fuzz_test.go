package oauthserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// answerOK checks what an endpoint answered anything with: never a server
// error, and every refusal an OAuth error object in JSON.
func answerOK(t *testing.T, rec *httptest.ResponseRecorder, allowed ...int) map[string]any {
	t.Helper()
	var body map[string]any
	if rec.Code >= 500 {
		t.Fatalf("server error %d: %s", rec.Code, rec.Body.String())
	}
	okStatus := false
	for _, a := range allowed {
		okStatus = okStatus || rec.Code == a
	}
	if !okStatus {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("not JSON (%d): %q", rec.Code, rec.Body.String())
		}
	}
	if rec.Code >= 400 {
		if code, _ := body["error"].(string); code == "" || strings.ContainsAny(code, " \"\\") {
			t.Fatalf("%d without an OAuth error: %s", rec.Code, rec.Body.String())
		}
	}
	return body
}

func FuzzRegister(f *testing.F) {
	for _, seed := range []string{
		`{"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none","client_name":"Claude"}`,
		`{"redirect_uris":["http://127.0.0.1:3000/cb"],"grant_types":["authorization_code","refresh_token"]}`,
		`{"redirect_uris":["https://a.example.com/cb"],"token_endpoint_auth_method":"client_secret_post","response_types":["code"]}`,
		`{"redirect_uris":"https://a"}`, `{"redirect_uris":[1,2]}`, `[]`, `null`, `{}`, `{"a":`, "",
		`{"redirect_uris":["https://a.example.com/cb"],"token_endpoint_auth_method":null}`,
		`{"redirect_uris":["https://a.example.com/cb\u0000"],"client_name":"\u202e"}`,
	} {
		f.Add(seed)
	}
	h := newHarness(f, func(c *Config) { c.RegistrationsPerSource = 1 << 30; c.RegistrationsPerHour = 1 << 30 })
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/oauth/register", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		got := answerOK(t, rec, http.StatusCreated, http.StatusBadRequest)
		if rec.Code != http.StatusCreated {
			return
		}
		// What was registered is what a registration may hold.
		id, _ := got["client_id"].(string)
		c, ok, err := h.srv.lookupClient(req.Context(), id)
		if err != nil || !ok {
			t.Fatalf("registered %q, then unknown: %v", id, err)
		}
		for _, u := range c.RedirectURIs {
			if checkRedirectURI(u) != nil {
				t.Fatalf("registered a bad redirect URI %q", u)
			}
		}
		if (c.AuthMethod == "none") != (got["client_secret"] == nil) {
			t.Fatalf("auth method %q with secret %v", c.AuthMethod, got["client_secret"] != nil)
		}
	})
}

func FuzzToken(f *testing.F) {
	for _, seed := range []string{
		"grant_type=authorization_code&code=sheafac_x&code_verifier=" + strings.Repeat("a", 43) + "&redirect_uri=https%3A%2F%2Fa.example.com%2Fcb&client_id=CLIENT",
		"grant_type=refresh_token&refresh_token=sheafrt_x&client_id=CLIENT",
		"grant_type=refresh_token&refresh_token=REFRESH&client_id=CLIENT",
		"grant_type=authorization_code&code=CODE&code_verifier=VERIFIER&redirect_uri=https%3A%2F%2Fa.example.com%2Fcb&client_id=CLIENT",
		"grant_type=client_credentials&client_id=CLIENT&client_secret=x",
		"grant_type=refresh_token&refresh_token=x&client_id=https%3A%2F%2F127.0.0.1%2Fc.json",
		"grant_type=&client_id=", "%zz", "a=b&a=c", "client_id=CLIENT&resource=https%3A%2F%2Fevil",
	} {
		f.Add(seed, false)
	}
	h := newHarness(f, nil)
	c := h.register("none", "https://a.example.com/cb")
	code, verifier := h.approve(c, "read", "")
	_, tok := h.exchange(c, code, verifier)
	rt, _ := tok["refresh_token"].(string)
	code2, verifier2 := h.approve(c, "read", "")
	f.Fuzz(func(t *testing.T, form string, revoke bool) {
		form = strings.NewReplacer("CLIENT", c.ID, "REFRESH", rt, "CODE", code2, "VERIFIER", verifier2).Replace(form)
		path := "/oauth/token"
		if revoke {
			path = "/oauth/revoke"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		got := answerOK(t, rec, http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized)
		if rec.Code == http.StatusOK && !revoke {
			at, _ := got["access_token"].(string)
			if _, err := h.verifier.Verify(req.Context(), at); err != nil {
				t.Fatalf("issued a token its verifier refuses: %v", err)
			}
		}
	})
}
