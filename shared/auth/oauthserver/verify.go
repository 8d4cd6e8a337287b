package oauthserver

import (
	"bytes"
	"io"
	"net/http"

	"github.com/sheaf-dev/sheaf/shared/auth/oauth"
)

// Verifier returns the resource server for this authorization server's
// tokens: package oauth's Verifier (signature, issuer, audience, expiry,
// claims to an auth.Identity, RFC 9728 metadata), reading the JWKS from
// this server in process rather than over the network, and asking the
// grant checker about every token, so that a revoked grant or owner key
// stops its tokens before they expire.
func (s *Server) Verifier() (*oauth.Verifier, error) {
	return oauth.New(oauth.Config{
		Issuer: s.cfg.Issuer, Audience: s.cfg.Audience, JWKSURL: s.endpoint("jwks"), ScopePrefix: s.cfg.ScopePrefix,
		Client: &http.Client{Transport: jwksTransport{s}}, Check: s.checker.check, Now: s.cfg.Now,
	})
}

// jwksTransport answers the verifier's JWKS requests from the server
// itself.
type jwksTransport struct{ s *Server }

func (t jwksTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	w := &buffer{header: http.Header{}, code: http.StatusOK}
	t.s.jwks(w, r)
	return &http.Response{
		StatusCode: w.code, Status: http.StatusText(w.code), Header: w.header, Request: r,
		Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}, nil
}

// buffer is a ResponseWriter that keeps the response.
type buffer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *buffer) Header() http.Header         { return b.header }
func (b *buffer) WriteHeader(code int)        { b.code = code }
func (b *buffer) Write(p []byte) (int, error) { return b.body.Write(p) }
