package oauthserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// Limits of client metadata.
const (
	maxRegistrationBody = 16 << 10
	maxRedirectURIs     = 10
	maxURILen           = 2000
	maxNameLen          = 200
)

// clientMetadata is what a client registers (RFC 7591 §2) or publishes in
// its metadata document; unknown fields are ignored.
type clientMetadata struct {
	ClientID      string   `json:"client_id"` // metadata documents only
	RedirectURIs  []string `json:"redirect_uris"`
	AuthMethod    *string  `json:"token_endpoint_auth_method"`
	GrantTypes    []string `json:"grant_types"`
	ResponseTypes []string `json:"response_types"`
	ClientName    string   `json:"client_name"`
	ClientURI     string   `json:"client_uri"`
}

// registrationError is an RFC 7591 §3.2.2 error.
type registrationError struct{ code, description string }

func (e *registrationError) Error() string { return e.code + ": " + e.description }

func badMetadata(format string, args ...any) error {
	return &registrationError{"invalid_client_metadata", fmt.Sprintf(format, args...)}
}

func badRedirect(format string, args ...any) error {
	return &registrationError{"invalid_redirect_uri", fmt.Sprintf(format, args...)}
}

// validate checks metadata and fills in the defaults; document says the
// metadata comes from a client id metadata document (a public client).
func (m *clientMetadata) validate(document bool) error {
	if len(m.RedirectURIs) == 0 {
		return badRedirect("redirect_uris is required")
	}
	if len(m.RedirectURIs) > maxRedirectURIs {
		return badRedirect("at most %d redirect_uris", maxRedirectURIs)
	}
	for _, u := range m.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return err
		}
	}
	method := "client_secret_basic" // RFC 7591 §2's default
	if document {
		method = "none"
	}
	if m.AuthMethod != nil {
		method = *m.AuthMethod
	}
	switch {
	case document && method != "none":
		return badMetadata("a client identified by a metadata document is public: token_endpoint_auth_method must be none, not %q", method)
	case !slices.Contains(authMethods, method):
		return badMetadata("token_endpoint_auth_method %q is not supported (%s)", method, strings.Join(authMethods, ", "))
	}
	m.AuthMethod = &method
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{"authorization_code"}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return badMetadata("grant type %q is not supported (authorization_code, refresh_token)", g)
		}
	}
	if !slices.Contains(m.GrantTypes, "authorization_code") {
		return badMetadata("grant_types must include authorization_code")
	}
	for _, rt := range m.ResponseTypes {
		if rt != "code" {
			return badMetadata("response type %q is not supported (code)", rt)
		}
	}
	if !utf8.ValidString(m.ClientName) || len(m.ClientName) > maxNameLen || strings.IndexFunc(m.ClientName, unicode.IsControl) >= 0 {
		return badMetadata("client_name must be printable text of at most %d bytes", maxNameLen)
	}
	if m.ClientURI != "" {
		u, err := url.Parse(m.ClientURI)
		if err != nil || u.Scheme != "https" || u.Host == "" || len(m.ClientURI) > maxURILen || u.User != nil {
			return badMetadata("client_uri must be an https URL")
		}
	}
	return nil
}

