package ingest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Limits bound one fetch. Zero fields take the defaults.
type Limits struct {
	MaxBytes     int64         // largest body accepted (after HTTP decompression); default 20 MiB
	Timeout      time.Duration // the whole fetch, redirects and body included; default 30 s
	ReadTimeout  time.Duration // the longest wait for the response headers or between two reads; default 10 s
	MaxRedirects int           // redirects followed; default 5 (negative: none)
}

// Default limits.
const (
	DefaultMaxBytes     = 20 << 20
	DefaultTimeout      = 30 * time.Second
	DefaultReadTimeout  = 10 * time.Second
	DefaultMaxRedirects = 5
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.MaxRedirects == 0 {
		l.MaxRedirects = DefaultMaxRedirects
	} else if l.MaxRedirects < 0 {
		l.MaxRedirects = 0
	}
	return l
}

// Fetcher fetches URLs for ingest_url. The zero Fetcher is ready to use:
// public addresses only, default limits, the system resolver and roots.
// A Fetcher is safe for concurrent use; its fields must not change after
// the first Fetch.
type Fetcher struct {
	Policy    Policy
	Limits    Limits
	UserAgent string // default "Sheaf-ingest/1"
	// Resolve looks up a host's addresses; nil uses the system resolver.
	// Tests point names at chosen addresses with it.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// TLS configures https (tests trust their server's certificate); nil:
	// the system's roots.
	TLS *tls.Config

	once   sync.Once
	client *http.Client
}

// Response is a fetched document.
type Response struct {
	URL       *url.URL // as requested (the fragment dropped)
	Canonical *url.URL // the canonical form of URL (see ParseURL)
	Final     *url.URL // where the redirects ended (URL when there were none)
	// FinalCanonical is Final's canonical form: the note's final_url, and a
	// second key for finding an earlier copy.
	FinalCanonical *url.URL
	Redirects      int       // redirects followed
	MediaType      string    // the Content-Type's media type, lowercased ("" when the server sent none)
	Charset        string    // the Content-Type's charset parameter, if any
	Body           []byte    // at most Limits.MaxBytes
	FetchedAt      time.Time // when the response arrived, UTC
}

// Accepted media types, in the Accept header's order of preference.
const acceptHeader = "text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, application/pdf;q=0.9, */*;q=0.1"

// Fetch GETs rawURL: it checks the URL (ParseURL), connects only to
// addresses the Policy allows (checked for every connection, after DNS
// resolution, redirects included), follows at most MaxRedirects redirects
// to http(s) URLs, refuses a non-2xx status, a media type Convert cannot
// read, and a body over MaxBytes, and gives up when the server is slower
// than the Limits. Every failure is an *Error.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Response, error) {
	u, canon, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	lim := f.Limits.withDefaults()
	f.once.Do(f.init)
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Error{Reason: ReasonURLInvalid, Message: "The url cannot be requested.", Err: err}
	}
	ua := f.UserAgent
	if ua == "" {
		ua = "Sheaf-ingest/1"
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", acceptHeader)
	redirects := 0
	ctx = context.WithValue(ctx, redirectsKey{}, &redirects)
	req = req.WithContext(ctx)

	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.classify(ctx, err, redirects > 0)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		retry := resp.StatusCode == 408 || resp.StatusCode == 425 || resp.StatusCode == 429 || resp.StatusCode >= 500
		e := refuse(ReasonHTTPStatus, map[string]any{"status": resp.StatusCode},
			"The server answered %d %s.", resp.StatusCode, http.StatusText(resp.StatusCode))
		e.Retryable = retry
		if ra := resp.Header.Get("Retry-After"); ra != "" && retry {
			if s, err := strconv.Atoi(ra); err == nil && s >= 0 && s < 86400 {
				e.Fields["retry_after_ms"] = s * 1000
			}
		}
		return nil, e
	}
	out := &Response{URL: u, Canonical: canon, Final: resp.Request.URL, FinalCanonical: canon, Redirects: redirects, FetchedAt: time.Now().UTC()}
	if redirects > 0 {
		if _, fc, err := ParseURL(resp.Request.URL.String()); err == nil {
			out.FinalCanonical = fc
		}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, params, err := mime.ParseMediaType(ct)
		if err == nil {
			out.MediaType, out.Charset = mt, params["charset"]
		} else {
			out.MediaType = "application/octet-stream"
		}
	}
	if _, err := formatOfType(out.MediaType); err != nil && !sniffable(out.MediaType) {
		return nil, err // refused before reading the body
	}
	if resp.ContentLength > lim.MaxBytes {
		return nil, tooLarge(lim.MaxBytes, resp.ContentLength)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, lim.MaxBytes+1))
	if err != nil {
		return nil, f.classify(ctx, err, false)
	}
	if int64(len(body)) > lim.MaxBytes {
		return nil, tooLarge(lim.MaxBytes, -1)
	}
	out.Body = body
	return out, nil
}

