package core

import (
	"context"
	"fmt"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// rerankPool is how many fused candidates a rerank reorders for a page of
// limit: at least 20, at most 50 (as answer's rerank).
func rerankPool(limit int) int { return min(max(3*limit, 20), 50) }

// errNoReranker is the "not configured" error of rerank: true.
func errNoReranker() *Error {
	return notConfigured("Reranking (rerank)",
		"set --rerank-url (SHEAF_RERANK_URL, a hosted cross-encoder) or an LLM (SHEAF_LLM_BASE_URL and SHEAF_LLM_MODEL, which reranks listwise), or call without rerank")
}

// rerankCandidates reorders the fused candidates with the configured
// cross-encoder, else the LLM listwise (rerankPages: each candidate's title
// and best passages, cut to rerankExcerpt or listwiseExcerpt bytes, in
// one call). Candidates that cannot be read any more keep their place
// after the ones read. A failed call is an error: the caller asked for a
// reranked order, and the retrieval order would pass for one.
func rerankCandidates(ctx context.Context, v *Vault, cat *vault.Catalog, question string, cands []Candidate) ([]Candidate, error) {
	if v.Reranker == nil && v.LLM == nil {
		return nil, errNoReranker()
	}
	if len(cands) < 2 {
		return cands, nil
	}
	if err := charge(ctx); err != nil {
		return nil, err
	}
	pages := loadPages(ctx, v, cat, cands, nil)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	ordered, err := rerankPages(ctx, v, question, pages)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, llmError(fmt.Errorf("reranking: %w", err))
	}
	out := make([]Candidate, 0, len(cands))
	placed := map[string]bool{}
	for _, p := range ordered {
		out = append(out, p.Candidate)
		placed[p.Path] = true
	}
	for _, c := range cands {
		if !placed[c.Path] {
			out = append(out, c)
		}
	}
	// Scores follow the new order (higher is better), within the pool's
	// range, so that a client sorting by score keeps it.
	for i := range out {
		out[i].Score = float64(len(out)-i) / float64(len(out))
	}
	return out, nil
}
