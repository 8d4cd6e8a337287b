package oauthserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// maxConsentForm bounds the consent form.
const maxConsentForm = 16 << 10

// authorize starts the authorization code flow: it checks the client and
// its redirect URI (a bad one gets an error page, never a redirect), then
// PKCE, the resource and the scope (errors go back to the client), keeps
// the request in the store and shows the consent page.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w, "")
	q := r.URL.Query()
	for k, vs := range q {
		if len(vs) > 1 {
			s.errorPage(w, http.StatusBadRequest, "The request repeats the parameter "+k+".")
			return
		}
	}
	ctx := r.Context()
	c, ok, err := s.lookupClient(ctx, q.Get("client_id"))
	if err != nil {
		s.log().Error("oauth: looking up a client", "err", err)
		s.errorPage(w, http.StatusServiceUnavailable, "The server cannot read its clients right now. Try again in a moment.")
		return
	}
	if !ok {
		s.errorPage(w, http.StatusBadRequest, "The app asking for access is not registered here (or its registration expired). Add the connector again from the app.")
		return
	}
	redirect, given := q.Get("redirect_uri"), q.Has("redirect_uri")
	if redirect == "" && len(c.RedirectURIs) == 1 {
		redirect = c.RedirectURIs[0]
	}
	if !slices.ContainsFunc(c.RedirectURIs, func(reg string) bool { return redirectMatches(reg, redirect) }) {
		s.errorPage(w, http.StatusBadRequest, "The app asked to be answered at an address it did not register. Nothing was sent to it.")
		return
	}
	state := q.Get("state")
	fail := func(code, description string) {
		http.Redirect(w, r, s.answer(redirect, url.Values{"error": {code}, "error_description": {description}}, state), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only response_type=code is supported")
		return
	case q.Get("code_challenge_method") != "S256" || !validChallenge(q.Get("code_challenge")):
		fail("invalid_request", "PKCE is required: code_challenge (S256 of the verifier, base64url) with code_challenge_method=S256")
		return
	case q.Get("resource") != "" && q.Get("resource") != s.cfg.Audience:
		fail("invalid_target", "this server issues tokens for "+s.cfg.Audience+" only")
		return
	case len(state) > 1024:
		fail("invalid_request", "state is longer than 1024 bytes")
		return
	}
	req := request{
		ID: randomID(16), ClientID: c.ID, RedirectURI: redirect, Redirected: given, State: state, Challenge: q.Get("code_challenge"),
		Scopes: s.askedScopes(q.Get("scope")), Expires: s.now().Add(s.cfg.ConsentTTL).UTC(),
	}
	csrf := randomToken("")
	req.CSRFHash = hashSecret("csrf", csrf)
	if _, err := s.save(ctx, requestsDir+req.ID+".json", req, store.PutOptions{IfNoneMatch: true}); err != nil {
		s.log().Error("oauth: saving an authorization request", "err", err)
		s.errorPage(w, http.StatusServiceUnavailable, "The server cannot save the request right now. Try again in a moment.")
		return
	}
	http.SetCookie(w, s.csrfCookie(req.ID, csrf, int(s.cfg.ConsentTTL.Seconds())))
	s.consentPage(w, http.StatusOK, c, req, csrf, "")
}

