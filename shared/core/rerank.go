package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// What a reranker sees of each candidate.
const (
	rerankExcerpt   = 1_000 // bytes of each candidate a reranker sees
	listwiseExcerpt = 400   // bytes of each candidate the LLM sees when it reranks
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

// rankedPage is a candidate read fresh from the store.
type rankedPage struct {
	Candidate
	parsed    *vault.Parsed
	neighbour bool // added by use_graph's 1-hop expansion
}

// loadPages reads and parses each candidate; a note that cannot be read
// (deleted since indexing, binary, too large) is skipped.
func loadPages(ctx context.Context, v *Vault, cat *vault.Catalog, cands []Candidate, neighbours map[string]bool) []rankedPage {
	var out []rankedPage
	for _, c := range cands {
		if ctx.Err() != nil {
			return nil
		}
		ln, err := loadNote(ctx, v, c.Path)
		if err != nil {
			continue
		}
		p := rankedPage{Candidate: c, parsed: ln.parsed, neighbour: neighbours[c.Path]}
		if n, ok := cat.Note(c.Path); ok && n.Title != "" {
			p.Title = n.Title
		} else if p.Title == "" {
			p.Title = ln.parsed.Note.Title
		}
		out = append(out, p)
	}
	return out
}

// bestPassages orders a page's passages: retrieval's best-matching ones
// first, then the rest in document order.
func (p rankedPage) bestPassages() []vault.Passage {
	ps := p.parsed.Passages
	out := make([]vault.Passage, 0, len(ps))
	used := map[int]bool{}
	for _, o := range p.Ordinals {
		if o >= 0 && o < len(ps) && !used[o] {
			out = append(out, ps[o])
			used[o] = true
		}
	}
	for _, x := range ps {
		if !used[x.Ordinal] {
			out = append(out, x)
		}
	}
	return out
}

// rerankPages reorders pages by the hosted reranker, else by the LLM
// listwise. On failure the order is kept and the error returned.
func rerankPages(ctx context.Context, v *Vault, question string, pages []rankedPage) ([]rankedPage, error) {
	if v.Reranker != nil {
		docs := make([]string, len(pages))
		for i, p := range pages {
			docs[i] = p.Title + "\n" + excerptOf(p, rerankExcerpt)
		}
		scores, err := v.Reranker.Rerank(ctx, question, docs)
		if err != nil {
			return pages, err
		}
		if len(scores) != len(pages) {
			return pages, fmt.Errorf("the reranker scored %d of %d pages", len(scores), len(pages))
		}
		idx := make([]int, len(pages))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
		return permute(pages, idx), nil
	}
	order, err := listwiseOrder(ctx, v.LLM, question, pages)
	if err != nil {
		return pages, err
	}
	return permute(pages, order), nil
}

func permute(pages []rankedPage, idx []int) []rankedPage {
	out := make([]rankedPage, len(idx))
	for i, j := range idx {
		out[i] = pages[j]
	}
	return out
}

// excerptOf is a page's best passages, cut to n bytes.
func excerptOf(p rankedPage, n int) string {
	var b strings.Builder
	for _, ps := range p.bestPassages() {
		if b.Len() >= n {
			break
		}
		b.WriteString(ps.Text)
		b.WriteString("\n")
	}
	return strings.TrimSpace(clipBytes(b.String(), n))
}

// listwiseOrder asks the model to order the candidates and validates the
// reply: ids in range, each once; ids it left out follow in their original
// order. The result is a permutation of 0..len(pages)-1.
func listwiseOrder(ctx context.Context, c llm.Chat, question string, pages []rankedPage) ([]int, error) {
	nonce := newNonce()
	var doc strings.Builder
	for i, p := range pages {
		fmt.Fprintf(&doc, "<<<CANDIDATE-%s id=%d path=%s title=%s>>>\n%s\n<<<END-%s>>>\n\n", nonce, i+1,
			jsonString(p.Path), jsonString(p.Title), excerptOf(p, listwiseExcerpt), nonce)
	}
	system := `You rank candidate notes by how useful they are for answering a question, most useful first.
` + dataRule + `
Reply with one JSON object and nothing else: {"order": [<candidate ids, most useful first>]}`
	var reply struct {
		Order []json.Number `json:"order"`
	}
	msgs := []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: "Question: " + question + "\n\nCandidates:\n\n" + doc.String()}}
	_, err := askJSON(ctx, c, msgs, 400, func(b []byte) error {
		reply.Order = nil
		if err := strictDecode(b, &reply); err != nil {
			return err
		}
		if len(reply.Order) == 0 {
			return errors.New(`"order" is missing or empty`)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	seen := make([]bool, len(pages))
	var order []int
	for _, n := range reply.Order {
		id, err := strconv.Atoi(string(n))
		if err != nil || id < 1 || id > len(pages) || seen[id-1] {
			continue
		}
		seen[id-1] = true
		order = append(order, id-1)
	}
	for i := range pages {
		if !seen[i] {
			order = append(order, i)
		}
	}
	return order, nil
}
