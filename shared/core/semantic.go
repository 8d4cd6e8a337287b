package core

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// The semantic tools: semantic_search, related_notes, find_duplicates,
// topic_map and reindex_embeddings. Each brings the embeddings up to date
// first (Embeddings.Refresh: only changed passages are embedded) and fails
// with the spec's "not configured" error (kind unsupported) without an
// embeddings provider.

// SemanticSearchIn is semantic_search's input.
type SemanticSearchIn struct {
	VaultArg
	Query        string   `json:"query" jsonschema:"What the notes should be about, in words or a whole question." schema:"minLength=1,maxLength=2000"`
	Hybrid       bool     `json:"hybrid,omitempty" jsonschema:"Fuse vector and keyword (BM25) ranking; score is then the fused score."`
	PreferRecent bool     `json:"prefer_recent,omitempty" jsonschema:"Down-weight stale notes so fresher ones rank higher: a note edited 180 days ago loses 12.5% of its score, never more than 25%."`
	Expand       bool     `json:"expand,omitempty" jsonschema:"HyDE query expansion for better recall (one extra LLM call; needs an LLM provider)."`
	Limit        int      `json:"limit,omitempty" jsonschema:"How many notes to return." schema:"minimum=1,maximum=100,default=20"`
	Tags         []string `json:"tags,omitempty" jsonschema:"Only notes carrying every one of these tags (nested descendants match). Applied before ranking." schema:"maxItems=20"`
	PathPrefix   string   `json:"path_prefix,omitempty" jsonschema:"Only notes whose path starts with this plain string. Applied before ranking."`
	Rerank       bool     `json:"rerank,omitempty" jsonschema:"Rerank the best 20-50 candidates with the configured cross-encoder (--rerank-url), else the LLM listwise: one extra call, more precise top results; score is then the reranked position (1 = first, falling). Needs one of them configured."`
	IncludeArg
	AgentArg
}

// SemanticResult is semantic_search's and related_notes' page.
type SemanticResult struct {
	Coverage
	Items  []SearchHit `json:"items"`
	Total  int         `json:"total" jsonschema:"how many notes are returned (ranking has no natural end)"`
	Offset int         `json:"offset"`
	Limit  int         `json:"limit"`
	Mode   string      `json:"mode" jsonschema:"semantic or hybrid" schema:"enum=semantic|hybrid"`
}

// RelatedIn is related_notes' input.
type RelatedIn struct {
	VaultArg
	Path  string `json:"path" jsonschema:"Vault-relative path of the note to find neighbours for." schema:"minLength=1"`
	Limit int    `json:"limit,omitempty" jsonschema:"How many notes to return." schema:"minimum=1,maximum=100,default=5"`
}

// DuplicatesIn is find_duplicates' input.
type DuplicatesIn struct {
	VaultArg
	Threshold float64 `json:"threshold,omitempty" jsonschema:"Cosine similarity (0-1) at or above which two notes are near-duplicates." schema:"minimum=0,maximum=1,default=0.9"`
	Limit     int     `json:"limit,omitempty" jsonschema:"How many pairs to return at most." schema:"minimum=1,maximum=500,default=50"`
	Offset    int     `json:"offset,omitempty" jsonschema:"How many pairs to skip." schema:"minimum=0,maximum=10000,default=0"`
}

// DuplicatePair is two notes whose embeddings are nearly the same.
type DuplicatePair struct {
	PathA      string  `json:"pathA"`
	PathB      string  `json:"pathB"`
	Similarity float64 `json:"similarity" jsonschema:"cosine of the two notes' mean passage vectors"`
}

// DuplicatesOut is find_duplicates' page of pairs.
type DuplicatesOut struct {
	Coverage
	Items  []DuplicatePair `json:"items" jsonschema:"highest similarity first"`
	Total  int             `json:"total" jsonschema:"pairs at or above the threshold"`
	Offset int             `json:"offset"`
	Limit  int             `json:"limit"`
}

// TopicMapIn is topic_map's input.
type TopicMapIn struct {
	VaultArg
	Threshold float64 `json:"threshold,omitempty" jsonschema:"Cosine similarity (0-1) at or above which two notes are on the same topic." schema:"minimum=0,maximum=1,default=0.85"`
	MinSize   int     `json:"min_size,omitempty" jsonschema:"Smallest cluster reported." schema:"minimum=2,maximum=1000,default=2"`
	Limit     int     `json:"limit,omitempty" jsonschema:"How many clusters to return at most, largest first." schema:"minimum=1,maximum=500,default=100"`
}

// Topic is one cluster of notes.
type Topic struct {
	Notes      []string `json:"notes" jsonschema:"the members, sorted (at most 100; size is the true count)"`
	Size       int      `json:"size"`
	HasHub     bool     `json:"hasHub" jsonschema:"some member is linked to by at least two other members"`
	SharedTags []string `json:"sharedTags" jsonschema:"tags carried by at least half the members (and two), most common first"`
}

