package embedded

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// memIndex is an in-memory index holding docs, closed when the test ends.
func memIndex(t testing.TB, docs ...textindex.Doc) *Index {
	t.Helper()
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if err := ix.Upsert(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	return ix
}

// wordDocs are n notes of words drawn from a small vocabulary, so that
// searches match many notes, with many equal scores among them.
func wordDocs(n int, seed uint64) []textindex.Doc {
	vocab := strings.Fields("apple apricot banana berry cherry date fig grape kiwi lemon lime mango melon olive orange pear plum quince")
	rng := rand.New(rand.NewPCG(seed, 1))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	docs := make([]textindex.Doc, n)
	for i := range docs {
		docs[i] = textindex.Doc{
			Path:  fmt.Sprintf("n%03d.md", i),
			Title: words(1 + rng.IntN(3)),
			Tags:  []string{vocab[rng.IntN(len(vocab))]},
			Body:  words(rng.IntN(40)) + "\n\n## " + words(2) + "\n\n" + words(rng.IntN(60)),
		}
	}
	return docs
}

// sameRanking reports how got differs from want, FTS5's ranking: the same
// scores bit for bit in the same places, and the same notes in each run of
// equal scores (FTS5 leaves their order open; the cache sorts them by id).
func sameRanking(got, want []ranked) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d notes, FTS5 %d", len(got), len(want))
	}
	for i := 0; i < len(want); {
		j := i
		for j < len(want) && want[j].score == want[i].score {
			j++
		}
		var g, w []int64
		for k := i; k < j; k++ {
			if got[k].score != want[k].score {
				return fmt.Errorf("place %d: score %v, FTS5 %v", k, got[k].score, want[k].score)
			}
			g, w = append(g, got[k].id), append(w, want[k].id)
		}
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			return fmt.Errorf("places %d-%d (score %v): notes %v, FTS5 %v", i, j-1, want[i].score, g, w)
		}
		if !slices.IsSortedFunc(got[i:j], func(a, b ranked) int { return cmp.Compare(a.id, b.id) }) {
			return fmt.Errorf("places %d-%d: equal scores not in id order", i, j-1)
		}
		i = j
	}
	return nil
}

// rankCached is rankTerms once the search's phrases are cached.
func rankCached(t *testing.T, ix *Index, tq *termQuery, limit, offset int) ([]ranked, int) {
	t.Helper()
	for range 2 {
		out, total, ok, err := ix.rankTerms(context.Background(), &ix.terms, tq, limit, offset)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return out, total
		}
		ix.terms.searched(append(slices.Clip(tq.all), tq.not...), fillMatches) // as a costly search does
	}
	t.Fatalf("%s: never cached", tq.expr())
	return nil, 0
}

// rankedAsFTS5 ranks every note matching q (query text s) from the
// postings and checks the ranking is FTS5's: the same total, and the same
// scores and notes by sameRanking. ok is false when FTS5 refuses the
// expression.
func rankedAsFTS5(t *testing.T, ix *Index, s string, q textindex.Query, tq *termQuery) (_ []ranked, ok bool) {
	t.Helper()
	r := ranking{ix: ix, from: ` FROM notes_fts WHERE notes_fts MATCH ?`, args: []any{matchExpr(q)}}
	want, wantTotal, err := r.rankIn(context.Background(), "notes_fts", 1000, 0)
	if err != nil {
		if sqliteCode(err) == sqliteError {
			return nil, false
		}
		t.Fatal(err)
	}
	got, total := rankCached(t, ix, tq, 1000, 0)
	if total != wantTotal {
		t.Fatalf("%q: total %d, FTS5 %d", s, total, wantTotal)
	}
	if err := sameRanking(got, want); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return got, true
}

