package vault

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Snapshot format: a gzip stream of JSON lines. The first line is the
// header; then one line per note, one per attachment, and (since version 2)
// one per problem ({"path", "reason"}).
//
// WriteSnapshot writes SnapshotVersion; ReadSnapshot also reads version 1
// (no problems section), so handlers keep serving a snapshot written before
// an upgrade until the indexer next saves. Version 1 readers refuse version
// 2 with ErrSnapshotVersion and rebuild, instead of failing on the extra
// lines.
const (
	SnapshotFormat  = "sheaf-catalog"
	SnapshotVersion = 2

	minSnapshotVersion = 1
)

// ErrSnapshotVersion is wrapped by ReadSnapshot when the snapshot was written
// by a format version it cannot read; the caller should rebuild the catalog.
var ErrSnapshotVersion = errors.New("vault: unsupported catalog snapshot version")

type snapshotHeader struct {
	Format      string    `json:"format"`
	Version     int       `json:"version"`
	IndexedAt   time.Time `json:"indexed_at"`
	Written     time.Time `json:"written"`
	Notes       int       `json:"notes"`
	Attachments int       `json:"attachments"`
	Problems    int       `json:"problems"`
}

// snapshotProblem is one problem line.
type snapshotProblem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// maxHeaderLine bounds the header line, which is a few hundred bytes.
const maxHeaderLine = 64 << 10

