package core

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/sheaf-dev/sheaf/infra/embedder"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// evalQuestion is one line of eval/questions.jsonl.
type evalQuestion struct {
	Question string   `json:"question"`
	Expected []string `json:"expected_paths"`
}

// realSampleFixture indexes a copy of infra/sample-vault and embeds it with
// the real USE-lite model (infra/embedder; skipped without its npm
// packages, fatal under CI).
func realSampleFixture(t *testing.T) *semFixture {
	t.Helper()
	base := embedder.Start(t)
	emb, err := embed.New(embed.Config{BaseURL: base, Model: embedder.Model})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.CopyFS(dir, os.DirFS("../../infra/sample-vault")); err != nil {
		t.Fatal(err)
	}
	f := openSemFixtureWith(t, dir, emb)
	if _, err := f.s.ReindexEmbeddings(context.Background(), ReindexIn{}); err != nil {
		t.Fatal(err)
	}
	return f
}

func loadQuestions(t *testing.T, dir string) []evalQuestion {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "eval", "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []evalQuestion
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q evalQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		t.Fatal("no questions")
	}
	return qs
}

// scores are recall@k and MRR averaged over questions.
type scores struct{ recall, mrr float64 }

func (s scores) String() string { return fmt.Sprintf("recall@5 %.3f  MRR@10 %.3f", s.recall, s.mrr) }

// score measures rankings (one per question, best first): recall at k
// and MRR over the first 10.
func score(qs []evalQuestion, rankings [][]string, k int) scores {
	var s scores
	for i, q := range qs {
		found := 0
		rr := 0.0
		for r, p := range rankings[i][:min(10, len(rankings[i]))] {
			if !slices.Contains(q.Expected, p) {
				continue
			}
			if r < k {
				found++
			}
			if rr == 0 {
				rr = 1 / float64(r+1)
			}
		}
		s.recall += float64(found) / float64(len(q.Expected))
		s.mrr += rr
	}
	n := float64(len(qs))
	return scores{s.recall / n, s.mrr / n}
}

