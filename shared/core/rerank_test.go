package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// scriptedReranker records what it is sent and scores by a script: the
// document that starts with a title in prefer scores highest, the rest by
// their position reversed (so the order visibly changes).
type scriptedReranker struct {
	mu      sync.Mutex
	queries []string
	docs    [][]string
	prefer  []string
	fail    error
}

func (r *scriptedReranker) Rerank(_ context.Context, query string, docs []string) ([]float64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queries = append(r.queries, query)
	r.docs = append(r.docs, slices.Clone(docs))
	if r.fail != nil {
		return nil, r.fail
	}
	out := make([]float64, len(docs))
	for i, d := range docs {
		out[i] = float64(i) // reversed
		for j, p := range r.prefer {
			if strings.HasPrefix(d, p+"\n") {
				out[i] = float64(1000 - j)
			}
		}
	}
	return out, nil
}

// rerankVault has 30 notes that all match "pruning orchard trees" alike,
// and one, Winter care, that matches it least.
func rerankVault() map[string]string {
	files := map[string]string{
		"Winter care.md": "# Winter care\n\nWrap young trees in the orchard before frost.\n",
	}
	for i := range 30 {
		files[fmt.Sprintf("Notes/Pruning %02d.md", i)] = fmt.Sprintf("# Pruning %02d\n\nPruning orchard trees, pruning again: pruning note %d.\n", i, i)
	}
	return files
}

func TestRerankSearchAndRead(t *testing.T) {
	s, _ := indexedServer(t, rerankVault(), nil)
	ctx := context.Background()
	v, _, _ := s.open(ctx, VaultArg{})

	// Not configured: a clear error, nothing silently unreranked.
	_, err := s.SearchAndRead(ctx, searchAndReadIn{Query: "pruning orchard trees", K: 5, Mode: "note", Rerank: true})
	var te *Error
	if !errors.As(err, &te) || te.Kind != KindUnsupported || te.Fields["reason"] != "not-configured" {
		t.Fatalf("rerank without a reranker or LLM: %v, want unsupported/not-configured", err)
	}

	rr := &scriptedReranker{}
	v.Reranker = rr
	out, err := s.SearchAndRead(ctx, searchAndReadIn{Query: "pruning orchard trees", K: 5, Mode: "note", Rerank: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.queries) != 1 || rr.queries[0] != "pruning orchard trees" {
		t.Fatalf("reranker asked %q, want the question once", rr.queries)
	}
	docs := rr.docs[0]
	// The pool: rerankPool(5) = 20 fused candidates, each the note's title,
	// a newline and its best passage.
	if len(docs) != rerankPool(5) {
		t.Errorf("reranker got %d documents, want the pool of %d", len(docs), rerankPool(5))
	}
	for _, d := range docs {
		title, body, ok := strings.Cut(d, "\n")
		if !ok || title == "" || !strings.Contains(body, "orchard") || len(d) > len(title)+1+rerankExcerpt {
			t.Errorf("reranker document %q: want a title line and the note's best passage (at most %d bytes)", d, rerankExcerpt)
		}
	}
	var got, want []string
	for _, n := range out.Notes {
		got = append(got, n.Path)
	}
	// The script scores the pool in reverse: the page is the pool's last
	// five, last first (the reranker's order, not retrieval's).
	for i := len(docs) - 1; i >= len(docs)-5; i-- {
		title, _, _ := strings.Cut(docs[i], "\n")
		want = append(want, "Notes/"+title+".md")
	}
	if !slices.Equal(got, want) {
		t.Errorf("reranked order %v, want %v", got, want)
	}
	for i := 1; i < len(out.Notes); i++ {
		if out.Notes[i].Score >= out.Notes[i-1].Score {
			t.Errorf("scores do not fall with the reranked order: %v", out.Notes)
		}
	}

	// The next page continues the same reranked order.
	page, err := s.searchAndRead(ctx, searchAndReadIn{Query: "pruning orchard trees", K: 5, Mode: "note", Rerank: true, MaxBytesPerItem: 512}, 1200)
	if err != nil || page.NextCursor == nil || len(page.Notes) == 0 {
		t.Fatalf("small budget: %v %+v", err, page)
	}
	next, err := s.searchAndRead(ctx, searchAndReadIn{Query: "pruning orchard trees", K: 5, Mode: "note", Rerank: true, MaxBytesPerItem: 512, Cursor: *page.NextCursor}, 1200)
	if err != nil || len(next.Notes) == 0 || next.Notes[0].Path != got[len(page.Notes)] {
		t.Errorf("second page %+v (%v), want it to start at %s", next, err, got[len(page.Notes)])
	}

	// A failing reranker fails the call.
	rr.fail = errors.New("scripted failure")
	// Its text goes to the log; the caller gets internal and a reference.
	if _, err := s.SearchAndRead(ctx, searchAndReadIn{Query: "pruning orchard trees", K: 5, Mode: "note", Rerank: true}); err == nil || toError(err).Kind != KindInternal || toError(err).Fields["correlation_id"] == nil || strings.Contains(err.Error(), "scripted failure") {
		t.Errorf("failing reranker: %v, want internal with a reference", err)
	}
	// Without rerank the reranker is never called.
	n := len(rr.queries)
	if _, err := s.SearchAndRead(ctx, searchAndReadIn{Query: "pruning orchard trees", K: 5, Mode: "note"}); err != nil || len(rr.queries) != n {
		t.Errorf("rerank off: %v, reranker called %d times", err, len(rr.queries)-n)
	}
}

func TestRerankSemanticAndSearch(t *testing.T) {
	f := newSemFixture(t, rerankVault())
	ctx := context.Background()
	rr := &scriptedReranker{}
	f.v.Reranker = rr
	out, err := f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "pruning orchard trees", Limit: 3, Hybrid: true, Rerank: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.docs) != 1 || len(rr.docs[0]) != rerankPool(3) {
		t.Fatalf("semantic_search sent %d documents, want the pool of %d", len(rr.docs[0]), rerankPool(3))
	}
	first, _, _ := strings.Cut(rr.docs[0][len(rr.docs[0])-1], "\n")
	if got := hitPaths(out.Items); len(got) != 3 || !strings.HasSuffix(got[0], first+".md") {
		t.Errorf("hybrid semantic_search reranked: %v, want %s first", got, first)
	}
	rr.prefer = []string{"Winter care"}
	res, err := f.s.Search(ctx, SearchArgs{Query: "orchard trees frost", Mode: "hybrid", Limit: 2, Rerank: true})
	if err != nil || len(res.Items) != 2 || res.Items[0].Path != "Winter care.md" {
		t.Errorf("hybrid search reranked: %v %v", res, err)
	}
	var te *Error
	if _, err := f.s.Search(ctx, SearchArgs{Query: "pruning", Rerank: true}); !errors.As(err, &te) || te.Kind != KindArgsInvalid {
		t.Errorf("rerank in fulltext search: %v, want args-invalid", err)
	}
}
