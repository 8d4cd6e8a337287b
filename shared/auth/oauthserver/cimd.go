package oauthserver

import (
	"bytes"
	"context"
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
	"syscall"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-
// document, which the MCP authorization spec prefers to registration): a
// client's id is the https URL of a JSON document with its metadata.
const (
	maxMetadataDocument = 8 << 10
	metadataMinAge      = 5 * time.Minute
	metadataMaxAge      = 24 * time.Hour
	metadataDefaultAge  = time.Hour
)

// isMetadataURL reports whether id has the shape of a client id metadata
// document's URL: https, a host, a path other than "/", no fragment, no
// credentials, no dot segments.
func isMetadataURL(id string) bool {
	if len(id) > maxURILen || !strings.HasPrefix(id, "https://") {
		return false
	}
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(id, "#") || u.Path == "" || u.Path == "/" {
		return false
	}
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// metadataFetcher is the client that fetches metadata documents: https
// only (the URL's shape), no redirects, a short timeout, and a dialer that
// refuses addresses inside the network the server runs in (SSRF), except
// for the hosts in allow. The check is made on the address actually
// dialled, so DNS rebinding cannot slip past it.
func metadataFetcher(allow []string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil || !publicIP(ip) {
			return fmt.Errorf("refusing to fetch client metadata from %s: not a public address", host)
		}
		return nil
	}}
	allowed := &net.Dialer{Timeout: 5 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		if slices.Contains(allow, host) {
			return allowed.DialContext(ctx, network, addr)
		}
		return d.DialContext(ctx, network, addr)
	}
	tr.ResponseHeaderTimeout = 5 * time.Second
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an error (non-200)
		},
	}
}

// publicIP reports whether ip is routable on the internet.
func publicIP(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, cidr := range []string{"100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "169.254.0.0/16", "fc00::/7", "64:ff9b::/96"} {
		_, n, _ := net.ParseCIDR(cidr)
		if n.Contains(ip) {
			return false
		}
	}
	return true
}

// metadataClient returns the client whose id is the metadata document at
// id: from the store while a fetched copy is fresh, else fetched again.
// ok is false when the document cannot be fetched or is not valid.
func (s *Server) metadataClient(ctx context.Context, id string) (client, bool, error) {
	key := cimdDir + hashSecret("client metadata url", id) + ".json"
	var cached client
	etag, found, err := s.load(ctx, key, &cached)
	if err != nil {
		return client{}, false, err
	}
	if found && cached.ID == id && s.now().Before(cached.Expires) {
		return cached, true, nil
	}
	m, age, err := s.fetchMetadata(ctx, id)
	if err != nil {
		s.log().Warn("oauth: client metadata document refused", "client_id", safeLog(id), "err", err)
		return client{}, false, nil
	}
	c := client{
		ID: id, Name: m.ClientName, URI: m.ClientURI, RedirectURIs: m.RedirectURIs, AuthMethod: "none",
		GrantTypes: m.GrantTypes, Created: s.now().UTC(), Metadata: true, Expires: s.now().UTC().Add(age),
	}
	if found {
		c.Created, c.Used = cached.Created, cached.Used
	}
	opts := store.PutOptions{IfMatch: etag}
	if !found {
		opts = store.PutOptions{IfNoneMatch: true}
	}
	if _, err := s.save(ctx, key, c, opts); err != nil && !errors.Is(err, store.ErrConflict) {
		return client{}, false, err // a conflict: another instance cached it meanwhile; this copy is as good
	}
	return c, true, nil
}

// fetchMetadata fetches and checks the document at id, and says how long
// it may be cached.
func (s *Server) fetchMetadata(ctx context.Context, id string) (clientMetadata, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return clientMetadata{}, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.cfg.Fetcher.Do(req)
	if err != nil {
		return clientMetadata{}, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return clientMetadata{}, 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return clientMetadata{}, 0, fmt.Errorf("content type %q, want application/json", mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataDocument+1))
	if err != nil {
		return clientMetadata{}, 0, err
	}
	if len(body) > maxMetadataDocument {
		return clientMetadata{}, 0, fmt.Errorf("larger than %d bytes", maxMetadataDocument)
	}
	var m clientMetadata
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil || dec.More() {
		return clientMetadata{}, 0, errors.New("not one JSON object")
	}
	if m.ClientID != id {
		return clientMetadata{}, 0, fmt.Errorf("its client_id %q is not its URL", m.ClientID)
	}
	if err := m.validate(true); err != nil {
		return clientMetadata{}, 0, err
	}
	return m, cacheAge(resp.Header.Get("Cache-Control")), nil
}

// cacheAge reads max-age, bounded; no-store and no-cache get the least.
func cacheAge(cc string) time.Duration {
	age := metadataDefaultAge
	for part := range strings.SplitSeq(cc, ",") {
		part = strings.TrimSpace(strings.ToLower(part))
		switch {
		case part == "no-store" || part == "no-cache":
			return metadataMinAge
		case strings.HasPrefix(part, "max-age="):
			if n, err := strconv.Atoi(strings.TrimPrefix(part, "max-age=")); err == nil && n >= 0 {
				age = time.Duration(n) * time.Second
			}
		}
	}
	return min(max(age, metadataMinAge), metadataMaxAge)
}
