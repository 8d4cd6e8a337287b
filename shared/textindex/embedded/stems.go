package embedded

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// stemTokens calls fn with each index term of s for stems_fts, in order:
// its tokens as the index tokenizes them, lower-cased, without stopwords
// and one-letter Latin words, each stemmed in lang.
func stemTokens(st *textindex.Stemmer, lang textindex.Lang, s string, fn func(string)) {
	s = norm.NFC.String(strings.ToValidUTF8(s, " "))
	for _, sp := range tokenSpans(s) {
		if t, ok := stemToken(st, lang, s[sp.start:sp.end]); ok {
			fn(t)
		}
	}
}

// stemToken is the index term of one token, ok false when it is dropped.
func stemToken(st *textindex.Stemmer, lang textindex.Lang, tok string) (string, bool) {
	tok = strings.ToLower(tok)
	if r, n := utf8.DecodeRuneInString(tok); n == len(tok) && unicode.Is(unicode.Latin, r) {
		return "", false // one Latin letter
	}
	if textindex.IsStopword(tok) {
		return "", false
	}
	return st.Stem(lang, tok), true
}

// stemText is stemTokens joined by spaces: a stems_fts column.
func stemText(st *textindex.Stemmer, lang textindex.Lang, s string) string {
	var b strings.Builder
	stemTokens(st, lang, s, func(t string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	})
	return b.String()
}

// pathWords is a note path's folders and file name without its extension,
// one per line: "Projects/Garden/Irrigation.md" gives
// "Projects\nGarden\nIrrigation".
func pathWords(p string) string {
	p = strings.TrimSuffix(p, path.Ext(p))
	return strings.ReplaceAll(p, "/", "\n")
}