func pathsOf(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

// rrf is plain reciprocal-rank fusion (k = 60), for comparison only.
func rrf(lex, vec []laneHit) []string {
	sc := map[string]float64{}
	for _, lane := range [][]laneHit{lex, vec} {
		for r, h := range lane {
			sc[h.Path] += 1 / float64(60+r+1)
		}
	}
	var cs []Candidate
	for p, s := range sc {
		cs = append(cs, Candidate{Path: p, Score: s})
	}
	sortCandidates(cs)
	return pathsOf(cs)
}

// TestRealModel runs the semantic checks that need real embeddings (the
// USE-lite model of infra/embedder): on the sample vault, and (unless
// -short) on a generated vault.
func TestRealModel(t *testing.T) {
	f := realSampleFixture(t)
	t.Run("HybridEval", func(t *testing.T) {
		sets := []hybridSet{{"sample vault", f, loadQuestions(t, f.dir)}}
		if !testing.Short() {
			g := generatedSet(t, 150, 60)
			gf := realFixture(t, g.dir)
			sets = append(sets, hybridSet{g.name, gf, g.qs})
		}
		testHybridEval(t, sets)
	})
	t.Run("NoSharedWords", func(t *testing.T) { testNoSharedWords(t, f) })
}

// realFixture indexes dir and embeds it with the USE-lite model.
func realFixture(t *testing.T, dir string) *semFixture {
	t.Helper()
	base := embedder.Start(t)
	emb, err := embed.New(embed.Config{BaseURL: base, Model: embedder.Model})
	if err != nil {
		t.Fatal(err)
	}
	f := openSemFixtureWith(t, dir, emb)
	if _, err := f.s.ReindexEmbeddings(context.Background(), ReindexIn{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// hybridSet is a question set on an embedded vault.
type hybridSet struct {
	name string
	f    *semFixture
	qs   []evalQuestion
}

// laneRuns are one set's rankings per lane, and its lanes' hits for
// re-fusing with other weights.
type laneRuns struct {
	lex, vec, rrf, hyb [][]string
	lanes              [][2][]laneHit
}

func runLanes(t *testing.T, set hybridSet, k int) laneRuns {
	t.Helper()
	ctx := context.Background()
	f := set.f
	cat, _ := f.v.Catalogs.Catalog(ctx)
	var r laneRuns
	for _, q := range set.qs {
		lex, err := lexicalLane(ctx, f.v, cat, q.Question, RetrieveOptions{}, lanePool(k))
		if err != nil {
			t.Fatal(err)
		}
		vec, err := f.s.vectorLane(ctx, f.v, cat, q.Question, RetrieveOptions{}, lanePool(k))
		if err != nil {
			t.Fatal(err)
		}
		r.lanes = append(r.lanes, [2][]laneHit{lex, vec})
		r.lex = append(r.lex, pathsOf(fuse(lex, nil, 0)))
		r.vec = append(r.vec, pathsOf(candidatesOf(vec)))
		r.rrf = append(r.rrf, rrf(lex, vec))
		got, err := f.s.retrieve(ctx, f.v, cat, q.Question, RetrieveOptions{Limit: 10, Mode: "hybrid"})
		if err != nil {
			t.Fatal(err)
		}
		r.hyb = append(r.hyb, pathsOf(got))
	}
	return r
}

// testHybridEval measures the lanes and the fusion on each set, logs the
// table vectorWeight was chosen from, and checks that hybrid is never
// below its best lane on recall@5 or MRR@10, on any set, and that on the
// questions that share no word with their note (where BM25 cannot help)
// hybrid finds clearly more than BM25. Rankings are cut at 10 (MRR@10) so
// that every row is measured alike.
func testHybridEval(t *testing.T, sets []hybridSet) {
	const k = 5
	var disjointQ []evalQuestion
	var disjointLex, disjointHyb, disjointVec [][]string
	var disjointLanes [][2][]laneHit
	for _, set := range sets {
		r := runLanes(t, set, k)
		full, sem, hyb := score(set.qs, r.lex, k), score(set.qs, r.vec, k), score(set.qs, r.hyb, k)
		if testing.Verbose() {
			for i, q := range set.qs {
				t.Logf("%-60q want %v\n  bm25 %v\n  vec  %v\n  hyb  %v", q.Question, q.Expected, head(r.lex[i]), head(r.vec[i]), head(r.hyb[i]))
			}
		}
		t.Logf("%s: %d questions, k=%d", set.name, len(set.qs), k)
		t.Logf("  fulltext (question lane)   %v", full)
		t.Logf("  semantic (USE-lite cosine) %v", sem)
		t.Logf("  naive RRF (k=60)           %v", score(set.qs, r.rrf, k))
		t.Logf("  hybrid (vectorWeight %.2f)  %v", vectorWeight, hyb)
		for w := 0.0; w <= 1.0001; w += 0.1 {
			var rs [][]string
			for _, l := range r.lanes {
				cs := fuse(l[0], l[1], vectorShare(l[0], w))
				sortCandidates(cs)
				rs = append(rs, pathsOf(cs))
			}
			t.Logf("    weighted fusion, vector weight %.1f less BM25's coverage: %v", w, score(set.qs, rs, k))
		}
		if best := math.Max(full.recall, sem.recall); hyb.recall < best-1e-9 {
			t.Errorf("%s: hybrid recall@5 %.3f is below its best lane's %.3f", set.name, hyb.recall, best)
		}
		if best := math.Max(full.mrr, sem.mrr); hyb.mrr < best-1e-9 {
			t.Errorf("%s: hybrid MRR@10 %.3f is below its best lane's %.3f", set.name, hyb.mrr, best)
		}
		for i, q := range set.qs {
			if sharesNoWord(t, set.f.dir, q) {
				disjointQ = append(disjointQ, q)
				disjointLex, disjointHyb, disjointVec = append(disjointLex, r.lex[i]), append(disjointHyb, r.hyb[i]), append(disjointVec, r.vec[i])
				disjointLanes = append(disjointLanes, r.lanes[i])
			}
		}
	}
	if len(disjointQ) < 3 {
		t.Fatalf("only %d questions share no word with their note: too few to measure", len(disjointQ))
	}
	lex, hyb, sem := score(disjointQ, disjointLex, k), score(disjointQ, disjointHyb, k), score(disjointQ, disjointVec, k)
	t.Logf("%d questions sharing no word with their note: fulltext %v, semantic %v, hybrid %v", len(disjointQ), lex, sem, hyb)
	for w := 0.0; w <= 1.0001; w += 0.1 {
		var rs [][]string
		for _, l := range disjointLanes {
			cs := fuse(l[0], l[1], vectorShare(l[0], w))
			sortCandidates(cs)
			rs = append(rs, pathsOf(cs))
		}
		t.Logf("    weighted fusion, vector weight %.1f less BM25's coverage: %v", w, score(disjointQ, rs, k))
	}
	if hyb.recall < lex.recall+0.5 {
		t.Errorf("on questions sharing no word with their note hybrid (%v) is not clearly above BM25 (%v)", hyb, lex)
	}
}

// sharesNoWord reports whether no content word of q's question, stemmed,
// is a stemmed word of its (first) expected note or of its path.
func sharesNoWord(t *testing.T, dir string, q evalQuestion) bool {
	t.Helper()
	p := q.Expected[0]
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		src = readNFD(t, dir, p)
	}
	var st textindex.Stemmer
	inNote := map[string]bool{}
	for w := range words(string(src) + " " + p) {
		inNote[st.Stem(textindex.English, w)] = true
	}
	for _, w := range textindex.ParseQuestion(q.Question).Words {
		if inNote[st.Stem(textindex.English, w.Text)] {
			return false
		}
	}
	return true
}

func head(ps []string) []string { return ps[:min(5, len(ps))] }

// words is the set of lower-cased letter/digit runs of s.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}) {
		out[w] = true
	}
	return out
}

// testNoSharedWords: a question that shares no word with its note (so BM25
// cannot find it) is found by meaning.
func testNoSharedWords(t *testing.T, f *semFixture) {
	const query, target = "What to do with kitchen scraps?", "Projects/Garden/Compost.md"
	note, err := os.ReadFile(filepath.Join(f.dir, target))
	if err != nil {
		t.Fatal(err)
	}
	inNote := words(string(note) + " " + target)
	for w := range words(query) {
		if inNote[w] {
			t.Fatalf("fixture: the query's word %q is in %s", w, target)
		}
	}
	ctx := context.Background()
	lex, err := f.s.Search(ctx, SearchArgs{Query: query, Match: "any", Mode: "fulltext", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(hitPaths(lex.Items), target) {
		t.Fatalf("fixture: BM25 finds %s: %v", target, hitPaths(lex.Items))
	}
	out, err := f.s.SemanticSearch(ctx, SemanticSearchIn{Query: query, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(hitPaths(out.Items), target) {
		t.Errorf("semantic_search(%q) top 5 = %v, want %s", query, hitPaths(out.Items), target)
	}
	t.Logf("semantic_search(%q): %v", query, hitPaths(out.Items))
}
