package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// Passage sizes in bytes. A section longer than passageMax is split at
// paragraph boundaries into pieces of roughly passageMin to passageMax; a
// unit longer than unitMax (a paragraph, code block, line, sentence) is
// split further at the next finer boundary.
const (
	passageMin = 600
	passageMax = 1500
	unitMax    = 3000
)

// sectionHead is a top-level heading that starts a section.
type sectionHead struct {
	start     int // offset of the heading's first line
	level     int
	title, id string
}

// span is a byte range [s, e) of a note.
type span struct{ s, e int }

// splitPassages cuts the body src[bodyStart:] into passages: one section
// per top-level heading (the heading line included), text before the first
// heading on its own, long sections packed from paragraphs. The spans
// partition the body; whitespace-only passages are dropped. Only a line
// longer than unitMax is ever cut inside, at sentence, word or character
// boundaries, and then consecutive passages share that line.
func splitPassages(src []byte, bodyStart int, heads []sectionHead, lines lineIndex) []Passage {
	var out []Passage
	var stack []sectionHead
	emit := func(sp span) {
		s, e := trimSpan(src, sp)
		if len(bytes.TrimSpace(src[s:e])) == 0 {
			return
		}
		p := Passage{
			Ordinal:     len(out),
			HeadingPath: make([]string, len(stack)),
			StartLine:   lines.line(s),
			EndLine:     lines.line(e - 1),
			Text:        string(src[s:e]),
		}
		for i, h := range stack {
			p.HeadingPath[i] = h.title
		}
		if len(stack) > 0 {
			p.HeadingID = stack[len(stack)-1].id
		}
		sum := sha256.Sum256(src[s:e])
		p.Hash = hex.EncodeToString(sum[:])
		out = append(out, p)
	}
	start := bodyStart
	var head *sectionHead
	for i := 0; i <= len(heads); i++ {
		end := len(src)
		if i < len(heads) {
			if heads[i].start < start || heads[i].start > len(src) {
				continue // defensive: out of order
			}
			end = heads[i].start
		}
		if head != nil {
			for len(stack) > 0 && stack[len(stack)-1].level >= head.level {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, *head)
		}
		for _, sp := range chunk(src, span{start, end}) {
			emit(sp)
		}
		if i < len(heads) {
			head, start = &heads[i], end
		}
	}
	return out
}

// trimSpan drops leading blank lines and trailing white space.
func trimSpan(src []byte, sp span) (int, int) {
	s, e := sp.s, sp.e
	for s < e {
		i := s
		for i < e && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r') {
			i++
		}
		if i == e {
			return e, e
		}
		if src[i] != '\n' {
			break
		}
		s = i + 1
	}
	for e > s && (src[e-1] == ' ' || src[e-1] == '\t' || src[e-1] == '\r' || src[e-1] == '\n') {
		e--
	}
	return s, e
}

// chunk splits a section into spans that cover it exactly.
func chunk(src []byte, sp span) []span {
	if sp.e-sp.s <= passageMax {
		return []span{sp}
	}
	return pack(src, units(src, sp, levelParagraph), levelParagraph, nil)
}

// Boundaries, coarse to fine.
const (
	levelParagraph = iota // blank lines outside fenced code
	levelLine
	levelSentence
	levelWord
	levelRune
)

// pack appends to out the units grouped into spans of about passageMin to
// passageMax bytes; units longer than unitMax are split at the next level.
func pack(src []byte, us []span, level int, out []span) []span {
	cur := span{-1, -1}
	flush := func() {
		if cur.s >= 0 {
			out = append(out, cur)
			cur = span{-1, -1}
		}
	}
	for _, u := range us {
		size := u.e - u.s
		if size > unitMax && level < levelRune {
			flush()
			out = pack(src, units(src, u, level+1), level+1, out)
			continue
		}
		if cur.s >= 0 {
			have := cur.e - cur.s
			if have+size > passageMax && (have >= passageMin || have+size > unitMax) {
				flush()
			}
		}
		if cur.s < 0 {
			cur.s = u.s
		}
		cur.e = u.e
	}
	flush()
	return out
}

// units cuts sp into consecutive spans at the given level's boundaries.
func units(src []byte, sp span, level int) []span {
	var cuts []int
	switch level {
	case levelParagraph:
		var fence fenceState
		blank := false
		for off := sp.s; off < sp.e; {
			line, next := nextLine(src[:sp.e], off)
			isBlank := len(trimSpace(line)) == 0
			if blank && !isBlank && fence.char == 0 && off > sp.s {
				cuts = append(cuts, off)
			}
			if fence.char != 0 || !isBlank {
				fence.code(line)
			}
			blank = isBlank && fence.char == 0
			off = next
		}
	case levelLine:
		for i := sp.s; i < sp.e-1; i++ {
			if src[i] == '\n' {
				cuts = append(cuts, i+1)
			}
		}
	case levelSentence, levelWord:
		for i := sp.s; i < sp.e; {
			r, size := utf8.DecodeRune(src[i:sp.e])
			i += size
			var cut bool
			if level == levelSentence {
				cut = r == '。' || r == '！' || r == '？' ||
					((r == '.' || r == '!' || r == '?') && i < sp.e && isSpaceByte(src[i]))
			} else {
				cut = isSpaceByte(src[i-1]) && i < sp.e && !isSpaceByte(src[i])
			}
			if cut {
				for i < sp.e && isSpaceByte(src[i]) {
					i++
				}
				if i < sp.e {
					cuts = append(cuts, i)
				}
			}
		}
	default: // levelRune
		for i := sp.s + passageMax; i < sp.e; i += passageMax {
			for i < sp.e && !utf8.RuneStart(src[i]) {
				i++
			}
			if i < sp.e {
				cuts = append(cuts, i)
			}
		}
	}
	out := make([]span, 0, len(cuts)+1)
	prev := sp.s
	for _, c := range cuts {
		if c > prev {
			out = append(out, span{prev, c})
			prev = c
		}
	}
	return append(out, span{prev, sp.e})
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpaceByte(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpaceByte(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
