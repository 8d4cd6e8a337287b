package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// A note too big for one answer is read by pages: read_note returns the
// bytes from offset that fit the response budget (cut at a line end where
// one is near, always at a character boundary), with next_offset for the
// next page, so that concatenating the pages gives the file byte for byte.

// pageChunk is how much is read at a time to hash a file or count lines.
const pageChunk = 4 << 20

// jsonCost is what one character of content costs in a result, its two
// copies together: structuredContent holds it JSON-escaped (HTML-safe, as
// Go escapes it), and the text copy escapes that once more.
func jsonCost(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size == 1: // shown as \ufffd
		return 13
	case r == '"' || r == '\\':
		return 6 // \" and \\\"
	case r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 5 // \n and \\n
	case r < 0x20, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
		return 13 // \u003c and \\u003c
	default:
		return 2 * size
	}
}

// pageEnd returns how many bytes of data (read from a character boundary)
// fit in avail serialized bytes, cut at a character boundary and, when a
// line ends in the last quarter of the page, after that line. atEOF says
// data runs to the end of the file.
func pageEnd(data []byte, avail int, atEOF bool) int {
	cost, end := 0, 0
	for end < len(data) {
		r, size := utf8.DecodeRune(data[end:])
		if r == utf8.RuneError && size == 1 && !atEOF && !utf8.FullRune(data[end:]) {
			break // a character cut by the read: it starts the next page
		}
		if cost += jsonCost(r, size); cost > avail {
			break
		}
		end += size
	}
	if end == len(data) && atEOF {
		return end
	}
	if nl := bytes.LastIndexByte(data[:end], '\n'); nl >= 0 && nl+1 >= end*3/4 {
		return nl + 1
	}
	return end
}

// runeStart moves off forward to the start of a character of data (read
// from off), so a page never begins inside one.
func runeStart(data []byte) int {
	i := 0
	for i < len(data) && i < utf8.UTFMax && !utf8.RuneStart(data[i]) {
		i++
	}
	return i
}

// fileHashes remembers the SHA-256 of files too big to read whole on
// every page, by path and ETag.
type fileHashes struct {
	mu sync.Mutex
	m  map[string]hashEntry
}

type hashEntry struct{ etag, hash string }

const maxHashes = 64

func (h *fileHashes) get(path, etag string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.m[path]
	return e.hash, ok && e.etag == etag
}

func (h *fileHashes) put(path, etag, hash string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxHashes {
		h.m = map[string]hashEntry{}
	}
	h.m[path] = hashEntry{etag, hash}
}

// errChanged is a file that changed while it was being read.
var errChanged = errors.New("the note changed while it was being read")

// scanFile reads path from byte 0 to upto (-1: the end) in chunks and
// returns the SHA-256 of the whole file when it read it all, and the number
// of line feeds before upto. The file must keep etag throughout.
func scanFile(ctx context.Context, st store.Store, path, etag string, upto int64) (hash string, lines int, err error) {
	h := sha256.New()
	var off int64
	for {
		n := int64(pageChunk)
		if upto >= 0 {
			n = min(n, upto-off)
			if n <= 0 {
				return "", lines, nil
			}
		}
		data, obj, err := store.GetRange(ctx, st, path, off, n)
		if err != nil {
			return "", 0, err
		}
		if obj.ETag != etag {
			return "", 0, errChanged
		}
		h.Write(data)
		lines += bytes.Count(data, []byte{'\n'})
		off += int64(len(data))
		if len(data) == 0 || off >= obj.Size {
			if upto >= 0 && off < upto {
				return "", lines, nil
			}
			return hex.EncodeToString(h.Sum(nil)), lines, nil
		}
	}
}

// notePage is one page of a note and what read_note says about it.
type notePage struct {
	obj       store.Object
	content   string
	offset    int64 // where content starts
	next      int64 // where the next page starts; obj.Size when none
	startLine int   // 1-based line content starts on
	hash      string
	meta      *vault.Note // the note's metadata and links; nil when not known
	warnings  []string
}

// readPage reads the page of the note at path that starts at off and
// fits avail serialized bytes of content, at most length bytes of file
// (0: no limit).
func readPage(ctx context.Context, v *Vault, cat *vault.Catalog, path string, off, length int64, avail int) (*notePage, error) {
	obj, err := v.Store.Stat(ctx, path)
	if err != nil {
		return nil, err
	}
	if off > obj.Size {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "offset", "size": obj.Size},
			"offset %d is past the end of %s, which has %d bytes: pass an offset below its size (or 0)", off, path, obj.Size)
	}
	// Read at most what could fit: every byte costs at least 2.
	want := int64(max(avail/2, 1)) + utf8.UTFMax
	if length > 0 {
		want = min(want, length)
	}
	data, got, err := store.GetRange(ctx, v.Store, path, off, want)
	if err != nil {
		return nil, err
	}
	if got.ETag != obj.ETag {
		return nil, errChanged
	}
	p := &notePage{obj: got, offset: off}
	if skip := runeStart(data); skip > 0 && off > 0 {
		p.offset += int64(skip)
		data = data[skip:]
		p.warnings = append(p.warnings, fmt.Sprintf("offset %d is inside a character: this page starts at %d", off, p.offset))
	}
	atEOF := p.offset+int64(len(data)) >= got.Size
	end := pageEnd(data, avail, atEOF && (length == 0 || int64(len(data)) < length))
	if end == 0 && len(data) > 0 {
		end = min(len(data), utf8.UTFMax) // always make progress
	}
	data = data[:end]
	p.next = p.offset + int64(len(data))
	if !utf8.Valid(data) {
		p.warnings = append(p.warnings, "this page is not valid UTF-8: invalid bytes are shown as U+FFFD, so it is not byte-exact")
	}
	p.content = string(bytes.ToValidUTF8(data, []byte("\uFFFD")))

	// The whole file's hash (compare-and-swap needs it) and the line the
	// page starts on: from the catalog when it indexed this very version,
	// else by reading the file (its hash is remembered).
	if n, ok := cat.Note(path); ok && n.ETag == got.ETag && n.Size == got.Size && n.Hash != "" {
		p.meta, p.hash = &n, n.Hash
	} else if h, ok := v.state().hashes.get(path, got.ETag); ok {
		p.hash = h
	} else if p.hash, _, err = scanFile(ctx, v.Store, path, got.ETag, -1); err != nil {
		return nil, err
	} else {
		v.state().hashes.put(path, got.ETag, p.hash)
	}
	p.startLine = 1
	if p.offset > 0 {
		_, lines, err := scanFile(ctx, v.Store, path, got.ETag, p.offset)
		if err != nil {
			return nil, err
		}
		p.startLine += lines
	}
	return p, nil
}

// pageLinks are the links of a note on the lines a page covers. For a note
// the catalog does not hold at this version (too big to index), the page
// is parsed alone: a link inside a code block that began on an earlier
// page may then be taken for a link.
func (p *notePage) pageLinks() ([]vault.Link, bool) {
	endLine := p.startLine + countLines(p.content)
	if p.meta != nil {
		var out []vault.Link
		for _, l := range p.meta.Links {
			if l.Line >= p.startLine && l.Line <= endLine {
				out = append(out, l)
			}
		}
		return out, true
	}
	parsed := vault.Parse(p.obj.Path, []byte(p.content))
	links := parsed.Note.Links
	for i := range links {
		links[i].Line += p.startLine - 1
	}
	return links, false
}

func countLines(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
		}
	}
	return n
}
