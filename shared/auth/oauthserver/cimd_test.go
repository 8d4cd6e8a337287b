package oauthserver

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// metadataHost serves client metadata documents over TLS on 127.0.0.1.
type metadataHost struct {
	srv  *httptest.Server
	docs atomic.Pointer[map[string]func(http.ResponseWriter)]
	hits atomic.Int64
}

func newMetadataHost(t *testing.T) *metadataHost {
	m := &metadataHost{}
	m.docs.Store(&map[string]func(http.ResponseWriter){})
	m.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.hits.Add(1)
		if f, ok := (*m.docs.Load())[r.URL.Path]; ok {
			f(w)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

// serve publishes doc (its client_id set to its URL unless given) at path
// and returns the URL.
func (m *metadataHost) serve(path string, doc map[string]any) string {
	u := m.srv.URL + path
	if _, ok := doc["client_id"]; !ok {
		doc["client_id"] = u
	}
	m.handle(path, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=600")
		_ = json.NewEncoder(w).Encode(doc)
	})
	return u
}

func (m *metadataHost) handle(path string, f func(http.ResponseWriter)) {
	docs := map[string]func(http.ResponseWriter){}
	for k, v := range *m.docs.Load() {
		docs[k] = v
	}
	docs[path] = f
	m.docs.Store(&docs)
}

// fetcher trusts the test server's certificate and, like the real one,
// follows no redirect.
func (m *metadataHost) fetcher() *http.Client {
	return &http.Client{Transport: m.srv.Client().Transport, Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// A client identified by its metadata document URL: fetched (once while
// fresh), checked, approved, tokens issued to it as a public client.
func TestMetadataDocumentClient(t *testing.T) {
	mh := newMetadataHost(t)
	h := newHarness(t, func(c *Config) { c.Fetcher = mh.fetcher() })
	id := mh.serve("/oauth/client.json", map[string]any{"client_name": "Claude", "redirect_uris": []string{"https://claude.ai/api/mcp/auth_callback"},
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
	c := testClient{ID: id, Redirect: "https://claude.ai/api/mcp/auth_callback"}
	_, challenge := pkce()
	f := h.authorize(c.authParams(challenge))
	if f.resp.StatusCode != http.StatusOK || !strings.Contains(f.page, "Identified by "+mh.srv.URL) {
		t.Fatalf("authorize: %d %s", f.resp.StatusCode, f.page)
	}
	code, verifier := h.approve(c, "read", "")
	if n := mh.hits.Load(); n != 1 {
		t.Errorf("the document was fetched %d times, want once while fresh", n)
	}
	resp, tok := h.exchange(c, code, verifier)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("exchange: %d %v", resp.StatusCode, tok)
	}
	if status, id := h.call(tok["access_token"].(string)); status != http.StatusOK || id.Name != c.ID {
		t.Errorf("the token: %d %+v", status, id)
	}
	// The document goes away: the cached copy serves while fresh, then
	// the client is unknown.
	mh.handle("/oauth/client.json", func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	if f := h.authorize(c.authParams(challenge)); f.resp.StatusCode != http.StatusOK {
		t.Errorf("a fresh cached document: %d", f.resp.StatusCode)
	}
	h.clock.add(11 * time.Minute)
	if f := h.authorize(c.authParams(challenge)); f.resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a stale document that cannot be fetched: %d", f.resp.StatusCode)
	}
	// A secret is no way to authenticate a URL-identified client.
	resp, body := h.formPost("/oauth/token", testClient{ID: id, Secret: "x"}, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}})
	oauthErr(t, "a secret for a metadata client", resp, body, http.StatusUnauthorized, "invalid_client")
}

// Documents that are not what they claim, or not safe, are refused.
func TestMetadataDocumentRefused(t *testing.T) {
	mh := newMetadataHost(t)
	h := newHarness(t, func(c *Config) { c.Fetcher = mh.fetcher() })
	ok := func() map[string]any {
		return map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}, "token_endpoint_auth_method": "none"}
	}
	cases := map[string]string{}
	d := ok()
	d["client_id"] = "https://elsewhere.example.com/client.json"
	cases["another client_id"] = mh.serve("/a.json", d)
	d = ok()
	d["token_endpoint_auth_method"] = "client_secret_basic"
	cases["a shared secret"] = mh.serve("/b.json", d)
	d = ok()
	d["redirect_uris"] = []string{"http://app.example.com/cb"}
	cases["an http redirect"] = mh.serve("/c.json", d)
	d = ok()
	d["client_name"] = strings.Repeat("x", 9000)
	cases["too big"] = mh.serve("/d.json", d)
	mh.handle("/e.json", func(w http.ResponseWriter) {
		w.Header().Set("Location", mh.srv.URL+"/f.json")
		w.WriteHeader(http.StatusFound)
	})
	cases["a redirect"] = mh.srv.URL + "/e.json"
	mh.handle("/g.json", func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`{"redirect_uris":["https://app.example.com/cb"]}`))
	})
	cases["not JSON"] = mh.srv.URL + "/g.json"
	cases["missing"] = mh.srv.URL + "/nothing.json"
	_, challenge := pkce()
	for name, id := range cases {
		c := testClient{ID: id, Redirect: "https://app.example.com/cb"}
		f := h.authorize(c.authParams(challenge))
		if f.resp.StatusCode != http.StatusBadRequest || f.resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d %s", name, f.resp.StatusCode, f.resp.Header.Get("Location"))
		}
	}
	for _, bad := range []string{"https://a.example.com", "https://a.example.com/", "http://a.example.com/c.json", "https://u:p@a.example.com/c.json",
		"https://a.example.com/x/../c.json", "https://a.example.com/c.json#f"} {
		if isMetadataURL(bad) {
			t.Errorf("isMetadataURL(%q)", bad)
		}
	}
}

// The real fetcher refuses addresses inside the network (SSRF), however
// the name resolves, unless the host is allowed.
func TestMetadataFetcherSSRF(t *testing.T) {
	mh := newMetadataHost(t)
	u, _ := url.Parse(mh.srv.URL)
	for _, target := range []string{mh.srv.URL + "/x.json", "https://localhost:" + u.Port() + "/x.json"} {
		_, err := metadataFetcher(nil).Get(target)
		if err == nil || !strings.Contains(err.Error(), "not a public address") {
			t.Errorf("%s: %v", target, err)
		}
	}
	_, err := metadataFetcher([]string{"127.0.0.1"}).Get(mh.srv.URL + "/x.json")
	if err == nil || strings.Contains(err.Error(), "not a public address") {
		t.Errorf("an allowed private host was refused for its address: %v", err) // the test certificate is not trusted: a TLS error
	}
	for ip, public := range map[string]bool{"10.1.2.3": false, "192.168.1.1": false, "169.254.169.254": false, "100.64.0.1": false,
		"::1": false, "fd00::1": false, "0.0.0.0": false, "8.8.8.8": true, "2606:4700::1111": true} {
		if got := publicIP(parseIP(ip)); got != public {
			t.Errorf("publicIP(%s) = %v", ip, got)
		}
	}
	if age := cacheAge("public, max-age=999999"); age != metadataMaxAge {
		t.Errorf("cache age %v", age)
	}
	if age := cacheAge("no-store"); age != metadataMinAge {
		t.Errorf("cache age %v", age)
	}
}

func parseIP(s string) net.IP { return net.ParseIP(s) }
