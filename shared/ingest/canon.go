package ingest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// MaxURLBytes bounds a URL given to ParseURL.
const MaxURLBytes = 4096

// trackingParams are query parameters that only tell a site where a
// visitor came from; the canonical URL drops them (matched without case).
// Prefixes end in '*'.
var trackingParams = []string{
	"utm_*", "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid",
	"mc_cid", "mc_eid", "igshid", "yclid", "twclid", "ttclid", "li_fat_id",
	"_hsenc", "_hsmi", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "_ga", "_gl",
}

func isTracking(key string) bool {
	k := strings.ToLower(key)
	for _, p := range trackingParams {
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(k, pre) {
				return true
			}
		} else if k == p {
			return true
		}
	}
	return false
}

// ParseURL checks raw as a URL Sheaf may fetch and returns it as it will be
// requested (the fragment dropped, nothing else changed) and its canonical
// form, the note's source_url and the key that finds an earlier copy.
//
// Refused: anything but an absolute http or https URL with a host, URLs
// with user:password@ (a credential would end up in the note), control
// characters and URLs over MaxURLBytes. Addresses are not checked here:
// the fetcher checks every connection's address after DNS resolution.
//
// The canonical form: scheme and host lowercased; an internationalised host
// in its ASCII (punycode) form without a trailing dot; the default port
// dropped; an empty path as "/"; "." and ".." segments resolved;
// percent-escapes uppercased and unreserved characters (A-Z a-z 0-9 - . _ ~)
// unescaped; tracking parameters (utm_*, fbclid, gclid, ...) dropped; the
// remaining parameters sorted by name (the values of one name keep their
// order); an empty query and the fragment dropped.
func ParseURL(raw string) (fetch, canonical *url.URL, err error) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return nil, nil, refuse(ReasonURLInvalid, nil, "The url is empty: send an absolute http or https URL, such as \"https://example.com/page\".")
	case len(raw) > MaxURLBytes:
		return nil, nil, refuse(ReasonURLInvalid, map[string]any{"max_bytes": MaxURLBytes}, "The url is longer than %d bytes.", MaxURLBytes)
	case !utf8.ValidString(raw):
		return nil, nil, refuse(ReasonURLInvalid, nil, "The url is not valid UTF-8 text.")
	}
	for _, r := range raw {
		if r < 0x20 || r == 0x7f {
			return nil, nil, refuse(ReasonURLInvalid, nil, "The url contains a control character.")
		}
	}
	u, perr := url.Parse(raw)
	if perr != nil {
		return nil, nil, &Error{Reason: ReasonURLInvalid, Message: "The url is malformed: send an absolute http or https URL, such as \"https://example.com/page\".", Err: perr}
	}
	if err := checkURL(u); err != nil {
		return nil, nil, err
	}
	f := *u
	f.Fragment, f.RawFragment = "", ""
	c, err := canonicalize(u)
	if err != nil {
		return nil, nil, err
	}
	return &f, c, nil
}

// checkURL applies the scheme, host and credential rules to u (a request's
// URL or a redirect's target).
func checkURL(u *url.URL) error {
	scheme := strings.ToLower(u.Scheme)
	switch {
	case u.Scheme == "":
		return refuse(ReasonURLInvalid, nil, "The url is not absolute: send an http or https URL with a host, such as \"https://example.com/page\".")
	case scheme != "http" && scheme != "https":
		return refuse(ReasonSchemeNotAllowed, map[string]any{"scheme": clip(u.Scheme, 32)},
			"The url's scheme %q is not fetched: only http and https are.", clip(u.Scheme, 32))
	case u.Opaque != "":
		return refuse(ReasonURLInvalid, nil, "The url is not absolute: send an http or https URL with a host, such as \"https://example.com/page\".")
	case u.User != nil:
		return refuse(ReasonCredentialsInURL, nil, "The url carries a user name or password (user:password@host); Sheaf does not fetch those, so the credential never lands in a note.")
	case u.Hostname() == "":
		return refuse(ReasonURLInvalid, nil, "The url has no host.")
	}
	if p := u.Port(); p != "" {
		if n, ok := portNumber(p); !ok || n == 0 {
			return refuse(ReasonURLInvalid, nil, "The url's port %q is not a port number.", clip(p, 16))
		}
	}
	if _, err := asciiHost(u.Hostname()); err != nil {
		return err
	}
	return nil
}

func portNumber(p string) (int, bool) {
	if len(p) > 5 {
		return 0, false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 65535
}

// asciiHost lowercases host and turns an internationalised name into its
// ASCII form; IP literals are returned in their standard spelling.
func asciiHost(host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() != nil && !strings.Contains(host, ":") {
			return ip.To4().String(), nil
		}
		return ip.String(), nil
	}
	h := strings.TrimSuffix(host, ".")
	if h == "" || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return "", refuse(ReasonURLInvalid, nil, "The url's host is not a valid host name.")
	}
	a, err := idna.Lookup.ToASCII(h)
	if err == nil && utf8.ValidString(h) {
		if again, err2 := idna.Lookup.ToASCII(a); err2 != nil || again != a {
			err = fmt.Errorf("host %q is not stable under IDNA", a)
		}
	} else if err == nil {
		err = errors.New("host is not UTF-8")
	}
	if err != nil || a == "" {
		return "", &Error{Reason: ReasonURLInvalid, Message: "The url's host is not a valid host name.", Err: err}
	}
	return strings.ToLower(a), nil
}

func canonicalize(u *url.URL) (*url.URL, error) {
	host, err := asciiHost(u.Hostname())
	if err != nil {
		return nil, err
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if n, _ := portNumber(port); scheme == "http" && n == 80 || scheme == "https" && n == 443 {
		port = ""
	} else if port != "" {
		port = strings.TrimLeft(port, "0")
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	c := &url.URL{Scheme: scheme, Host: host}
	c.Path = "/"
	if ep := u.EscapedPath(); ep != "" {
		rp := removeDotSegments(normEscapes(ep))
		if p, err := url.PathUnescape(rp); err == nil {
			c.Path, c.RawPath = p, rp
		}
	}
	if u.RawQuery != "" {
		c.RawQuery = canonicalQuery(u.RawQuery)
	}
	return c, nil
}

// removeDotSegments is RFC 3986 §5.2.4 over an escaped path.
func removeDotSegments(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}

// normEscapes uppercases percent-escapes and unescapes unreserved characters.
func normEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upper(s[i+1]))
				b.WriteByte(upper(s[i+2]))
			}
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// canonicalQuery drops tracking parameters and sorts the rest by name,
// keeping each pair's escaping (normalised) and the order of one name's
// values.
func canonicalQuery(raw string) string {
	type pair struct{ key, raw string }
	var ps []pair
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			key = k
		}
		if isTracking(key) {
			continue
		}
		ps = append(ps, pair{key, normEscapes(part)})
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].key < ps[j].key })
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.raw
	}
	return strings.Join(parts, "&")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