// checkRedirectURI allows what OAuth 2.1 and RFC 8252 allow: an https URL,
// or an http URL on a loopback address for native clients; never a
// fragment or credentials.
func checkRedirectURI(raw string) error {
	if len(raw) > maxURILen || strings.ContainsAny(raw, " \t\r\n\x00") {
		return badRedirect("redirect URI too long or with spaces")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return badRedirect("redirect URI %q is not an absolute URL", raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return badRedirect("redirect URI %q has a fragment", raw)
	case u.User != nil:
		return badRedirect("redirect URI %q has credentials", raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
		return nil
	}
	return badRedirect("redirect URI %q must be https, or http on a loopback address (127.0.0.1, [::1], localhost)", raw)
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// redirectMatches compares a requested redirect URI with a registered one:
// exactly, except that a loopback URI's port may differ (RFC 8252 §7.3:
// native clients get a free port each time).
func redirectMatches(registered, requested string) bool {
	if registered == requested {
		return true
	}
	ru, err1 := url.Parse(registered)
	qu, err2 := url.Parse(requested)
	if err1 != nil || err2 != nil || ru.Scheme != "http" || qu.Scheme != "http" || !loopbackHost(ru.Hostname()) {
		return false
	}
	return ru.Hostname() == qu.Hostname() && ru.EscapedPath() == qu.EscapedPath() && ru.RawQuery == qu.RawQuery &&
		qu.User == nil && qu.Fragment == ""
}

// source names the caller's address for the registration limits: a hash,
// never the address itself.
func source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	sum := sha256.Sum256([]byte("sheaf oauth source\x00" + host))
	return hex.EncodeToString(sum[:8])
}

// register is Dynamic Client Registration (RFC 7591).
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "send the client metadata as application/json")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRegistrationBody+1))
	if err != nil || len(body) > maxRegistrationBody {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("the metadata must be a JSON object of at most %d bytes", maxRegistrationBody))
		return
	}
	var m clientMetadata
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil || dec.More() {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the metadata is not one JSON object of the RFC 7591 fields")
		return
	}
	if err := m.validate(false); err != nil {
		var re *registrationError
		errors.As(err, &re)
		oauthError(w, http.StatusBadRequest, re.code, re.description)
		return
	}
	src := source(r)
	ctx := r.Context()
	if retry, err := s.allowRegistration(ctx, src); err != nil {
		s.serverError(w, "counting registrations", err)
		return
	} else if retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(retry.Seconds())))
		oauthError(w, http.StatusTooManyRequests, "temporarily_unavailable", "too many clients registered from here or in all; try again later")
		s.log().Warn("oauth: registration refused: too many", "source", src)
		return
	}
	c := client{
		ID: "sheaf-" + randomID(16), Name: m.ClientName, URI: m.ClientURI, RedirectURIs: m.RedirectURIs,
		AuthMethod: *m.AuthMethod, GrantTypes: m.GrantTypes, Created: s.now().UTC(), Source: src,
	}
	secret := ""
	if c.AuthMethod != "none" {
		secret = randomToken("sheafcs_")
		c.SecretHash = hashSecret("client secret", secret)
	}
	if _, err := s.save(ctx, clientsDir+c.ID+".json", c, store.PutOptions{IfNoneMatch: true}); err != nil {
		s.serverError(w, "saving the client", err)
		return
	}
	s.log().Info("oauth: client registered", "client_id", c.ID, "client_name", safeLog(c.Name), "source", src)
	s.sweepSometimes(ctx)
	resp := map[string]any{
		"client_id": c.ID, "client_id_issued_at": c.Created.Unix(), "redirect_uris": c.RedirectURIs,
		"token_endpoint_auth_method": c.AuthMethod, "grant_types": c.GrantTypes, "response_types": []string{"code"},
	}
	if c.Name != "" {
		resp["client_name"] = c.Name
	}
	if c.URI != "" {
		resp["client_uri"] = c.URI
	}
	if secret != "" {
		resp["client_secret"] = secret
		resp["client_secret_expires_at"] = 0
	}
	writeJSON(w, http.StatusCreated, resp)
}

// safeLog trims text a client chose for a log line.
func safeLog(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// counter is a registration count in one hour.
type counter struct {
	N int `json:"n"`
}

// allowRegistration counts one registration from src against the limits
// of this hour; it returns how long to wait when over one.
func (s *Server) allowRegistration(ctx context.Context, src string) (time.Duration, error) {
	now := s.now().UTC()
	hour := now.Truncate(time.Hour)
	retry := hour.Add(time.Hour).Sub(now) + time.Second
	stamp := hour.Format("2006010215")
	for _, lim := range []struct {
		key string
		max int
	}{
		{"source-" + src + "-" + stamp, s.cfg.RegistrationsPerSource},
		{"all-" + stamp, s.cfg.RegistrationsPerHour},
	} {
		ok, err := s.count(ctx, limitsDir+lim.key+".json", lim.max)
		if err != nil {
			return 0, err
		}
		if !ok {
			return retry, nil
		}
	}
	return 0, nil
}

// count adds one to the counter at p unless it reached max; false when
// it had.
func (s *Server) count(ctx context.Context, p string, max int) (bool, error) {
	for range 8 {
		var c counter
		etag, found, err := s.load(ctx, p, &c)
		if err != nil {
			return false, err
		}
		if c.N >= max {
			return false, nil
		}
		c.N++
		opts := store.PutOptions{IfMatch: etag}
		if !found {
			opts = store.PutOptions{IfNoneMatch: true}
		}
		if _, err := s.save(ctx, p, c, opts); errors.Is(err, store.ErrConflict) {
			continue
		} else if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, errors.New("the registration counter keeps changing")
}

// lookupClient returns a client by id: a registered one, or one whose id
// is the URL of its metadata document (fetched, or cached in the store).
// ok is false for an unknown client.
func (s *Server) lookupClient(ctx context.Context, id string) (client, bool, error) {
	if isMetadataURL(id) {
		return s.metadataClient(ctx, id)
	}
	if !validClientID(id) {
		return client{}, false, nil
	}
	var c client
	_, found, err := s.load(ctx, clientsDir+id+".json", &c)
	return c, found, err
}

// validClientID reports whether id can be a registered client's id.
func validClientID(id string) bool {
	rest, ok := strings.CutPrefix(id, "sheaf-")
	if !ok || len(rest) != 32 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}
