package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

func TestHTTPGuards(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := checkOrigin(nil, authenticate(&auth.Authenticator{Token: "s3cret"}, nil, ok))
	for _, c := range []struct {
		auth, origin string
		want         int
	}{
		{"", "", http.StatusUnauthorized},
		{"Bearer wrong", "", http.StatusUnauthorized},
		{"Basic s3cret", "", http.StatusUnauthorized},
		{"Bearer s3cret x", "", http.StatusUnauthorized},
		{"bearer s3cret", "", http.StatusTeapot}, // the scheme is case-insensitive (RFC 7235)
		{"Bearer s3cret", "", http.StatusTeapot},
		{"Bearer s3cret", "http://localhost:5173", http.StatusTeapot},
		{"Bearer s3cret", "https://evil.example", http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("auth %q origin %q: status %d, want %d", c.auth, c.origin, w.Code, c.want)
		}
		if w.Code == http.StatusUnauthorized {
			wa := w.Header().Get("WWW-Authenticate")
			if !strings.HasPrefix(wa, "Bearer") || strings.Contains(wa, "resource_metadata") {
				t.Errorf("401 WWW-Authenticate %q", wa)
			}
			if sent := c.auth != ""; sent != strings.Contains(wa, `error="invalid_token"`) {
				t.Errorf("auth %q: WWW-Authenticate %q (invalid_token only when a credential was sent)", c.auth, wa)
			}
		}
	}
}
