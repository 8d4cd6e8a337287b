package embedded

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
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

// goTerms are the index terms Go computes for a text as the index
// cleans it: its tokens, folded (an empty one would be a term FTS5 never
// writes: it is kept, to fail the comparison).
func goTerms(s string) []string {
	var out []string
	for _, tok := range tokens(cleanText(s)) {
		out = append(out, fold(tok))
	}
	return out
}

// fts5Terms returns a function giving the terms FTS5's tokenizer writes
// for a text (cleaned as the index cleans it), read back with fts5vocab;
// it reports failures to the t it is given.
func fts5Terms(tb testing.TB) func(testing.TB, string) []string {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	for _, q := range []string{
		`CREATE VIRTUAL TABLE t USING fts5(x, ` + tokenizer + `)`,
		`CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')`,
	} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
	return func(t testing.TB, s string) []string {
		t.Helper()
		if _, err := db.Exec(`DELETE FROM t`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO t(x) VALUES(?)`, cleanText(s)); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query(`SELECT term FROM v ORDER BY offset`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var term string
			if err := rows.Scan(&term); err != nil {
				t.Fatal(err)
			}
			out = append(out, term)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// foldSamples are words of many scripts, as notes and questions hold them.
var foldSamples = []string{"gutter", "Café crème brûlée", "straße STRASSE", "грядка йогурт ЁЛКА", "ΚΑΛΟΚΑΊΡΙ Ελληνικές ϑ ς", "nước Việt",
	"東京タワー", "김치찌개 두부", "がぎぐげご パン", "الإسكندرية مَكْتَبَة", "שָׁלוֹם", "हिन्दी", "ภาษาไทย", "İstanbul ıslak DİYARBAKIR",
	"ﬁnance ｚｅｂｒａ", "𐐀𐐨", "ǅemal Ǆ", "q\u0302 e\u0301 0\u030200", "Ԭ", "\xff\xfe", "Øresund Łódź", "มะม่วง น้ำ", "alpha \u0301 beta", "\u0301x"}

// TestFoldMatchesFTS5: the index terms Go computes for a text (tokens,
// then fold) are the ones FTS5's tokenizer writes for it. A question's
// words and a passage's stems must fold as the index did, or they match
// nothing: Hangul, й and が were once folded further than FTS5 folds them,
// and a question in Korean found no note.
func TestFoldMatchesFTS5(t *testing.T) {
	terms := fts5Terms(t)
	for _, s := range foldSamples {
		if got, want := terms(t, s), goTerms(s); !slices.Equal(got, want) {
			t.Errorf("%q: FTS5 indexes %q, Go folds %q", s, got, want)
		}
	}
}

// FuzzFold: each token Go cuts folds as FTS5 folds it. Token by token:
// SQLite's Unicode tables are older than Go's, and a code point assigned
// since (a punctuation mark) may be a word character there; that drift in
// where words end is not fold's to mend.
func FuzzFold(f *testing.F) {
	for _, s := range foldSamples {
		f.Add(s)
	}
	terms := fts5Terms(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range tokens(cleanText(s)) {
			want := goTerms(tok)
			if got := terms(t, tok); !slices.Equal(got, want) {
				t.Fatalf("%q: FTS5 indexes %q, Go folds %q", tok, got, want)
			}
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

// TestAskScripts: the question lane finds a note by a word of a script
// whose letters decompose (Hangul, й, ί, が, إ), as plain search does.
func TestAskScripts(t *testing.T) {
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	docs := []textindex.Doc{
		{Path: "korean.md", Title: "한국어 메모", Body: "김치찌개 두부"},
		{Path: "ru.md", Title: "Русский", Body: "чай и йогурт"},
		{Path: "el.md", Title: "Ελληνικές σημειώσεις", Body: "Θεσσαλονίκη λευκός πύργος."},
		{Path: "ja.md", Title: "日本語", Body: "がぎぐげご パン"},
		{Path: "ar.md", Title: "عربي", Body: "الإسكندرية مدينة"},
		{Path: "th.md", Title: "ไทย", Body: "มะม่วง น้ำปลา"},
	}
	if err := ix.Upsert(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"김치찌개 만드는 방법은?": "korean.md", "йогурт": "ru.md", "ΣΗΜΕΙΏΣΕΙΣ": "el.md",
		"がぎぐげご": "ja.md", "الإسكندرية": "ar.md", "มะม่วง": "th.md", "한국어": "korean.md"} {
		res, err := ix.Ask(context.Background(), textindex.ParseQuestion(q), textindex.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Path != want {
			t.Errorf("Ask(%q) = %+v, want %s first", q, res.Hits, want)
		}
	}
}
