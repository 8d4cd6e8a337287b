package rank

import (
	"database/sql"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	_ "modernc.org/sqlite"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// TestBaselineIsFTS5 checks the Go baseline against SQLite FTS5 itself:
// the same notes, the same questions, the same scores and order.
func TestBaselineIsFTS5(t *testing.T) {
	dirs := map[string]string{"sample": "../../infra/sample-vault"}
	for name, dir := range evalSetDirs(t) {
		dirs[name] = filepath.Join(dir, "vault")
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			docs := readDocs(t, dir)
			b := NewBaseline(docs)
			db := fts5Baseline(t, docs)
			questions := []string{
				"How do I export a note to PDF?", "what is it", "Hügelkultur beds in the garden",
				"can a page have nicknames so it still shows up under those names when I'm typing a link?",
				"the of and", "a", "zzzz qqqq", "daily notes template for the weekly review 2026",
			}
			for _, d := range docs[:min(20, len(docs))] {
				questions = append(questions, d.Title, firstWords(d.Body, 12))
			}
			for _, q := range questions {
				got := b.Rank(q, 10)
				want := fts5Rank(t, db, q)
				if len(got) != len(want) {
					t.Fatalf("%q: %d hits, FTS5 %d", q, len(got), len(want))
				}
				for i := range got {
					if math.Abs(got[i].Score-want[i].score) > 1e-4*math.Max(1, want[i].score) {
						t.Fatalf("%q: hit %d %s score %.9f, FTS5 %s %.9f", q, i, got[i].Path, got[i].Score, want[i].path, want[i].score)
					}
					if got[i].Path != want[i].path && !tied(want, i) {
						t.Fatalf("%q: hit %d is %s, FTS5 %s", q, i, got[i].Path, want[i].path)
					}
				}
			}
		})
	}
}

type fts5Hit struct {
	path  string
	score float64
}

// tied reports whether FTS5's hit i has the score of a neighbour.
func tied(hs []fts5Hit, i int) bool {
	eq := func(j int) bool { return j >= 0 && j < len(hs) && math.Abs(hs[j].score-hs[i].score) < 1e-9 }
	return eq(i-1) || eq(i+1)
}

func fts5Baseline(t *testing.T, docs []BaselineDoc) *sql.DB {
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
	for _, d := range docs {
		if _, err := db.Exec(`INSERT INTO b(path, title, body) VALUES(?, ?, ?)`, d.Path, d.Title, d.Body); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func fts5Rank(t *testing.T, db *sql.DB, question string) []fts5Hit {
	t.Helper()
	var terms []string
	for _, w := range strings.FieldsFunc(question, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		terms = append(terms, `"`+w+`"`)
	}
	if len(terms) == 0 {
		return nil
	}
	rows, err := db.Query(`SELECT path, -rank FROM b WHERE b MATCH ? ORDER BY rank LIMIT 10`, strings.Join(terms, " OR "))
	if err != nil {
		t.Fatalf("%q: %v", question, err)
	}
	defer rows.Close()
	var out []fts5Hit
	for rows.Next() {
		var h fts5Hit
		if err := rows.Scan(&h.path, &h.score); err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// readDocs parses every note under dir.
func readDocs(t *testing.T, dir string) []BaselineDoc {
	t.Helper()
	var docs []BaselineDoc
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		parsed := vault.Parse(filepath.ToSlash(rel), src)
		docs = append(docs, BaselineDoc{Path: parsed.Note.Path, Title: parsed.Note.Title, Body: parsed.Body})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// evalSetDirs returns the development question sets by name, or none
// (logged) when they are not beside the repository.
func evalSetDirs(t *testing.T) map[string]string {
	out := map[string]string{}
	root, ok := EvalSetsDir()
	if !ok {
		t.Logf("no development question sets at %s (set %s): checked on the sample vault only", root, EnvEvalSets)
		return out
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "questions.jsonl")); err == nil {
			out[e.Name()] = filepath.Join(root, e.Name())
		}
	}
	return out
}
