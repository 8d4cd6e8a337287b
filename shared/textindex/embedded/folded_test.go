package embedded

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// tokenFreq is termFreqs the slow way, token by token, as Ask measured
// before folded: the reference folded.freq must agree with.
func tokenFreq(t askTerm, toks []string) int {
	n := 0
	prev := ""
	for _, tok := range toks {
		if t.matchesAt(tok, prev) {
			n++
		}
		prev = tok
	}
	return n
}

// foldedFields is foldTerms the slow way: every whitespace-separated
// token folded, the empty ones dropped.
func foldedFields(s string) []string {
	var out []string
	for _, tok := range strings.Fields(s) {
		if tok = fold(tok); tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

func TestFolded(t *testing.T) {
	for _, tt := range []struct {
		stems string
		terms []string
		same  bool // already folded: kept as it is, without a copy
		alts  [][]string
		freq  int
	}{
		{stems: "gutter feaplom start gutter", terms: []string{"gutter", "feaplom", "start", "gutter"}, same: true, alts: [][]string{{"gutter"}}, freq: 2},
		{stems: "gutters gutter", terms: []string{"gutters", "gutter"}, same: true, alts: [][]string{{"gutter"}}, freq: 1},
		{stems: "a a a", terms: []string{"a", "a", "a"}, same: true, alts: [][]string{{"a", "a"}}, freq: 2},
		{stems: "Café  LÉGUME\tx", terms: []string{"cafe", "legume", "x"}, alts: [][]string{{"legume"}}, freq: 1},
		{stems: " leading trailing ", terms: []string{"leading", "trailing"}, alts: [][]string{{"trailing"}}, freq: 1},
		{stems: "straße грядка", terms: []string{"straße", "грядка"}, same: true, alts: [][]string{{"грядка"}}, freq: 1},
		{stems: "été pres", terms: []string{"ete", "pres"}, alts: [][]string{{"ete"}}, freq: 1},
		{stems: "東京 都", terms: []string{"東京", "都"}, same: true, alts: [][]string{{"東京", "都"}, {"都"}}, freq: 1},
		{stems: "x y z", terms: []string{"x", "y", "z"}, same: true, alts: [][]string{{"x", "y", "z"}}, freq: 0},
		{stems: "", terms: nil, same: true, alts: [][]string{{"x"}}, freq: 0},
	} {
		f := foldTerms(tt.stems)
		if got := slices.Collect(f.terms()); !slices.Equal(got, tt.terms) {
			t.Errorf("foldTerms(%q) = %q, want %q", tt.stems, got, tt.terms)
		}
		if f.size() != len(tt.terms) {
			t.Errorf("foldTerms(%q).size() = %d, want %d", tt.stems, f.size(), len(tt.terms))
		}
		if same := string(f) == tt.stems; same != tt.same {
			t.Errorf("foldTerms(%q) unchanged: %v, want %v", tt.stems, same, tt.same)
		}
		if allocs := testing.AllocsPerRun(10, func() { foldTerms(tt.stems) }); tt.same && allocs != 0 {
			t.Errorf("foldTerms(%q) allocates %.0f times, for stems already folded", tt.stems, allocs)
		}
		term := askTerm{alts: tt.alts}
		if got := f.freq(term); got != tt.freq {
			t.Errorf("freq of %q in %q = %d, want %d", tt.alts, tt.stems, got, tt.freq)
		}
		if got := tokenFreq(term, tt.terms); got != tt.freq {
			t.Errorf("the token loop finds %q in %q %d times, want %d", tt.alts, tt.stems, got, tt.freq)
		}
	}
}

// FuzzFolded: foldTerms keeps the folded tokens strings.Fields would give,
// and freq counts what the token-by-token loop counts, for any text and
// any alternatives of one or two of its tokens.
func FuzzFolded(f *testing.F) {
	f.Add("gutter feaplom start gutter", "gutter", "", "start")
	f.Add("a a a a", "a", "a", "a")
	f.Add("Café  LÉGUME\tx é", "legume", "x", "cafe")
	f.Add("東京 都 東京", "東京", "都", "都")
	f.Add("straße грядка\u00a0x", "straße", "грядка", "x")
	f.Add("nước été", "nuoc", "ete", "nước")
	f.Fuzz(func(t *testing.T, stems, a, b, c string) {
		f := foldTerms(stems)
		want := foldedFields(stems)
		if got := slices.Collect(f.terms()); !slices.Equal(got, want) {
			t.Fatalf("foldTerms(%q) = %q, want %q", stems, got, want)
		}
		if f.size() != len(want) {
			t.Fatalf("size %d, want %d", f.size(), len(want))
		}
		if string(f) != strings.Join(want, " ") {
			t.Fatalf("foldTerms(%q) = %q, want its terms one space apart", stems, f)
		}
		// Alternatives as askTerms makes them: folded tokens, not empty.
		var alts [][]string
		for _, alt := range [][]string{{a}, {a, b}, {c}} {
			ok := true
			for i := range alt {
				alt[i] = fold(alt[i])
				ok = ok && alt[i] != "" && !strings.ContainsFunc(alt[i], func(r rune) bool { return strings.ContainsRune(" \t\n\v\f\r\u0085\u00a0", r) })
			}
			if ok {
				alts = append(alts, alt)
			}
		}
		for i := range alts {
			for _, term := range []askTerm{{alts: alts[i : i+1]}, {alts: alts[:i+1]}} {
				if got, want := f.freq(term), tokenFreq(term, want); got != want {
					t.Fatalf("freq of %q in %q = %d, the token loop says %d", term.alts, f, got, want)
				}
			}
		}
	})
}

// FuzzFold: fold, with its shortcuts for words already folded, folds as
// the plain rule does: decompose, drop the marks, lower-case.
func FuzzFold(f *testing.F) {
	for _, s := range []string{"gutter", "Café", "straße", "грядка", "ΚΑΛΟΚΑΊΡΙ", "nước", "東京", "e\u0301", "\xff\xfe", "ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		var b strings.Builder
		for _, r := range norm.NFD.String(tok) {
			if !unicode.Is(unicode.Mn, r) {
				b.WriteRune(unicode.ToLower(r))
			}
		}
		want := b.String()
		if isASCII(tok) {
			want = strings.ToLower(tok)
		}
		if got := fold(tok); got != want {
			t.Fatalf("fold(%q) = %q, want %q", tok, got, want)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
