package embedded

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

func orchardDocs(n int) []textindex.Doc {
	docs := make([]textindex.Doc, n)
	for i := range docs {
		body := "orchard"
		for range i % 5 {
			body += " orchard pear"
		}
		docs[i] = textindex.Doc{Path: fmt.Sprintf("n%02d.md", i), Title: fmt.Sprintf("note %d", i), Author: "ann", Body: body + fmt.Sprintf(" filler%d", i)}
	}
	return docs
}

func hitPaths(res textindex.Result) []string {
	var ps []string
	for _, h := range res.Hits {
		ps = append(ps, h.Path)
	}
	return ps
}

// Pages served from the cached ranking are the pages of the uncached one.
func TestRankCachePagesMatchRanking(t *testing.T) {
	ctx := context.Background()
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Upsert(ctx, orchardDocs(30)...); err != nil {
		t.Fatal(err)
	}
	q := textindex.ParseQuery("orchard")
	r := ranking{ix: ix, from: ` FROM notes_fts WHERE notes_fts MATCH ?`, args: []any{matchExpr(q)}}
	for _, lim := range []int{1, 3, 7, 10} {
		for off := 0; off <= 32; off += lim {
			want, wantTotal, err := r.rank(ctx, lim, off)
			if err != nil {
				t.Fatal(err)
			}
			got, total, err := r.rankPage(ctx, lim, off)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || total != wantTotal {
				t.Fatalf("limit %d offset %d: cached %v (total %d), ranked %v (total %d)", lim, off, got, total, want, wantTotal)
			}
		}
	}
	if len(ix.ranks.entries) != 1 {
		t.Fatalf("one query, %d cache entries", len(ix.ranks.entries))
	}
}

// twoOnOneFile opens one index file twice, as two processes would, both
// closed when the test ends.
func twoOnOneFile(t *testing.T) (ix, other *Index) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	for _, p := range []**Index{&ix, &other} {
		x, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		*p = x
	}
	return ix, other
}

// A write by this process or by another one on the same file is seen by the
// next search, even one the cache could have answered.
func TestRankCacheSeesWrites(t *testing.T) {
	ctx := context.Background()
	ix, other := twoOnOneFile(t)
	docs := orchardDocs(12)
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	search := func(opts textindex.Options) textindex.Result {
		t.Helper()
		res, err := ix.Search(ctx, textindex.ParseQuery("orchard"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	top := textindex.Options{Limit: 5}
	first := search(top)
	if first.Total != 12 || len(first.Hits) != 5 {
		t.Fatalf("first search: %+v", first)
	}
	best := first.Hits[0].Path
	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"own delete", func() error { return ix.Delete(ctx, best) }},
		{"other's upsert", func() error { return other.Upsert(ctx, docs...) }},
		{"other's delete", func() error { return other.Delete(ctx, best) }},
	} {
		name := w.name
		if err := w.write(); err != nil {
			t.Fatal(err)
		}
		res := search(top)
		deleted := name != "other's upsert"
		if has := slices.Contains(hitPaths(res), best); has == deleted || (res.Total == 12) == deleted {
			t.Fatalf("after %s: %v, total %d", name, hitPaths(res), res.Total)
		}
	}
	// Another process changes only a note's author: the filter sees it.
	byBob := textindex.Options{Limit: 5, Filter: textindex.Filter{Author: "bob"}}
	if res := search(byBob); len(res.Hits) != 0 {
		t.Fatalf("bob wrote nothing yet: %v", hitPaths(res))
	}
	d := docs[3]
	d.Author = "bob"
	if err := other.Upsert(ctx, d); err != nil {
		t.Fatal(err)
	}
	if res := search(byBob); !slices.Equal(hitPaths(res), []string{d.Path}) {
		t.Fatalf("after another process's author change: %v", hitPaths(res))
	}
}
