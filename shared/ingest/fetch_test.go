package ingest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const articleHTML = `<!doctype html><html><head><title>Fetched page</title></head><body>
<nav><a href="/">Home</a></nav><article><h1>Fetched page</h1>
<p>The first paragraph of the fetched page, long enough to be the article: lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>
<p>A second paragraph with a <a href="/other">relative link</a>.</p></article></body></html>`

var loopback = Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

// testSite serves the pages the fetch tests need.
func testSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articleHTML)
	})
	mux.HandleFunc("/doc.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(textPDF([][]string{{"A fetched PDF", "with two lines"}}, "Fetched PDF", "", true))
	})
	mux.HandleFunc("/octet.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(textPDF([][]string{{"Sniffed PDF"}}, "", "", false))
	})
	mux.HandleFunc("/notes.md", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "# Remote notes\n\nSome *markdown*.\n")
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n <= 0 {
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/redirect/%d", n-1), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		// 50 MB, streamed without a Content-Length
		w.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range 50 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/big-declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(50<<20))
		_, _ = w.Write([]byte("x"))
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "first bytes")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/trickle", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 200 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	mux.HandleFunc("/slow-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func fetcher(lim Limits) *Fetcher {
	return &Fetcher{Policy: loopback, Limits: lim}
}

func TestFetchAndConvert(t *testing.T) {
	s := testSite(t)
	f := fetcher(Limits{})
	ctx := context.Background()
	for _, c := range []struct {
		path, format, title, text string
	}{
		{"/page#section", "html", "Fetched page", "The first paragraph of the fetched page"},
		{"/doc.pdf", "pdf", "Fetched PDF", "A fetched PDF\nwith two lines"},
		{"/octet.pdf", "pdf", "Sniffed PDF", "Sniffed PDF"},
		{"/notes.md", "markdown", "Remote notes", "Some *markdown*."},
		{"/redirect/3", "html", "Fetched page", "relative link"},
	} {
		r, err := f.Fetch(ctx, s.URL+c.path)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		doc, err := Convert(ctx, Source{Body: r.Body, MediaType: r.MediaType, Charset: r.Charset, URL: r.Final}, ConvertLimits{})
		if err != nil {
			t.Fatalf("%s: convert: %v", c.path, err)
		}
		if string(doc.Format) != c.format || doc.Title != c.title || !strings.Contains(doc.Markdown, c.text) {
			t.Errorf("%s: %s %q\n%s", c.path, doc.Format, doc.Title, doc.Markdown)
		}
		if strings.Contains(r.URL.String(), "#") || strings.Contains(r.Canonical.String(), "#") {
			t.Errorf("%s: fragment kept: %s %s", c.path, r.URL, r.Canonical)
		}
		if c.path == "/redirect/3" {
			if r.Redirects != 4 || r.Final.Path != "/page" || r.FinalCanonical.String() != s.URL+"/page" || r.Canonical.String() != s.URL+"/redirect/3" {
				t.Errorf("redirects %d, final %s", r.Redirects, r.Final)
			}
			if !strings.Contains(doc.Markdown, "("+s.URL+"/other)") {
				t.Errorf("relative link not made absolute against the final URL:\n%s", doc.Markdown)
			}
		}
	}
}

