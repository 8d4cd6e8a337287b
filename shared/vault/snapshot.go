package vault

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/text/unicode/norm"
)

// Snapshot format: a zstd frame holding a segment in the binary format
// (version 4, see segbin.go); versions 1 to 3, still read, were JSON
// lines (gzip for 1 and 2, zstd for 3): a header line, then one line per
// note, one per attachment, (since version 2) one per problem
// ({"path", "reason"}) and (since version 3) one per removed path
// ({"path"}).
//
// One format serves whole snapshots and segments (see Segment): a whole
// snapshot is a segment naming every path and removing none. ReadSegment
// reads every version from 1 on, so a catalog written before an upgrade is
// read as it was. Readers of older versions refuse a newer one with
// ErrSnapshotVersion and rebuild, instead of failing on it.
const (
	SnapshotFormat  = "sheaf-catalog"
	SnapshotVersion = binVersion

	minSnapshotVersion = 1
	// lastJSONVersion is the newest version written as JSON lines.
	lastJSONVersion = 3
)

// zstd is the codec since version 3: its decoder is several times faster
// than gzip's, which is what a cold reader of a big catalog waits for. Its
// default level writes 11% fewer bytes than the fastest one and decodes as
// fast (121 MB of binary catalog at 100k notes: 39 MB, 0.2 s of one core),
// at 30% more encoding time, which only merges notice. Both are safe for
// concurrent use (EncodeAll, DecodeAll).
var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

func zstdCodec() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxPlainSnapshot))
	})
	return zstdEnc, zstdDec
}

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
	Removed     int       `json:"removed,omitempty"`
}

// Problem is why one file is skipped or only partly indexed.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// removedLine is one removed path.
type removedLine struct {
	Path string `json:"path"`
}

// maxHeaderLine bounds the header line, which is a few hundred bytes.
const maxHeaderLine = 64 << 10

// Segment is the catalog state of a set of paths: every path it names
// (in Notes, Attachments, Problems or Removed) has exactly the state the
// segment gives it, nothing else. Applying segments in order rebuilds a
// catalog: a whole snapshot is one segment naming every path, the changes
// of one save another naming only the changed paths (a removed path is one
// the catalog no longer holds anything of).
//
// A segment is a plain value: reading, writing and merging segments need no
// Catalog. Its notes must be treated as read-only once handed to a Catalog.
type Segment struct {
	IndexedAt   time.Time // zero: unknown (applying it keeps the catalog's)
	Notes       []Note
	Attachments []Attachment
	Problems    []Problem
	Removed     []string
}

// Len is the number of entries (notes, attachments, problems, removals).
func (s *Segment) Len() int {
	return len(s.Notes) + len(s.Attachments) + len(s.Problems) + len(s.Removed)
}

