package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/textindextest"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

func TestConformanceMemory(t *testing.T) {
	textindextest.Run(t, func(t *testing.T) textindex.Index {
		ix, err := Open("")
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}

func TestConformanceFile(t *testing.T) {
	textindextest.Run(t, func(t *testing.T) textindex.Index {
		ix, err := Open(filepath.Join(t.TempDir(), "index.db"))
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Upsert(ctx, textindextest.Fixture()...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	ix, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search(ctx, textindex.ParseQuery("clobber"), textindex.Options{})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("after reopen: %+v, %v", res, err)
	}
	// An index of another schema version is rebuilt empty.
	if _, err := ix.w.Exec(`UPDATE meta SET value = 'old' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	paths, err := ix.Paths(ctx)
	if err != nil || len(paths) != 0 {
		t.Fatalf("after a version change: %d paths, %v; want an empty index", len(paths), err)
	}
	if err := ix.Upsert(ctx, textindextest.Fixture()...); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing", "dir", "index.db")); err == nil {
		t.Error("Open in a missing folder: want an error")
	}
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if _, err := ix.Search(context.Background(), textindex.ParseQuery("x"), textindex.Options{}); err == nil {
		t.Error("Search after Close: want an error")
	}
}

func TestCancelled(t *testing.T) {
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ix.Upsert(ctx, textindextest.Fixture()...); err == nil {
		t.Error("Upsert with a cancelled context: want an error")
	}
	paths, _ := ix.Paths(context.Background())
	if len(paths) != 0 {
		t.Errorf("a cancelled Upsert left %d documents", len(paths))
	}
}

// FuzzSearch checks that no query text makes a search fail or panic.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{`a b OR c -d`, `"unbalanced`, `NOT`, `東京 "カフェ`, `col:x`, `*`, `NEAR(a b)`, "\xff\x00\"", `a"b"c`} {
		f.Add(s, true)
	}
	ix, err := Open("")
	if err != nil {
		f.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Upsert(context.Background(), textindextest.Fixture()...); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string, passages bool) {
		unit := textindex.Notes
		if passages {
			unit = textindex.Passages
		}
		for _, q := range []textindex.Query{textindex.ParseQuery(s), textindex.QuestionQuery(s)} {
			if _, err := ix.Search(context.Background(), q, textindex.Options{Unit: unit, Limit: 3}); err != nil {
				t.Fatalf("Search(%q): %v", s, err)
			}
		}
		if _, err := ix.Ask(context.Background(), textindex.ParseQuestion(s), textindex.Options{Limit: 3}); err != nil {
			t.Fatalf("Ask(%q): %v", s, err)
		}
		// Indexing the text itself, stemmed, must not fail either.
		d := textindex.Doc{Path: "fuzz.md", Title: s, Body: s, Tags: []string{s}}
		if err := ix.Upsert(context.Background(), d); err != nil {
			t.Fatalf("Upsert(%q): %v", s, err)
		}
	})
}

// TestPassagePaging checks the passage sequence of a passage search: notes
// in rank order, each note's matching passages best first, pages that cover
// it exactly once, and Total exact once the last note is read.
func TestPassagePaging(t *testing.T) {
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	var docs []textindex.Doc
	for i := range 6 {
		var ps []vault.Passage
		for j := range 4 {
			text := fmt.Sprintf("filler %d %d", i, j)
			switch {
			case j == 3:
				text += strings.Repeat(" okapi", i+1) + " okapi zebra"
			case j%2 == 1:
				text += " okapi"
			}
			ps = append(ps, textindextest.Passage(j, []string{"H"}, "h", text))
		}
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("n%d.md", i), Title: "Note", Passages: ps, Modified: textindextest.Modified})
	}
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	q := textindex.ParseQuery("okapi OR zebra")
	all, err := ix.Search(ctx, q, textindex.Options{Unit: textindex.Passages, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Hits) != 12 || all.Total != 12 {
		t.Fatalf("all passages: %d hits, total %d; want 12, 12", len(all.Hits), all.Total)
	}
	for i, h := range all.Hits {
		if i%2 == 0 && h.Passage != 3 || i%2 == 1 && h.Passage != 1 {
			t.Errorf("hit %d: passage %d of %s; want passage 3 (both words) before passage 1", i, h.Passage, h.Path)
		}
		if i%2 == 1 && (h.Path != all.Hits[i-1].Path || h.Score != all.Hits[i-1].Score) {
			t.Errorf("hit %d: %s score %v, want its note's passages together with one score", i, h.Path, h.Score)
		}
	}
	var paged []textindex.Hit
	for off := 0; off < 14; off += 3 {
		res, err := ix.Search(ctx, q, textindex.Options{Unit: textindex.Passages, Limit: 3, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total < off+len(res.Hits) || res.Total > 12 {
			t.Errorf("offset %d: total %d", off, res.Total)
		}
		if off+3 >= 12 && res.Total != 12 {
			t.Errorf("offset %d, the last page: total %d, want 12", off, res.Total)
		}
		paged = append(paged, res.Hits...)
	}
	if len(paged) != len(all.Hits) {
		t.Fatalf("pages gave %d hits, want %d", len(paged), len(all.Hits))
	}
	for i := range paged {
		if paged[i].Path != all.Hits[i].Path || paged[i].Passage != all.Hits[i].Passage {
			t.Errorf("paged hit %d = %s#%d, want %s#%d", i, paged[i].Path, paged[i].Passage, all.Hits[i].Path, all.Hits[i].Passage)
		}
	}
	for _, o := range []textindex.Options{{Offset: math.MaxInt, Limit: 5}, {Offset: 5, Limit: math.MaxInt}} {
		o.Unit = textindex.Passages
		res, err := ix.Search(ctx, q, o)
		if err != nil || res.Total != 12 {
			t.Errorf("extreme paging %+v: total %d, %v; want 12", o, res.Total, err)
		}
	}
	// A note excluded by NOT has no passage hits, even those without the word.
	res, err := ix.Search(ctx, textindex.ParseQuery("okapi -zebra"), textindex.Options{Unit: textindex.Passages})
	if err != nil || len(res.Hits) != 0 || res.Total != 0 {
		t.Errorf("okapi -zebra: %+v, %v; want nothing", res, err)
	}
}

// TestOpenVersion2 opens an index file written by schema version 2 (no
// stems_fts, no notes.lang): it is rebuilt empty, so the indexer's next sync
// indexes every note again, and the question lane works.
func TestOpenVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO meta VALUES('schema_version', '2')`,
		`CREATE TABLE notes(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, title TEXT NOT NULL, author TEXT NOT NULL, modified TEXT NOT NULL, npassages INTEGER NOT NULL)`,
		`INSERT INTO notes VALUES(1, 'old.md', 'Old', '', '2026-01-01T00:00:00Z', 0)`,
		`CREATE VIRTUAL TABLE notes_fts USING fts5(title, aliases, headings, tags, body, content='', contentless_delete=1)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	if paths, err := ix.Paths(ctx); err != nil || len(paths) != 0 {
		t.Fatalf("a version 2 index: %d paths, %v; want it rebuilt empty", len(paths), err)
	}
	if err := ix.Upsert(ctx, textindextest.Fixture()...); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Ask(ctx, textindex.ParseQuestion("how do agents avoid clobbering?"), textindex.Options{})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("Ask after the rebuild: %+v, %v", res, err)
	}
}

// TestWriteStatementsOnFirstWrite: Open prepares no write statement (a
// server answers before it writes); the first write prepares them, on a
// file index whose writer has one connection.
func TestWriteStatementsOnFirstWrite(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.ws != nil {
		t.Fatal("Open prepared the write statements")
	}
	if err := ix.Upsert(ctx, textindextest.Fixture()...); err != nil {
		t.Fatal(err)
	}
	if ix.ws == nil {
		t.Fatal("the first write left no prepared statements")
	}
	res, err := ix.Search(ctx, textindex.ParseQuery("clobber"), textindex.Options{})
	if err != nil || res.Total == 0 {
		t.Fatalf("search after the first write: %v, %+v", err, res)
	}
}

// TestReadersKeepPages: the writer keeps 32 MB of pages, each reader
// SQLite's default 2 MB (a reader drops its cache after every commit, and
// a bigger one cost more to drop and refill than it saved: see Open).
func TestReadersKeepPages(t *testing.T) {
	ix, err := Open(filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	want := map[string]int{"writer": -32000, "reader": -2000}
	for name, db := range map[string]*sql.DB{"reader": ix.r, "writer": ix.w} {
		var n int
		if err := db.QueryRow(`PRAGMA cache_size`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want[name] {
			t.Errorf("%s: cache_size = %d, want %d", name, n, want[name])
		}
	}
}

// TestSearchNoteWithoutPassages: a note with no passages (a title only)
// is still a hit, with its path and title and an empty snippet.
func TestSearchNoteWithoutPassages(t *testing.T) {
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	if err := ix.Upsert(ctx, textindex.Doc{Path: "a/Zebra.md", Title: "Zebra crossing"},
		textindex.Doc{Path: "b/Other.md", Title: "Other", Body: "zebra text", Passages: []vault.Passage{{Text: "zebra text"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search(ctx, textindex.ParseQuery("zebra"), textindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]textindex.Hit{}
	for _, h := range res.Hits {
		got[h.Path] = h
	}
	if h := got["a/Zebra.md"]; h.Title != "Zebra crossing" || h.Snippet != "" || len(res.Hits) != 2 || res.Total != 2 {
		t.Errorf("hits = %+v (total %d), want a/Zebra.md with its title and no snippet, and b/Other.md", res.Hits, res.Total)
	}
	if h := got["b/Other.md"]; h.Title != "Other" || h.Snippet != "zebra text" {
		t.Errorf("b/Other.md = %+v", h)
	}
}

// An index of this schema version written by an earlier Sheaf (notes_lang
// on the language alone) is upgraded in place, its notes kept, and the
// vault statistics read the new index rather than every note's row.
func TestOpenUpgradesInPlace(t *testing.T) {
	ctx := context.Background()
	path := earlierIndex(t)
	for range 2 { // the second open finds nothing to do
		ix, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var indexes []string
		rows, err := ix.w.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'notes' AND sql IS NOT NULL ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			indexes = append(indexes, n)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(indexes, []string{"notes_lang_nterms"}) {
			t.Fatalf("indexes of notes after the upgrade: %q", indexes)
		}
		var plan string
		var id, parent, unused int
		if err := ix.w.QueryRow(`EXPLAIN QUERY PLAN SELECT count(*), coalesce(avg(nterms), 0) FROM notes`).Scan(&id, &parent, &unused, &plan); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "COVERING INDEX notes_lang_nterms") {
			t.Errorf("the statistics read %q", plan)
		}
		st, err := ix.vaultStats(ctx)
		if err != nil || st.notes != int64(len(textindextest.Fixture())) {
			t.Fatalf("after the upgrade: %d notes, %v", st.notes, err)
		}
		ix.Close()
	}
}

// An upgrade that cannot be applied leaves the index as it was and opens
// it all the same: upgrades only make it faster.
func TestOpenWhenAnUpgradeFails(t *testing.T) {
	ctx := context.Background()
	// The new index's name taken by a table: CREATE INDEX fails.
	ix, err := Open(earlierIndex(t, `CREATE TABLE notes_lang_nterms(x)`))
	if err != nil {
		t.Fatalf("an upgrade that fails fails Open: %v", err)
	}
	defer ix.Close()
	var n int
	if err := ix.w.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'notes_lang'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("notes_lang after a failed upgrade: %d, %v", n, err)
	}
	res, err := ix.Search(ctx, textindex.ParseQuery("clobber"), textindex.Options{})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("search after a failed upgrade: %+v, %v", res, err)
	}
	if st, err := ix.vaultStats(ctx); err != nil || st.notes != int64(len(textindextest.Fixture())) {
		t.Fatalf("statistics after a failed upgrade: %d notes, %v", st.notes, err)
	}
}

// earlierIndex writes the fixture to an index file as an earlier Sheaf of
// this schema version left it (notes_lang on the language alone), runs
// the statements more, and returns the file's path, closed.
func earlierIndex(t *testing.T, more ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Upsert(context.Background(), textindextest.Fixture()...); err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]string{`DROP INDEX notes_lang_nterms`, `CREATE INDEX notes_lang ON notes(lang)`}, more...) {
		if _, err := ix.w.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
