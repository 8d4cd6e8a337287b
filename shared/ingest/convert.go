package ingest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// Format is what Convert reads a document as.
type Format string

// The formats Convert reads.
const (
	FormatHTML     Format = "html"
	FormatMarkdown Format = "markdown"
	FormatText     Format = "text"
	FormatPDF      Format = "pdf"
)

// MediaType is the media type a note's frontmatter records for a format.
func (f Format) MediaType() string {
	switch f {
	case FormatHTML:
		return "text/html"
	case FormatMarkdown:
		return "text/markdown"
	case FormatText:
		return "text/plain"
	case FormatPDF:
		return "application/pdf"
	}
	return ""
}

// Source is a document to convert: a fetched body or a file a caller sent.
type Source struct {
	Body      []byte
	MediaType string   // as declared (Content-Type or the caller's media_type); "" to sniff
	Charset   string   // the declared charset, if any
	URL       *url.URL // where it came from: the base of relative links (nil for a file)
	Name      string   // a file name (ingest_file), for the title and the extension
}

// ConvertLimits bound a conversion; zero fields take the defaults.
type ConvertLimits struct {
	MaxMarkdownBytes int   // the converted text is cut (at a paragraph) beyond this; default 2 MiB
	MaxHTMLElements  int   // above this, no main-content extraction (the whole body is kept); default 100,000
	MaxPDFPages      int   // PDFs with more pages are refused; default 2,000
	MaxPDFContent    int64 // decoded page content streams, all pages together; default 128 MiB
	// PDFTimeout bounds reading one PDF (in the child process); default
	// DefaultPDFTimeout.
	PDFTimeout time.Duration
	// InProcessPDF reads PDFs in this process instead of a child: faster,
	// but a malformed PDF that sends the reader into unbounded recursion
	// ends the process. For fuzzing and platforms that cannot start one.
	InProcessPDF bool
}

func (l ConvertLimits) withDefaults() ConvertLimits {
	if l.MaxMarkdownBytes <= 0 {
		l.MaxMarkdownBytes = 2 << 20
	}
	if l.MaxHTMLElements <= 0 {
		l.MaxHTMLElements = 100_000
	}
	if l.MaxPDFPages <= 0 {
		l.MaxPDFPages = 2000
	}
	if l.MaxPDFContent <= 0 {
		l.MaxPDFContent = 128 << 20
	}
	return l
}

// Document is a converted document.
type Document struct {
	Format    Format
	Title     string // "" when the document names none (NewNote falls back to the URL or file name)
	Author    string // the byline or the PDF's Author, if any
	Markdown  string // the body, Markdown; directive callouts neutralised (see Convert)
	Truncated bool   // true when Markdown was cut at MaxMarkdownBytes
	Pages     int    // a PDF's page count
}

// Convert reads src as HTML, Markdown, plain text or PDF and returns its
// Markdown. The format comes from the declared media type, or from the
// bytes (and the name's extension) when none or application/octet-stream
// was declared; a declared type the bytes contradict (a "text/html" that is
// a PDF, a "application/pdf" without a PDF header, text with NUL bytes) is
// refused as content-mismatch, any other type as content-type.
//
// HTML: the main content is extracted as Firefox's reader view does
// (go-readability); when that finds too little, the whole body is kept
// without navigation, headers, footers, forms and scripts. Relative links
// are made absolute against src.URL; links other than http, https and
// mailto, and data: images, are dropped. Markdown and text are kept as
// they are (a Markdown file's own frontmatter becomes a fenced yaml block,
// so the note has one frontmatter). PDF: see pdfText.
//
// Whatever the format, "> [!ai]" directive callouts in the converted text
// become "> [!quote]": a fetched page must not queue work for agents.
func Convert(ctx context.Context, src Source, lim ConvertLimits) (*Document, error) {
	lim = lim.withDefaults()
	f, err := detect(src)
	if err != nil {
		return nil, err
	}
	var doc *Document
	switch f {
	case FormatPDF:
		doc, err = pdfDocument(ctx, src.Body, lim)
	case FormatHTML:
		doc, err = htmlDocument(ctx, src, lim)
	default:
		doc, err = textDocument(src, f)
	}
	if err != nil {
		return nil, err
	}
	doc.Format = f
	doc.Markdown = neutralise(strings.TrimSpace(doc.Markdown))
	doc.Markdown, doc.Truncated = cutAt(doc.Markdown, lim.MaxMarkdownBytes, doc.Truncated)
	doc.Title = cleanTitle(doc.Title)
	if strings.TrimSpace(doc.Markdown) == "" {
		what := "no text"
		if f == FormatPDF {
			what = "no text layer (a scanned or image-only PDF: Sheaf does no OCR)"
		}
		return nil, refuse(ReasonEmpty, map[string]any{"format": string(f)}, "The document has %s.", what)
	}
	return doc, nil
}