// A search ranked from the phrases' postings ranks every matching note as
// FTS5 does: the same total, the same scores bit for bit, page by page.
func TestTermRankingIsFTS5s(t *testing.T) {
	ix := memIndex(t, wordDocs(300, 1)...)
	queries := []string{
		"apple", "ap", "apple banana", "apple banana cherry", "pear plum quince kiwi",
		"apple -banana", "apple banana NOT cherry NOT date", `"apple banana"`, `"apple banana" cherry`,
		"apple OR banana", "apple OR banana OR ch", `"lime mango" OR olive`, "apple apple",
		"zebra", "apple zebra", "zebra OR apple", "appl* ban", "a b c d e f g h", "APPLE Banana",
	}
	for _, s := range queries {
		q := textindex.ParseQuery(s)
		tq := plainTerms(q)
		if tq == nil {
			t.Fatalf("%q: not ranked from postings", s)
		}
		got, ok := rankedAsFTS5(t, ix, s, q, tq)
		if !ok {
			t.Fatalf("%q: FTS5 refused the expression", s)
		}
		total := len(got)
		for _, page := range [][2]int{{10, 0}, {10, 10}, {7, 3}, {5, max(0, total-2)}, {5, total + 5}} {
			p, ptotal := rankCached(t, ix, tq, page[0], page[1])
			lo, hi := min(page[1], len(got)), min(page[1]+page[0], len(got))
			if !slices.Equal(p, got[lo:hi]) || (len(p) > 0 && ptotal != total) || (len(p) == 0 && ptotal != 0) {
				t.Fatalf("%q limit %d offset %d: %v (total %d), want %v (total %d)", s, page[0], page[1], p, ptotal, got[lo:hi], total)
			}
		}
	}
}