func tooLarge(limit, size int64) *Error {
	fields := map[string]any{"max_bytes": limit}
	if size >= 0 {
		fields["size"] = size
		return refuse(ReasonTooLarge, fields, "The document is %d bytes, over the limit of %d bytes.", size, limit)
	}
	return refuse(ReasonTooLarge, fields, "The document is over the limit of %d bytes.", limit)
}

type redirectsKey struct{}

func (f *Fetcher) init() {
	lim := f.Limits.withDefaults()
	tr := &http.Transport{
		Proxy:                  nil, // never through a proxy: the address check must see the real peer
		DialContext:            f.dial,
		TLSClientConfig:        f.TLS,
		TLSHandshakeTimeout:    lim.ReadTimeout,
		ResponseHeaderTimeout:  lim.ReadTimeout,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           8,
		IdleConnTimeout:        30 * time.Second,
	}
	f.client = &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if n, ok := req.Context().Value(redirectsKey{}).(*int); ok {
				*n = len(via)
			}
			if len(via) > lim.MaxRedirects {
				return refuse(ReasonTooManyRedirects, map[string]any{"max_redirects": lim.MaxRedirects},
					"The url redirected more than %d times.", lim.MaxRedirects)
			}
			if err := checkURL(req.URL); err != nil {
				var e *Error
				if errors.As(err, &e) {
					e.Message = "The url redirected to a location Sheaf does not fetch: " + e.Message
				}
				return err
			}
			return nil
		},
	}
}

// dial resolves the host, refuses addresses the Policy forbids, and dials
// the allowed ones in turn; the dialer's Control checks the address once
// more just before connecting, so no other path reaches a forbidden peer.
func (f *Fetcher) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	lim := f.Limits.withDefaults()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = f.resolve(ctx, host)
		if err != nil {
			return nil, &Error{Reason: ReasonHostNotFound, Message: fmt.Sprintf("The host %q has no address.", clip(host, 100)), Err: err}
		}
	}
	var allowed []netip.Addr
	var refusal error
	for _, a := range addrs {
		if err := f.Policy.Check(a.Unmap()); err != nil {
			refusal = err
			continue
		}
		allowed = append(allowed, a.Unmap())
	}
	if len(allowed) == 0 {
		if refusal == nil {
			return nil, refuse(ReasonHostNotFound, nil, "The host %q has no address.", clip(host, 100))
		}
		return nil, refusal
	}
	d := &net.Dialer{Timeout: lim.ReadTimeout, Control: f.control}
	var last error
	for _, a := range allowed {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return &idleConn{Conn: c, idle: lim.ReadTimeout}, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

// control runs after the socket is made and before it connects: the last
// word on the peer's address.
func (f *Fetcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refuse(ReasonAddressForbidden, nil, "The connection's address cannot be checked.")
	}
	return f.Policy.Check(ap.Addr().Unmap())
}

func (f *Fetcher) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if f.Resolve != nil {
		return f.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// idleConn cuts a connection that stays silent longer than idle between
// two reads (a server trickling nothing).
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

// classify turns a client error into an *Error: a refusal from the dialer
// or the redirect check as it is, a timeout as timeout, anything else as
// fetch-failed without the Go error text.
func (f *Fetcher) classify(ctx context.Context, err error, redirected bool) error {
	var e *Error
	if errors.As(err, &e) {
		if e.Reason == ReasonAddressForbidden && redirected {
			e2 := *e
			what, _ := e.Fields["address_class"].(string)
			e2.Message = "The url redirected to a host that " + forbiddenTail(what)
			return &e2
		}
		return e
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		lim := f.Limits.withDefaults()
		return &Error{Reason: ReasonTimeout, Retryable: true, Err: err,
			Fields:  map[string]any{"timeout_ms": lim.Timeout.Milliseconds(), "read_timeout_ms": lim.ReadTimeout.Milliseconds()},
			Message: fmt.Sprintf("The server was too slow: a fetch may take %s in all and wait %s at most for each read.", lim.Timeout, lim.ReadTimeout)}
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return &Error{Reason: ReasonFetchFailed, Message: "The fetch was cancelled.", Err: err, Retryable: true}
	}
	var te tls.RecordHeaderError
	var ce *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ce):
		return &Error{Reason: ReasonFetchFailed, Message: "The server's TLS certificate is not valid for this host.", Err: err}
	case errors.As(err, &te):
		return &Error{Reason: ReasonFetchFailed, Message: "The server did not speak TLS.", Err: err}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Error{Reason: ReasonFetchFailed, Message: "The server refused the connection.", Err: err, Retryable: true}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &Error{Reason: ReasonFetchFailed, Message: "The server closed the connection before the document was complete.", Err: err, Retryable: true}
	}
	return &Error{Reason: ReasonFetchFailed, Message: "The document could not be fetched.", Err: err, Retryable: true}
}
