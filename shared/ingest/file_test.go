package ingest

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
)

func TestDecodeFile(t *testing.T) {
	pdf := textPDF([][]string{{"Uploaded PDF text"}}, "Upload", "", true)
	std := base64.StdEncoding.EncodeToString(pdf)
	for name, enc := range map[string]string{
		"standard":          std,
		"wrapped at 76":     wrap(std, 76),
		"url-safe unpadded": base64.RawURLEncoding.EncodeToString(pdf),
		"std unpadded":      base64.RawStdEncoding.EncodeToString(pdf),
	} {
		f, err := DecodeFile("dir/../Report.PDF", enc, "application/pdf", 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Name != "Report.PDF" || string(f.Body) != string(pdf) {
			t.Fatalf("%s: %q %d bytes", name, f.Name, len(f.Body))
		}
		doc, err := Convert(context.Background(), f.Source(), ConvertLimits{})
		if err != nil || doc.Title != "Upload" || doc.Markdown != "Uploaded PDF text" {
			t.Fatalf("%s: %v %+v", name, err, doc)
		}
	}
	// No media type: the bytes and the extension decide.
	f, err := DecodeFile("notes.md", base64.StdEncoding.EncodeToString([]byte("# Title\n\nbody")), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := Convert(context.Background(), f.Source(), ConvertLimits{}); err != nil || doc.Format != FormatMarkdown || doc.Title != "Title" {
		t.Fatalf("%v %+v", err, doc)
	}
}

func TestDecodeFileRefuses(t *testing.T) {
	small := base64.StdEncoding.EncodeToString([]byte("hello"))
	big := base64.StdEncoding.EncodeToString(make([]byte, 2000))
	for _, c := range []struct {
		name, file, content, mt string
		max                     int64
		want                    Reason
	}{
		{"empty name", " ", small, "text/plain", 0, ReasonNameInvalid},
		{"control character", "a\x01b.txt", small, "text/plain", 0, ReasonNameInvalid},
		{"not base64", "a.txt", "!!!not base64!!!", "text/plain", 0, ReasonBase64Invalid},
		{"too large, refused before decoding", "a.txt", big, "text/plain", 1000, ReasonTooLarge},
		{"too large with whitespace", "a.txt", wrap(big, 10), "text/plain", 1000, ReasonTooLarge},
		{"image", "a.png", small, "image/png", 0, ReasonContentType},
		{"malformed media type", "a.txt", small, "text/", 0, ReasonContentType},
		{"empty file", "a.txt", "", "text/plain", 0, ReasonEmpty},
	} {
		if _, err := DecodeFile(c.file, c.content, c.mt, c.max); ReasonOf(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	// Declared types are checked against the bytes when converting.
	pdf := base64.StdEncoding.EncodeToString(textPDF([][]string{{"x"}}, "", "", false))
	f, err := DecodeFile("x.md", pdf, "text/markdown", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(context.Background(), f.Source(), ConvertLimits{}); ReasonOf(err) != ReasonContentMismatch {
		t.Fatalf("%v", err)
	}
}

func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\r\n")
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// FuzzConvertHTML: no panic; the Markdown stays within its limit and holds
// no directive and no script link.
func FuzzConvertHTML(f *testing.F) {
	for _, s := range []string{hostileHTML, articleHTML, "<p>x", "<table><tr><td><a href='javascript:1'>x</a>", "<blockquote>[!ai] x</blockquote>", "<div><div><div>"} {
		f.Add([]byte(s))
	}
	lim := ConvertLimits{MaxMarkdownBytes: 64 << 10}
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := Convert(context.Background(), Source{Body: body, MediaType: "text/html", URL: mustURL("https://example.com/p")}, lim)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		if len(doc.Markdown) > lim.MaxMarkdownBytes {
			t.Fatalf("%d bytes of Markdown", len(doc.Markdown))
		}
		if p := vaultDirectives(doc.Markdown); p != 0 {
			t.Fatalf("%d directives in\n%s", p, doc.Markdown)
		}
	})
}
