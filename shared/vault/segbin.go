package vault

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// The binary segment format (version 4): what a cold reader of a big
// catalog decodes fastest. Inside the zstd frame:
//
//	magic "SHEAFCAT" | version | indexed_at | written
//	| notes, attachments, problems, removed (counts)
//	| lists, headings, links, blocks, directives, mentions (totals over all notes)
//	| each note | each attachment | each problem | each removed path
//
// Integers are varints (uvarint for counts and lengths), strings a length
// and their bytes, times the encoding of time.Time.AppendBinary behind a
// length byte, frontmatter a typed value (see binWriter.value) holding
// what encoding/json would decode from the note's JSON, so that both
// formats give the same values. A reader keeps the decompressed segment as
// one string and slices every string field out of it, and takes each
// note's headings, links, ... from one slice per kind sized by the totals:
// decoding allocates per segment, not per string.
var binMagic = []byte("SHEAFCAT")

// binVersion is the first snapshot version written in the binary format.
const binVersion = 4

// binTotals counts, over a segment's notes, the elements the reader
// allocates in one slice per kind.
type binTotals struct {
	lists, headings, links, blocks, directives, mentions int
}

func (t *binTotals) add(n *Note) {
	t.lists += len(n.Aliases) + len(n.Tags) + len(n.Entities) + len(n.DerivedFromIDs)
	t.headings += len(n.Headings)
	t.links += len(n.Links)
	t.blocks += len(n.Blocks)
	t.directives += len(n.Directives)
	t.mentions += len(n.Mentions)
}

// Link kinds as one byte (bits 1-2 of a link's flags); anything else is
// written out.
const (
	linkWikilink = 0
	linkMarkdown = 1
	linkOther    = 2
	linkEmbed    = 1
)

// binWriter appends the binary format to a byte slice.
type binWriter struct{ b []byte }

func (w *binWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *binWriter) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }

