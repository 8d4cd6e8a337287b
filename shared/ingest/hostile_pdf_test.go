package ingest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// xrefStreamPDF: objects 1 (catalog) 2 (pages) in file; object 3 claimed to be in object stream 3 (itself).
func cyclicObjStmPDF() []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.5\n")
	off1 := out.Len()
	out.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	off2 := out.Len()
	out.WriteString("2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n")
	offX := out.Len()
	// W [1 4 2]: type, field2, field3
	rows := []byte{}
	row := func(t byte, f2 uint32, f3 uint16) {
		rows = append(rows, t, byte(f2>>24), byte(f2>>16), byte(f2>>8), byte(f2), byte(f3>>8), byte(f3))
	}
	row(0, 0, 65535)
	row(1, uint32(off1), 0)
	row(1, uint32(off2), 0)
	row(2, 3, 0) // object 3 lives in object stream 3
	row(1, uint32(offX), 0)
	fmt.Fprintf(&out, "4 0 obj\n<< /Type /XRef /W [1 4 2] /Size 5 /Root 1 0 R /Length %d >>\nstream\n", len(rows))
	out.Write(rows)
	out.WriteString("\nendstream\nendobj\n")
	fmt.Fprintf(&out, "startxref\n%d\n%%%%EOF\n", offX)
	return out.Bytes()
}

// TestHostilePDFsEndOnlyTheChild: PDFs that send the reader into unbounded
// recursion (which would end this process) are refused as unreadable.
func TestHostilePDFsEndOnlyTheChild(t *testing.T) {
	nested := []byte("%PDF-1.4\n1 0 obj\n" + strings.Repeat("[", 3_000_000) + "\nendobj\nxref\n0 2\n0000000000 65535 f \n0000000009 00000 n \ntrailer\n<< /Size 2 /Root 1 0 R >>\nstartxref\n0\n%%EOF\n")
	for name, body := range map[string][]byte{"object stream inside itself": cyclicObjStmPDF(), "deeply nested array": nested} {
		t.Run(name, func(t *testing.T) {
			d, err := Convert(context.Background(), Source{Body: body, MediaType: "application/pdf"}, ConvertLimits{})
			if ReasonOf(err) != ReasonUnreadable {
				t.Fatalf("got %+v, %v; want unreadable", d, err)
			}
		})
	}
}
