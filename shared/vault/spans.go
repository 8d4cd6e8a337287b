package vault

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// Spans say where a note's structure lies in its source bytes, for the
// editors (PatchSection, MovePlan.Rewrite, ...). Every offset is into the
// bytes given to ParseSpans, as they are: a byte-order mark and invalid
// UTF-8 are accounted for. Headings, Blocks and Links line up one to one
// with the parsed Note's Headings, Blocks and Links.
type Spans struct {
	BodyStart int // offset just past the frontmatter block; 0 without one
	Headings  []HeadingSpan
	Blocks    []BlockSpan
	Links     []LinkSpan
}

// HeadingSpan is where one heading is.
type HeadingSpan struct {
	Heading
	// Start is the offset of the heading's first line, End the offset just
	// past its last line's line ending (a setext heading's underline
	// included).
	Start, End int
	// Top reports a heading that is a direct child of the document, not
	// inside a quote or list: only those start sections.
	Top bool
	// Setext reports a heading underlined with '=' or '-'.
	Setext bool
}

// BlockSpan is the block a "^id" names: the paragraph or list item text
// that ends with it, or, for an id alone on its line, the block before it.
type BlockSpan struct {
	Block
	// Start and End delimit the block's text, from its first character to
	// the end of its last line (line ending excluded), container markers
	// ("> ", "- ") of the first line outside. Marker is the offset of the
	// " ^id" suffix (at End when the block is the one before a lone id).
	Start, End, Marker int
	// After is the offset just past the block's last line and the id's.
	After int
	// Lines reports a block of whole lines (table, list, quote, code) whose
	// id stands alone on the next line.
	Lines bool
}

// LinkSpan is where one link is. Start and End delimit the whole link
// ("![[...]]", "[text](dest)"); TargetStart and TargetEnd the target as
// written, without "#heading", "|alias", angle brackets or a title. For a
// reference link ([text][ref]) the target is in the definition line. A link
// whose target could not be located has TargetStart == -1.
type LinkSpan struct {
	Link
	Start, End             int
	TargetStart, TargetEnd int
	Angle                  bool // a Markdown destination written in <...>
	Reference              bool // the target is a reference definition's
}

// Raw returns the target as it is written in src.
func (s LinkSpan) Raw(src []byte) string {
	if s.TargetStart < 0 {
		return ""
	}
	return string(src[s.TargetStart:s.TargetEnd])
}

// ParseSpans parses a note like Parse and also returns where its headings,
// block ids and links are in src.
func ParseSpans(path string, src []byte) (p *Parsed, sp *Spans) {
	clean, om := sanitize(src)
	sp = &Spans{}
	defer func() {
		if r := recover(); r != nil {
			p, sp = Parse(path, src), &Spans{}
			p.Note.Headings, p.Note.Links, p.Note.Blocks = nil, nil, nil
		}
	}()
	p = parse(path, clean, sp)
	if om.identity() {
		return p, sp
	}
	sp.BodyStart = om.orig(sp.BodyStart)
	for i := range sp.Headings {
		h := &sp.Headings[i]
		h.Start, h.End = om.orig(h.Start), om.orig(h.End)
	}
	for i := range sp.Blocks {
		b := &sp.Blocks[i]
		b.Start, b.End, b.Marker, b.After = om.orig(b.Start), om.orig(b.End), om.orig(b.Marker), om.orig(b.After)
	}
	for i := range sp.Links {
		l := &sp.Links[i]
		l.Start, l.End = om.orig(l.Start), om.orig(l.End)
		if l.TargetStart >= 0 {
			l.TargetStart, l.TargetEnd = om.orig(l.TargetStart), om.orig(l.TargetEnd)
		}
	}
	return p, sp
}

// offsetMap maps offsets of a sanitised text back to the original bytes.
// Each checkpoint is a pair of offsets that correspond; between
// checkpoints both advance together.
type offsetMap struct {
	clean, src []int
}

func (m offsetMap) identity() bool { return len(m.clean) == 0 }

func (m offsetMap) orig(off int) int {
	// The last checkpoint at or before off.
	lo, hi := 0, len(m.clean)
	for lo < hi {
		mid := (lo + hi) / 2
		if m.clean[mid] <= off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return off
	}
	return m.src[lo-1] + off - m.clean[lo-1]
}

