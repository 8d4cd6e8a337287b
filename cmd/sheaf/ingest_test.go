package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// onePagePDF is a minimal valid PDF whose one page draws text.
func onePagePDF(text string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	content := "BT\n/F1 12 Tf\n72 720 Td\n(" + text + ") Tj\nET"
	objs = append(objs, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	objs = append(objs, "<< /Title (Orchard report) /Author (Ann Author) >>")
	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return out.Bytes()
}

// TestIngestOverMCP drives ingest_url and ingest_file through the Go SDK
// client against a local web server, on a folder and on S3: HTML, PDF
// (read in the child process), a 50 MB body, a redirect to a private
// address; the server started with --ingest-allow for the test server's
// address, and without it refusing loopback and the metadata service.
func TestIngestOverMCP(t *testing.T) {
	ts := ingestServer(t)
	onStores(t, func(t *testing.T, sv *storeVault) { ingestSuite(t, sv, ts) })
}

// ingestServer is the suite's web server.
func ingestServer(t *testing.T) *httptest.Server {
	pdf := onePagePDF("Pears ripen in September in the north orchard.")
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Pruning guide</title></head><body><article><h1>Pruning guide</h1><p>Prune apple trees in late winter, before the buds break, and never more than a quarter of the canopy in one year.</p></article></body></html>`))
	})
	mux.HandleFunc("/report.pdf", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 50 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/to-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.1.2.3/admin", http.StatusFound)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

func ingestSuite(t *testing.T, sv *storeVault, ts *httptest.Server) {
	c := toolstest.NewClient(t, sv.serve(t, "--ingest-allow", "127.0.0.1/32"))
	c.WaitIndexed()
	var out struct {
		Path      string `json:"path"`
		Title     string `json:"title"`
		Duplicate bool   `json:"duplicate"`
		Type      string `json:"content_type"`
	}
	c.MustOK("ingest_url", map[string]any{"url": ts.URL + "/page"}, &out)
	if out.Duplicate {
		t.Errorf("the first ingest is a duplicate: %+v", out)
	}
	c.MustOK("ingest_url", map[string]any{"url": ts.URL + "/page"}, &out)
	if !out.Duplicate || out.Title != "Pruning guide" || !strings.HasPrefix(out.Path, "sources/") {
		t.Errorf("the same URL again: %+v", out)
	}
	c.MustOK("ingest_url", map[string]any{"url": ts.URL + "/report.pdf"}, &out)
	if out.Type != "application/pdf" || out.Title != "Orchard report" {
		t.Errorf("the PDF: %+v", out)
	}
	note, err := sv.file(out.Path)
	if err != nil || !strings.Contains(string(note), "Pears ripen in September") || !strings.Contains(string(note), "pages: 1") {
		t.Errorf("the PDF's note (%v):\n%s", err, note)
	}
	// The new notes are searchable at once.
	var hits struct{ Items []struct{ Path string } }
	c.MustOK("search", map[string]any{"query": "pears september"}, &hits)
	if len(hits.Items) == 0 || hits.Items[0].Path != out.Path {
		t.Errorf("search after ingest: %+v", hits)
	}
	if r := c.MustFail("args-invalid", "ingest_url", map[string]any{"url": ts.URL + "/huge"}); r.Fields["reason"] != "too-large" {
		t.Errorf("a 50 MB body: %v", r.Fields)
	}
	if r := c.MustFail("args-invalid", "ingest_url", map[string]any{"url": ts.URL + "/to-private"}); r.Fields["reason"] != "address-forbidden" || strings.Contains(r.Message, "10.1.2.3") {
		t.Errorf("a redirect to a private address: %v %q", r.Fields, r.Message)
	}
	c.MustOK("ingest_file", map[string]any{"name": "notes.txt", "content_base64": base64.StdEncoding.EncodeToString([]byte("Quinces need a warm wall.\n"))}, &out)
	if out.Type != "text/plain" {
		t.Errorf("ingest_file: %+v", out)
	}

	// Without the flag, the same server and the metadata service are refused.
	plain := toolstest.NewClient(t, sv.serve(t))
	for _, u := range []string{ts.URL + "/page?fresh=1", "http://169.254.169.254/latest/meta-data/"} {
		if r := plain.MustFail("args-invalid", "ingest_url", map[string]any{"url": u}); r.Fields["reason"] != "address-forbidden" {
			t.Errorf("%s without --ingest-allow: %v", u, r.Fields)
		}
	}
}

// TestConcurrentIngestOverMCP: two servers of one vault (on a folder; on
// one bucket, as two Lambda instances), eight ingest_url calls of one URL
// at once, four through each: exactly one note is filed, one fetch is
// made, and every other call answers that note with duplicate: true.
func TestConcurrentIngestOverMCP(t *testing.T) {
	var fetches atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		time.Sleep(200 * time.Millisecond) // the calls overlap
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Grafting notes</title></head><body><article><h1>Grafting notes</h1><p>Whip-and-tongue grafts take best in early spring, when the rootstock's sap is rising and the scion is still dormant.</p></article></body></html>`))
	}))
	defer ts.Close()
	onStores(t, func(t *testing.T, sv *storeVault) {
		fetches.Store(0)
		args := []string{"--ingest-allow", "127.0.0.1/32"}
		if !strings.HasPrefix(sv.vault, "s3://") {
			args = append(args, "--no-watch") // a bucket has no watcher to turn off (and refuses the flag)
		}
		servers := []*toolstest.Client{
			toolstest.NewClient(t, sv.serve(t, args...)),
			toolstest.NewClient(t, sv.serve(t, args...)),
		}
		for _, c := range servers {
			c.WaitIndexed()
		}
		type answer struct {
			Path      string `json:"path"`
			Duplicate bool   `json:"duplicate"`
		}
		outs := make([]answer, 8)
		var wg sync.WaitGroup
		for i := range outs {
			wg.Go(func() { servers[i%2].MustOK("ingest_url", map[string]any{"url": ts.URL + "/grafting"}, &outs[i]) })
		}
		wg.Wait()
		filed := 0
		for _, o := range outs {
			if !o.Duplicate {
				filed++
			}
			if o.Path != outs[0].Path {
				t.Errorf("answers name different notes: %+v", outs)
				break
			}
		}
		entries, _ := os.ReadDir(filepath.Join(sv.root, "sources"))
		var notes []string // the sample vault has sources of its own
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "grafting-notes") {
				notes = append(notes, e.Name())
			}
		}
		if filed != 1 || len(notes) != 1 || fetches.Load() != 1 {
			t.Errorf("8 calls at once: %d filed, notes %v, %d fetches; answers %+v", filed, notes, fetches.Load(), outs)
		}
	})
}