func TestFetchRefuses(t *testing.T) {
	s := testSite(t)
	ctx := context.Background()
	port := s.Listener.Addr().(*net.TCPAddr).Port
	resolver := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "private.test":
			return []netip.Addr{netip.MustParseAddr("192.168.7.7")}, nil
		case "metadata.test":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		case "site.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	}
	open := &Fetcher{Resolve: resolver, Limits: Limits{Timeout: 5 * time.Second}}
	allowed := &Fetcher{Resolve: resolver, Policy: loopback, Limits: Limits{
		MaxBytes: 20 << 20, Timeout: 2 * time.Second, ReadTimeout: 300 * time.Millisecond, MaxRedirects: 3}}
	for _, c := range []struct {
		name string
		f    *Fetcher
		url  string
		want Reason
	}{
		{"loopback without the allow-list", open, s.URL + "/page", ReasonAddressForbidden},
		{"metadata address", open, "http://169.254.169.254/latest/meta-data/", ReasonAddressForbidden},
		{"metadata over IPv6 NAT64", open, "http://[64:ff9b::a9fe:a9fe]/", ReasonAddressForbidden},
		{"name resolving to a private address", open, fmt.Sprintf("http://private.test:%d/page", port), ReasonAddressForbidden},
		{"name resolving to the metadata service", allowed, "http://metadata.test/", ReasonAddressForbidden},
		{"name resolving to loopback without the allow-list", open, fmt.Sprintf("http://site.test:%d/page", port), ReasonAddressForbidden},
		{"unknown host", open, "http://nowhere.test/", ReasonHostNotFound},
		{"redirect to a private address", allowed, s.URL + "/to?u=http://10.9.8.7/", ReasonAddressForbidden},
		{"redirect to the metadata service", allowed, s.URL + "/to?u=http://169.254.169.254/latest/meta-data/", ReasonAddressForbidden},
		{"redirect to a name resolving privately", allowed, s.URL + fmt.Sprintf("/to?u=http://private.test:%d/page", port), ReasonAddressForbidden},
		{"redirect to file:", allowed, s.URL + "/to?u=file:///etc/passwd", ReasonSchemeNotAllowed},
		{"redirect with credentials", allowed, s.URL + "/to?u=http://a:b@127.0.0.1/", ReasonCredentialsInURL},
		{"too many redirects", allowed, s.URL + "/redirect/5", ReasonTooManyRedirects},
		{"a 50 MB body", allowed, s.URL + "/big", ReasonTooLarge},
		{"a declared 50 MB body", allowed, s.URL + "/big-declared", ReasonTooLarge},
		{"a server that stalls", allowed, s.URL + "/stall", ReasonTimeout},
		{"a server that trickles", allowed, s.URL + "/trickle", ReasonTimeout},
		{"a server slow to answer", allowed, s.URL + "/slow-headers", ReasonTimeout},
		{"an image", allowed, s.URL + "/image.png", ReasonContentType},
		{"404", allowed, s.URL + "/missing", ReasonHTTPStatus},
		{"ftp", allowed, "ftp://127.0.0.1/", ReasonSchemeNotAllowed},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			r, err := c.f.Fetch(ctx, c.url)
			if ReasonOf(err) != c.want {
				t.Fatalf("got %v, %v; want %s", r, err, c.want)
			}
			var e *Error
			errors.As(err, &e)
			if strings.Contains(e.Message, "192.168") || strings.Contains(e.Message, "10.9.8.7") && c.want == ReasonAddressForbidden && !strings.Contains(c.url, "10.9.8.7") {
				t.Errorf("message names a resolved address: %s", e.Message)
			}
			if time.Since(start) > 4*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}

func TestFetchStatusFields(t *testing.T) {
	s := testSite(t)
	_, err := fetcher(Limits{}).Fetch(context.Background(), s.URL+"/busy")
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonHTTPStatus || !e.Retryable || e.Fields["status"] != 503 || e.Fields["retry_after_ms"] != 7000 {
		t.Fatalf("%#v", err)
	}
	_, err = fetcher(Limits{}).Fetch(context.Background(), s.URL+"/missing")
	if !errors.As(err, &e) || e.Retryable || e.Fields["status"] != 404 {
		t.Fatalf("%#v", err)
	}
}

// TestEveryConnectionIsChecked: a name that resolves to an allowed address
// for the first connection and to a forbidden one for the next (DNS
// rebinding) is refused at the second connection, not trusted from the
// first answer.
func TestEveryConnectionIsChecked(t *testing.T) {
	s := testSite(t)
	s.Config.SetKeepAlivesEnabled(false) // every request a new connection
	port := s.Listener.Addr().(*net.TCPAddr).Port
	var calls atomic.Int32
	f := &Fetcher{
		Policy: Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if calls.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil // loopback, not allowed
		},
	}
	_, err := f.Fetch(context.Background(), fmt.Sprintf("http://rebind.test:%d/redirect/0", port))
	if ReasonOf(err) != ReasonAddressForbidden || calls.Load() != 2 {
		t.Fatalf("%v after %d resolutions", err, calls.Load())
	}
	// The dialer's last check holds on its own too.
	if err := f.control("tcp4", "10.0.0.1:80", nil); ReasonOf(err) != ReasonAddressForbidden {
		t.Fatalf("control: %v", err)
	}
	if err := f.control("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Fatalf("control: %v", err)
	}
}

func TestFetchHTTPS(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, articleHTML)
	}))
	defer s.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	f := &Fetcher{Policy: loopback, TLS: &tls.Config{RootCAs: pool}}
	r, err := f.Fetch(context.Background(), s.URL+"/x?utm_source=feed")
	if err != nil {
		t.Fatal(err)
	}
	if r.Canonical.String() != s.URL+"/x" || r.MediaType != "text/html" {
		t.Fatalf("%s %s", r.Canonical, r.MediaType)
	}
	// Without the test's root the certificate is refused.
	_, err = (&Fetcher{Policy: loopback}).Fetch(context.Background(), s.URL)
	if ReasonOf(err) != ReasonFetchFailed {
		t.Fatalf("%v", err)
	}
}
