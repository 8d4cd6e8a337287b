package vault

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/text/unicode/norm"
)

// This file holds the text matching behind find_references and
// suggest_links: grep-compatible case folding, a note's plain prose, and
// whole-word name matching.

// foldTable caches foldRune for the one- and two-byte UTF-8 range (Latin,
// Greek, Cyrillic, ...), where nearly all cased text lives.
var foldTable = func() (t [0x800]rune) {
	for r := range rune(len(t)) {
		t[r] = foldSlow(r)
	}
	return t
}()

// foldRune is the case-insensitive key of r as GNU grep -i compares text in
// a UTF-8 locale: two characters match when their simple upper cases
// (towupper) are equal. So "i" matches "ı" (both upper-case to "I") but not
// "İ", "σ" matches "ς", and "ß" matches only itself. ASCII keys are
// lower-cased so that ASCII text folds byte for byte.
func foldRune(r rune) rune {
	if r >= 0 && r < rune(len(foldTable)) {
		return foldTable[r]
	}
	return foldSlow(r)
}

func foldSlow(r rune) rune {
	u := unicode.ToUpper(r)
	if 'A' <= u && u <= 'Z' {
		u += 'a' - 'A'
	}
	return u
}

// FoldCase appends the case-folded form of src to dst and returns it: every
// character replaced by its key (see foldRune), invalid UTF-8 bytes copied
// unchanged. A value and a text match case-insensitively, as `grep -iF`
// matches them, exactly when the folded value occurs in the folded text.
// Line breaks are kept, so the folded text has the same lines.
func FoldCase(dst, src []byte) []byte {
	dst = slices.Grow(dst, len(src))
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, c)
		} else {
			dst = utf8.AppendRune(dst, foldRune(r))
		}
		i += size
	}
	return dst
}

// FoldCaseMap is FoldCase that also returns, for every byte of the folded
// text and one past its end, the offset in src it came from.
func FoldCaseMap(src []byte) (folded []byte, from []int) {
	folded = make([]byte, 0, len(src))
	from = make([]int, 0, len(src)+1)
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		n := len(folded)
		if r == utf8.RuneError && size == 1 {
			folded = append(folded, src[i])
		} else {
			folded = utf8.AppendRune(folded, foldRune(r))
		}
		for range len(folded) - n {
			from = append(from, i)
		}
		i += size
	}
	return folded, append(from, len(src))
}

// Prose returns the plain prose of a note, the text a reader sees: no
// frontmatter, code (fenced, indented or inline), HTML, %%comments%%, links
// or embeds of any kind, tags, @mentions, block ids or bare URLs. Emphasis
// markup is dropped. Where something was left out, or a block ends, a line
// break separates the pieces, so no two words are glued together.
func Prose(src []byte) string {
	if !utf8.Valid(src) {
		src = []byte(strings.ToValidUTF8(string(src), "\uFFFD"))
	}
	src = bytes.TrimPrefix(src, []byte("\uFEFF"))
	bodyStart := frontmatterEnd(src)
	work := bytes.Clone(src)
	for i := bodyStart; i+1 < len(work); i++ {
		if work[i] == '\r' && work[i+1] == '\n' {
			work[i] = ' '
		}
	}
	maskComments(work, bodyStart)
	limitNesting(work, bodyStart)
	p := plainParser
	if bodyStart > 0 {
		p = mdParser
	}
	doc := p.Parse(text.NewReader(work))

	var b strings.Builder
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			if n.Type() == ast.TypeBlock {
				b.WriteByte('\n')
			}
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			v := n.Segment.Value(work)
			if bytes.IndexByte(v, '\\') >= 0 || bytes.IndexByte(v, '&') >= 0 {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			b.Write(v)
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte('\n')
			}
		case *ast.String:
			b.Write(n.Value)
		case *ast.CodeSpan, *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock, *ast.RawHTML,
			*ast.Link, *ast.Image, *ast.AutoLink, *wikilinkNode, *tagNode, *mentionNode, *blockIDNode:
			b.WriteByte('\n')
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return blankURLs(strings.ReplaceAll(b.String(), "\x00", " "))
}

// blankURLs replaces every whitespace-separated word that contains "://"
// or starts with "www." by spaces.
func blankURLs(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(strings.ToLower(s), "www.") {
		return s
	}
	b := []byte(s)
	for i := 0; i < len(b); {
		if isSpaceByte(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && !isSpaceByte(b[j]) {
			j++
		}
		w := b[i:j]
		if bytes.Contains(w, []byte("://")) || (len(w) >= 4 && strings.EqualFold(string(w[:4]), "www.")) {
			fillBytes(w, ' ')
		}
		i = j
	}
	return string(b)
}

// NameMatcher finds note names in prose: case-insensitively (see FoldCase,
// after NFC), as whole words (a name that starts or ends with a letter,
// digit or mark must not touch another one there), and where matches
// overlap, the longest wins. Names without any letter or digit are never
// found.
type NameMatcher struct {
	names   []string         // folded, NFC
	byFirst map[string][]int // a name's first word -> indices into names
	offset  []int            // byte offset of that first word in the name
}

// NewNameMatcher prepares names for Count.
func NewNameMatcher(names []string) *NameMatcher {
	m := &NameMatcher{byFirst: map[string][]int{}}
	for i, name := range names {
		f := foldString(name)
		m.names = append(m.names, f)
		start, end := firstWord(f, 0)
		m.offset = append(m.offset, start)
		if start < end {
			w := f[start:end]
			m.byFirst[w] = append(m.byFirst[w], i)
		}
	}
	return m
}

// Count returns how many times each name occurs in prose, by index.
func (m *NameMatcher) Count(prose string) []int {
	counts := make([]int, len(m.names))
	p := foldString(prose)
	type match struct{ start, end, name int }
	var found []match
	for at := 0; ; {
		start, end := firstWord(p, at)
		if start == end {
			break
		}
		at = end
		for _, i := range m.byFirst[p[start:end]] {
			name := m.names[i]
			s := start - m.offset[i]
			if s < 0 || !strings.HasPrefix(p[s:], name) {
				continue
			}
			e := s + len(name)
			if r, _ := utf8.DecodeRuneInString(name); isWordRune(r) && s > 0 {
				if before, _ := utf8.DecodeLastRuneInString(p[:s]); isWordRune(before) {
					continue
				}
			}
			if r, _ := utf8.DecodeLastRuneInString(name); isWordRune(r) {
				if after, _ := utf8.DecodeRuneInString(p[e:]); e < len(p) && isWordRune(after) {
					continue
				}
			}
			found = append(found, match{s, e, i})
		}
	}
	slices.SortFunc(found, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return (b.end - b.start) - (a.end - a.start)
	})
	end := 0
	for _, f := range found {
		if f.start >= end {
			counts[f.name]++
			end = f.end
		}
	}
	return counts
}

// foldString is the NFC, case-folded form of s.
func foldString(s string) string {
	return string(FoldCase(nil, []byte(norm.NFC.String(s))))
}

// firstWord returns the bounds of the first run of word characters in s at
// or after offset from; start == end when there is none.
func firstWord(s string, from int) (start, end int) {
	start = len(s)
	for i, r := range s[from:] {
		if isWordRune(r) {
			start = from + i
			break
		}
	}
	end = start
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		if !isWordRune(r) {
			break
		}
		end += size
	}
	return start, end
}
