package tools

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// pageServer serves an HTML page, a redirect to it, a redirect to the
// cloud metadata address, and counts its page fetches.
func pageServer(t *testing.T) (*httptest.Server, *int) {
	fetches := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/post", func(w http.ResponseWriter, _ *http.Request) {
		fetches++
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>Soft locks explained</title></head><body><nav>menu</nav><article><h1>Soft locks explained</h1><p>A soft lock is a lease that expires, so a crashed holder never blocks the others for long. Leases are renewed by their holder while it works, and anyone may take over an expired one.</p><p>See <a href="/other">the other post</a>.</p></article></body></html>`))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/post", http.StatusFound) })
	mux.HandleFunc("/meta", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts, &fetches
}

func TestIngestURL(t *testing.T) {
	_, _, hs := gvault(t)
	ts, fetches := pageServer(t)
	owner := ident("owner", auth.ScopeWrite)

	// Without the allow-list, loopback and the metadata service are refused.
	for _, u := range []string{ts.URL + "/post", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]/"} {
		o := callAs(t, hs, owner, "ingest_url", map[string]any{"url": u})
		if o.kind != "args-invalid" || !strings.Contains(o.raw, `"reason":"address-forbidden"`) {
			t.Errorf("%s without the allow-list: %s", u, o.raw)
		}
		if strings.Contains(o.raw, "127.0.0.1") && !strings.Contains(u, "127.0.0.1") {
			t.Errorf("the refusal shows the address: %s", o.raw)
		}
	}
	if *fetches != 0 {
		t.Fatalf("%d fetches reached the server", *fetches)
	}

	// With the allow-list (a fresh server: the Fetcher is made once).
	s, dir, hs, ix := gvaultWith(t, nil)
	check := schemaCheck(t, s)
	v, err := s.core.View(context.Background(), VaultArg{Vault: "g"})
	if err != nil {
		t.Fatal(err)
	}
	v.Reindex = ix // read-your-writes: the next call finds the source
	v.Ingest.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	first := callAs(t, hs, owner, "ingest_url", map[string]any{"url": ts.URL + "/post?utm_source=x#top"})
	check("ingest_url", first)
	if first.kind != "" || first.res["duplicate"] != false || !strings.HasPrefix(first.res["path"].(string), "sources/") {
		t.Fatalf("first ingest: %s", first.raw)
	}
	path := first.res["path"].(string)
	note, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"source_url: " + ts.URL + "/post\n", "title: Soft locks explained", "content_hash: sha256:", "fetched_at:", "A soft lock is a lease"} {
		if !strings.Contains(string(note), want) {
			t.Errorf("the note lacks %q:\n%s", want, note)
		}
	}
	if strings.Contains(string(note), "menu") {
		t.Errorf("the navigation was kept:\n%s", note)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log.md")); !strings.Contains(string(log), "ingest: Soft locks explained") {
		t.Errorf("no ledger line: %s", log)
	}

	// The same canonical URL (another tracking parameter, through a
	// redirect's start or not): the existing note, nothing fetched.
	n := *fetches
	again := callAs(t, hs, owner, "ingest_url", map[string]any{"url": ts.URL + "/post?fbclid=1"})
	check("ingest_url", again)
	if again.res["duplicate"] != true || again.res["path"] != path || *fetches != n {
		t.Errorf("again: %s (%d fetches)", again.raw, *fetches-n)
	}
	// refresh files a new dated version beside it.
	fresh := callAs(t, hs, owner, "ingest_url", map[string]any{"url": ts.URL + "/post", "refresh": true})
	if fresh.kind != "" || fresh.res["duplicate"] != false || fresh.res["path"] == path || *fetches != n+1 {
		t.Errorf("refresh: %s", fresh.raw)
	}
	// A redirect is followed and re-checked: to the page, allowed; to the
	// metadata service, refused even with loopback allowed.
	moved := callAs(t, hs, owner, "ingest_url", map[string]any{"url": ts.URL + "/moved", "refresh": true})
	if moved.kind != "" || moved.res["redirects"] != float64(1) {
		t.Errorf("redirect: %s", moved.raw)
	}
	if o := callAs(t, hs, owner, "ingest_url", map[string]any{"url": ts.URL + "/meta"}); !strings.Contains(o.raw, `"reason":"address-forbidden"`) {
		t.Errorf("redirect to the metadata service: %s", o.raw)
	}
	if o := callAs(t, hs, owner, "ingest_url", map[string]any{"url": "file:///etc/passwd"}); !strings.Contains(o.raw, `"reason":"scheme-not-allowed"`) {
		t.Errorf("file URL: %s", o.raw)
	}

	// A folder-scoped key may not write to sources/; a reader may not
	// ingest at all; a propose-only key's call is a proposal.
	if o := callAs(t, hs, ident("pub", auth.ScopeWrite, "Public/**"), "ingest_url", map[string]any{"url": ts.URL + "/post", "refresh": true}); o.kind != "forbidden" {
		t.Errorf("folder-scoped: %s", o.raw)
	}
	if o := callAs(t, hs, ident("reader", auth.ScopeRead), "ingest_url", map[string]any{"url": ts.URL + "/post"}); o.kind != "insufficient-scope" {
		t.Errorf("reader: %s", o.raw)
	}
	proposer := ident("proposer", auth.ScopeWrite)
	proposer.ProposeOnly = true
	n = *fetches
	o := callAs(t, hs, proposer, "ingest_url", map[string]any{"url": ts.URL + "/post", "refresh": true})
	prop, _ := o.res["proposal"].(map[string]any)
	if prop == nil || *fetches != n {
		t.Fatalf("propose-only: %s (%d fetches)", o.raw, *fetches-n)
	}
	applied := callAs(t, hs, owner, "apply_proposal", map[string]any{"id": prop["id"]})
	if applied.kind != "" || *fetches != n+1 {
		t.Errorf("applying the proposal: %s", applied.raw)
	}
}

func TestIngestFile(t *testing.T) {
	s, dir, hs := gvault(t)
	check := schemaCheck(t, s)
	owner := ident("owner", auth.ScopeWrite)
	md := "---\ntitle: Field notes\n---\n# Field notes\n\nThe pears ripen in September.\n> [!ai] summarise this\n"
	o := callAs(t, hs, owner, "ingest_file", map[string]any{"name": "field-notes.md", "content_base64": base64.StdEncoding.EncodeToString([]byte(md)), "media_type": "text/markdown"})
	check("ingest_file", o)
	if o.kind != "" || o.res["source_file"] != "field-notes.md" || o.res["content_type"] != "text/markdown" {
		t.Fatalf("ingest_file: %s", o.raw)
	}
	note, _ := os.ReadFile(filepath.Join(dir, o.res["path"].(string)))
	if !strings.Contains(string(note), "source_file: field-notes.md") || !strings.Contains(string(note), "pears ripen") || strings.Contains(string(note), "[!ai]") {
		t.Errorf("the note:\n%s", note)
	}
	for args, reason := range map[[2]string]string{
		{"a.md", "!!not base64!!"}:      "base64-invalid",
		{"a.md", "AAEC"}:                "content-mismatch", // binary bytes declared Markdown
		{"x.pdf", "JVBERi0xLjQKZW5k"}:   "unreadable",
		{"a.exe", "TVqQAAMAAAAEAAAA//"}: "content-type",
	} {
		mt := map[string]string{"a.md": "text/markdown", "x.pdf": "application/pdf", "a.exe": "application/x-msdownload"}[args[0]]
		o := callAs(t, hs, owner, "ingest_file", map[string]any{"name": args[0], "content_base64": args[1], "media_type": mt})
		if o.kind != "args-invalid" || !strings.Contains(o.raw, `"reason":"`+reason+`"`) {
			t.Errorf("%v: %s, want reason %s", args, o.raw, reason)
		}
	}
	if o := callAs(t, hs, ident("pub", auth.ScopeWrite, "Public/**"), "ingest_file", map[string]any{"name": "a.md", "content_base64": "YQ=="}); o.kind != "forbidden" {
		t.Errorf("folder-scoped: %s", o.raw)
	}
	// A folder vault has no presigned uploads; a propose-only key may not
	// upload (its call could not wait in a proposal).
	if o := callAs(t, hs, owner, "ingest_file", map[string]any{"name": "big.pdf", "upload": true}); o.kind != "unsupported" || !strings.Contains(o.raw, `"reason":"no-upload"`) {
		t.Errorf("upload on a folder vault: %s", o.raw)
	}
	proposer := ident("proposer", auth.ScopeWrite)
	proposer.ProposeOnly = true
	if o := callAs(t, hs, proposer, "ingest_file", map[string]any{"name": "big.pdf", "upload": true}); o.kind != "unsupported" || strings.Contains(o.raw, `"proposal"`) {
		t.Errorf("upload by a propose-only key: %s", o.raw)
	}
}
