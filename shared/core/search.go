package core

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// SearchArgs are the search tool's arguments.
type SearchArgs struct {
	VaultArg
	Query      string   `json:"query" jsonschema:"What to look for. Bare words are AND'd, each matched as a prefix; \"exact phrase\" in double quotes; OR / NOT between terms (upper case); a leading - excludes a word. A malformed query returns no rows." schema:"minLength=1,maxLength=2000"`
	Limit      int      `json:"limit,omitempty" jsonschema:"How many results to return." schema:"minimum=1,maximum=100,default=25"`
	Offset     int      `json:"offset,omitempty" jsonschema:"How many results to skip." schema:"minimum=0,default=0"`
	Mode       string   `json:"mode,omitempty" jsonschema:"fulltext (BM25), semantic, hybrid, or graph (wiki-link traversal from seed_ids or from the best full-text hits)." schema:"enum=fulltext|semantic|hybrid|graph,default=fulltext"`
	Match      string   `json:"match,omitempty" jsonschema:"all (default): every bare word must match. any: rank notes matching any word, stopwords dropped, for questions in whole sentences." schema:"enum=all|any,default=all"`
	Tags       []string `json:"tags,omitempty" jsonschema:"Only notes carrying every one of these tags (nested descendants match). Applied before ranking." schema:"maxItems=20"`
	Author     string   `json:"author,omitempty" jsonschema:"Only notes by this author (frontmatter author, case-insensitive). Applied before ranking."`
	PathPrefix string   `json:"path_prefix,omitempty" jsonschema:"Only notes whose path starts with this plain string. Applied before ranking."`
	Entities   []string `json:"entities,omitempty" jsonschema:"Only notes whose frontmatter entities contain every one of these (exact). Applied before ranking." schema:"maxItems=20"`
	Threshold  *float64 `json:"threshold,omitempty" jsonschema:"Minimum score 0-1 for semantic (cosine), hybrid (fused score) and graph modes; unset: no minimum." schema:"minimum=0,maximum=1"`
	SeedIDs    []string `json:"seed_ids,omitempty" jsonschema:"Graph mode: starting notes (frontmatter ids, id prefixes or paths); omitted: the best full-text hits." schema:"maxItems=20"`
	GraphDepth int      `json:"graph_depth,omitempty" jsonschema:"Graph mode: hops to follow, 1-3." schema:"minimum=1,maximum=3,default=2"`
	IncludeArg
	AgentArg
	Rerank bool `json:"rerank,omitempty" jsonschema:"Semantic and hybrid modes: rerank the best 20-50 candidates with the configured cross-encoder (--rerank-url), else the LLM listwise (one extra call); score is then the reranked position (1 = first, falling)."`
}

type SearchResult struct {
	Coverage
	Items  []SearchHit `json:"items"`
	Total  int         `json:"total"`
	Offset int         `json:"offset"`
	Limit  int         `json:"limit"`
	Mode   string      `json:"mode"`
	Match  string      `json:"match"`
	Hint   string      `json:"hint,omitempty"`
}

// Search implements search: every hit with its provenance.
func (s *Core) Search(ctx context.Context, in SearchArgs) (*SearchResult, error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	out, err := s.search(ctx, v, cat, in)
	if err != nil {
		return nil, err
	}
	s.withProvenance(cat, out.Items, in.metadata())
	s.auditHits(ctx, v, "search", in.AgentArg, out.Items)
	return out, nil
}

