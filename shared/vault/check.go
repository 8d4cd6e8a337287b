package vault

import (
	"bytes"
	"errors"
	"unicode/utf8"
)

// Errors returned by Check.
var (
	// ErrBinary means the content is not text (a NUL byte, a known binary
	// signature or mostly control characters near the start).
	ErrBinary = errors.New("vault: binary content")
	// ErrInvalidUTF8 means the content is text but not valid UTF-8.
	ErrInvalidUTF8 = errors.New("vault: invalid UTF-8")
)

// sniffLen is how much of a file Check inspects for binary content.
const sniffLen = 8 << 10

// binarySignatures are the openings of binary formats often misnamed ".md".
var binarySignatures = [][]byte{
	[]byte("%PDF-"),
	[]byte("\x89PNG\r\n\x1a\n"),
	[]byte("GIF87a"), []byte("GIF89a"),
	[]byte("\xff\xd8\xff"), // JPEG
	[]byte("PK\x03\x04"),   // zip, docx, xlsx
	[]byte("\x1f\x8b"),     // gzip
	[]byte("\x7fELF"),      // executables
	[]byte("SQLite format 3\x00"),
}

// Check reports whether src is usable as a note's text: ErrBinary when the
// first 8 KiB hold a NUL byte, start like a binary format or are more than
// a tenth control characters; ErrInvalidUTF8 when src is not valid UTF-8;
// nil otherwise. Parse itself tolerates anything; Check lets the indexer
// decide what to skip.
func Check(src []byte) error {
	head := src[:min(len(src), sniffLen)]
	if bytes.IndexByte(head, 0) >= 0 {
		return ErrBinary
	}
	for _, sig := range binarySignatures {
		if bytes.HasPrefix(head, sig) {
			return ErrBinary
		}
	}
	controls := 0
	for _, c := range head {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b {
			controls++
		}
	}
	if controls*10 > len(head) {
		return ErrBinary
	}
	if !utf8.Valid(src) {
		return ErrInvalidUTF8
	}
	return nil
}
