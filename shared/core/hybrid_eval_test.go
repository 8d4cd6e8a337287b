package core

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
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
	emb := cachedUSE(t)
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

// TestRealModel runs the semantic checks that need real embeddings (the
// USE-lite model of infra/embedder, through the harness's cache). The
// lanes and the fusion are measured on every question set by
// TestQuestionSets.
func TestRealModel(t *testing.T) {
	f := realSampleFixture(t)
	t.Run("NoSharedWords", func(t *testing.T) { testNoSharedWords(t, f) })
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