// formatOfType maps a declared media type to a format.
func formatOfType(mt string) (Format, error) {
	switch strings.ToLower(mt) {
	case "text/html", "application/xhtml+xml":
		return FormatHTML, nil
	case "text/markdown", "text/x-markdown", "text/x-web-markdown":
		return FormatMarkdown, nil
	case "text/plain":
		return FormatText, nil
	case "application/pdf", "application/x-pdf":
		return FormatPDF, nil
	}
	return "", refuse(ReasonContentType, map[string]any{"media_type": clip(mt, 100), "accepted": acceptedTypes},
		"The document is %s; Sheaf ingests HTML, Markdown, plain text and PDF.", describeType(mt))
}

var acceptedTypes = []string{"text/html", "application/xhtml+xml", "text/markdown", "text/plain", "application/pdf"}

func describeType(mt string) string {
	if mt == "" {
		return "of no declared type"
	}
	return "of type " + clip(mt, 100)
}

// sniffable says whether a declared type says nothing (the bytes decide).
func sniffable(mt string) bool {
	switch strings.ToLower(mt) {
	case "", "application/octet-stream", "binary/octet-stream", "application/binary", "application/unknown", "application/x-download", "application/force-download":
		return true
	}
	return false
}

var pdfMagic = []byte("%PDF-")

// detect decides the format and checks the bytes agree with the declared type.
func detect(src Source) (Format, error) {
	head := src.Body[:min(len(src.Body), 512)]
	isPDF := bytes.HasPrefix(src.Body, pdfMagic)
	if sniffable(src.MediaType) {
		switch {
		case isPDF:
			return FormatPDF, nil
		case hasNUL(src.Body):
			return "", refuse(ReasonContentType, map[string]any{"media_type": http.DetectContentType(head), "accepted": acceptedTypes},
				"The document is binary (%s); Sheaf ingests HTML, Markdown, plain text and PDF.", clip(http.DetectContentType(head), 100))
		}
		sniffed, _, _ := strings.Cut(http.DetectContentType(head), ";")
		if sniffed == "text/html" || sniffed == "text/xml" && looksHTML(head) {
			return FormatHTML, nil
		}
		if sniffed != "text/plain" {
			return formatOfType(sniffed)
		}
		if isMarkdownName(src) {
			return FormatMarkdown, nil
		}
		return FormatText, nil
	}
	f, err := formatOfType(src.MediaType)
	if err != nil {
		return "", err
	}
	switch {
	case f == FormatPDF && !isPDF:
		return "", refuse(ReasonContentMismatch, map[string]any{"media_type": f.MediaType()},
			"The document is declared as a PDF but does not start with a PDF header.")
	case f != FormatPDF && isPDF:
		return "", refuse(ReasonContentMismatch, map[string]any{"media_type": f.MediaType(), "sniffed": "application/pdf"},
			"The document is declared as %s but is a PDF: declare it as application/pdf.", f.MediaType())
	case f != FormatPDF && hasNUL(src.Body):
		return "", refuse(ReasonContentMismatch, map[string]any{"media_type": f.MediaType(), "sniffed": clip(http.DetectContentType(head), 100)},
			"The document is declared as %s but holds binary data (%s).", f.MediaType(), clip(http.DetectContentType(head), 100))
	}
	if f == FormatText && isMarkdownName(src) {
		f = FormatMarkdown
	}
	return f, nil
}

func hasNUL(b []byte) bool { return bytes.IndexByte(b[:min(len(b), 8192)], 0) >= 0 }

func looksHTML(head []byte) bool {
	h := bytes.ToLower(head)
	return bytes.Contains(h, []byte("<html")) || bytes.Contains(h, []byte("<!doctype html"))
}