// The same through Search: a costly search is ranked by FTS5, the next
// from the postings it then reads, and the one after from the cache, with
// the same hits, scores and total as FTS5's ranking. A cheap one of
// several phrases is never cached; one of one phrase always is.
func TestSearchRankedFromPostings(t *testing.T) {
	ctx := context.Background()
	ix := memIndex(t, wordDocs(400, 2)...)
	for _, s := range []string{"melon", "melon olive", "melon OR olive", "melon -olive", `"melon olive"`} {
		q := textindex.ParseQuery(s)
		for _, unit := range []textindex.Unit{textindex.Notes, textindex.Passages} {
			ix.terms = termCache{}
			opts := textindex.Options{Limit: 500, Unit: unit}
			var got textindex.Result
			for i := range 3 {
				ix.ranks = rankCache{}
				res, err := ix.Search(ctx, q, opts)
				if err != nil {
					t.Fatal(err)
				}
				if i > 0 && (res.Total != got.Total || len(res.Hits) != len(got.Hits)) {
					t.Fatalf("%q %v: search %d found %d (%d hits), the one before %d (%d)", s, unit, i+1, res.Total, len(res.Hits), got.Total, len(got.Hits))
				}
				got = res
			}
			matched := got.Total
			if unit == textindex.Passages {
				matched = len(uniquePaths(got.Hits))
			}
			ix.terms.mu.Lock()
			cached := len(ix.terms.entries) > 0
			ix.terms.mu.Unlock()
			tq := plainTerms(q)
			if single := len(tq.all)+len(tq.not) == 1; cached != (single || matched >= fillMatches) {
				t.Fatalf("%q %v: %d notes matched, cached %v", s, unit, matched, cached)
			}
			// FTS5's own ranking, as a filtered search is ranked.
			ix.ranks = rankCache{}
			want, err := ix.Search(ctx, q, textindex.Options{Limit: 500, Unit: unit, Filter: textindex.Filter{PathPrefix: "n"}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
				t.Fatalf("%q %v: total %d, %d hits; FTS5 %d, %d", s, unit, got.Total, len(got.Hits), want.Total, len(want.Hits))
			}
			g, w := map[string]float64{}, map[string]float64{}
			for i := range got.Hits {
				g[got.Hits[i].Path+fmt.Sprint(got.Hits[i].Passage)] = got.Hits[i].Score
				w[want.Hits[i].Path+fmt.Sprint(want.Hits[i].Passage)] = want.Hits[i].Score
			}
			for k, v := range w {
				if g[k] != v {
					t.Fatalf("%q %v: %s scored %v, FTS5 %v", s, unit, k, g[k], v)
				}
			}
		}
	}
}

func uniquePaths(hits []textindex.Hit) map[string]bool {
	m := map[string]bool{}
	for _, h := range hits {
		m[h.Path] = true
	}
	return m
}

// Searches that the postings cannot rank as FTS5 does go to FTS5.
func TestPlainTermsRefuses(t *testing.T) {
	for _, s := range []string{
		"apple banana OR cherry", // a conjunction of two in a disjunction
		"apple OR banana -cherry",
		"a1 a2 a3 a4 a5 a6 a7 a8 a9",
		`"` + strings.Repeat("apple ", 50) + `"`, // a phrase too long for a key
		"", "-apple", "!!!",
	} {
		if tq := plainTerms(textindex.ParseQuery(s)); tq != nil {
			t.Errorf("%q: ranked from postings as %q", s, tq.expr())
		}
	}
}

// A write by this process or by another one on the same file is seen by
// the next search, whose words' postings were cached before it.
func TestTermCacheSeesWrites(t *testing.T) {
	ctx := context.Background()
	ix, other := twoOnOneFile(t)
	docs := wordDocs(400, 3)
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	// total searches s three times: ranked by FTS5 (the index changed
	// since the cache was filled), again (which fills the cache), then
	// from the postings that search read.
	total := func(s string) int {
		t.Helper()
		var totals [3]int
		for i := range totals {
			ix.ranks = rankCache{} // only the term cache may remember
			res, err := ix.Search(ctx, textindex.ParseQuery(s), textindex.Options{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			totals[i] = res.Total
		}
		if totals[0] != totals[2] || totals[1] != totals[2] {
			t.Fatalf("%q: totals %v, the last from the cache", s, totals)
		}
		ix.terms.mu.Lock()
		cached := len(ix.terms.entries)
		ix.terms.mu.Unlock()
		if cached != 2 {
			t.Fatalf("%q: %d phrases cached, want 2", s, cached)
		}
		return totals[2]
	}
	before := total("xylophone OR apple")
	for i, w := range []*Index{ix, other} {
		doc := textindex.Doc{Path: fmt.Sprintf("new%d.md", i), Title: "xylophone", Body: "xylophone"}
		if err := w.Upsert(ctx, doc); err != nil {
			t.Fatal(err)
		}
		if got := total("xylophone OR apple"); got != before+i+1 {
			t.Fatalf("after write %d: total %d, want %d", i, got, before+i+1)
		}
	}
	if err := other.Delete(ctx, "new0.md"); err != nil {
		t.Fatal(err)
	}
	if got := total("xylophone OR apple"); got != before+1 {
		t.Fatalf("after the delete: total %d, want %d", got, before+1)
	}
}

// The stems cache sees writes too, this process's and another's: a
// question asked again after a write counts the new note.
func TestStemsCacheSeesWrites(t *testing.T) {
	ctx := context.Background()
	ix, other := twoOnOneFile(t)
	// 600 notes, the words in 300 and 200 of them: a costly question that
	// drops neither word as too common.
	var docs []textindex.Doc
	for i := range 600 {
		body := "plain"
		if i%2 == 0 {
			body += " xylophone"
		}
		if i%3 == 0 {
			body += " zither"
		}
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("n%03d.md", i), Title: fmt.Sprint("note ", i), Body: body})
	}
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	q := textindex.ParseQuestion("xylophones or zithers?")
	total := func() int {
		t.Helper()
		var totals [3]int // FTS5 (the index changed), again (fills the cache), from the postings
		for i := range totals {
			res, err := ix.Ask(ctx, q, textindex.Options{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			totals[i] = res.Total
		}
		ix.stems.mu.Lock()
		cached := len(ix.stems.entries)
		ix.stems.mu.Unlock()
		if totals[0] != totals[2] || totals[1] != totals[2] || cached == 0 {
			t.Fatalf("totals %v, %d phrases cached", totals, cached)
		}
		return totals[2]
	}
	before := total()
	for i, w := range []*Index{ix, other} {
		doc := textindex.Doc{Path: fmt.Sprintf("new%d.md", i), Title: "zither", Body: "zither"}
		if err := w.Upsert(ctx, doc); err != nil {
			t.Fatal(err)
		}
		if got := total(); got != before+i+1 {
			t.Fatalf("after write %d: total %d, want %d", i, got, before+i+1)
		}
	}
}

// The cache keeps at most its budget of postings, dropping the least
// recently used phrases first.
func TestTermCacheBudget(t *testing.T) {
	list := func(n int) postings { return postings{ids: make([]int64, n), scores: make([]float64, n)} }
	each := entryCost(`"a"`, 40)
	c := termCache{budget: 2*each + each/2}
	c.add(`"a"`, list(40))
	c.add(`"b"`, list(40))
	c.entries[`"a"`].used = c.clock + 1 // a is used again
	c.clock++
	c.add(`"c"`, list(40)) // b goes
	if _, ok := c.entries[`"b"`]; ok || c.postings != 2*each || len(c.entries) != 2 {
		t.Fatalf("entries %v, cost %d", c.entries, c.postings)
	}
	c.add(`"c"`, list(40)) // again: counted once
	if c.postings != 2*each || len(c.entries) != 2 {
		t.Fatalf("a phrase added twice: cost %d, %d entries", c.postings, len(c.entries))
	}
	c.add(`"d"`, list(c.budget/2)) // more than half the budget: not kept
	if _, ok := c.entries[`"d"`]; ok || c.postings != 2*each {
		t.Fatalf("kept a phrase over half the budget: cost %d", c.postings)
	}
	// Phrases that match nothing are bounded too, and evicted in one go.
	c = termCache{budget: 1000}
	for i := range 5000 {
		c.add(fmt.Sprintf(`"typo%d"`, i), postings{})
	}
	if c.postings > 1000 || len(c.entries) > 1000/entryCost(`"typo0"`, 0) || len(c.entries) == 0 {
		t.Fatalf("5000 empty phrases: %d entries, cost %d", len(c.entries), c.postings)
	}
	c.add(`"big"`, list(400))
	if _, ok := c.entries[`"big"`]; !ok || c.postings > 1000 {
		t.Fatalf("a long list after many empty ones: cost %d", c.postings)
	}
}

func TestSeek(t *testing.T) {
	ids := []int64{2, 3, 5, 8, 13, 21, 34, 55, 89}
	for from := range ids {
		for id := int64(0); id < 100; id++ {
			want, ok := slices.BinarySearch(ids, id)
			want = max(want, from)
			if id < ids[from] {
				continue // seek is only asked for ids past the cursor
			}
			got, gok := seek(ids, from, id)
			if got != want || gok != (ok && want < len(ids) && ids[want] == id) {
				t.Fatalf("seek from %d for %d: %d %v, want %d %v", from, id, got, gok, want, ok)
			}
		}
	}
}

func TestBestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for range 200 {
		rs := make([]ranked, rng.IntN(50))
		for i := range rs {
			rs[i] = ranked{id: int64(i), score: -float64(rng.IntN(8))}
		}
		all := slices.Clone(rs)
		slices.SortStableFunc(all, func(a, b ranked) int {
			if a.score != b.score {
				if a.score < b.score {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.id, b.id)
		})
		n := rng.IntN(60)
		got := bestFirst(slices.Clone(rs), n)
		if want := all[:min(n, len(all))]; !slices.Equal(got, want) {
			t.Fatalf("best %d of %v: %v, want %v", n, rs, got, want)
		}
	}
}

// A phrase of a search of several is read into the cache when a search
// asks for it after a costly search did, never after a cheap one; the
// phrase of a search of one is read at once.
func TestPostingsReadAfterACostlySearch(t *testing.T) {
	ctx := context.Background()
	ix := memIndex(t, wordDocs(20, 5)...)
	rank := func(s string) bool {
		t.Helper()
		_, _, ok, err := ix.rankTerms(ctx, &ix.terms, plainTerms(textindex.ParseQuery(s)), 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if rank("apple banana") {
		t.Fatal("ranked phrases never searched from postings")
	}
	ix.terms.searched([]string{`"apple"*`, `"banana"*`}, fillMatches-1)
	if rank("apple banana") {
		t.Fatal("read phrases searched only cheaply")
	}
	ix.terms.searched([]string{`"pear"*`, `"plum"*`}, fillMatches)
	if rank("pear kiwi") {
		t.Fatal("read the postings of pear for a search with kiwi, never searched")
	}
	if !rank("pear plum") || len(ix.terms.entries) != 2 {
		t.Fatalf("after a costly search of pear and plum: %d phrases cached, want 2", len(ix.terms.entries))
	}
	if !rank("kiwi") || len(ix.terms.entries) != 3 {
		t.Fatalf("a search of one phrase: %d phrases cached, want 3", len(ix.terms.entries))
	}
}

// FuzzTermRanking checks that every query the postings can rank, they rank
// as FTS5 does: the same notes, scores and total.
func FuzzTermRanking(f *testing.F) {
	for _, s := range []string{"apple", "apple banana -cherry", "apple OR pe OR \"lime mango\"", `"apple banana"`, "a b c", "kiwi -kiwi", "APPLE apple"} {
		f.Add(s)
	}
	ix := memIndex(f, wordDocs(120, 6)...)
	f.Fuzz(func(t *testing.T, s string) {
		q := textindex.ParseQuery(s)
		tq := plainTerms(q)
		if tq == nil {
			return
		}
		rankedAsFTS5(t, ix, s, q, tq) // false: an expression FTS5 refuses (Search finds nothing for it)
	})
}

// The question lane's first stage ranked from the stems cache is FTS5's:
// the same total and the same scores bit for bit, and a whole Ask answers
// the same whether its words' postings are cached or not.
func TestAskFirstStageIsFTS5s(t *testing.T) {
	ix := memIndex(t, wordDocs(300, 2)...)
	ctx := context.Background()
	questions := []string{
		"apple",
		"what do we know about apples and bananas?",
		"cherry, date, fig or grape?",
		"kiwis lemons limes mangoes melons olives oranges pears",
		"is there a quince?",
		"berries and plums after the apricots",
		"apple apples?", // one stem twice: FTS5 scores both phrases
		"berry berries, cherry cherries",
	}
	ranked := 0
	for _, s := range questions {
		if askRankedAsFTS5(t, ix, s) {
			ranked++
		}
	}
	if all := askTermQueryOf(t, ix, textindex.ParseQuestion("apple apples?")); len(all) != 2 || all[0] != all[1] {
		t.Fatalf("fixture: \"apple apples?\" should be one phrase twice, is %q", all)
	}
	if ranked < 5 {
		t.Fatalf("only %d questions were disjunctions the cache can rank", ranked)
	}
	// A whole Ask, cold (FTS5) and warm (postings), pages included.
	for _, s := range questions {
		q := textindex.ParseQuestion(s)
		ix.stems = termCache{stems: true}
		cold, err := ix.Ask(ctx, q, textindex.Options{Limit: 10, Offset: 3})
		if err != nil {
			t.Fatal(err)
		}
		ix.stems.searched(askTermQueryOf(t, ix, q), fillMatches)
		warm, err := ix.Ask(ctx, q, textindex.Options{Limit: 10, Offset: 3})
		if err != nil {
			t.Fatal(err)
		}
		ix.stems.mu.Lock()
		cached := len(ix.stems.entries)
		ix.stems.mu.Unlock()
		if cached == 0 {
			t.Fatalf("%q: nothing read into the stems cache", s)
		}
		if fmt.Sprint(cold) != fmt.Sprint(warm) {
			t.Errorf("%q: Ask differs once its words are cached:\ncold %+v\nwarm %+v", s, cold, warm)
		}
	}
}

// A question with a filter never ranks from the stems cache, even when its
// words are cached: its notes are the filter's, counted as FTS5 counts them.
func TestAskWithAFilterKeepsIt(t *testing.T) {
	var docs []textindex.Doc
	for i := range 40 {
		dir := "out/"
		if i%4 == 0 {
			dir = "in/"
		}
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("%sn%02d.md", dir, i), Title: fmt.Sprint("note ", i), Body: "apple pie and pear"})
	}
	ix := memIndex(t, docs...)
	ctx := context.Background()
	for _, s := range []string{"apple?", "apple and pear?"} {
		q := textindex.ParseQuestion(s)
		ix.stems.searched(askTermQueryOf(t, ix, q), fillMatches)
		if _, err := ix.Ask(ctx, q, textindex.Options{Limit: 50}); err != nil { // fills the cache
			t.Fatal(err)
		}
		res, err := ix.Ask(ctx, q, textindex.Options{Limit: 50, Filter: textindex.Filter{PathPrefix: "in/"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 10 || len(res.Hits) != 10 {
			t.Fatalf("%q under in/: total %d, %d hits; want the 10 notes there", s, res.Total, len(res.Hits))
		}
		for _, h := range res.Hits {
			if !strings.HasPrefix(h.Path, "in/") {
				t.Errorf("%q under in/ found %s", s, h.Path)
			}
		}
	}
}

// weighed is q's terms as Ask weighs them.
func weighed(t *testing.T, ix *Index, q textindex.Question) []askTerm {
	t.Helper()
	st, err := ix.vaultStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	terms := askTerms(q, st.langs)
	if err := ix.weigh(context.Background(), terms, st.notes); err != nil {
		t.Fatal(err)
	}
	return terms
}

// askTermQueryOf is the phrases q's first stage matches.
func askTermQueryOf(t *testing.T, ix *Index, q textindex.Question) []string {
	t.Helper()
	return askTermQuery(weighed(t, ix, q)).all
}

// askRankedAsFTS5 ranks question s's first stage from the stems cache and
// checks it is FTS5's: the same total, scores bit for bit. It is false
// when the cache cannot rank s, or FTS5 refuses its expression.
func askRankedAsFTS5(t *testing.T, ix *Index, s string) bool {
	t.Helper()
	ctx := context.Background()
	terms := weighed(t, ix, textindex.ParseQuestion(s))
	tq := askTermQuery(terms)
	if tq == nil {
		return false
	}
	r := ranking{ix: ix, from: ` FROM stems_fts WHERE stems_fts MATCH ?`, args: []any{askExpr(terms)}}
	want, wantTotal, err := r.rankIn(ctx, "stems_fts", 1000, 0)
	if err != nil {
		if sqliteCode(err) == sqliteError {
			return false
		}
		t.Fatal(err)
	}
	ix.stems.searched(tq.all, fillMatches) // as a costly question does
	got, total, ok, err := ix.rankTerms(ctx, &ix.stems, tq, 1000, 0)
	if err != nil || !ok {
		t.Fatalf("%q: not ranked from postings: %v", s, err)
	}
	if total != wantTotal {
		t.Fatalf("%q: total %d, FTS5 %d", s, total, wantTotal)
	}
	if err := sameRanking(got, want); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return true
}

func FuzzAskFirstStage(f *testing.F) {
	for _, s := range []string{"apple", "what about apples and bananas?", "apple apples?", "berry berries", "Äpfel und Birnen?", "kiwi kiwi kiwi", "\"lime\" OR mango*", "苹果和香蕉"} {
		f.Add(s)
	}
	ix := memIndex(f, wordDocs(120, 7)...)
	f.Fuzz(func(t *testing.T, s string) {
		askRankedAsFTS5(t, ix, s)
	})
}

// TestAskReadsRareWordsAtOnce: a question that adds a word never asked to
// words a costly question asked before is ranked from postings when the
// new word is in few notes, or holds at most three quarters of the
// question's postings, exactly as FTS5 ranks it; a new word in many notes,
// or one that would be more of the question's postings, still sends the
// question to FTS5 the first time.
func TestAskReadsRareWordsAtOnce(t *testing.T) {
	var docs []textindex.Doc
	for i := range 600 {
		body := "filler"
		if i%2 == 0 {
			body += " walnut" // 300 notes: not pruned (half), not rare
		}
		if i%3 == 0 {
			body += " hazel" // 200 notes: rare enough to read at once
		}
		if i%20 == 0 {
			body += " pecan" // 30 notes
		}
		if i < 290 {
			body += " almond" // 290 notes: not rare
		}
		if i >= 330 {
			body += " chestnut" // 270 notes
		}
		if i%600 < 280 && i%2 == 1 || i >= 440 {
			body += " cedar" // 300 notes
		}
		if i >= 300 {
			body += " maple" // 300 notes
		}
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("n%03d.md", i), Title: fmt.Sprintf("note %d", i), Body: body})
	}
	ix := memIndex(t, docs...)
	ctx := context.Background()
	ask := func(s string) (ok bool) {
		t.Helper()
		terms := weighed(t, ix, textindex.ParseQuestion(s))
		tq := askTermQuery(terms)
		got, total, ok, err := ix.rankTerms(ctx, &ix.stems, tq, 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := ranking{ix: ix, from: ` FROM stems_fts WHERE stems_fts MATCH ?`, args: []any{askExpr(terms)}}
		want, wantTotal, err := r.rankIn(ctx, "stems_fts", 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			ix.stems.searched(tq.all, wantTotal) // what firstStage does
			return false
		}
		if total != wantTotal {
			t.Errorf("%q: total %d, FTS5 %d", s, total, wantTotal)
		}
		if err := sameRanking(got, want); err != nil {
			t.Errorf("%q: %v", s, err)
		}
		return true
	}
	if ask("what about walnut and almond?") {
		t.Error("two words never asked, neither rare: ranked from postings the first time")
	}
	if !ask("what about walnut and pecan?") {
		t.Error("a word asked in a costly question beside a rare new one: not ranked from postings")
	}
	if !ask("walnut, hazel and pecan?") {
		t.Error("a new word in 200 notes beside cached ones: not ranked from postings")
	}
	if !ask("and almond with walnut?") {
		t.Error("words both asked in a costly question before: not ranked from postings")
	}
	if !ask("walnut, almond and chestnut?") {
		t.Error("a new word in 270 notes beside cached ones in 590: not ranked from postings")
	}
	if ask("pecan and cedar?") {
		t.Error("a new word in 300 notes beside a cached one in 30: ranked from postings the first time")
	}
	if !ask("pecan or cedar?") {
		t.Error("the same words asked again: not ranked from postings")
	}
	if !ask("hazel, pecan and maple?") {
		t.Error("a new word in 300 notes beside cached ones in 230 (57% of the postings): not ranked from postings")
	}

	// Writes between few questions: a new word is not read, since the
	// next write would throw it away; once a state lasts, it is again.
	for i := range 3 {
		if err := ix.Upsert(ctx, textindex.Doc{Path: "scratch.md", Title: "scratch", Body: fmt.Sprintf("edit %d", i)}); err != nil {
			t.Fatal(err)
		}
		ask("walnut and almond?")
	}
	if ask("walnut, almond and chestnut?") {
		t.Error("a new word in 270 notes, a write every question: ranked from postings the first time")
	}
	for range minLasting {
		ask("walnut and almond?")
	}
	// maple was read once, never sent to FTS5 (not costly): only the rule
	// can read it again.
	if !ask("walnut, almond and maple?") {
		t.Errorf("a new word in 300 notes after %d questions without a write: not ranked from postings", minLasting)
	}
}
