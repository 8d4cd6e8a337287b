package meilifake

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// maxPositions is the number of word positions Meilisearch indexes per
// attribute; later words are silently not indexed.
const maxPositions = 65535

// arrayGap separates the elements of an array attribute, so no phrase
// matches across two elements.
const arrayGap = 8

// maxQueryTerms is the number of positive query terms Meilisearch uses;
// later ones are ignored.
const maxQueryTerms = 10

// span is one word of a text: its byte range and its normalised form.
type span struct {
	start, end int
	word       string
}

// isWordRune reports whether r belongs to a word: letters, digits, marks.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// spans splits s into words: runs of letters, digits and marks, with every
// character of a script written without spaces (textindex.Unspaced) a word
// of its own (the fake's stand-in for Meilisearch's dictionary segmenters).
func spans(s string) []span {
	var out []span
	start := -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, span{start, end, normalize(s[start:end])})
			start = -1
		}
	}
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			flush(i)
		case textindex.Unspaced(r):
			flush(i)
			n := utf8.RuneLen(r)
			out = append(out, span{i, i + n, normalize(s[i : i+n])})
		case isWordRune(r):
			if start < 0 {
				start = i
			}
		default:
			flush(i)
		}
	}
	flush(len(s))
	return out
}

// words returns the normalised words of s.
func words(s string) []string {
	sp := spans(s)
	out := make([]string, len(sp))
	for i, w := range sp {
		out[i] = w.word
	}
	return out
}

// normalize lower-cases a word and strips its diacritics, as Meilisearch
// does for Latin text.
func normalize(w string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return norm.NFC.String(b.String())
}

// attrWords is one searchable attribute of a document as positioned words.
type attrWords struct {
	words []string
	pos   []int
}

// analyze positions the words of v (a string, a number, or an array of
// them), up to maxPositions.
func analyze(v any) attrWords {
	var a attrWords
	next := 0
	var add func(v any)
	add = func(v any) {
		switch x := v.(type) {
		case string:
			for _, w := range words(x) {
				if next >= maxPositions {
					return
				}
				a.words = append(a.words, w)
				a.pos = append(a.pos, next)
				next++
			}
		case float64, bool:
			add(stringOf(x))
		case []any:
			for i, e := range x {
				if i > 0 {
					next += arrayGap
				}
				add(e)
			}
		}
	}
	add(v)
	return a
}

// term is one parsed query term.
type term struct {
	words  []string
	phrase bool
	prefix bool // the last word matches as a prefix
}

// query is a parsed q: positive terms (at most maxQueryTerms) and excluded
// terms.
type query struct {
	pos, neg []term
}

// parseQuery parses q the way Meilisearch does for the features the
// adapter uses: words, "phrases", a leading '-' excluding the next word or
// phrase, and the last word of q matching as a prefix when q does not end
// with a separator.
func parseQuery(q string) query {
	var out query
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		neg := false
		if r == '-' && i+1 < len(q) && q[i+1] != ' ' {
			neg = true
			i++
			r, _ = utf8.DecodeRuneInString(q[i:])
		}
		if r == '"' {
			end := strings.IndexByte(q[i+1:], '"')
			var body string
			if end < 0 {
				body, i = q[i+1:], len(q)
			} else {
				body, i = q[i+1:i+1+end], i+2+end
			}
			if ws := words(body); len(ws) > 0 {
				t := term{words: ws, phrase: true}
				if neg {
					out.neg = append(out.neg, t)
				} else {
					out.pos = append(out.pos, t)
				}
			}
			continue
		}
		j := i
		for j < len(q) {
			r, size := utf8.DecodeRuneInString(q[j:])
			if unicode.IsSpace(r) || r == '"' {
				break
			}
			j += size
		}
		ws := words(q[i:j])
		for _, w := range ws {
			if neg {
				out.neg = append(out.neg, term{words: []string{w}})
			} else {
				out.pos = append(out.pos, term{words: []string{w}})
			}
		}
		if last, _ := utf8.DecodeLastRuneInString(q); j == len(q) && !neg && len(ws) > 0 &&
			isWordRune(last) && !textindex.Unspaced(last) {
			out.pos[len(out.pos)-1].prefix = true
		}
		i = j
	}
	if len(out.pos) > maxQueryTerms {
		out.pos = out.pos[:maxQueryTerms]
	}
	return out
}

// wordMatches reports whether document word w matches query word q.
func wordMatches(w, q string, prefix bool) bool {
	return w == q || (prefix && strings.HasPrefix(w, q))
}

// in reports whether t occurs in a: a word anywhere, a phrase as
// consecutive positions.
func (t term) in(a attrWords) bool {
	n := len(t.words)
	for i := 0; i+n <= len(a.words); i++ {
		ok := true
		for j, q := range t.words {
			prefix := t.prefix && j == n-1
			if !wordMatches(a.words[i+j], q, prefix) || a.pos[i+j] != a.pos[i]+j {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// firstAttr returns the index of the first attribute holding t, or -1.
func (t term) firstAttr(attrs []attrWords) int {
	for i, a := range attrs {
		if t.in(a) {
			return i
		}
	}
	return -1
}

// score ranks a document for q under a matching strategy: 0 when it does
// not match, else in (0, 1]. The score orders by the number of positive
// terms matched (Meilisearch's "words" rule), then by the best attribute
// the matched terms were found in ("attribute" rule). With strategy "all"
// every term must match; with "last" the terms are dropped from the end
// until the rest all match.
func (q query) score(attrs []attrWords, strategy string) float64 {
	for _, t := range q.neg {
		if t.firstAttr(attrs) >= 0 {
			return 0
		}
	}
	n := len(q.pos)
	if n == 0 {
		return 1 // placeholder search
	}
	best := len(attrs)
	matched := 0
	for _, t := range q.pos {
		a := t.firstAttr(attrs)
		if a < 0 {
			break
		}
		matched++
		best = min(best, a)
	}
	if matched == 0 || (matched < n && strategy != "last") {
		return 0
	}
	attrScore := 1 - float64(best)/float64(len(attrs)+1)
	return (float64(matched-1) + attrScore) / float64(n)
}

// crop returns about length words of text around the first word matching
// q, with marker where text was cut; the whole text when it is short.
func crop(text string, q query, length int, marker string) string {
	sp := spans(text)
	if len(sp) <= length {
		return text
	}
	hit := 0
find:
	for i, s := range sp {
		for _, t := range q.pos {
			if wordMatches(s.word, t.words[0], t.prefix && len(t.words) == 1) {
				hit = i
				break find
			}
		}
	}
	first := max(0, hit-length/3)
	last := min(len(sp), first+length)
	first = max(0, last-length)
	out := text[sp[first].start:sp[last-1].end]
	if first > 0 {
		out = marker + out
	}
	if last < len(sp) {
		out += marker
	}
	return out
}