// TopicMapOut is topic_map's result.
type TopicMapOut struct {
	Coverage
	Clusters    []Topic `json:"clusters" jsonschema:"largest first"`
	MissingHubs []Topic `json:"missingHubs" jsonschema:"the clusters without a hub: create an index note named from sharedTags and link the notes in"`
	Total       int     `json:"total" jsonschema:"clusters of at least min_size, before limit"`
}

// ReindexIn is reindex_embeddings' input (none but the vault).
type ReindexIn struct {
	VaultArg
}

// ReindexOut is what reindex_embeddings (re)embedded.
type ReindexOut struct {
	Coverage
	Notes    int `json:"notes" jsonschema:"notes (re)embedded"`
	Passages int `json:"passages" jsonschema:"texts sent to the embeddings provider: changed passages and notes' names (unchanged ones are reused)"`
}

// semanticVault opens the vault of a semantic tool and checks that
// embeddings are configured.
func (s *Core) semanticVault(ctx context.Context, a VaultArg) (*Vault, *vault.Catalog, error) {
	v, cat, err := s.open(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	if v.Embedder == nil || v.Vectors == nil {
		return nil, nil, errNoEmbeddings()
	}
	return v, cat, nil
}

// SemanticSearch implements semantic_search.
func (s *Core) SemanticSearch(ctx context.Context, in SemanticSearchIn) (*SemanticResult, error) {
	v, cat, err := s.semanticVault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if err := requireQuery(in.Query); err != nil {
		return nil, err
	}
	mode := "semantic"
	if in.Hybrid {
		mode = "hybrid"
	}
	o := RetrieveOptions{Limit: in.Limit, Mode: mode, PreferRecent: in.PreferRecent, Rerank: in.Rerank,
		Filter: textindex.Filter{Tags: in.Tags, PathPrefix: in.PathPrefix}}
	if in.Expand {
		// HyDE, as in answer: the expanded text feeds the vector lane
		// (averaged with the question) and the lexical lane.
		x, err := expandQuery(ctx, v, in.Query)
		if err != nil {
			return nil, err
		}
		lex := textindex.ParseQuestion(x)
		o.Expansion, o.Lexical = x, &lex
	}
	cands, err := s.retrieve(ctx, v, cat, in.Query, o)
	if err != nil {
		return nil, err
	}
	items := hitsOf(ctx, v, cat, cands)
	s.withProvenance(cat, items, in.metadata())
	s.auditHits(ctx, v, "semantic_search", in.AgentArg, items)
	return &SemanticResult{Items: items, Total: len(items), Limit: in.Limit, Mode: mode}, nil
}

// expandQuery is HyDE expansion through the vault's LLM.
func expandQuery(ctx context.Context, v *Vault, query string) (string, error) {
	if v.LLM == nil {
		return "", notConfigured("Query expansion (expand)",
			"no LLM provider is set up; set SHEAF_LLM_BASE_URL and SHEAF_LLM_MODEL, or call without expand")
	}
	x, err := llm.Expand(ctx, v.LLM, query)
	if err != nil {
		return "", fmt.Errorf("expanding the query: %w", err)
	}
	return x, nil
}

// RelatedNotes implements related_notes.
func (s *Core) RelatedNotes(ctx context.Context, in RelatedIn) (*SemanticResult, error) {
	v, cat, err := s.semanticVault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	n, err := catalogNote(cat, in.Path)
	if err != nil {
		return nil, err
	}
	if err := refreshEmbeddings(ctx, v, cat); err != nil {
		return nil, err
	}
	out := &SemanticResult{Items: []SearchHit{}, Limit: in.Limit, Mode: "semantic"}
	stored, err := v.Vectors.Hashes(ctx, n.Path)
	if err != nil {
		return nil, err
	}
	q := meanVector(stored)
	if q == nil {
		return out, nil // a note that cannot be embedded (binary, too large)
	}
	linked := map[string]bool{n.Path: true}
	for _, l := range cat.Outgoing(n.Path) {
		if l.Resolved() {
			linked[l.Path] = true
		}
	}
	for _, b := range cat.Backlinks(n.Path) {
		linked[b.Source] = true
	}
	hits, err := v.Vectors.SearchNotes(ctx, q, in.Limit+len(linked), vectors.Filter{})
	if err != nil {
		return nil, err
	}
	var cands []Candidate
	for _, h := range hits {
		if linked[h.Path] || len(cands) == in.Limit {
			continue
		}
		cn, ok := cat.Note(h.Path)
		if !ok {
			continue
		}
		cands = append(cands, Candidate{Path: h.Path, Title: cn.Title, Score: float64(h.Score), Ordinals: passageOrdinals(h.Ordinal), Heading: h.Heading})
	}
	out.Items = hitsOf(ctx, v, cat, cands)
	s.withProvenance(cat, out.Items, false)
	out.Total = len(out.Items)
	return out, nil
}

// meanVector is the unit mean of a note's unit passage vectors, or its
// name's when it has no passage (a note's name says nothing of whether two
// notes say the same); nil for none.
func meanVector(vs map[string][]float32) []float32 {
	var mean []float32
	passages := false
	for h := range vs {
		passages = passages || !vectors.IsNameHash(h)
	}
	for h, vec := range vs {
		if passages && vectors.IsNameHash(h) {
			continue
		}
		if mean == nil {
			mean = make([]float32, len(vec))
		}
		if len(vec) != len(mean) {
			continue
		}
		unitAdd(mean, vec)
	}
	if mean == nil || !normalize(mean) {
		return nil
	}
	return mean
}

// normalize scales v to unit length; false when v is zero.
func normalize(v []float32) bool {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// semanticNotes opens the vault of a whole-vault semantic tool
// (find_duplicates, topic_map), brings its embeddings up to date and
// returns its notes' vectors (see noteVectors).
func (s *Core) semanticNotes(ctx context.Context, a VaultArg) (*vault.Catalog, []string, [][]float32, error) {
	v, cat, err := s.semanticVault(ctx, a)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := refreshEmbeddings(ctx, v, cat); err != nil {
		return nil, nil, nil, err
	}
	paths, vecs, err := noteVectors(ctx, v, cat)
	if err != nil {
		return nil, nil, nil, err
	}
	return cat, paths, vecs, nil
}

// noteVectors returns the unit mean vector of every embedded note that is
// in the catalog, sorted by path.
func noteVectors(ctx context.Context, v *Vault, cat *vault.Catalog) ([]string, [][]float32, error) {
	stored, err := v.Vectors.Notes(ctx)
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, 0, len(stored))
	for p := range stored {
		if _, ok := cat.Note(p); ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	keep := paths[:0]
	var vecs [][]float32
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		hs, err := v.Vectors.Hashes(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		if m := meanVector(hs); m != nil {
			keep = append(keep, p)
			vecs = append(vecs, m)
		}
	}
	return keep, vecs, nil
}

// pairwise calls visit(worker, i, j, sim) for every pair i < j whose cosine
// reaches threshold, on all cores; each worker's calls are sequential. It
// is O(n²·dim): a few seconds at about ten thousand notes.
func pairwise(ctx context.Context, vecs [][]float32, threshold float32, workers int, visit func(w, i, j int, sim float32)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(vecs) || ctx.Err() != nil {
					return
				}
				a := vecs[i]
				for j := i + 1; j < len(vecs); j++ {
					if sim := dot(a, vecs[j]); sim >= threshold {
						visit(w, i, j, sim)
					}
				}
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// pairHeap keeps the best pairs: a min-heap by similarity (ties: later
// paths first out, so the kept order is deterministic).
type pairHeap []DuplicatePair

func (h pairHeap) Len() int           { return len(h) }
func (h pairHeap) Less(i, j int) bool { return pairBefore(h[j], h[i]) }
func (h pairHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)        { *h = append(*h, x.(DuplicatePair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// pairBefore orders pairs best first: similarity, then paths.
func pairBefore(a, b DuplicatePair) bool {
	if a.Similarity != b.Similarity {
		return a.Similarity > b.Similarity
	}
	if a.PathA != b.PathA {
		return a.PathA < b.PathA
	}
	return a.PathB < b.PathB
}

func (h *pairHeap) offer(p DuplicatePair, k int) {
	if h.Len() < k {
		heap.Push(h, p)
	} else if k > 0 && pairBefore(p, (*h)[0]) {
		(*h)[0] = p
		heap.Fix(h, 0)
	}
}

// FindDuplicates implements find_duplicates.
func (s *Core) FindDuplicates(ctx context.Context, in DuplicatesIn) (*DuplicatesOut, error) {
	_, paths, vecs, err := s.semanticNotes(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	workers := runtime.GOMAXPROCS(0)
	keep := in.Offset + in.Limit
	heaps := make([]pairHeap, workers)
	var total atomic.Int64
	err = pairwise(ctx, vecs, float32(in.Threshold)-1e-6, workers, func(w, i, j int, sim float32) {
		total.Add(1)
		heaps[w].offer(DuplicatePair{PathA: paths[i], PathB: paths[j], Similarity: roundScore(min(float64(sim), 1))}, keep)
	})
	if err != nil {
		return nil, err
	}
	var all []DuplicatePair
	for _, h := range heaps {
		all = append(all, h...)
	}
	slices.SortFunc(all, func(a, b DuplicatePair) int {
		if pairBefore(a, b) {
			return -1
		}
		if pairBefore(b, a) {
			return 1
		}
		return 0
	})
	items, _ := page(all, Page{Limit: in.Limit, Offset: in.Offset})
	return &DuplicatesOut{Items: items, Total: int(total.Load()), Offset: in.Offset, Limit: in.Limit}, nil
}

// unionFind is a disjoint-set forest over note indexes.
type unionFind []int32

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = int32(i)
	}
	return u
}

func (u unionFind) find(i int) int {
	for int(u[i]) != i {
		u[i] = u[u[i]]
		i = int(u[i])
	}
	return i
}

func (u unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		u[max(ra, rb)] = int32(min(ra, rb))
	}
}

// maxTopicNotes caps the members listed per cluster.
const maxTopicNotes = 100

// TopicMap implements topic_map. Clusters are single-linkage: the connected
// components of the graph joining notes whose mean vectors reach threshold.
func (s *Core) TopicMap(ctx context.Context, in TopicMapIn) (*TopicMapOut, error) {
	cat, paths, vecs, err := s.semanticNotes(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	workers := runtime.GOMAXPROCS(0)
	ufs := make([]unionFind, workers)
	for w := range ufs {
		ufs[w] = newUnionFind(len(paths))
	}
	err = pairwise(ctx, vecs, float32(in.Threshold)-1e-6, workers, func(w, i, j int, _ float32) {
		ufs[w].union(i, j)
	})
	if err != nil {
		return nil, err
	}
	uf := ufs[0]
	for _, other := range ufs[1:] {
		for i := range other {
			uf.union(i, other.find(i))
		}
	}
	groups := map[int][]string{}
	for i, p := range paths {
		r := uf.find(i)
		groups[r] = append(groups[r], p)
	}
	var clusters []Topic
	for _, members := range groups {
		if len(members) >= in.MinSize {
			clusters = append(clusters, topicOf(cat, members))
		}
	}
	sort.Slice(clusters, func(i, j int) bool {
		if clusters[i].Size != clusters[j].Size {
			return clusters[i].Size > clusters[j].Size
		}
		return clusters[i].Notes[0] < clusters[j].Notes[0]
	})
	out := &TopicMapOut{Clusters: []Topic{}, MissingHubs: []Topic{}, Total: len(clusters)}
	if len(clusters) > in.Limit {
		clusters = clusters[:in.Limit]
	}
	out.Clusters = append(out.Clusters, clusters...)
	for _, c := range clusters {
		if !c.HasHub {
			out.MissingHubs = append(out.MissingHubs, c)
		}
	}
	return out, nil
}

// topicOf describes one cluster: hub, shared tags, members (sorted, capped).
func topicOf(cat *vault.Catalog, members []string) Topic {
	sort.Strings(members)
	in := make(map[string]bool, len(members))
	for _, m := range members {
		in[m] = true
	}
	inbound := map[string]int{}
	tagCount := map[string]int{}
	var tagOrder []string
	for _, m := range members {
		targets := map[string]bool{}
		for _, l := range cat.Outgoing(m) {
			if l.Resolved() && in[l.Path] && l.Path != m {
				targets[l.Path] = true
			}
		}
		for t := range targets {
			inbound[t]++
		}
		if n, ok := cat.Note(m); ok {
			for _, t := range n.Tags {
				t = vault.NormalizeTag(t)
				if t == "" {
					continue
				}
				if tagCount[t] == 0 {
					tagOrder = append(tagOrder, t)
				}
				tagCount[t]++
			}
		}
	}
	hub := false
	for _, c := range inbound {
		hub = hub || c >= 2
	}
	shared := []string{}
	for _, t := range tagOrder {
		if c := tagCount[t]; c >= 2 && 2*c >= len(members) {
			shared = append(shared, t)
		}
	}
	sort.SliceStable(shared, func(i, j int) bool { return tagCount[shared[i]] > tagCount[shared[j]] })
	listed := members
	if len(listed) > maxTopicNotes {
		listed = listed[:maxTopicNotes]
	}
	return Topic{Notes: listed, Size: len(members), HasHub: hub, SharedTags: shared}
}

// ReindexEmbeddings implements reindex_embeddings.
func (s *Core) ReindexEmbeddings(ctx context.Context, in ReindexIn) (*ReindexOut, error) {
	v, cat, err := s.semanticVault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if v.Embeddings == nil {
		return &ReindexOut{}, nil // the index is kept current elsewhere (the cloud indexer)
	}
	notes, passages, err := v.Embeddings.Refresh(ctx, cat)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("updating the embeddings: %w", err)
	}
	return &ReindexOut{Notes: notes, Passages: passages}, nil
}