// Paths returns every path s names, sorted, each once.
func (s *Segment) Paths() []string {
	out := make([]string, 0, s.Len())
	for i := range s.Notes {
		out = append(out, s.Notes[i].Path)
	}
	for _, a := range s.Attachments {
		out = append(out, a.Path)
	}
	for _, p := range s.Problems {
		out = append(out, p.Path)
	}
	out = append(out, s.Removed...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Segment returns the state of paths in c as a segment: a path c holds
// nothing at is removed. paths == nil means every path (a whole snapshot,
// removing nothing).
func (c *Catalog) Segment(paths []string) *Segment {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := &Segment{IndexedAt: c.indexedAt}
	if paths == nil {
		s.Notes = make([]Note, 0, len(c.notes))
		for _, n := range c.notes {
			s.Notes = append(s.Notes, *n) // stored notes are never modified in place
		}
		s.Attachments = make([]Attachment, 0, len(c.atts))
		for _, a := range c.atts {
			s.Attachments = append(s.Attachments, a)
		}
		for p, why := range c.problems {
			s.Problems = append(s.Problems, Problem{Path: p, Reason: why})
		}
	} else {
		seen := make(map[string]bool, len(paths))
		for _, p := range paths {
			p = norm.NFC.String(p)
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			held := false
			if n := c.notes[p]; n != nil {
				s.Notes = append(s.Notes, *n)
				held = true
			}
			if a, ok := c.atts[p]; ok {
				s.Attachments = append(s.Attachments, a)
				held = true
			}
			if why, ok := c.problems[p]; ok {
				s.Problems = append(s.Problems, Problem{Path: p, Reason: why})
				held = true
			}
			if !held {
				s.Removed = append(s.Removed, p)
			}
		}
	}
	s.sort()
	return s
}

func (s *Segment) sort() {
	slices.SortFunc(s.Notes, func(a, b Note) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(s.Attachments, func(a, b Attachment) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(s.Problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(s.Removed)
}

// WriteSnapshot writes the catalog's notes, attachments, problems and index
// time: a whole snapshot. Indexes are not written; ReadSnapshot rebuilds
// them.
func (c *Catalog) WriteSnapshot(w io.Writer) error { return c.Segment(nil).Write(w) }

// Write writes s in the snapshot format.
func (s *Segment) Write(w io.Writer) error {
	plain, err := s.appendBinary(nil)
	if err != nil {
		return err
	}
	ze, _ := zstdCodec()
	_, err = w.Write(ze.EncodeAll(plain, nil))
	return err
}

// ReadSnapshot loads a whole catalog written by WriteSnapshot (or a segment,
// taken alone) and rebuilds its indexes. A version 1 snapshot loads with no
// problems; one of a version it cannot read gives an error wrapping
// ErrSnapshotVersion.
func ReadSnapshot(r io.Reader) (*Catalog, error) {
	s, err := ReadSegment(r)
	if err != nil {
		return nil, err
	}
	return CatalogOf(s), nil
}

// ReadSegment reads a segment or a whole snapshot of any version from 1 to
// SnapshotVersion; another version gives an error wrapping
// ErrSnapshotVersion.
func ReadSegment(r io.Reader) (*Segment, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(4)
	if bytes.Equal(magic, zstdMagic) {
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, fmt.Errorf("vault: read snapshot: %w", err)
		}
		_, zd := zstdCodec()
		plain, err := zd.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("vault: read snapshot: %w", err)
		}
		if isBinary(plain) {
			return decodeBinary(plain)
		}
		return readSegment(&lines{b: plain})
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("vault: read snapshot: %w", err)
	}
	defer zr.Close()
	plain, err := io.ReadAll(io.LimitReader(zr, maxPlainSnapshot+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("vault: read snapshot: %w", err)
	case len(plain) > maxPlainSnapshot:
		return nil, fmt.Errorf("vault: read snapshot: over %d bytes decompressed", maxPlainSnapshot)
	}
	return readSegment(&lines{b: plain})
}

// maxPlainSnapshot bounds a decompressed snapshot, as the zstd decoder's
// memory limit does.
const maxPlainSnapshot = 1 << 30

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// readSegment reads a decompressed snapshot in JSON lines (versions 1 to
// 3).
func readSegment(ls *lines) (*Segment, error) {
	line, err := ls.next(maxHeaderLine)
	if err != nil {
		return nil, fmt.Errorf("vault: read snapshot header: %w", err)
	}
	var h snapshotHeader
	if err := json.Unmarshal(line, &h); err != nil || h.Format != SnapshotFormat {
		return nil, fmt.Errorf("vault: not a catalog snapshot")
	}
	if h.Version < minSnapshotVersion || h.Version > lastJSONVersion {
		return nil, fmt.Errorf("%w: got %d, want %d to %d", ErrSnapshotVersion, h.Version, minSnapshotVersion, SnapshotVersion)
	}
	if h.Notes < 0 || h.Attachments < 0 || h.Problems < 0 || h.Removed < 0 ||
		h.Version < 2 && h.Problems != 0 || h.Version < 3 && h.Removed != 0 {
		return nil, fmt.Errorf("vault: corrupt snapshot header")
	}

	notes, err := readNotes(ls, h.Notes)
	if err != nil {
		return nil, err
	}
	for i := range notes {
		n := &notes[i]
		if n.Path == "" {
			return nil, fmt.Errorf("vault: snapshot note %d has no path", i)
		}
		n.Path = norm.NFC.String(n.Path)
	}
	s := &Segment{IndexedAt: h.IndexedAt, Notes: notes}
	s.Attachments = make([]Attachment, 0, min(h.Attachments, 1<<16))
	for i := range h.Attachments {
		line, err := ls.next(-1)
		if err != nil {
			return nil, fmt.Errorf("vault: read snapshot attachment %d: %w", i, err)
		}
		var a Attachment
		if err := json.Unmarshal(line, &a); err != nil || a.Path == "" {
			return nil, fmt.Errorf("vault: corrupt snapshot attachment %d", i)
		}
		a.Path = norm.NFC.String(a.Path)
		if a.MimeType == "" {
			a.MimeType = MimeTypeOf(a.Path)
		}
		s.Attachments = append(s.Attachments, a)
	}
	for i := range h.Problems {
		line, err := ls.next(-1)
		if err != nil {
			return nil, fmt.Errorf("vault: read snapshot problem %d: %w", i, err)
		}
		var p Problem
		if err := json.Unmarshal(line, &p); err != nil || p.Path == "" || p.Reason == "" {
			return nil, fmt.Errorf("vault: corrupt snapshot problem %d", i)
		}
		p.Path = norm.NFC.String(p.Path)
		s.Problems = append(s.Problems, p)
	}
	for i := range h.Removed {
		line, err := ls.next(-1)
		if err != nil {
			return nil, fmt.Errorf("vault: read snapshot removal %d: %w", i, err)
		}
		var rm removedLine
		if err := json.Unmarshal(line, &rm); err != nil || rm.Path == "" {
			return nil, fmt.Errorf("vault: corrupt snapshot removal %d", i)
		}
		s.Removed = append(s.Removed, norm.NFC.String(rm.Path))
	}
	if ls.i != len(ls.b) {
		return nil, fmt.Errorf("vault: snapshot has trailing data")
	}
	return s, nil
}

// MergeSegments returns one segment equivalent to applying segs in order:
// each path named by any of them, with the state the last one naming it
// gives. When base is true the result is applied to nothing (it replaces
// a catalog's first segments), so removals are dropped. Its IndexedAt is
// the last non-zero one.
func MergeSegments(segs []*Segment, base bool) *Segment {
	type state struct {
		note *Note
		att  *Attachment
		prob *Problem
	}
	final := map[string]*state{}
	out := &Segment{}
	for _, s := range segs {
		if !s.IndexedAt.IsZero() {
			out.IndexedAt = s.IndexedAt
		}
		for _, p := range s.Paths() {
			final[p] = &state{}
		}
		for i := range s.Notes {
			final[s.Notes[i].Path].note = &s.Notes[i]
		}
		for i := range s.Attachments {
			final[s.Attachments[i].Path].att = &s.Attachments[i]
		}
		for i := range s.Problems {
			final[s.Problems[i].Path].prob = &s.Problems[i]
		}
	}
	for p, st := range final {
		if st.note != nil {
			out.Notes = append(out.Notes, *st.note)
		}
		if st.att != nil {
			out.Attachments = append(out.Attachments, *st.att)
		}
		if st.prob != nil {
			out.Problems = append(out.Problems, *st.prob)
		}
		if st.note == nil && st.att == nil && st.prob == nil && !base {
			out.Removed = append(out.Removed, p)
		}
	}
	out.sort()
	return out
}

// Split divides s into at most parts segments by a hash of the path: all
// the state of one path stays in one part, so the parts may be applied in
// any order. Empty parts are left out.
func (s *Segment) Split(parts int) []*Segment {
	if parts <= 1 {
		return []*Segment{s}
	}
	out := make([]*Segment, parts)
	for i := range out {
		out[i] = &Segment{IndexedAt: s.IndexedAt}
	}
	part := func(p string) *Segment { return out[PathHash(p)%uint32(parts)] }
	for _, n := range s.Notes {
		ps := part(n.Path)
		ps.Notes = append(ps.Notes, n)
	}
	for _, a := range s.Attachments {
		ps := part(a.Path)
		ps.Attachments = append(ps.Attachments, a)
	}
	for _, p := range s.Problems {
		ps := part(p.Path)
		ps.Problems = append(ps.Problems, p)
	}
	for _, p := range s.Removed {
		ps := part(p)
		ps.Removed = append(ps.Removed, p)
	}
	return slices.DeleteFunc(out, func(s *Segment) bool { return s.Len() == 0 })
}

// PathHash is the FNV-1a hash of a path, which Split shards by.
func PathHash(p string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(p))
	return h.Sum32()
}

// CatalogOf builds a catalog from segments applied in order (whose notes it
// keeps), building its indexes once, on all cores.
func CatalogOf(segs ...*Segment) *Catalog {
	if len(segs) == 1 && len(segs[0].Removed) == 0 {
		return catalogOfOne(segs[0])
	}
	notes := map[string]*Note{}
	atts := map[string]Attachment{}
	probs := map[string]string{}
	var indexedAt time.Time
	for _, s := range segs {
		if !s.IndexedAt.IsZero() {
			indexedAt = s.IndexedAt
		}
		for _, p := range s.Paths() {
			delete(notes, p)
			delete(atts, p)
			delete(probs, p)
		}
		for i := range s.Notes {
			notes[s.Notes[i].Path] = &s.Notes[i]
		}
		for _, a := range s.Attachments {
			atts[a.Path] = a
		}
		for _, p := range s.Problems {
			probs[p.Path] = p.Reason
		}
	}
	ptrs := make([]*Note, 0, len(notes))
	for _, n := range notes {
		ptrs = append(ptrs, n)
	}
	c := loadCatalog(ptrs, len(atts))
	c.indexedAt = indexedAt
	for _, a := range atts {
		c.upsertAttachmentLocked(a)
	}
	c.problems = probs
	return c
}

// catalogOfOne is CatalogOf of one segment that removes nothing: no maps
// in between.
func catalogOfOne(s *Segment) *Catalog {
	ptrs := make([]*Note, len(s.Notes))
	for i := range s.Notes {
		ptrs[i] = &s.Notes[i]
	}
	c := loadCatalog(ptrs, min(len(s.Attachments), 1<<16))
	c.indexedAt = s.IndexedAt
	for _, a := range s.Attachments {
		c.upsertAttachmentLocked(a)
	}
	for _, p := range s.Problems {
		c.problems[p.Path] = p.Reason
	}
	return c
}

// Apply gives every path s names the state s gives it, in place.
func (c *Catalog) Apply(s *Segment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range s.Paths() {
		if old := c.notes[p]; old != nil {
			c.unindex(old)
			delete(c.notes, p)
		}
		if _, ok := c.atts[p]; ok {
			k := LinkKey(p)
			c.attKeys.del(k, p)
			c.attBases.del(lastSegment(k), p)
			delete(c.atts, p)
		}
		delete(c.problems, p)
	}
	for i := range s.Notes {
		n := s.Notes[i]
		c.upsertLocked(&n)
	}
	for _, a := range s.Attachments {
		c.upsertAttachmentLocked(a)
	}
	for _, p := range s.Problems {
		c.problems[p.Path] = p.Reason
	}
	if !s.IndexedAt.IsZero() {
		c.indexedAt = s.IndexedAt
	}
	c.gen++
}

// readNotes reads count note lines, then decodes them on all CPUs.
func readNotes(ls *lines, count int) ([]Note, error) {
	lines := make([][]byte, 0, min(count, 1<<16))
	for i := range count {
		line, err := ls.next(-1)
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
			r := &jsonReader{intern: map[string]string{}}
			for i := w; i < len(lines); i += workers {
				errs[i] = r.note(lines[i], &notes[i])
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

// lines hands out the lines of a decompressed snapshot, sliced in place
// from b (no copy of 200 MB of catalog).
type lines struct {
	b []byte
	i int
}

// next returns the next line without its newline; limit < 0 means no
// limit (the newline counts). A missing final newline is an error:
// snapshots always end lines.
func (l *lines) next(limit int) ([]byte, error) {
	rest := l.b[l.i:]
	j := bytes.IndexByte(rest, '\n')
	switch {
	case limit >= 0 && (j >= limit || j < 0 && len(rest) > limit):
		return nil, errors.New("line too long")
	case j < 0:
		return nil, io.ErrUnexpectedEOF
	}
	l.i += j + 1
	return rest[:j], nil
}

// decodeNote decodes one note line as encoding/json would, several times
// faster: a 10k-note snapshot must load in well under a second. Unknown
// fields are skipped; frontmatter goes through encoding/json.
func decodeNote(line []byte, n *Note) error {
	return (&jsonReader{}).note(line, n)
}

// note decodes one note line with r (which keeps its intern table).
func (r *jsonReader) note(line []byte, n *Note) error {
	r.b, r.i, r.err = line, 0, nil
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
			n.Tags = r.istrs()
		case "author":
			n.Author = r.istr()
		case "entities":
			n.Entities = r.istrs()
		case "derived_from_ids":
			n.DerivedFromIDs = r.strs()
		case "source_url":
			n.SourceURL = r.str()
		case "frontmatter":
			n.Frontmatter = nil
			if r.literal("null") {
				break
			}
			if r.peek() != '{' {
				r.fail("expected an object")
				break
			}
			n.Frontmatter, _ = r.value().(map[string]any)
		case "frontmatter_error":
			n.FrontmatterError = r.str()
		case "headings":
			hs := r.headings[:0]
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
				hs = append(hs, h)
			})
			n.Headings, r.headings = exact(hs), hs
		case "links":
			ls := r.links[:0]
			r.array(func() {
				var l Link
				r.object(func(key []byte) {
					switch string(key) {
					case "kind":
						l.Kind = r.istr()
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
				ls = append(ls, l)
			})
			n.Links, r.links = exact(ls), ls
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
						m.Handle = r.istr()
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
	// headings and links are scratch space: a note's own slices are
	// allocated once, at their final size.
	headings []Heading
	links    []Link
	// intern holds the strings istr returned, so a value that repeats
	// across notes (a tag, a link's kind, a hub's link target) is one
	// allocation however often it occurs; nil: no interning.
	intern map[string]string
}

// istr is str, interned.
func (r *jsonReader) istr() string {
	if r.intern == nil || r.literal("null") {
		return r.str()
	}
	b := r.strBytes()
	if s, ok := r.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.intern) < maxInterned {
		r.intern[s] = s
	}
	return s
}

// exact returns a copy of s of exactly its length; nil when s is empty.
func exact[E any](s []E) []E {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// maxInterned bounds one reader's intern table.
const maxInterned = 1 << 20

func (r *jsonReader) istrs() []string {
	var out []string
	r.array(func() { out = append(out, r.istr()) })
	return out
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

// strBytes reads a string. Plain strings (valid UTF-8, no escapes) are
// returned in place; others are decoded by encoding/json.
func (r *jsonReader) strBytes() []byte {
	if r.peek() != '"' {
		r.fail("expected a string")
		return nil
	}
	start := r.i
	j := start + 1
	plain, ascii := true, true
	for ; j < len(r.b); j++ {
		c := r.b[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			j++ // skip the escaped byte
		} else if c < 0x20 {
			plain = false
		} else if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if j >= len(r.b) {
		r.fail("unterminated string")
		return nil
	}
	r.i = j + 1
	if plain && (ascii || utf8.Valid(r.b[start+1:j])) {
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

// value reads any JSON value as encoding/json decodes it into an any:
// objects as map[string]any, arrays as []any, numbers as float64.
func (r *jsonReader) value() any {
	switch r.peek() {
	case '{':
		m := map[string]any{}
		r.object(func(key []byte) { m[string(key)] = r.value() })
		return m
	case '[':
		a := []any{}
		r.array(func() { a = append(a, r.value()) })
		return a
	case '"':
		return r.str()
	case 't', 'f':
		return r.bool()
	case 'n':
		if !r.literal("null") {
			r.fail("expected a value")
		}
		return nil
	}
	start := r.i
	num := r.raw()
	if r.err != nil {
		return nil
	}
	if !json.Valid(num) { // strings, objects, arrays and literals are taken above: a number
		r.i = start
		r.fail("expected a number")
		return nil
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		r.i = start
		r.fail("number out of range")
		return nil
	}
	return f
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