// WriteSnapshot writes the catalog's notes, attachments, problems and index
// time.
// Indexes are not written; ReadSnapshot rebuilds them.
func (c *Catalog) WriteSnapshot(w io.Writer) error {
	c.mu.RLock()
	notes := make([]*Note, 0, len(c.notes))
	for _, n := range c.notes {
		notes = append(notes, n) // stored notes are never modified in place
	}
	atts := make([]Attachment, 0, len(c.atts))
	for _, a := range c.atts {
		atts = append(atts, a)
	}
	probs := make([]snapshotProblem, 0, len(c.problems))
	for p, why := range c.problems {
		probs = append(probs, snapshotProblem{Path: p, Reason: why})
	}
	h := snapshotHeader{
		Format: SnapshotFormat, Version: SnapshotVersion, IndexedAt: c.indexedAt,
		Written: time.Now().UTC(), Notes: len(notes), Attachments: len(atts), Problems: len(probs),
	}
	c.mu.RUnlock()
	slices.SortFunc(notes, func(a, b *Note) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(atts, func(a, b Attachment) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(probs, func(a, b snapshotProblem) int { return strings.Compare(a.Path, b.Path) })

	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(zw, 1<<16)
	enc := json.NewEncoder(bw) // one value per line
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("vault: write snapshot header: %w", err)
	}
	for _, n := range notes {
		if err := enc.Encode(n); err != nil {
			return fmt.Errorf("vault: write snapshot note %q: %w", n.Path, err)
		}
	}
	for _, a := range atts {
		if err := enc.Encode(a); err != nil {
			return fmt.Errorf("vault: write snapshot attachment %q: %w", a.Path, err)
		}
	}
	for _, p := range probs {
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("vault: write snapshot problem %q: %w", p.Path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// ReadSnapshot loads a catalog written by WriteSnapshot and rebuilds its
// indexes. A version 1 snapshot loads with no problems; one of a version
// it cannot read gives an error wrapping ErrSnapshotVersion.
func ReadSnapshot(r io.Reader) (*Catalog, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("vault: read snapshot: %w", err)
	}
	defer zr.Close()
	return readSnapshot(bufio.NewReaderSize(zr, 1<<20))
}

// readSnapshot reads the decompressed snapshot stream.
func readSnapshot(br *bufio.Reader) (*Catalog, error) {
	line, err := readLine(br, maxHeaderLine)
	if err != nil {
		return nil, fmt.Errorf("vault: read snapshot header: %w", err)
	}
	var h snapshotHeader
	if err := json.Unmarshal(line, &h); err != nil || h.Format != SnapshotFormat {
		return nil, fmt.Errorf("vault: not a catalog snapshot")
	}
	if h.Version < minSnapshotVersion || h.Version > SnapshotVersion {
		return nil, fmt.Errorf("%w: got %d, want %d to %d", ErrSnapshotVersion, h.Version, minSnapshotVersion, SnapshotVersion)
	}
	if h.Notes < 0 || h.Attachments < 0 || h.Problems < 0 || h.Version < 2 && h.Problems != 0 {
		return nil, fmt.Errorf("vault: corrupt snapshot header")
	}

	notes, err := readNotes(br, h.Notes)
	if err != nil {
		return nil, err
	}
	ptrs := make([]*Note, len(notes))
	for i := range notes {
		n := &notes[i]
		if n.Path == "" {
			return nil, fmt.Errorf("vault: snapshot note %d has no path", i)
		}
		n.Path = norm.NFC.String(n.Path)
		ptrs[i] = n
	}
	c := newCatalog(len(notes), min(h.Attachments, 1<<16))
	c.indexedAt = h.IndexedAt
	c.load(ptrs)
	for i := range h.Attachments {
		line, err := readLine(br, -1)
		if err != nil {
			return nil, fmt.Errorf("vault: read snapshot attachment %d: %w", i, err)
		}
		var a Attachment
		if err := json.Unmarshal(line, &a); err != nil || a.Path == "" {
			return nil, fmt.Errorf("vault: corrupt snapshot attachment %d", i)
		}
		a.Path = norm.NFC.String(a.Path)
		c.upsertAttachmentLocked(a)
	}
	for i := range h.Problems {
		line, err := readLine(br, -1)
		if err != nil {
			return nil, fmt.Errorf("vault: read snapshot problem %d: %w", i, err)
		}
		var p snapshotProblem
		if err := json.Unmarshal(line, &p); err != nil || p.Path == "" || p.Reason == "" {
			return nil, fmt.Errorf("vault: corrupt snapshot problem %d", i)
		}
		c.problems[norm.NFC.String(p.Path)] = p.Reason
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("vault: snapshot has trailing data")
	}
	return c, nil
}

// readNotes reads count note lines, then decodes them on all CPUs.
func readNotes(br *bufio.Reader, count int) ([]Note, error) {
	lines := make([][]byte, 0, min(count, 1<<16))
	for i := range count {
		line, err := readLine(br, -1)
		if err != nil {
			return nil, fmt.Errorf("vault: read snapshot note %d: %w", i, err)
		}
		lines = append(lines, line)
	}
	notes := make([]Note, len(lines))
	errs := make([]error, len(lines))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(lines)/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(lines); i += workers {
				errs[i] = decodeNote(lines[i], &notes[i])
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("vault: corrupt snapshot note %d: %w", i, err)
		}
	}
	return notes, nil
}

// readLine returns the next line without its newline. limit < 0 means no
// limit. A missing final newline is an error: snapshots always end lines.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if limit >= 0 && len(buf) > limit {
			return nil, errors.New("line too long")
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(buf, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// decodeNote decodes one note line as encoding/json would, several times
// faster: a 10k-note snapshot must load in well under a second. Unknown
// fields are skipped; frontmatter goes through encoding/json.
func decodeNote(line []byte, n *Note) error {
	r := &jsonReader{b: line}
	r.object(func(key []byte) {
		switch string(key) {
		case "path":
			n.Path = r.str()
		case "name":
			n.Name = r.str()
		case "title":
			n.Title = r.str()
		case "id":
			n.ID = r.str()
		case "aliases":
			n.Aliases = r.strs()
		case "tags":
			n.Tags = r.strs()
		case "author":
			n.Author = r.str()
		case "entities":
			n.Entities = r.strs()
		case "derived_from_ids":
			n.DerivedFromIDs = r.strs()
		case "source_url":
			n.SourceURL = r.str()
		case "frontmatter":
			n.Frontmatter = nil
			if raw := r.raw(); r.err == nil {
				if err := json.Unmarshal(raw, &n.Frontmatter); err != nil {
					r.fail(err.Error())
				}
			}
		case "frontmatter_error":
			n.FrontmatterError = r.str()
		case "headings":
			n.Headings = nil
			r.array(func() {
				var h Heading
				r.object(func(key []byte) {
					switch string(key) {
					case "level":
						h.Level = r.int()
					case "title":
						h.Title = r.str()
					case "id":
						h.ID = r.str()
					case "line":
						h.Line = r.int()
					default:
						r.raw()
					}
				})
				n.Headings = append(n.Headings, h)
			})
		case "links":
			n.Links = nil
			r.array(func() {
				var l Link
				r.object(func(key []byte) {
					switch string(key) {
					case "kind":
						l.Kind = r.str()
					case "embed":
						l.Embed = r.bool()
					case "target":
						l.Target = r.str()
					case "key":
						l.Key = r.str()
					case "heading":
						l.Heading = r.str()
					case "block":
						l.Block = r.str()
					case "display":
						l.Display = r.str()
					case "line":
						l.Line = r.int()
					default:
						r.raw()
					}
				})
				n.Links = append(n.Links, l)
			})
		case "blocks":
			n.Blocks = nil
			r.array(func() {
				var b Block
				r.object(func(key []byte) {
					switch string(key) {
					case "id":
						b.ID = r.str()
					case "line":
						b.Line = r.int()
					default:
						r.raw()
					}
				})
				n.Blocks = append(n.Blocks, b)
			})
		case "directives":
			n.Directives = nil
			r.array(func() {
				var d Directive
				r.object(func(key []byte) {
					switch string(key) {
					case "line":
						d.Line = r.int()
					case "title":
						d.Title = r.str()
					case "body":
						d.Body = r.str()
					case "done":
						d.Done = r.bool()
					default:
						r.raw()
					}
				})
				n.Directives = append(n.Directives, d)
			})
		case "mentions":
			n.Mentions = nil
			r.array(func() {
				var m Mention
				r.object(func(key []byte) {
					switch string(key) {
					case "handle":
						m.Handle = r.str()
					case "line":
						m.Line = r.int()
					case "context":
						m.Context = r.str()
					default:
						r.raw()
					}
				})
				n.Mentions = append(n.Mentions, m)
			})
		case "size":
			n.Size = r.int64()
		case "modified":
			n.Modified = r.time()
		case "hash":
			n.Hash = r.str()
		case "etag":
			n.ETag = r.str()
		default:
			r.raw()
		}
	})
	r.end()
	return r.err
}

// jsonReader reads JSON values from a byte slice. The first error stops it:
// every later read returns a zero value.
type jsonReader struct {
	b   []byte
	i   int
	err error
}

func (r *jsonReader) fail(msg string) {
	if r.err == nil {
		r.err = fmt.Errorf("json at offset %d: %s", r.i, msg)
	}
	r.i = len(r.b)
}

// peek skips white space and returns the next byte, 0 at the end.
func (r *jsonReader) peek() byte {
	for r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return c
		}
	}
	return 0
}

func (r *jsonReader) eat(c byte) bool {
	if r.peek() == c && r.err == nil {
		r.i++
		return true
	}
	return false
}

// literal consumes word if it comes next.
func (r *jsonReader) literal(word string) bool {
	if r.peek() != word[0] || !bytes.HasPrefix(r.b[r.i:], []byte(word)) {
		return false
	}
	r.i += len(word)
	return true
}

// end checks that nothing but white space is left.
func (r *jsonReader) end() {
	if r.peek() != 0 {
		r.fail("trailing data")
	}
}

// object calls field with each key; field must consume the value.
func (r *jsonReader) object(field func(key []byte)) {
	if r.literal("null") {
		return
	}
	if !r.eat('{') {
		r.fail("expected an object")
		return
	}
	if r.eat('}') {
		return
	}
	for r.err == nil {
		key := r.strBytes()
		if !r.eat(':') {
			r.fail("expected ':'")
			return
		}
		field(key)
		if r.eat(',') {
			continue
		}
		if !r.eat('}') {
			r.fail("expected ',' or '}'")
		}
		return
	}
}

// array calls elem for each element; elem must consume it.
func (r *jsonReader) array(elem func()) {
	if r.literal("null") {
		return
	}
	if !r.eat('[') {
		r.fail("expected an array")
		return
	}
	if r.eat(']') {
		return
	}
	for r.err == nil {
		elem()
		if r.eat(',') {
			continue
		}
		if !r.eat(']') {
			r.fail("expected ',' or ']'")
		}
		return
	}
}

// strBytes reads a string. Plain strings are returned in place; strings
// with escapes or invalid UTF-8 are decoded by encoding/json.
func (r *jsonReader) strBytes() []byte {
	if r.peek() != '"' {
		r.fail("expected a string")
		return nil
	}
	start := r.i
	j := start + 1
	plain := true
	for ; j < len(r.b); j++ {
		c := r.b[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			j++ // skip the escaped byte
		} else if c < 0x20 || c >= utf8.RuneSelf {
			plain = false
		}
	}
	if j >= len(r.b) {
		r.fail("unterminated string")
		return nil
	}
	r.i = j + 1
	if plain {
		return r.b[start+1 : j]
	}
	var s string
	if err := json.Unmarshal(r.b[start:j+1], &s); err != nil {
		r.i = start
		r.fail(err.Error())
		return nil
	}
	return []byte(s)
}

func (r *jsonReader) str() string {
	if r.literal("null") {
		return ""
	}
	return string(r.strBytes())
}

func (r *jsonReader) strs() []string {
	var out []string
	r.array(func() { out = append(out, r.str()) })
	return out
}

func (r *jsonReader) bool() bool {
	switch {
	case r.literal("true"):
		return true
	case r.literal("false"), r.literal("null"):
		return false
	}
	r.fail("expected a boolean")
	return false
}

func (r *jsonReader) int64() int64 {
	if r.literal("null") {
		return 0
	}
	r.peek()
	start := r.i
	for r.i < len(r.b) && (r.b[r.i] == '-' || r.b[r.i] >= '0' && r.b[r.i] <= '9') {
		r.i++
	}
	v, err := strconv.ParseInt(string(r.b[start:r.i]), 10, 64)
	if err != nil {
		r.i = start
		r.fail("expected an integer")
	}
	return v
}

func (r *jsonReader) int() int {
	v := r.int64()
	if int64(int(v)) != v {
		r.fail("integer out of range")
	}
	return int(v)
}

func (r *jsonReader) time() time.Time {
	var t time.Time
	if r.literal("null") {
		return t
	}
	if b := r.strBytes(); r.err == nil {
		if err := t.UnmarshalText(b); err != nil {
			r.fail(err.Error())
		}
	}
	return t
}

// raw returns the next value's bytes unparsed (only its nesting and strings
// are checked).
func (r *jsonReader) raw() []byte {
	c := r.peek()
	start := r.i
	switch c {
	case '"':
		r.strBytes()
	case '{', '[':
		depth := 0
		for r.i < len(r.b) && r.err == nil {
			switch r.b[r.i] {
			case '"':
				r.strBytes()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			r.i++
			if depth == 0 {
				return r.b[start:r.i]
			}
		}
		r.fail("unterminated value")
	default:
		for r.i < len(r.b) {
			c := r.b[r.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			r.i++
		}
		if r.i == start {
			r.fail("expected a value")
		}
	}
	return r.b[start:r.i]
}