func isMarkdownName(src Source) bool {
	name := src.Name
	if name == "" && src.URL != nil {
		name = src.URL.Path
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".mdown", ".mkd":
		return true
	}
	return false
}

// decodeText returns body as UTF-8: through the declared charset when there
// is one, else as UTF-8 with invalid bytes replaced.
func decodeText(body []byte, cs string) string {
	if cs != "" && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		if r, err := charset.NewReaderLabel(cs, bytes.NewReader(body)); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				return strings.ToValidUTF8(string(b), "\uFFFD")
			}
		}
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// textDocument keeps Markdown and plain text as they are; a Markdown file's
// own frontmatter is kept as a fenced yaml block and its title used.
func textDocument(src Source, f Format) (*Document, error) {
	text := strings.ReplaceAll(decodeText(src.Body, src.Charset), "\r\n", "\n")
	doc := &Document{}
	if f == FormatMarkdown {
		if fm, rest, ok := splitFrontmatter(text); ok {
			doc.Title = yamlTitle(fm)
			text = "```yaml\n" + strings.ReplaceAll(fm, "```", "` ` `") + "\n```\n\n" + rest
		}
		if doc.Title == "" {
			doc.Title = firstHeading(text)
		}
	}
	if doc.Title == "" {
		doc.Title = firstLine(text)
	}
	doc.Markdown = text
	return doc, nil
}

// splitFrontmatter splits a leading "---" YAML block off text.
func splitFrontmatter(text string) (fm, rest string, ok bool) {
	if !strings.HasPrefix(text, "---\n") {
		return "", text, false
	}
	body := text[4:]
	for i := 0; i < len(body); {
		j := strings.IndexByte(body[i:], '\n')
		line := body[i:]
		if j >= 0 {
			line = body[i : i+j]
		}
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			end := len(body)
			if j >= 0 {
				end = i + j + 1
			}
			return strings.TrimRight(body[:i], "\n"), body[end:], true
		}
		if j < 0 {
			break
		}
		i += j + 1
	}
	return "", text, false
}

var yamlTitleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^title:[ \t]*(.+?)[ \t]*$`) }) // compiled on first use

func yamlTitle(fm string) string {
	m := yamlTitleRE().FindStringSubmatch(fm)
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], `"'`)
}

var headingRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#{1,2}[ \t]+(.+?)[ \t#]*$`) }) // compiled on first use

func firstHeading(text string) string {
	if m := headingRE().FindStringSubmatch(text[:min(len(text), 64<<10)]); m != nil {
		return m[1]
	}
	return ""
}

func firstLine(text string) string {
	for line := range strings.SplitSeq(text[:min(len(text), 64<<10)], "\n") {
		if t := strings.TrimSpace(strings.TrimLeft(line, "#>*- \t")); t != "" {
			return t
		}
	}
	return ""
}

// directiveRE matches an agent directive marker ("[!ai]", "[!ai-done]",
// any case) after a blockquote marker, wherever the quote stands (at a
// line's start, in a list item, nested).
var directiveRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(>[ \t]*)\[!ai(?:-done)?\]`) }) // compiled on first use

// neutralise turns directive callouts into quote callouts.
func neutralise(md string) string {
	if !strings.Contains(strings.ToLower(md), "[!ai") {
		return md
	}
	return directiveRE().ReplaceAllString(md, "${1}[!quote]")
}

// cutAt cuts md to at most max bytes, at the last paragraph (or line, or
// rune) boundary before it.
func cutAt(md string, max int, already bool) (string, bool) {
	if len(md) <= max {
		return md, already
	}
	cut := md[:max]
	if i := strings.LastIndex(cut, "\n\n"); i > max/2 {
		cut = cut[:i]
	} else if i := strings.LastIndexByte(cut, '\n'); i > max/2 {
		cut = cut[:i]
	} else {
		for len(cut) > 0 && !utf8.RuneStart(md[len(cut)]) {
			cut = cut[:len(cut)-1]
		}
	}
	return strings.TrimRight(cut, " \t\n"), true
}

// cleanTitle makes a title one line of at most 300 bytes.
func cleanTitle(t string) string {
	t = strings.Join(strings.Fields(strings.ToValidUTF8(t, "")), " ")
	t = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, t)
	if len(t) > 300 {
		t = clip(t, 300)
	}
	return t
}
