package embedded

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

func TestExcerpt(t *testing.T) {
	ns := needles(textindex.ParseQuery("needle"))
	long := strings.Repeat("hay ", 100) + "the NEEDLE is here " + strings.Repeat("straw ", 100)
	got := excerpt(long, ns)
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "the NEEDLE is here") {
		t.Errorf("excerpt = %q", got)
	}
	if n := len(strings.Fields(got)); n < snippetTokens-1 || n > snippetTokens+1 {
		t.Errorf("excerpt has %d words, want about %d", n, snippetTokens)
	}
	// No match: the start of the text, cut at the end only.
	got = excerpt("## Title\n\nshort   text\nhere.", ns)
	if got != "## Title short text here." {
		t.Errorf("short excerpt = %q", got)
	}
	// A match near the start keeps the start.
	got = excerpt("a needle "+strings.Repeat("x ", 100), ns)
	if !strings.HasPrefix(got, "a needle") || !strings.HasSuffix(got, "…") {
		t.Errorf("early excerpt = %q", got)
	}
	// Diacritics and case fold; prefixes match.
	got = excerpt(strings.Repeat("word ", 50)+"Crème brûlée", needles(textindex.ParseQuery("creme brul")))
	if !strings.Contains(got, "Crème brûlée") {
		t.Errorf("folded excerpt = %q", got)
	}
	// Japanese: every character is a token.
	got = excerpt(strings.Repeat("あ", 100)+"浅草の寺", needles(textindex.ParseQuery("浅草")))
	if !strings.Contains(got, "浅草") {
		t.Errorf("Japanese excerpt = %q", got)
	}
	if got := excerpt("", ns); got != "" {
		t.Errorf("empty excerpt = %q", got)
	}
	if got := excerpt("\xff\xfe ok", ns); got != "\xff\xfe ok" && !strings.Contains(got, "ok") {
		t.Errorf("invalid UTF-8 excerpt = %q", got)
	}
}

func TestScorePassage(t *testing.T) {
	ns := needles(textindex.ParseQuery("alpha beta"))
	a := scorePassage(ns, "alpha alpha alpha")
	b := scorePassage(ns, "alpha beta")
	if !b.better(a) || a.better(b) {
		t.Errorf("distinct words should win: %+v vs %+v", a, b)
	}
	if c := scorePassage(ns, strings.Repeat("alpha ", 1000)); c.total != scorePassageMax {
		t.Errorf("total not capped: %+v", c)
	}
}

// spansByRune is tokenSpans as it was before tokenScan: every rune through
// the Unicode tables. The fast path must split every text the same way.
func spansByRune(s string) []span {
	var out []span
	start := -1
	for i, r := range s {
		switch {
		case textindex.Unspaced(r) && isTokenRune(r):
			if start >= 0 {
				out = append(out, span{start, i})
				start = -1
			}
			out = append(out, span{i, i + utf8.RuneLen(r)})
		case isTokenRune(r) && (start >= 0 || !isDiacritic(r)):
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

// TestTokenScanSplitsAsBefore checks tokenScan (tokenSpans, foldedTokens,
// scorePassage) against the rune-by-rune split on texts mixing ASCII,
// accents, unspaced scripts, marks, symbols and invalid UTF-8.
func TestTokenScanSplitsAsBefore(t *testing.T) {
	pieces := []string{"a", "Z", "0", "9", " ", "_", "-", "#", "\n", "é", "É", "ß", "İ", "ǅ", "浅", "草", "の", "ก", "\u0301", "½", "²", "١", "€", "\xff", "\xe2\x82", "Note", "NOTES", "project", "Projéct", "\U000F0000"}
	ns := needles(textindex.ParseQuery("note proj é 草 ß"))
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		var b strings.Builder
		for range rng.Intn(12) {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		s := b.String()
		want := spansByRune(s)
		if got := tokenSpans(s); !slices.Equal(got, want) {
			t.Fatalf("tokenSpans(%q) = %v, want %v", s, got, want)
		}
		var folded []string
		for _, sp := range want {
			folded = append(folded, fold(s[sp.start:sp.end]))
		}
		if got := foldedTokens(s); !slices.Equal(got, folded) {
			t.Fatalf("foldedTokens(%q) = %q, want %q", s, got, folded)
		}
		half := len(s) / 2
		toks := append(append(foldedTokens(s[:half]), ""), foldedTokens(s[half:])...)
		if got, want := scorePassage(ns, s[:half], s[half:]), scoreTokens(toks, ns); got != want {
			t.Fatalf("scorePassage(%q, %q) = %+v, want %+v", s[:half], s[half:], got, want)
		}
	}
}