// sanitize returns src as Parse sees it (invalid UTF-8 runs replaced by
// U+FFFD, a leading byte-order mark dropped) and the way back.
func sanitize(src []byte) ([]byte, offsetMap) {
	var m offsetMap
	clean := src
	if !utf8.Valid(src) {
		var b bytes.Buffer
		b.Grow(len(src) + 16)
		for i := 0; i < len(src); {
			r, size := utf8.DecodeRune(src[i:])
			if r != utf8.RuneError || size != 1 {
				b.Write(src[i : i+size])
				i += size
				continue
			}
			j := i
			for j < len(src) {
				if r, size := utf8.DecodeRune(src[j:]); r != utf8.RuneError || size != 1 {
					break
				}
				j++
			}
			b.WriteString("\uFFFD")
			m.clean = append(m.clean, b.Len())
			m.src = append(m.src, j)
			i = j
		}
		clean = b.Bytes()
	}
	if bytes.HasPrefix(clean, []byte("\uFEFF")) {
		clean = clean[3:]
		for i := range m.clean {
			m.clean[i] -= 3
		}
		m.clean = append([]int{0}, m.clean...)
		m.src = append([]int{3}, m.src...)
	}
	return clean, m
}

// spanHeading records where heading n is.
func (x *extractor) spanHeading(n *ast.Heading, top bool) {
	if x.spans == nil {
		return
	}
	h := x.note.Headings[len(x.note.Headings)-1]
	first := h.Line
	last := first
	setext := n.Lines().Len() > 0 && !x.isATX(n.Pos())
	if setext {
		last = x.lines.line(n.Lines().At(n.Lines().Len()-1).Start) + 1 // the underline
	}
	x.spans.Headings = append(x.spans.Headings, HeadingSpan{
		Heading: h, Start: x.lines.start(first), End: x.lineEnd(last), Top: top, Setext: setext,
	})
}

// isATX reports whether the heading starting at pos is an ATX heading:
// one to six '#' followed by white space or the line's end. (goldmark puts
// a setext heading's position at its text, which may start with '#'.)
func (x *extractor) isATX(pos int) bool {
	if pos < 0 || pos >= len(x.work) {
		return false
	}
	n := runLen(x.work[pos:], '#')
	if n == 0 || n > 6 {
		return false
	}
	return pos+n == len(x.work) || isSpaceByte(x.work[pos+n])
}

// lineEnd is the offset just past a 1-based line's line ending.
func (x *extractor) lineEnd(line int) int {
	if line >= x.lines.count() {
		return len(x.src)
	}
	return x.lines.start(line + 1)
}

// spanBlock records the block a block id names.
func (x *extractor) spanBlock(n *blockIDNode) {
	if x.spans == nil {
		return
	}
	b := x.note.Blocks[len(x.note.Blocks)-1]
	bs := BlockSpan{Block: b, Start: -1, End: -1, Marker: -1, After: x.lineEnd(b.Line)}
	para := n.Parent()
	if lines := para.Lines(); lines.Len() > 0 {
		bs.Start = lines.At(0).Start
		bs.End = trimLineEnd(x.src, lines.At(lines.Len()-1).Stop)
		bs.Marker = n.Pos()
		for bs.Marker > bs.Start && (x.src[bs.Marker-1] == ' ' || x.src[bs.Marker-1] == '\t') {
			bs.Marker--
		}
		if bs.Marker == bs.Start {
			// A lone "^id" names the block before it (a list, table, quote
			// or code block), if any: its lines up to the id's line.
			if prev := para.PreviousSibling(); prev != nil {
				first, last := x.line(prev), b.Line-1
				for last > first && len(bytes.TrimSpace(x.lines.text(x.work, last))) == 0 {
					last--
				}
				if first <= last {
					bs.Start = x.lines.start(first)
					bs.End = trimLineEnd(x.src, x.lineEnd(last))
					bs.Marker = bs.End
					bs.Lines = true
				}
			}
		}
	}
	if bs.End >= 0 {
		bs.After = max(bs.After, x.lineEnd(x.lines.line(bs.End)))
	}
	x.spans.Blocks = append(x.spans.Blocks, bs)
}

// trimLineEnd moves an end offset back over a line ending.
func trimLineEnd(src []byte, end int) int {
	end = min(end, len(src))
	if end > 0 && src[end-1] == '\n' {
		end--
	}
	if end > 0 && src[end-1] == '\r' {
		end--
	}
	return end
}