// str writes s, each byte that is not valid UTF-8 replaced with U+FFFD
// as encoding/json replaces it, so both formats read back the same text.
func (w *binWriter) str(s string) {
	if !utf8.ValidString(s) {
		s = validUTF8(s)
	}
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// validUTF8 replaces every byte of s that is not part of a valid UTF-8
// sequence with U+FFFD.
func validUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func (w *binWriter) strs(ss []string) {
	w.uint(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

func (w *binWriter) time(t time.Time) error {
	at := len(w.b)
	w.b = append(w.b, 0)
	var err error
	if w.b, err = t.AppendBinary(w.b); err != nil {
		return err
	}
	w.b[at] = byte(len(w.b) - at - 1)
	return nil
}

func (w *binWriter) note(n *Note) error {
	w.str(n.Path)
	w.str(n.Name)
	w.str(n.Title)
	w.str(n.ID)
	w.strs(n.Aliases)
	w.strs(n.Tags)
	w.str(n.Author)
	w.strs(n.Entities)
	w.strs(n.DerivedFromIDs)
	w.str(n.SourceURL)
	if err := w.frontmatter(n.Frontmatter); err != nil {
		return fmt.Errorf("frontmatter: %w", err)
	}
	w.str(n.FrontmatterError)
	w.uint(uint64(len(n.Headings)))
	for _, h := range n.Headings {
		w.int(int64(h.Level))
		w.str(h.Title)
		w.str(h.ID)
		w.int(int64(h.Line))
	}
	w.uint(uint64(len(n.Links)))
	for _, l := range n.Links {
		var flags uint64
		if l.Embed {
			flags = linkEmbed
		}
		switch l.Kind {
		case KindWikilink:
			flags |= linkWikilink << 1
		case KindMarkdown:
			flags |= linkMarkdown << 1
		default:
			flags |= linkOther << 1
		}
		w.uint(flags)
		if flags>>1 == linkOther {
			w.str(l.Kind)
		}
		w.str(l.Target)
		w.str(l.Key)
		w.str(l.Heading)
		w.str(l.Block)
		w.str(l.Display)
		w.int(int64(l.Line))
	}
	w.uint(uint64(len(n.Blocks)))
	for _, b := range n.Blocks {
		w.str(b.ID)
		w.int(int64(b.Line))
	}
	w.uint(uint64(len(n.Directives)))
	for _, d := range n.Directives {
		w.int(int64(d.Line))
		w.str(d.Title)
		w.str(d.Body)
		w.uint(boolBit(d.Done))
	}
	w.uint(uint64(len(n.Mentions)))
	for _, m := range n.Mentions {
		w.str(m.Handle)
		w.int(int64(m.Line))
		w.str(m.Context)
	}
	w.int(n.Size)
	if err := w.time(n.Modified); err != nil {
		return fmt.Errorf("modified: %w", err)
	}
	w.str(n.Hash)
	w.str(n.ETag)
	return nil
}

// Frontmatter value types.
const (
	valNull = iota
	valFalse
	valTrue
	valNumber // float64 bits, little-endian
	valString
	valArray  // count, then the values
	valObject // count, then key and value pairs, keys sorted
)

// maxValueDepth bounds the nesting of a frontmatter value a reader
// accepts (Parse keeps 64 levels).
const maxValueDepth = 256

// frontmatter writes fm as it reads back from JSON: normalised through
// encoding/json (numbers become float64, invalid UTF-8 U+FFFD), then as a
// typed value; an empty one is a null.
func (w *binWriter) frontmatter(fm map[string]any) error {
	if len(fm) == 0 {
		w.uint(valNull)
		return nil
	}
	raw, err := json.Marshal(fm)
	if err != nil {
		return err
	}
	jr := &jsonReader{b: raw}
	v := jr.value()
	if jr.err != nil {
		return jr.err
	}
	w.value(v)
	return nil
}

// value writes a value as jsonReader.value returns it.
func (w *binWriter) value(v any) {
	switch v := v.(type) {
	case nil:
		w.uint(valNull)
	case bool:
		w.uint(valFalse + boolBit(v))
	case float64:
		w.uint(valNumber)
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
	case string:
		w.uint(valString)
		w.str(v)
	case []any:
		w.uint(valArray)
		w.uint(uint64(len(v)))
		for _, e := range v {
			w.value(e)
		}
	case map[string]any:
		w.uint(valObject)
		w.uint(uint64(len(v)))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			w.str(k)
			w.value(v[k])
		}
	default:
		panic(fmt.Sprintf("vault: frontmatter value of type %T", v))
	}
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// appendBinary appends s in the binary format.
func (s *Segment) appendBinary(b []byte) ([]byte, error) {
	w := &binWriter{b: append(b, binMagic...)}
	w.uint(binVersion)
	if err := w.time(s.IndexedAt); err != nil {
		return nil, fmt.Errorf("vault: write snapshot header: %w", err)
	}
	if err := w.time(time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("vault: write snapshot header: %w", err)
	}
	var t binTotals
	for i := range s.Notes {
		t.add(&s.Notes[i])
	}
	for _, v := range []int{len(s.Notes), len(s.Attachments), len(s.Problems), len(s.Removed),
		t.lists, t.headings, t.links, t.blocks, t.directives, t.mentions} {
		w.uint(uint64(v))
	}
	for i := range s.Notes {
		if err := w.note(&s.Notes[i]); err != nil {
			return nil, fmt.Errorf("vault: write snapshot note %q: %w", s.Notes[i].Path, err)
		}
	}
	for _, a := range s.Attachments {
		w.str(a.Path)
		w.int(a.Size)
		if err := w.time(a.Modified); err != nil {
			return nil, fmt.Errorf("vault: write snapshot attachment %q: %w", a.Path, err)
		}
		w.str(a.MimeType)
	}
	for _, p := range s.Problems {
		w.str(p.Path)
		w.str(p.Reason)
	}
	for _, p := range s.Removed {
		w.str(p)
	}
	return w.b, nil
}

// errBinary is what every malformed binary segment gives.
var errBinary = errors.New("corrupt binary snapshot")

// binReader decodes the binary format from one string. The first error
// stops it: every later read returns a zero value.
type binReader struct {
	s   string
	i   int
	err error
}

func (r *binReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at offset %d", errBinary, what, r.i)
	}
	r.i = len(r.s)
}

func (r *binReader) uint() uint64 {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		if r.i >= len(r.s) {
			r.fail("truncated")
			return 0
		}
		c := r.s[r.i]
		r.i++
		if c < 0x80 {
			if shift == 63 && c > 1 {
				break
			}
			return v | uint64(c)<<shift
		}
		v |= uint64(c&0x7f) << shift
	}
	r.fail("varint overflows")
	return 0
}

func (r *binReader) int64() int64 {
	u := r.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *binReader) int() int {
	v := r.int64()
	if int64(int(v)) != v {
		r.fail("integer out of range")
		return 0
	}
	return int(v)
}

// count reads a count of elements that take at least one byte each: no
// count can exceed the bytes left, so a corrupt one cannot make the
// reader allocate more than its input.
func (r *binReader) count() int {
	v := r.uint()
	if v > uint64(len(r.s)-r.i) {
		r.fail("count exceeds the data")
		return 0
	}
	return int(v)
}

func (r *binReader) str() string {
	n := r.count()
	s := r.s[r.i : r.i+n]
	r.i += n
	return s
}

func (r *binReader) bool() bool {
	switch r.uint() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("expected a boolean")
	return false
}

func (r *binReader) time() time.Time {
	var t time.Time
	if b := r.str(); r.err == nil {
		if err := t.UnmarshalBinary([]byte(b)); err != nil {
			r.fail("bad time: " + err.Error())
		}
	}
	return t
}

// frontmatter reads a note's frontmatter: an object, or a null for none.
func (r *binReader) frontmatter() map[string]any {
	switch v := r.value(0).(type) {
	case nil:
		return nil
	case map[string]any:
		return v
	}
	r.fail("frontmatter is not an object")
	return nil
}

// value reads a value written by binWriter.value.
func (r *binReader) value(depth int) any {
	if depth > maxValueDepth {
		r.fail("frontmatter nested too deep")
		return nil
	}
	switch t := r.uint(); t {
	case valNull:
		return nil
	case valFalse, valTrue:
		return t == valTrue
	case valNumber:
		if len(r.s)-r.i < 8 {
			r.fail("truncated")
			return nil
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64([]byte(r.s[r.i : r.i+8])))
		r.i += 8
		return f
	case valString:
		return r.str()
	case valArray:
		a := make([]any, r.count())
		for i := range a {
			a[i] = r.value(depth + 1)
		}
		return a
	case valObject:
		n := r.count()
		m := make(map[string]any, n)
		for range n {
			k := r.str()
			m[k] = r.value(depth + 1)
		}
		return m
	}
	r.fail("bad value type")
	return nil
}

// slab hands out consecutive sub-slices of one slice allocated at the
// total its segment's header gives, each capped so that appending to one
// cannot write into the next.
type slab[E any] struct{ all []E }

func newSlab[E any](r *binReader, total int) slab[E] {
	if total > len(r.s)-r.i {
		r.fail("total exceeds the data")
		total = 0
	}
	return slab[E]{all: make([]E, 0, total)}
}

// take returns n elements filled by fill, nil when n is 0.
func (s *slab[E]) take(r *binReader, n int, fill func(*E)) []E {
	if n == 0 || r.err != nil {
		return nil
	}
	if n > cap(s.all)-len(s.all) {
		r.fail("more elements than the header's total")
		return nil
	}
	start := len(s.all)
	s.all = s.all[:start+n]
	out := s.all[start : start+n : start+n]
	for i := range out {
		fill(&out[i])
	}
	return out
}

// decodeBinary reads a segment in the binary format from plain, its
// decompressed bytes, which it takes over: the segment's strings are
// slices of plain, viewed as a string without a copy, so the caller must
// never write to plain again.
func decodeBinary(plain []byte) (*Segment, error) {
	r := &binReader{s: unsafe.String(unsafe.SliceData(plain), len(plain))[len(binMagic):]}
	if v := r.uint(); r.err == nil && v != binVersion {
		return nil, fmt.Errorf("%w: got %d, want %d to %d", ErrSnapshotVersion, v, minSnapshotVersion, SnapshotVersion)
	}
	s := &Segment{IndexedAt: r.time()}
	r.time() // written
	nNotes, nAtts, nProbs, nRemoved := r.count(), r.count(), r.count(), r.count()
	lists := newSlab[string](r, r.count())
	headings := newSlab[Heading](r, r.count())
	links := newSlab[Link](r, r.count())
	blocks := newSlab[Block](r, r.count())
	directives := newSlab[Directive](r, r.count())
	mentions := newSlab[Mention](r, r.count())
	if r.err != nil {
		return nil, fmt.Errorf("vault: read snapshot header: %w", r.err)
	}
	strs := func() []string {
		return lists.take(r, r.count(), func(s *string) { *s = r.str() })
	}
	s.Notes = make([]Note, nNotes)
	for i := range s.Notes {
		n := &s.Notes[i]
		n.Path = r.str()
		n.Name = r.str()
		n.Title = r.str()
		n.ID = r.str()
		n.Aliases = strs()
		n.Tags = strs()
		n.Author = r.str()
		n.Entities = strs()
		n.DerivedFromIDs = strs()
		n.SourceURL = r.str()
		n.Frontmatter = r.frontmatter()
		n.FrontmatterError = r.str()
		n.Headings = headings.take(r, r.count(), func(h *Heading) {
			h.Level, h.Title, h.ID, h.Line = r.int(), r.str(), r.str(), r.int()
		})
		n.Links = links.take(r, r.count(), func(l *Link) {
			flags := r.uint()
			l.Embed = flags&linkEmbed != 0
			switch flags >> 1 {
			case linkWikilink:
				l.Kind = KindWikilink
			case linkMarkdown:
				l.Kind = KindMarkdown
			case linkOther:
				l.Kind = r.str()
			default:
				r.fail("bad link flags")
			}
			l.Target, l.Key, l.Heading, l.Block, l.Display, l.Line = r.str(), r.str(), r.str(), r.str(), r.str(), r.int()
		})
		n.Blocks = blocks.take(r, r.count(), func(b *Block) { b.ID, b.Line = r.str(), r.int() })
		n.Directives = directives.take(r, r.count(), func(d *Directive) {
			d.Line, d.Title, d.Body, d.Done = r.int(), r.str(), r.str(), r.bool()
		})
		n.Mentions = mentions.take(r, r.count(), func(m *Mention) { m.Handle, m.Line, m.Context = r.str(), r.int(), r.str() })
		n.Size = r.int64()
		n.Modified = r.time()
		n.Hash = r.str()
		n.ETag = r.str()
		if r.err != nil {
			return nil, fmt.Errorf("vault: read snapshot note %d: %w", i, r.err)
		}
		if n.Path == "" {
			return nil, fmt.Errorf("vault: snapshot note %d has no path", i)
		}
		n.Path = norm.NFC.String(n.Path)
	}
	s.Attachments = make([]Attachment, 0, nAtts)
	for i := range nAtts {
		a := Attachment{Path: r.str(), Size: r.int64(), Modified: r.time(), MimeType: r.str()}
		if r.err != nil || a.Path == "" {
			return nil, fmt.Errorf("vault: corrupt snapshot attachment %d: %v", i, r.err)
		}
		a.Path = norm.NFC.String(a.Path)
		if a.MimeType == "" {
			a.MimeType = MimeTypeOf(a.Path)
		}
		s.Attachments = append(s.Attachments, a)
	}
	for i := range nProbs {
		p := Problem{Path: r.str(), Reason: r.str()}
		if r.err != nil || p.Path == "" || p.Reason == "" {
			return nil, fmt.Errorf("vault: corrupt snapshot problem %d: %v", i, r.err)
		}
		p.Path = norm.NFC.String(p.Path)
		s.Problems = append(s.Problems, p)
	}
	for i := range nRemoved {
		p := r.str()
		if r.err != nil || p == "" {
			return nil, fmt.Errorf("vault: corrupt snapshot removal %d: %v", i, r.err)
		}
		s.Removed = append(s.Removed, norm.NFC.String(p))
	}
	if r.err == nil && r.i != len(r.s) {
		return nil, errors.New("vault: snapshot has trailing data")
	}
	if r.err != nil {
		return nil, fmt.Errorf("vault: read snapshot: %w", r.err)
	}
	return s, nil
}

// isBinary reports whether plain, a decompressed segment, is in the
// binary format.
func isBinary(plain []byte) bool { return bytes.HasPrefix(plain, binMagic) }
