package vaultgen

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
)

// attachment returns the file name and bytes of note i's attachment: a small
// valid PNG (kind 0), JPEG (kind 1) or PDF (kind 2).
func attachment(i, kind int) (string, []byte) {
	img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for y := range 8 {
		for x := range 8 {
			img.Set(x, y, color.NRGBA{uint8(i), uint8(x * 32), uint8(y * 32), 255})
		}
	}
	var b bytes.Buffer
	switch kind {
	case 0:
		_ = png.Encode(&b, img) // writes to memory: cannot fail
		return fmt.Sprintf("image-%06d.png", i), b.Bytes()
	case 1:
		_ = jpeg.Encode(&b, img, &jpeg.Options{Quality: 75})
		return fmt.Sprintf("photo-%06d.jpg", i), b.Bytes()
	default:
		return fmt.Sprintf("doc-%06d.pdf", i), minimalPDF(fmt.Sprintf("Generated document %d", i))
	}
}

// minimalPDF returns a small valid one-page PDF showing text (ASCII, no
// parentheses or backslashes), with a correct cross-reference table.
func minimalPDF(text string) []byte {
	stream := fmt.Sprintf("BT /F1 18 Tf 72 720 Td (%s) Tj ET", text)
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for k, obj := range objects {
		offsets[k] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", k+1, obj)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}