// spanWikilink records where wikilink n and its target are.
func (x *extractor) spanWikilink(n *wikilinkNode) {
	if x.spans == nil {
		return
	}
	l := x.note.Links[len(x.note.Links)-1]
	ls := LinkSpan{Link: l, Start: n.Pos(), End: n.Pos() + n.Len, TargetStart: -1, TargetEnd: -1}
	open := 2
	if n.Embed {
		open = 3
	}
	if ls.Start >= 0 && ls.End <= len(x.src) && ls.End-ls.Start >= open+2 {
		inner := x.src[ls.Start+open : ls.End-2]
		t := inner
		if i := bytes.IndexByte(t, '|'); i >= 0 {
			t = bytes.TrimSuffix(t[:i], []byte(`\`))
		}
		if i := bytes.IndexByte(t, '#'); i >= 0 {
			t = t[:i]
		}
		s, e := 0, len(t)
		for s < e && isSpaceByte(t[s]) {
			s++
		}
		for e > s && isSpaceByte(t[e-1]) {
			e--
		}
		base := ls.Start + open
		ls.TargetStart, ls.TargetEnd = base+s, base+e
	}
	x.spans.Links = append(x.spans.Links, ls)
}

// spanMarkdownLink records where Markdown link n and its destination are.
// goldmark gives the link's start only: the destination is found after the
// first "](" (or, for a reference link, in its definition) spelling it.
func (x *extractor) spanMarkdownLink(n ast.Node, _ string) {
	if x.spans == nil {
		return
	}
	l := x.note.Links[len(x.note.Links)-1]
	ls := LinkSpan{Link: l, Start: n.Pos(), End: -1, TargetStart: -1, TargetEnd: -1}
	var dest []byte
	var ref *ast.ReferenceLink
	switch n := n.(type) {
	case *ast.Link:
		dest, ref = n.Destination, n.Reference
	case *ast.Image:
		dest, ref = n.Destination, n.Reference
	}
	if ref != nil {
		x.referenceTarget(&ls, ref, dest)
	} else if ls.Start >= 0 {
		x.inlineTarget(&ls, dest)
	}
	x.spans.Links = append(x.spans.Links, ls)
}

// inlineTarget finds "](" dest ")" after the link's start.
func (x *extractor) inlineTarget(ls *LinkSpan, dest []byte) {
	src := x.work
	limit := min(len(src), ls.Start+64<<10)
	for i := ls.Start; i < limit; {
		j := bytes.Index(src[i:limit], []byte("]("))
		if j < 0 {
			return
		}
		k := i + j + 2
		i = k
		for k < limit && (src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '\r') {
			k++
		}
		angle := k < limit && src[k] == '<'
		if angle {
			k++
		}
		if !bytes.HasPrefix(src[k:limit], dest) {
			continue
		}
		e := k + len(dest)
		if angle && (e >= limit || src[e] != '>') {
			continue
		}
		end := e
		if angle {
			end++
		}
		// The link ends at the ')' closing the destination and its title.
		if c := bytes.IndexByte(src[end:limit], ')'); c >= 0 {
			ls.End = end + c + 1
		}
		ls.Angle = angle
		ls.TargetStart, ls.TargetEnd = k, k+fragmentStart(dest)
		return
	}
}

// fragmentStart is the length of a destination's path part, before '#'.
func fragmentStart(dest []byte) int {
	if i := bytes.IndexByte(dest, '#'); i >= 0 {
		return i
	}
	return len(dest)
}

// refDefRE matches a link reference definition's opening: "[label]:".
// Compiled on first use: the bounded repetition makes a large program
// (about 20 ms and 1 MB to compile), which a server answering initialize
// should not pay for at start-up.
var refDefRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^ {0,3}\[((?:[^\]\\]|\\.){1,999})\]:[ \t]*(?:\r?\n[ \t]*)?`)
})

// referenceTarget finds the definition of a reference link's label.
func (x *extractor) referenceTarget(ls *LinkSpan, ref *ast.ReferenceLink, dest []byte) {
	ls.Reference = true
	want := foldLabel(string(ref.Value))
	src := x.work
	for _, m := range refDefRE().FindAllSubmatchIndex(src[x.spans.BodyStart:], -1) {
		base := x.spans.BodyStart
		if foldLabel(string(src[base+m[2]:base+m[3]])) != want {
			continue
		}
		k := base + m[1]
		angle := k < len(src) && src[k] == '<'
		if angle {
			k++
		}
		if !bytes.HasPrefix(src[k:], dest) {
			continue
		}
		ls.Angle = angle
		ls.TargetStart, ls.TargetEnd = k, k+fragmentStart(dest)
		return
	}
}

// foldLabel is CommonMark's label matching: case-folded, white space collapsed.
func foldLabel(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}