// validChallenge reports whether ch is an S256 code challenge: 32 bytes in
// base64url without padding.
func validChallenge(ch string) bool {
	if len(ch) != 43 {
		return false
	}
	for _, r := range ch {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// askedScopes reads the scope parameter: the scopes it names (with or
// without the prefix), weakest first; unknown ones are ignored, and none
// at all asks for read.
func (s *Server) askedScopes(scope string) []auth.Scope {
	var out []auth.Scope
	for f := range strings.FieldsSeq(scope) {
		if sc, err := auth.ParseScope(strings.TrimPrefix(f, s.cfg.ScopePrefix)); err == nil && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return []auth.Scope{auth.ScopeRead}
	}
	slices.SortFunc(out, func(a, b auth.Scope) int { return slices.Index(auth.Scopes, a) - slices.Index(auth.Scopes, b) })
	return out
}

// answer is the redirect URI with the response parameters, state and
// the issuer (RFC 9207) added to its query.
func (s *Server) answer(redirect string, params url.Values, state string) string {
	u, _ := url.Parse(redirect) // checked at registration
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if state != "" {
		q.Set("state", state)
	}
	q.Set("iss", s.cfg.Issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

// csrfCookie carries the consent form's token: one cookie per request,
// host-only, HTTP-only, same-site strict.
func (s *Server) csrfCookie(id, value string, maxAge int) *http.Cookie {
	secure := s.issuer.Scheme == "https"
	name := "sheaf_csrf_" + id
	if secure {
		name = "__Host-" + name
	}
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
}

// sameOrigin reports whether a form post comes from this server's own
// page: its Origin (or, without one, Sec-Fetch-Site) says so. A request
// with neither (not from a browser) still needs the CSRF token.
func (s *Server) sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		return o == s.issuer.Scheme+"://"+s.issuer.Host
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// consent takes the owner's answer on the consent page.
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w, "")
	if !s.sameOrigin(r) {
		s.errorPage(w, http.StatusForbidden, "This form can only be sent from its own page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxConsentForm)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	ctx := r.Context()
	f := r.PostForm
	id := f.Get("request")
	var req request
	etag, found := "", false
	var err error
	if len(id) == 32 && isHex(id) {
		etag, found, err = s.load(ctx, requestsDir+id+".json", &req)
	}
	switch {
	case err != nil:
		s.log().Error("oauth: reading an authorization request", "err", err)
		s.errorPage(w, http.StatusServiceUnavailable, "The server cannot read the request right now. Try again in a moment.")
		return
	case !found || s.now().After(req.Expires):
		s.errorPage(w, http.StatusBadRequest, "This authorization request expired or was already answered. Start again from the app.")
		return
	}
	cookie, cerr := r.Cookie(s.csrfCookie(id, "", 0).Name)
	csrf := f.Get("csrf")
	if cerr != nil || csrf == "" || cookie.Value != csrf || hashSecret("csrf", csrf) != req.CSRFHash {
		s.errorPage(w, http.StatusForbidden, "This form was not sent from the page this server showed. Start again from the app.")
		return
	}
	c, ok, err := s.lookupClient(ctx, req.ClientID)
	if err != nil || !ok {
		s.errorPage(w, http.StatusBadRequest, "The app asking for access is no longer registered. Add the connector again.")
		return
	}
	if f.Get("action") == "deny" {
		if s.takeRequest(ctx, id, etag) {
			http.SetCookie(w, s.csrfCookie(id, "", -1))
			http.Redirect(w, r, s.answer(req.RedirectURI, url.Values{"error": {"access_denied"}, "error_description": {"the vault's owner declined"}}, req.State), http.StatusSeeOther)
			return
		}
		s.errorPage(w, http.StatusBadRequest, "This authorization request was already answered.")
		return
	}
	ownerID, ok, err := s.cfg.Owners.Owner(ctx, strings.TrimSpace(f.Get("owner_key")))
	if err != nil {
		s.log().Error("oauth: reading the owner keys", "err", err)
		s.errorPage(w, http.StatusServiceUnavailable, "The server cannot read its keys right now. Try again in a moment.")
		return
	}
	if !ok {
		s.log().Warn("oauth: consent with a key that is no active owner key", "client_id", safeLog(c.ID))
		s.consentPage(w, http.StatusBadRequest, c, req, csrf, "That is not an active owner key (sheaf keys add --owner makes one).")
		return
	}
	scope, err := auth.ParseScope(f.Get("scope"))
	if err != nil || slices.Index(auth.Scopes, scope) > slices.Index(auth.Scopes, req.Scopes[len(req.Scopes)-1]) {
		s.consentPage(w, http.StatusBadRequest, c, req, csrf, "Choose one of the access levels the app asked for.")
		return
	}
	var rules []string
	for line := range strings.Lines(f.Get("folders")) {
		if line = strings.TrimSpace(line); line != "" {
			rules = append(rules, line)
		}
	}
	if _, err := auth.ParseFolders(rules); err != nil {
		s.consentPage(w, http.StatusBadRequest, c, req, csrf, "Folders: "+err.Error())
		return
	}
	if !s.takeRequest(ctx, id, etag) {
		s.errorPage(w, http.StatusBadRequest, "This authorization request was already answered.")
		return
	}
	now := s.now().UTC()
	g := grant{
		ID: randomID(16), ClientID: c.ID, ClientName: c.Name, Owner: ownerID, Scope: scope, Folders: rules,
		ProposeOnly: f.Get("propose_only") != "", Created: now, Expires: now.Add(s.cfg.GrantTTL),
	}
	ac := randomToken("sheafac_")
	rec := code{ClientID: c.ID, RedirectURI: req.RedirectURI, Redirected: req.Redirected, Challenge: req.Challenge, Grant: g, Expires: now.Add(s.cfg.CodeTTL)}
	if _, err := s.save(ctx, codesDir+hashSecret("code", ac)+".json", rec, store.PutOptions{IfNoneMatch: true}); err != nil {
		s.log().Error("oauth: saving an authorization code", "err", err)
		s.errorPage(w, http.StatusServiceUnavailable, "The server cannot save the approval right now. Start again from the app.")
		return
	}
	s.markUsed(ctx, c)
	s.log().Info("oauth: access approved", "grant", g.ID, "client_id", safeLog(c.ID), "client_name", safeLog(c.Name),
		"scope", string(scope), "folders", len(rules), "propose_only", g.ProposeOnly, "owner_key", ownerID)
	http.SetCookie(w, s.csrfCookie(id, "", -1))
	http.Redirect(w, r, s.answer(req.RedirectURI, url.Values{"code": {ac}}, req.State), http.StatusSeeOther)
}

// takeRequest deletes an authorization request, so that it is answered
// once; false when it was answered (or taken) already.
func (s *Server) takeRequest(ctx context.Context, id, etag string) bool {
	err := s.cfg.Store.Delete(ctx, requestsDir+id+".json", etag)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
			s.log().Error("oauth: taking an authorization request", "err", err)
		}
		return false
	}
	return true
}

// markUsed records a registered client's first approval: approved clients
// do not expire as unused ones do.
func (s *Server) markUsed(ctx context.Context, c client) {
	if c.Used != nil || c.Metadata {
		return
	}
	p := clientsDir + c.ID + ".json"
	var cur client
	etag, found, err := s.load(ctx, p, &cur)
	if err != nil || !found || cur.Used != nil {
		return
	}
	now := s.now().UTC()
	cur.Used = &now
	_, _ = s.save(ctx, p, cur, store.PutOptions{IfMatch: etag})
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// pageHeaders are the consent page's defences: no framing (clickjacking),
// no scripts, forms posted only to this server (and the redirect's origin
// a post is answered with), no referrer, no caching.
func pageHeaders(w http.ResponseWriter, redirectOrigin string) {
	h := w.Header()
	formAction := "'self'"
	if redirectOrigin != "" {
		formAction += " " + redirectOrigin
	}
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}

// origin is the scheme and host of a URL.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// consentView is what the consent page shows.
type consentView struct {
	ClientName  string
	ClientID    string
	ClientHost  string // the metadata document's host, or the client_uri's
	RedirectTo  string // where the answer goes
	Asked       []string
	Scopes      []scopeChoice
	RequestID   string
	CSRF        string
	Error       string
	Unverified  bool // the name is the client's own claim
	FolderRules string
}

type scopeChoice struct {
	Value, Label string
	Checked      bool
}

var scopeLabels = map[auth.Scope]string{
	auth.ScopeRead:  "Read: search and read notes",
	auth.ScopeWrite: "Write: also create, edit, move and delete notes",
	auth.ScopeAdmin: "Admin: also whole-vault maintenance (reindexing)",
}

// consentPage shows the consent form for req.
func (s *Server) consentPage(w http.ResponseWriter, status int, c client, req request, csrf, msg string) {
	pageHeaders(w, origin(req.RedirectURI))
	v := consentView{
		ClientName: c.Name, ClientID: c.ID, RedirectTo: origin(req.RedirectURI), RequestID: req.ID, CSRF: csrf, Error: msg,
		Unverified: true,
	}
	if v.ClientName == "" {
		v.ClientName = "An unnamed app"
	}
	if c.Metadata {
		v.ClientHost = origin(c.ID)
	} else if c.URI != "" {
		v.ClientHost = origin(c.URI)
	}
	highest := req.Scopes[len(req.Scopes)-1]
	for _, sc := range auth.Scopes {
		if slices.Index(auth.Scopes, sc) > slices.Index(auth.Scopes, highest) {
			break
		}
		v.Scopes = append(v.Scopes, scopeChoice{Value: string(sc), Label: scopeLabels[sc], Checked: sc == auth.ScopeRead})
	}
	for _, sc := range req.Scopes {
		v.Asked = append(v.Asked, string(sc))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, v.html())
}

// errorPage shows a refusal that cannot go back to the client.
func (s *Server) errorPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, errorHTML(msg))
}
