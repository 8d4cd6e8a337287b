package embedded

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// Snippets are plain text: about snippetTokens tokens of the best passage
// around the first token that matches the query, whitespace collapsed, with
// "…" where the passage was cut. They carry no highlight markup, so callers
// can show them as they are.
const (
	snippetTokens = 30
	snippetBefore = 8       // tokens kept before the first match
	snippetScan   = 1 << 18 // bytes of a passage searched for a match
)

// needle is one query token, folded, that a snippet looks for.
type needle struct {
	tok    string
	prefix bool
}

// needles returns the folded tokens of q's positive terms; the last token of
// a prefix term matches as a prefix.
func needles(q textindex.Query) []needle {
	var out []needle
	for _, c := range q.Any {
		for _, t := range c.All {
			toks := tokens(strings.ToValidUTF8(norm.NFC.String(t.Text), " "))
			for i, tok := range toks {
				out = append(out, needle{tok: fold(tok), prefix: t.Prefix && i == len(toks)-1})
			}
		}
	}
	return out
}

// fold folds a token as the index's tokenizer does (foldRune: lower case,
// Latin diacritics removed; other scripts keep their marks).
func fold(tok string) string {
	ascii := true
	for i := 0; i < len(tok); i++ {
		if tok[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(tok)
	}
	if folds(tok) {
		return tok
	}
	var b strings.Builder
	b.Grow(len(tok))
	for _, r := range tok {
		if r = foldRune(r); r != 0 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// folds reports whether fold keeps tok as it is: valid UTF-8 of runes
// foldRune keeps. Words without capitals or Latin accents are, in every
// script.
func folds(tok string) bool {
	if !utf8.ValidString(tok) {
		return false
	}
	for _, r := range tok {
		if foldRune(r) != r {
			return false
		}
	}
	return true
}

// span is one token's byte range in a text.
type span struct{ start, end int }

// tokenSpans returns the token ranges of s, as tokens does.
func tokenSpans(s string) []span {
	var out []span
	for sc := (tokenScan{s: s}); ; {
		start, end, _, ok := sc.next()
		if !ok {
			return out
		}
		out = append(out, span{start, end})
	}
}

// asciiToken marks the ASCII bytes that are token runes (letters and
// digits): isTokenRune without the Unicode tables for the common case.
var asciiToken = func() (t [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		t[c] = isTokenRune(rune(c))
	}
	return t
}()

// tokenScan walks the tokens of s one by one, split as tokens splits them,
// without allocating.
type tokenScan struct {
	s string
	i int // where the next token is looked for
}

// next returns the byte range of the next token, whether it is all ASCII,
// and false at the end of s.
func (t *tokenScan) next() (start, end int, ascii, ok bool) {
	s := t.s
	start, ascii = -1, true
	for t.i < len(s) {
		i := t.i
		if c := s[i]; c < utf8.RuneSelf {
			t.i++
			if asciiToken[c] {
				if start < 0 {
					start = i
				}
			} else if start >= 0 {
				return start, i, ascii, true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case textindex.Unspaced(r) && isTokenRune(r): // a token of its own (a Thai vowel sign is not: a mark)
			if start >= 0 {
				return start, i, ascii, true // the rune is the next token
			}
			t.i += size
			return i, i + size, false, true
		case isTokenRune(r) && (start >= 0 || !isDiacritic(r)):
			t.i += size
			if start < 0 {
				start = i
			}
			ascii = false
		default:
			t.i += size
			if start >= 0 {
				return start, i, ascii, true
			}
		}
	}
	if start >= 0 {
		return start, len(s), ascii, true
	}
	return 0, 0, false, false
}

// matchesNeedle reports whether token tok (of the text, not folded; ascii
// when it is all ASCII) matches n, as fold(tok) == n.tok or, for a prefix
// needle, strings.HasPrefix(fold(tok), n.tok). An ASCII token is compared
// in place, without folding it into a new string.
func matchesNeedle(tok string, ascii bool, n needle) bool {
	if !ascii {
		f := fold(tok)
		return f == n.tok || (n.prefix && n.tok != "" && strings.HasPrefix(f, n.tok))
	}
	switch {
	case len(tok) == len(n.tok):
		return asciiFoldEqual(tok, n.tok)
	case len(tok) > len(n.tok) && n.prefix && n.tok != "":
		return asciiFoldEqual(tok[:len(n.tok)], n.tok)
	}
	return false
}

// asciiFoldEqual reports whether strings.ToLower(tok) == want for an ASCII
// tok of want's length.
func asciiFoldEqual(tok, want string) bool {
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

// excerpt returns about snippetTokens tokens of text around the first token
// matching one of ns, or from the start of text when none matches.
func excerpt(text string, ns []needle) string {
	if len(text) > snippetScan {
		text = text[:snippetScan]
		text = strings.ToValidUTF8(text, "") // do not end inside a rune
	}
	spans := tokenSpans(text)
	if len(spans) == 0 {
		return collapse(text, 0, len(text), false, false)
	}
	hit := 0
search:
	for i, sp := range spans {
		f := fold(text[sp.start:sp.end])
		for _, n := range ns {
			if f == n.tok || (n.prefix && strings.HasPrefix(f, n.tok)) {
				hit = i
				break search
			}
		}
	}
	first := max(0, hit-snippetBefore)
	last := min(len(spans), first+snippetTokens) // exclusive
	if last-first < snippetTokens {
		first = max(0, last-snippetTokens)
	}
	start, end := spans[first].start, spans[last-1].end
	if first == 0 {
		start = 0
	}
	if last == len(spans) {
		end = len(text)
	}
	return collapse(text, start, end, first > 0, last < len(spans))
}

// collapse returns text[start:end] with runs of white space collapsed to one
// space and "…" added where the text was cut.
func collapse(text string, start, end int, cutBefore, cutAfter bool) string {
	s := strings.Join(strings.Fields(text[start:end]), " ")
	if cutBefore {
		s = "…" + s
	}
	if cutAfter {
		s += "…"
	}
	return s
}

// score ranks passages for bestPassage.
type score struct{ distinct, total int }

func (s score) better(o score) bool {
	return s.distinct > o.distinct || (s.distinct == o.distinct && s.total > o.total)
}

// scorePassageMax caps the occurrences counted, so one word repeated
// endlessly does not beat a passage with more of the query's words.
const scorePassageMax = 64

// scorePassage counts the distinct needles found in texts (a passage's
// heading path and its text) and their occurrences. It reads the tokens in
// place: scoring every passage of every hit is most of what a search does
// after ranking.
func scorePassage(ns []needle, texts ...string) score {
	var s score
	if len(ns) == 0 {
		return s
	}
	var buf [8]bool
	found := buf[:min(len(ns), len(buf))]
	if len(ns) > len(buf) {
		found = make([]bool, len(ns))
	}
	for _, text := range texts {
		for sc := (tokenScan{s: text}); ; {
			start, end, ascii, ok := sc.next()
			if !ok {
				break
			}
			tok := text[start:end]
			for i, n := range ns {
				if matchesNeedle(tok, ascii, n) {
					if !found[i] {
						found[i] = true
						s.distinct++
					}
					s.total = min(s.total+1, scorePassageMax)
				}
			}
		}
	}
	return s
}

// scoreTokens is scorePassage over folded tokens.
func scoreTokens(toks []string, ns []needle) score {
	var s score
	if len(ns) == 0 {
		return s
	}
	found := make([]bool, len(ns))
	for _, f := range toks {
		if f == "" { // a field separator
			continue
		}
		for i, n := range ns {
			if f == n.tok || (n.prefix && n.tok != "" && strings.HasPrefix(f, n.tok)) {
				if !found[i] {
					found[i] = true
					s.distinct++
				}
				s.total = min(s.total+1, scorePassageMax)
			}
		}
	}
	return s
}
