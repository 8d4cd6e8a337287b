package vault

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"golang.org/x/text/unicode/norm"
)

// HeadingID returns the GitHub-style anchor of a heading title: NFC and
// lower-cased, letters, marks, digits, '-' and '_' of any script kept, each
// white-space character turned into '-', all other punctuation and symbols
// (emoji included) dropped. "Étude: Ünïcode & 日本語!" becomes
// "étude-ünïcode--日本語". Duplicates within a note are numbered by the parser
// ("intro", "intro-1", "intro-2"), as on GitHub.
func HeadingID(title string) string {
	title = norm.NFC.String(strings.TrimSpace(title))
	var b strings.Builder
	b.Grow(len(title))
	for _, r := range title {
		switch {
		case r == '-' || r == '_':
			b.WriteRune(r)
		case unicode.IsSpace(r):
			b.WriteByte('-')
		case unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return norm.NFC.String(b.String())
}

// headingIDs is the goldmark parser.IDs of one note: HeadingID plus
// GitHub's "-1", "-2" suffixes for repeated anchors.
type headingIDs struct {
	used  map[string]bool
	count map[string]int // next suffix to try per slug, keeps repeats linear
}

var _ parser.IDs = (*headingIDs)(nil)

func newHeadingIDs() *headingIDs {
	return &headingIDs{used: map[string]bool{}, count: map[string]int{}}
}

// Generate implements parser.IDs: value is a heading's text.
func (ids *headingIDs) Generate(value []byte, _ ast.NodeKind) []byte {
	return []byte(ids.next(string(value)))
}

// Put implements parser.IDs: it reserves an explicit id.
func (ids *headingIDs) Put(value []byte) {
	ids.used[string(value)] = true
}

// next returns the unique anchor for a heading title.
func (ids *headingIDs) next(title string) string {
	slug := HeadingID(title)
	n := ids.count[slug]
	id := slug
	if n > 0 {
		id = slug + "-" + strconv.Itoa(n)
	}
	for ids.used[id] {
		n++
		id = slug + "-" + strconv.Itoa(n)
	}
	ids.count[slug] = n + 1
	ids.used[id] = true
	return id
}
