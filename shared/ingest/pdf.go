package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ledongthuc/pdf"
)

// pdfInProcess extracts a PDF's text with github.com/ledongthuc/pdf (pure
// Go, BSD-3, a fork of rsc.io/pdf). What it reads: the text layer of each
// page in content-stream order (a "BT" text object starts a new line),
// through the fonts' ToUnicode maps or standard encodings; the document
// Info's Title and Author. What it does not: OCR (a scanned PDF has no text
// layer and is refused as empty), layout (columns and tables come out in
// drawing order), password-protected PDFs (refused as encrypted), and some
// CID fonts without a ToUnicode map (their text comes out garbled).
//
// The library panics on malformed input and trusts the file's structure,
// so it is fenced: panics become unreadable; the page tree is walked here,
// bounded in depth and node count (a cyclic /Kids would loop in the
// library's Page); the pages' decoded content streams are measured before
// the text is extracted (a small deflate bomb cannot grow past
// MaxPDFContent); pages are checked against MaxPDFPages and ctx between
// pages.
func pdfInProcess(ctx context.Context, body []byte, lim ConvertLimits) (doc *Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, &Error{Reason: ReasonUnreadable, Message: "The PDF is malformed and cannot be read.", Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(err.Error(), "encrypt") {
			return nil, &Error{Reason: ReasonEncrypted, Message: "The PDF is password-protected; Sheaf cannot read it.", Err: err}
		}
		return nil, &Error{Reason: ReasonUnreadable, Message: "The PDF is malformed and cannot be read.", Err: err}
	}
	pages, err := pdfPages(r, lim.MaxPDFPages)
	if err != nil {
		return nil, err
	}
	if err := pdfContentSize(ctx, pages, lim.MaxPDFContent); err != nil {
		return nil, err
	}
	doc = &Document{Pages: len(pages)}
	info := r.Trailer().Key("Info")
	doc.Title = strings.TrimSpace(info.Key("Title").Text())
	doc.Author = strings.TrimSpace(info.Key("Author").Text())
	var b strings.Builder
	for i, p := range pages {
		if err := ctx.Err(); err != nil {
			return nil, &Error{Reason: ReasonTimeout, Message: "The PDF's conversion was stopped.", Err: err, Retryable: true}
		}
		text, err := p.GetPlainText(nil) // the page's own fonts: two pages may both name different fonts "F1"
		if err != nil {
			return nil, &Error{Reason: ReasonUnreadable, Message: fmt.Sprintf("Page %d of the PDF cannot be read.", i+1), Err: err}
		}
		text = tidyPDFText(text)
		if text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(text)
		if b.Len() > 4*lim.MaxMarkdownBytes {
			doc.Truncated = true
			break
		}
	}
	doc.Markdown = b.String()
	if doc.Title == "" {
		doc.Title = firstLine(doc.Markdown)
	}
	return doc, nil
}

// pdfPages walks the page tree from the catalog's /Pages, depth-first, at
// most 64 levels deep and max pages (plus as many intermediate nodes).
func pdfPages(r *pdf.Reader, max int) ([]pdf.Page, error) {
	const maxDepth = 64
	var pages []pdf.Page
	visited := 0
	tooMany := refuse(ReasonDocumentTooComplex, map[string]any{"max_pages": max}, "The PDF has more than %d pages.", max)
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		visited++
		if visited > 2*max+64 || depth > maxDepth {
			return tooMany
		}
		switch v.Key("Type").Name() {
		case "Page":
			if len(pages) >= max {
				return tooMany
			}
			pages = append(pages, pdf.Page{V: v})
		case "Pages", "":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	root := r.Trailer().Key("Root").Key("Pages")
	if root.IsNull() {
		return nil, refuse(ReasonUnreadable, nil, "The PDF has no page tree.")
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return pages, nil
}

// pdfContentSize decodes every page's content streams into nothing,
// refusing the PDF once they exceed max bytes together.
func pdfContentSize(ctx context.Context, pages []pdf.Page, max int64) error {
	var total int64
	measure := func(s pdf.Value) error {
		if s.Kind() != pdf.Stream {
			return nil
		}
		rc := s.Reader()
		defer rc.Close()
		n, _ := io.Copy(io.Discard, io.LimitReader(rc, max-total+1))
		total += n
		if total > max {
			return refuse(ReasonDocumentTooComplex, map[string]any{"max_content_bytes": max},
				"The PDF's pages decode to more than %d bytes of content.", max)
		}
		if err := ctx.Err(); err != nil {
			return &Error{Reason: ReasonTimeout, Message: "The PDF's conversion was stopped.", Err: err, Retryable: true}
		}
		return nil
	}
	for _, p := range pages {
		c := p.V.Key("Contents")
		if c.Kind() == pdf.Array {
			for i := 0; i < c.Len(); i++ {
				if err := measure(c.Index(i)); err != nil {
					return err
				}
			}
		} else if err := measure(c); err != nil {
			return err
		}
	}
	return nil
}

// tidyPDFText trims each line and collapses runs of blank lines.
func tidyPDFText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	lines := strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimSpace(strings.Map(func(r rune) rune {
			if r < 0x20 && r != '\t' || r == 0x7f {
				return -1
			}
			return r
		}, l))
		if l == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
