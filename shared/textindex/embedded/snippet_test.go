package embedded

import (
	"strings"
	"testing"

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
	a := scorePassage("alpha alpha alpha", ns)
	b := scorePassage("alpha beta", ns)
	if !b.better(a) || a.better(b) {
		t.Errorf("distinct words should win: %+v vs %+v", a, b)
	}
	if c := scorePassage(strings.Repeat("alpha ", 1000), ns); c.total != scorePassageMax {
		t.Errorf("total not capped: %+v", c)
	}
}
