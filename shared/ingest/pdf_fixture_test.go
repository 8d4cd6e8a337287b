package ingest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// pdfBuilder writes small, valid PDFs for tests: numbered objects, a
// cross-reference table with the right offsets, a trailer.
type pdfBuilder struct {
	objs    []string // objs[i] is object i+1's body
	trailer string   // extra trailer entries
}

// add appends an object and returns its number.
func (b *pdfBuilder) add(body string) int {
	b.objs = append(b.objs, body)
	return len(b.objs)
}

// set replaces object n's body.
func (b *pdfBuilder) set(n int, body string) { b.objs[n-1] = body }

// stream is a stream object's body, Flate-compressed when flate is true.
func stream(data string, flate bool) string {
	if !flate {
		return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data), data)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, _ = w.Write([]byte(data))
	_ = w.Close()
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String())
}

func (b *pdfBuilder) bytes(root int) []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(b.objs))
	for i, o := range b.objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(b.objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n", len(b.objs)+1, root, b.trailer, xref)
	return out.Bytes()
}

// pdfEscape escapes a literal string's delimiters.
func pdfEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}

// textPDF makes a PDF with one page per entry of pages, each line of a
// page drawn with Tj in Helvetica; info adds /Title and /Author.
func textPDF(pages [][]string, title, author string, flate bool) []byte {
	b := &pdfBuilder{}
	catalog := b.add("")
	tree := b.add("")
	font := b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, lines := range pages {
		var c strings.Builder
		c.WriteString("BT\n/F1 12 Tf\n14 TL\n72 720 Td\n")
		for _, l := range lines {
			fmt.Fprintf(&c, "(%s) Tj\nT*\n", pdfEscape(l))
		}
		c.WriteString("ET")
		content := b.add(stream(c.String(), flate))
		page := b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", tree, font, content))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	b.set(tree, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	if title != "" || author != "" {
		info := b.add(fmt.Sprintf("<< /Title (%s) /Author (%s) >>", pdfEscape(title), pdfEscape(author)))
		b.trailer = fmt.Sprintf("/Info %d 0 R ", info)
	}
	return b.bytes(catalog)
}