func (s *Core) search(ctx context.Context, v *Vault, cat *vault.Catalog, in SearchArgs) (*SearchResult, error) {
	var err error
	if in.Rerank && in.Mode != "semantic" && in.Mode != "hybrid" {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "rerank"},
			"rerank applies to mode semantic or hybrid; for a question in words without embeddings, use search_and_read with rerank")
	}
	switch in.Mode {
	case "semantic", "hybrid":
		if v.Embedder == nil || v.Vectors == nil {
			return nil, notConfigured("Semantic search (mode "+in.Mode+")",
				"no embeddings provider is set up (SHEAF_EMBED_BASE_URL and SHEAF_EMBED_MODEL); use mode fulltext or graph")
		}
		return s.vectorSearch(ctx, v, cat, in)
	case "graph":
		return s.graphSearch(ctx, v, cat, in)
	}
	filter := textindex.Filter{PathPrefix: in.PathPrefix, Tags: in.Tags, Author: in.Author, Entities: in.Entities}
	var res textindex.Result
	if in.Match == "any" {
		res, err = askLexical(ctx, v, cat, textindex.ParseQuestion(in.Query), filter, in.Limit, in.Offset)
	} else {
		res, err = v.Text.Search(ctx, textindex.ParseQuery(in.Query), textindex.Options{Filter: filter, Limit: in.Limit, Offset: in.Offset})
	}
	if err != nil {
		return nil, err
	}
	out := &SearchResult{Items: []SearchHit{}, Total: res.Total, Offset: in.Offset, Limit: in.Limit, Mode: "fulltext", Match: in.Match}
	for _, h := range res.Hits {
		hit := SearchHit{Path: h.Path, Title: h.Title, Snippet: h.Snippet, Score: h.Score, Heading: h.Heading}
		if n, ok := cat.Note(h.Path); ok {
			hit.ID = n.ID
		}
		out.Items = append(out.Items, hit)
	}
	if res.Total == 0 {
		out.Hint = noWordsHint(in.Query)
	}
	if res.Total == 0 && in.Match == "all" && out.Hint == "" {
		anyQ := textindex.QuestionQuery(in.Query)
		if len(anyQ.Any) > 1 {
			if r, err := v.Text.Search(ctx, anyQ, textindex.Options{Filter: filter, Limit: 1}); err == nil && r.Total > 0 {
				out.Hint = fmt.Sprintf("No note contains every word; %d notes match some of them: retry with match: \"any\".", r.Total)
			}
		}
	}
	return out, nil
}

// noWordsHint explains an empty answer to a query that holds no word the
// index can match ("" when it holds one).
func noWordsHint(q string) string {
	if strings.ContainsFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) {
		return ""
	}
	return "The query holds no word the index can match (emoji, symbols and punctuation are not indexed): search with words, or find a note by its title with list_notes title_contains."
}

// vectorSearch ranks in semantic or hybrid mode through retrieve: filters
// scope both lanes before ranking, threshold drops weaker notes, and the
// page is cut from the ranking.
func (s *Core) vectorSearch(ctx context.Context, v *Vault, cat *vault.Catalog, in SearchArgs) (*SearchResult, error) {
	if err := requireQuery(in.Query); err != nil {
		return nil, err
	}
	filter := textindex.Filter{PathPrefix: in.PathPrefix, Tags: in.Tags, Author: in.Author, Entities: in.Entities}
	cands, err := s.retrieve(ctx, v, cat, in.Query, RetrieveOptions{Limit: in.Offset + in.Limit, Mode: in.Mode, Filter: filter, Rerank: in.Rerank})
	if err != nil {
		return nil, err
	}
	if in.Threshold != nil {
		kept := cands[:0]
		for _, c := range cands {
			if roundScore(c.Score) >= *in.Threshold { // the score as shown
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	pageOf, total := page(cands, Page{Limit: in.Limit, Offset: in.Offset})
	return &SearchResult{Items: hitsOf(ctx, v, cat, pageOf), Total: total, Offset: in.Offset, Limit: in.Limit, Mode: in.Mode, Match: in.Match}, nil
}

// graphSearch walks wiki-links breadth-first from the seeds.
func (s *Core) graphSearch(ctx context.Context, v *Vault, cat *vault.Catalog, in SearchArgs) (*SearchResult, error) {
	var seeds []string
	for _, id := range in.SeedIDs {
		if n, ok := cat.Note(id); ok {
			seeds = append(seeds, n.Path)
			continue
		}
		p, err := noteByID(cat, id)
		if err != nil {
			return nil, err
		}
		seeds = append(seeds, p)
	}
	if len(seeds) == 0 {
		filter := textindex.Filter{PathPrefix: in.PathPrefix, Tags: in.Tags, Author: in.Author}
		res, err := askLexical(ctx, v, cat, textindex.ParseQuestion(in.Query), filter, 5, 0)
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			seeds = append(seeds, h.Path)
		}
	}
	depth := in.GraphDepth
	dist := cat.Distances(seeds, depth)
	var hits []SearchHit
	for p, d := range dist {
		n, ok := cat.Note(p)
		if !ok || !hasAll(n.Entities, in.Entities) {
			continue
		}
		score := 1 - float64(d)/float64(depth+1)
		if in.Threshold != nil && score < *in.Threshold {
			continue
		}
		dd := d
		hits = append(hits, SearchHit{Path: p, Title: n.Title, Score: score, ID: n.ID, Distance: &dd})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Path < hits[j].Path
	})
	items, total := page(hits, Page{Limit: in.Limit, Offset: in.Offset})
	if items == nil {
		items = []SearchHit{}
	}
	return &SearchResult{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit, Mode: "graph", Match: in.Match}, nil
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
