package embedded

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// folded is a text's index terms, each folded as FTS5 folds them (fold),
// one space between each: the form Ask measures a note in. Kept as one
// string rather than a slice of terms, a note costs no allocation per term
// to read and holds no pointer per term for the collector to scan.
type folded string

// foldTerms folds the whitespace-separated index terms of stems. Stems
// already folded (the index writes one space between terms; words without
// accents, in every script, fold to themselves) are kept as they are,
// without a copy; a passage with an accented word is copied. A term that
// folds to nothing (a lone combining mark, which the index never writes:
// its tokenizer splits words at marks) is dropped.
func foldTerms(stems string) folded {
	if isFolded(stems) {
		return folded(stems)
	}
	var b strings.Builder
	b.Grow(len(stems))
	for tok := range strings.FieldsSeq(stems) {
		tok = fold(tok)
		if tok == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tok)
	}
	return folded(b.String())
}

// isFolded reports whether s is terms fold keeps as they are, one space
// between each and none around them. ASCII control characters send s to
// the copy as well, though fold keeps them: a shortcut need not be exact
// on what it refuses.
func isFolded(s string) bool {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ':
			if i == 0 || i == len(s)-1 || s[i-1] == ' ' {
				return false
			}
			i++
		case c < utf8.RuneSelf:
			if c < ' ' || c == 0x7f || ('A' <= c && c <= 'Z') {
				return false
			}
			i++
		default: // a term beyond ASCII, checked whole
			start := strings.LastIndexByte(s[:i], ' ') + 1
			end := strings.IndexByte(s[i:], ' ')
			if end < 0 {
				end = len(s)
			} else {
				end += i
			}
			if tok := s[start:end]; !folds(tok) || strings.ContainsFunc(tok, unicode.IsSpace) {
				return false
			}
			i = end
		}
	}
	return true
}

// size is the number of terms in f.
func (f folded) size() int {
	if f == "" {
		return 0
	}
	return strings.Count(string(f), " ") + 1
}

// terms yields f's terms in order.
func (f folded) terms() iter.Seq[string] {
	return func(yield func(string) bool) {
		s := string(f)
		for s != "" {
			tok, rest, _ := strings.Cut(s, " ")
			if !yield(tok) {
				return
			}
			s = rest
		}
	}
}

// ends yields the end offset of every occurrence in f of alt, one term or
// two adjacent ones (an unspaced bigram), as askTerm.matchesAt finds them.
// An alternative of more terms occurs nowhere, as there.
func (f folded) ends(alt []string) iter.Seq[int] {
	return func(yield func(int) bool) {
		var needle string
		switch len(alt) {
		case 1:
			needle = alt[0]
		case 2:
			needle = alt[0] + " " + alt[1]
		default:
			return
		}
		s := string(f)
		if needle == "" {
			return
		}
		for from := 0; from < len(s); {
			i := strings.Index(s[from:], needle)
			if i < 0 {
				return
			}
			at := from + i
			end := at + len(needle)
			if (at == 0 || s[at-1] == ' ') && (end == len(s) || s[end] == ' ') {
				if !yield(end) {
					return
				}
			}
			from = at + 1
		}
	}
}

// freq is how many of f's terms end an occurrence of one of t's
// alternatives (a term ending two counts once).
func (f folded) freq(t askTerm) int {
	if len(t.alts) == 1 {
		n := 0
		for range f.ends(t.alts[0]) {
			n++
		}
		return n
	}
	var at []int
	for _, alt := range t.alts {
		for end := range f.ends(alt) {
			at = append(at, end)
		}
	}
	if len(at) < 2 {
		return len(at)
	}
	seen := make(map[int]bool, len(at))
	for _, end := range at {
		seen[end] = true
	}
	return len(seen)
}
