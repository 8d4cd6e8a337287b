package embedded

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/textindextest"
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
	})
}
