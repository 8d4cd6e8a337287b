package core

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// Retrieval quality, measured on our own question sets only: the sample
// vault's eval/questions.jsonl (questions written as agents ask them, with
// the notes that answer them) and questions about a generated vault
// (vaultgen.Questions: known-item questions at scale). Every lane is
// compared with a textbook baseline implemented here and measured in the
// same run: plain BM25 over whole notes, the question's words OR'd, Porter
// stemming, titles weighted x5.

// questionSet is a vault and questions about it.
type questionSet struct {
	name string
	dir  string
	qs   []evalQuestion
}

func sampleSet(t *testing.T) questionSet {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.CopyFS(dir, os.DirFS("../../infra/sample-vault")); err != nil {
		t.Fatal(err)
	}
	return questionSet{name: "sample vault", dir: dir, qs: loadQuestions(t, dir)}
}

// generatedSet generates a vault of notes notes (seed 1) with n questions
// about it in its eval/questions.jsonl.
func generatedSet(t *testing.T, notes, n int) questionSet {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	opt := vaultgen.Options{Notes: notes, Seed: 1}
	if _, err := vaultgen.Generate(dir, opt); err != nil {
		t.Fatal(err)
	}
	if err := vaultgen.WriteQuestions(dir, opt, n); err != nil {
		t.Fatal(err)
	}
	return questionSet{name: fmt.Sprintf("generated vault (%d notes)", notes), dir: dir, qs: loadQuestions(t, dir)}
}

// baseline is the textbook lexical ranker the question lane must beat:
// SQLite FTS5 over whole notes (title, body without frontmatter) with the
// porter tokenizer, ranked by bm25 with the title weighted 5 and the body
// 1, every word of the question OR'd (no stopwords dropped).
type baseline struct{ db *sql.DB }

func newBaseline(t *testing.T, dir string, cat *vault.Catalog) *baseline {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, s := range []string{
		`CREATE VIRTUAL TABLE b USING fts5(path UNINDEXED, title, body, tokenize='porter unicode61 remove_diacritics 2')`,
		`INSERT INTO b(b, rank) VALUES('rank', 'bm25(0, 5.0, 1.0)')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range cat.Notes() {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n.Path)))
		if err != nil {
			// NFD names on disk: find the file by walking its folder.
			src = readNFD(t, dir, n.Path)
		}
		p := vault.Parse(n.Path, src)
		if _, err := db.Exec(`INSERT INTO b(path, title, body) VALUES(?, ?, ?)`, n.Path, n.Title, p.Body); err != nil {
			t.Fatal(err)
		}
	}
	return &baseline{db: db}
}

// readNFD reads the note at the NFC path p whose file name on disk is in
// another normal form.
func readNFD(t *testing.T, dir, p string) []byte {
	t.Helper()
	var out []byte
	_ = filepath.WalkDir(dir, func(full string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || out != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, full)
		if norm.NFC.String(filepath.ToSlash(rel)) == p {
			out, _ = os.ReadFile(full)
		}
		return nil
	})
	if out == nil {
		t.Fatalf("baseline: cannot read %s", p)
	}
	return out
}

// rank returns the baseline's top 10 paths for question.
func (b *baseline) rank(t *testing.T, question string) []string {
	t.Helper()
	var terms []string
	for _, w := range strings.FieldsFunc(question, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		terms = append(terms, `"`+w+`"`)
	}
	if len(terms) == 0 {
		return nil
	}
	rows, err := b.db.Query(`SELECT path FROM b WHERE b MATCH ? ORDER BY rank LIMIT 10`, strings.Join(terms, " OR "))
	if err != nil {
		t.Fatalf("baseline %q: %v", question, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// lexicalRanks ranks every question of set with the question lane as the
// tools use it (retrieve, fulltext).
func lexicalRanks(t *testing.T, s *Core, v *Vault, set questionSet) [][]string {
	t.Helper()
	ctx := context.Background()
	cat, err := v.Catalogs.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, q := range set.qs {
		got, err := s.retrieve(ctx, v, cat, q.Question, RetrieveOptions{Limit: 10, Mode: "fulltext"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pathsOf(got))
	}
	return out
}

func baselineRanks(t *testing.T, b *baseline, set questionSet) [][]string {
	var out [][]string
	for _, q := range set.qs {
		out = append(out, b.rank(t, q.Question))
	}
	return out
}

// knownGaps are the losses to the baseline the question lane is known to
// have on a set, tolerated so that they cannot grow, never so that they
// are forgotten: each is named, with its figures, in docs/retrieval.md
// ("The generated vault of TestRetrievalQuality") and the README, and
// issue #18 stays open while one is here. On the generated vault of
// seed 1 the lane finds 114 of 120 notes in its top 5 where the baseline
// finds 116 (0.950 against 0.967); a fix that cross-validation chooses
// has not been found (the two fixes tried lose on the sets the fit is
// made of).
var knownGaps = map[string]scores{
	"generated vault (2000 notes)": {recall: 2.0 / 120},
}

// TestRetrievalQuality checks that the question lane does not lose to the
// baseline, on recall@5 or MRR@10, on any of our question sets.
func TestRetrievalQuality(t *testing.T) {
	sets := []func(*testing.T) questionSet{sampleSet}
	if !testing.Short() {
		sets = append(sets, func(t *testing.T) questionSet { return generatedSet(t, 2000, 120) })
	}
	for _, mk := range sets {
		set := mk(t)
		t.Run(set.name, func(t *testing.T) {
			f := openSemFixture(t, set.dir)
			cat, _ := f.v.Catalogs.Catalog(context.Background())
			for _, q := range set.qs {
				for _, e := range q.Expected {
					if _, ok := cat.Note(e); !ok {
						t.Fatalf("%q: expected note %s is not in the vault", q.Question, e)
					}
				}
			}
			b := newBaseline(t, set.dir, cat)
			lexR, baseR := lexicalRanks(t, f.s, f.v, set), baselineRanks(t, b, set)
			lex, base := score(set.qs, lexR, 5), score(set.qs, baseR, 5)
			if testing.Verbose() {
				for i, q := range set.qs {
					if rr(q, lexR[i]) < rr(q, baseR[i]) {
						t.Logf("worse than the baseline: %q want %v\n  lexical  %v\n  baseline %v", q.Question, q.Expected, head(lexR[i]), head(baseR[i]))
					}
				}
			}
			t.Logf("%s, %d questions", set.name, len(set.qs))
			t.Logf("baseline (BM25 OR, porter, title x5) %v", base)
			t.Logf("fulltext (question lane)             %v", lex)
			gap := knownGaps[set.name]
			if lex.recall < base.recall-gap.recall-1e-9 || lex.mrr < base.mrr-gap.mrr-1e-9 {
				t.Errorf("the question lane (%v) loses to the baseline (%v)", lex, base)
			}
			if gap != (scores{}) && lex.recall >= base.recall-1e-9 && lex.mrr >= base.mrr-1e-9 {
				t.Logf("the known gap on %s is closed: remove it from knownGaps and docs/retrieval.md", set.name)
			}
		})
	}
}

// rr is the reciprocal rank of q's first expected path in ranking (top 10).
func rr(q evalQuestion, ranking []string) float64 {
	return score([]evalQuestion{q}, [][]string{ranking}, 5).mrr
}
