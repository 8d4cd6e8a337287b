package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
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

// insideRune says how many bytes of data[at:] belong to a valid character
// that starts before at (0 when at is a character boundary): a page must
// start after it. Invalid bytes are characters of their own.
func insideRune(data []byte, at int) int {
	for k := 1; k <= at && k < utf8.UTFMax; k++ {
		if !utf8.RuneStart(data[at-k]) {
			continue
		}
		r, size := utf8.DecodeRune(data[at-k:])
		if r == utf8.RuneError && size <= 1 || size <= k {
			return 0
		}
		return size - k
	}
	return 0
}

type scansKey struct{}

// fileScans remembers, for notes read by pages, what reading them whole
// once told: the SHA-256 of the file and its line count at every pageChunk
// boundary, by path and ETag, so that no page reads more than one chunk
// besides itself.
type fileScans struct {
	mu sync.Mutex
	m  map[string]*fileScan
}

// fileScan is what one read of a whole file gives.
type fileScan struct {
	etag  string
	hash  string
	lines []int // lines[i]: line feeds before byte i*pageChunk
}

const maxScans = 64

func (f *fileScans) get(path, etag string) *fileScan {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sc := f.m[path]; sc != nil && sc.etag == etag {
		return sc
	}
	return nil
}

func (f *fileScans) put(path string, sc *fileScan) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil || len(f.m) >= maxScans {
		f.m = map[string]*fileScan{}
	}
	f.m[path] = sc
}

// scanFile reads the whole file at path, which must keep etag throughout.
func scanFile(ctx context.Context, st store.Store, path, etag string) (*fileScan, error) {
	h := sha256.New()
	sc := &fileScan{etag: etag}
	var off int64
	lines := 0
	for {
		sc.lines = append(sc.lines, lines)
		data, obj, err := store.GetRange(ctx, st, path, off, pageChunk)
		if err != nil {
			return nil, err
		}
		if obj.ETag != etag {
			return nil, errChanged
		}
		h.Write(data)
		lines += bytes.Count(data, []byte{'\n'})
		off += int64(len(data))
		if len(data) < pageChunk || off >= obj.Size {
			sc.hash = hex.EncodeToString(h.Sum(nil))
			return sc, nil
		}
	}
}

// lineAt is the 1-based line that byte off of the scanned file is on.
func (sc *fileScan) lineAt(ctx context.Context, st store.Store, path string, off int64) (int, error) {
	i := min(int(off/pageChunk), len(sc.lines)-1)
	from := int64(i) * pageChunk
	line := 1 + sc.lines[i]
	if off == from {
		return line, nil
	}
	data, obj, err := store.GetRange(ctx, st, path, from, off-from)
	if err != nil {
		return 0, err
	}
	if obj.ETag != sc.etag {
		return 0, errChanged
	}
	return line + bytes.Count(data, []byte{'\n'}), nil
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
	// Read at most what could fit: every byte costs at least 2; and the
	// few bytes before off, to tell whether off is inside a character.
	want := int64(max(avail/2, 1)) + utf8.UTFMax
	if length > 0 {
		want = min(want, length)
	}
	back := min(off, utf8.UTFMax-1)
	data, got, err := store.GetRange(ctx, v.Store, path, off-back, want+back)
	if err != nil {
		return nil, err
	}
	if got.ETag != obj.ETag {
		return nil, errChanged
	}
	p := &notePage{obj: got, offset: off}
	skip := insideRune(data, int(back))
	data = data[min(int(back)+skip, len(data)):]
	if skip > 0 {
		p.offset += int64(skip)
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
	// page starts on, from one read of the whole file, remembered.
	scans := cached(v, scansKey{}, func() *fileScans { return &fileScans{} })
	sc := scans.get(path, got.ETag)
	if sc == nil {
		if sc, err = scanFile(ctx, v.Store, path, got.ETag); err != nil {
			return nil, err
		}
		scans.put(path, sc)
	}
	p.hash = sc.hash
	if p.startLine, err = sc.lineAt(ctx, v.Store, path, p.offset); err != nil {
		return nil, err
	}
	if n, ok := cat.Note(path); ok && n.ETag == got.ETag && n.Size == got.Size {
		p.meta = &n
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
		links := p.meta.Links
		i := 0
		if slices.IsSortedFunc(links, func(a, b vault.Link) int { return a.Line - b.Line }) {
			i = sort.Search(len(links), func(i int) bool { return links[i].Line >= p.startLine })
		}
		for ; i < len(links); i++ {
			if l := &links[i]; l.Line >= p.startLine && l.Line <= endLine {
				out = append(out, *l)
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
