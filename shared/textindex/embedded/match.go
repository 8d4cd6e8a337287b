package embedded

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// cleanText prepares text for the index and for queries alike: invalid
// UTF-8 becomes a space, the text is NFC-normalised, and every character of a
// script written without spaces (textindex.Unspaced) is surrounded by
// spaces, so the unicode61 tokenizer indexes such scripts one character per
// token (unigrams) instead of one giant token per run.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, " ")
	s = norm.NFC.String(s)
	return segment(s)
}

// segment surrounds every unspaced-script character with spaces.
func segment(s string) string {
	first := strings.IndexFunc(s, textindex.Unspaced)
	if first < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	b.WriteString(s[:first])
	for _, r := range s[first:] {
		if textindex.Unspaced(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isTokenRune reports whether r is part of a token for the unicode61
// tokenizer: categories L*, N* and Co, and the combining diacritics that
// remove_diacritics drops (foldRune gives 0: "q\u0302" is one token, "q").
// Other marks split tokens; NFC leaves few of either.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || isDiacritic(r)
}

// isDiacritic reports whether r is a combining diacritic the tokenizer
// keeps inside a token and folds away; it only continues a token, never
// starts one (" \u0301 " is no token).
func isDiacritic(r rune) bool {
	return 0x300 <= r && r <= 0x331 && removeDiacritic(r) == 0
}

// tokens splits text the way the index does: runs of token runes, each
// unspaced-script character a token of its own (its marks, Thai vowel
// signs and tone marks, are not token runes: the index drops them).
func tokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case textindex.Unspaced(r) && isTokenRune(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, s[i:i+utf8.RuneLen(r)])
		case isTokenRune(r) && (start >= 0 || !isDiacritic(r)):
			if start < 0 {
				start = i
			}
		default:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// termExpr is the FTS5 expression for one term: its tokens as one quoted
// string (a phrase; FTS5 string syntax, so user text can never be read as an
// operator, a column filter or NEAR), followed by '*' for a prefix term. It
// returns "" when the term has no tokens.
func termExpr(t textindex.Term) string {
	toks := tokens(strings.ToValidUTF8(norm.NFC.String(t.Text), " "))
	if len(toks) == 0 {
		return ""
	}
	s := `"` + strings.ReplaceAll(strings.Join(toks, " "), `"`, `""`) + `"`
	last, _ := utf8.DecodeRuneInString(toks[len(toks)-1])
	// A unigram of an unspaced script is a whole token: a prefix adds nothing.
	if t.Prefix && !t.Phrase && !textindex.Unspaced(last) {
		s += "*"
	}
	return s
}

// matchExpr translates q into an FTS5 MATCH expression:
// each Conj becomes `(A AND B) NOT C NOT D`, and conjunctions are joined with
// OR. Terms without tokens are dropped, and so is a Conj left without
// positive terms. It returns "" when q can match nothing.
func matchExpr(q textindex.Query) string {
	var conjs []string
	for _, c := range q.Any {
		var all []string
		for _, t := range c.All {
			if e := termExpr(t); e != "" {
				all = append(all, e)
			}
		}
		if len(all) == 0 {
			continue
		}
		s := "(" + strings.Join(all, " AND ") + ")"
		for _, t := range c.Not {
			if e := termExpr(t); e != "" {
				s += " NOT " + e
			}
		}
		conjs = append(conjs, s)
	}
	if len(conjs) == 1 {
		return conjs[0]
	}
	for i, c := range conjs {
		conjs[i] = "(" + c + ")"
	}
	return strings.Join(conjs, " OR ")
}

// termMatch is one query term as a sequence of folded tokens, the Go
// counterpart of termExpr.
type termMatch struct {
	toks   []string
	prefix bool // the last token matches as a prefix
}

// conjMatch is one conjunction of a queryMatch.
type conjMatch struct{ all, not []termMatch }

// queryMatch evaluates a query on one passage in Go, as matchExpr's MATCH
// expression would on an FTS5 row holding the passage: it decides which
// passages of a ranked note are hits of a passage search.
type queryMatch []conjMatch

// newQueryMatch builds the matcher of q, dropping what matchExpr drops:
// terms without tokens and conjunctions left without positive terms.
func newQueryMatch(q textindex.Query) queryMatch {
	var out queryMatch
	for _, c := range q.Any {
		var cm conjMatch
		for _, t := range c.All {
			if tm, ok := newTermMatch(t); ok {
				cm.all = append(cm.all, tm)
			}
		}
		if len(cm.all) == 0 {
			continue
		}
		for _, t := range c.Not {
			if tm, ok := newTermMatch(t); ok {
				cm.not = append(cm.not, tm)
			}
		}
		out = append(out, cm)
	}
	return out
}

func newTermMatch(t textindex.Term) (termMatch, bool) {
	toks := tokens(strings.ToValidUTF8(norm.NFC.String(t.Text), " "))
	if len(toks) == 0 {
		return termMatch{}, false
	}
	for i, tok := range toks {
		toks[i] = fold(tok)
	}
	last, _ := utf8.DecodeRuneInString(toks[len(toks)-1])
	return termMatch{toks: toks, prefix: t.Prefix && !t.Phrase && !textindex.Unspaced(last)}, true
}

// matches reports whether the folded tokens toks satisfy the query. An empty
// token in toks separates fields: no term matches across it.
func (qm queryMatch) matches(toks []string) bool {
next:
	for _, c := range qm {
		for _, t := range c.all {
			if !t.in(toks) {
				continue next
			}
		}
		for _, t := range c.not {
			if t.in(toks) {
				continue next
			}
		}
		return true
	}
	return false
}

// in reports whether toks holds t's tokens adjacent and in order.
func (t termMatch) in(toks []string) bool {
	n := len(t.toks)
	for i := 0; i+n <= len(toks); i++ {
		if t.at(toks[i : i+n]) {
			return true
		}
	}
	return false
}

func (t termMatch) at(toks []string) bool {
	last := len(t.toks) - 1
	for j, want := range t.toks {
		if toks[j] == want {
			continue
		}
		if j == last && t.prefix && want != "" && strings.HasPrefix(toks[j], want) {
			continue
		}
		return false
	}
	return true
}

// foldedTokens returns the tokens of s, folded.
func foldedTokens(s string) []string {
	var out []string
	for sc := (tokenScan{s: s}); ; {
		start, end, ascii, ok := sc.next()
		if !ok {
			return out
		}
		if tok := s[start:end]; ascii {
			out = append(out, strings.ToLower(tok))
		} else {
			out = append(out, fold(tok))
		}
	}
}
