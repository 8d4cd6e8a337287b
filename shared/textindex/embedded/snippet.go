package embedded

import (
	"strings"
	"unicode"
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

// fold lower-cases a token and strips its diacritics, like unicode61 with
// remove_diacritics 2.
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
	var b strings.Builder
	for _, r := range norm.NFD.String(tok) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// span is one token's byte range in a text.
type span struct{ start, end int }

// tokenSpans returns the token ranges of s, as tokens does.
func tokenSpans(s string) []span {
	var out []span
	start := -1
	for i, r := range s {
		switch {
		case textindex.Unspaced(r):
			if start >= 0 {
				out = append(out, span{start, i})
				start = -1
			}
			out = append(out, span{i, i + utf8.RuneLen(r)})
		case isTokenRune(r):
			if start < 0 {
				start = i
			}
		default:
			if start >= 0 {
				out = append(out, span{start, i})
				start = -1
			}
		}
	}
	if start >= 0 {
		out = append(out, span{start, len(s)})
	}
	return out
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

// scorePassage counts the distinct needles found in text and their
// occurrences.
func scorePassage(text string, ns []needle) score {
	if len(ns) == 0 {
		return score{}
	}
	return scoreTokens(foldedTokens(text), ns)
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
