package tools

import (
	"context"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Candidate is one note ranked for a question by retrieve.
type Candidate struct {
	Path  string
	Title string
	Score float64 // higher is better; comparable only within one call
	// Ordinals are the note's best-matching passages, best first (may be
	// empty when only the note as a whole matched).
	Ordinals []int
}

// RetrieveOptions tune retrieve.
type RetrieveOptions struct {
	Limit int // notes to return; <= 0: 10
	// Mode picks the lanes: "fulltext", "semantic", "hybrid", or "" for
	// hybrid when embeddings are configured and fulltext otherwise.
	Mode         string
	PreferRecent bool
	Filter       textindex.Filter
}

// retrieve ranks notes for a question in natural language: the lexical
// lane (any-term BM25, stopwords dropped) fused with the vector lane when
// embeddings are configured. It is the retrieval of answer, eval and
// search_and_read.
func (s *Server) retrieve(ctx context.Context, v *Vault, cat *vault.Catalog, question string, o RetrieveOptions) ([]Candidate, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = 10
	}
	res, err := v.Text.Search(ctx, textindex.QuestionQuery(question), textindex.Options{Filter: o.Filter, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, 0, len(res.Hits))
	for _, h := range res.Hits {
		out = append(out, Candidate{Path: h.Path, Title: h.Title, Score: -h.Score, Ordinals: []int{h.Passage}})
	}
	return out, nil
}
