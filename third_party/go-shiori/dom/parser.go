package dom

import (
	"io"

	"golang.org/x/net/html"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// FastParse parses html.Node from the specified reader without caring about
// text encoding. It always assume that the input uses UTF-8 encoding.
func FastParse(r io.Reader) (*html.Node, error) {
	return html.Parse(r)
}

// Parse parses html.Node from the specified reader, which must be UTF-8.
//
// Sheaf's copy: upstream detects the charset here (gogs/chardet and
// golang.org/x/net/html/charset, which links every legacy CJK table).
// Sheaf never calls Parse (it decodes the page itself and hands
// go-readability a parsed document), so this copy only normalises.
func Parse(r io.Reader) (*html.Node, error) {
	return html.Parse(normalizeTextEncoding(r))
}

// normalizeTextEncoding convert text encoding from NFD to NFC.
// It also remove soft hyphen since apparently it's useless in web.
// See: https://web.archive.org/web/19990117011731/http://www.hut.fi/~jkorpela/shy.html
func normalizeTextEncoding(r io.Reader) io.Reader {
	fnSoftHyphen := func(r rune) bool { return r == '\u00AD' }
	softHyphenSet := runes.Predicate(fnSoftHyphen)
	transformer := transform.Chain(norm.NFD, runes.Remove(softHyphenSet), norm.NFC)
	return transform.NewReader(r, transformer)
}
