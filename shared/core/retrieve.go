package core

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// Candidate is one note ranked for a question by retrieve.
type Candidate struct {
	Path  string
	Title string
	Score float64 // higher is better; comparable only within one call
	// Ordinals are the note's best-matching passages, best first (may be
	// empty when only the note as a whole matched).
	Ordinals []int
	// Heading is the innermost heading of the best passage ("" before the
	// first heading); HeadingID its anchor when the lexical lane found it.
	Heading, HeadingID string
}

// RetrieveOptions tune retrieve.
type RetrieveOptions struct {
	Limit int // notes to return; <= 0: 10
	// Mode picks the lanes: "fulltext", "semantic", "hybrid", or "" for
	// hybrid when embeddings are configured and fulltext otherwise.
	Mode         string
	PreferRecent bool
	Filter       textindex.Filter
	// Lexical replaces the lexical lane's question (default: the question
	// as textindex.ParseQuestion reads it).
	Lexical *textindex.Question
	// Expansion is extra text for the vector lane (a HyDE passage from
	// llm.Expand): the query vector is then the mean of the question's,
	// embedded as a query, and the expansion's, embedded as a document.
	Expansion string
	// Rerank reorders the first rerankPool(Limit) fused candidates with the
	// cross-encoder or the LLM (rerankCandidates) before the cut to Limit.
	Rerank bool
}

// Fusion. Each lane's scores are normalised to [0, 1] over its own
// candidates, and a note's hybrid score is the weighted sum
//
//	(1 - share) * lexical + share * vector,   share = rank.Params.VectorShare(confidence)
//
// with 0 for a lane that did not find the note. The lexical score is the
// lane's relevance divided by its best (it has a natural zero); the vector
// score is the cosine min-max normalised over the lane's pool, so that a
// model whose cosines all sit in a narrow band still spreads them.
// Reciprocal-rank fusion throws the score gaps away, and on a real vault
// ranked below BM25 alone (DESIGN.md). The share's parameters are chosen
// by cross-validation over the question sets (docs/retrieval.md).

// Recency for prefer_recent: a note's score is multiplied by
//
//	1 - recencyWeight + recencyWeight * 2^(-age / recencyHalfLife)
//
// so a note edited today keeps its score, one edited recencyHalfLife ago
// loses recencyWeight/2 of it, and no note loses more than recencyWeight.
const (
	recencyWeight   = 0.25
	recencyHalfLife = 180 * 24 * time.Hour
)

// lanePool is how many notes each lane ranks before fusion.
func lanePool(limit int) int { return max(3*limit, 50) }

// requireQuery refuses a query that is blank once trimmed: the schema's
// minLength lets "   " through, and embedding it would spend a paid call
// on noise ranked as if it meant something.
func requireQuery(q string) error {
	if strings.TrimSpace(q) == "" {
		return newError(KindArgsInvalid, nil, "query is blank: say what to look for")
	}
	return nil
}

// retrieve ranks notes for a question in natural language: the lexical
// lane (any-term BM25, stopwords dropped) fused with the vector lane when
// embeddings are configured. It is the retrieval of answer, eval, semantic
// search and search_and_read. Filters apply before ranking in both lanes.
// The vector lane first brings the embeddings up to date (Refresh).
func (s *Core) retrieve(ctx context.Context, v *Vault, cat *vault.Catalog, question string, o RetrieveOptions) ([]Candidate, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = 10
	}
	mode := o.Mode
	if mode == "" {
		mode = "fulltext"
		if v.Embedder != nil {
			mode = "hybrid"
		}
	}
	var lex, vec []laneHit
	var err error
	if mode != "semantic" {
		if lex, err = lexicalLane(ctx, v, cat, question, o, lanePool(limit)); err != nil {
			return nil, err
		}
	}
	if mode != "fulltext" {
		if err := charge(ctx); err != nil {
			return nil, err
		}
		vec, err = s.vectorLane(ctx, v, cat, question, o, lanePool(limit))
		switch {
		case err != nil && o.Mode == "" && ctx.Err() == nil:
			// Implicit hybrid: a failing provider must not take search down.
			slog.Warn("semantic lane unavailable; ranking with BM25 alone", "vault", v.ID, "err", err)
			mode, vec = "fulltext", nil
		case err != nil:
			return nil, err
		}
	}
	var out []Candidate
	switch mode {
	case "fulltext":
		out = fuse(lex, nil, 0)
	case "semantic":
		out = candidatesOf(vec)
	default:
		out = fuse(lex, vec, v.ranking().VectorShare(confidence(lex)))
	}
	if o.PreferRecent {
		now := s.now()
		for i := range out {
			if n, ok := cat.Note(out[i].Path); ok {
				out[i].Score *= recencyFactor(now.Sub(n.Modified))
			}
		}
	}
	sortCandidates(out)
	for i := range out {
		if n, ok := cat.Note(out[i].Path); ok && n.Title != "" {
			out[i].Title = n.Title
		}
	}
	if o.Rerank {
		if out, err = rerankCandidates(ctx, v, cat, question, out[:min(rerankPool(limit), len(out))]); err != nil {
			return nil, err
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// recencyFactor is prefer_recent's multiplier for a note of the given age.
func recencyFactor(age time.Duration) float64 {
	age = max(age, 0)
	return 1 - recencyWeight + recencyWeight*math.Exp2(-float64(age)/float64(recencyHalfLife))
}

// laneHit is one note as one lane ranked it; Score is higher-is-better.
type laneHit struct {
	Path, Title        string
	Score              float64
	Matched            float64 // lexical: textindex.Hit.Matched
	Ordinal            int
	Heading, HeadingID string
}

// lexicalLane ranks notes with the text index's question lane and the
// vault prior (askLexical).
func lexicalLane(ctx context.Context, v *Vault, cat *vault.Catalog, question string, o RetrieveOptions, pool int) ([]laneHit, error) {
	q := textindex.ParseQuestion(question)
	if o.Lexical != nil {
		q = *o.Lexical
	}
	res, err := askLexical(ctx, v, cat, q, o.Filter, pool, 0)
	if err != nil {
		return nil, err
	}
	out := make([]laneHit, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = laneHit{Path: h.Path, Title: h.Title, Score: -h.Score, Matched: h.Matched, Ordinal: h.Passage, Heading: h.Heading, HeadingID: h.HeadingID}
	}
	return out, nil
}

// vectorLane refreshes the embeddings, embeds the question (and its
// expansion) and ranks notes by their best passage's cosine.
func (s *Core) vectorLane(ctx context.Context, v *Vault, cat *vault.Catalog, question string, o RetrieveOptions, pool int) ([]laneHit, error) {
	if err := refreshEmbeddings(ctx, v, cat); err != nil {
		return nil, err
	}
	qv, err := embedQuery(ctx, v, question, o.Expansion)
	if err != nil {
		return nil, err
	}
	f, err := vectorFilter(cat, o.Filter)
	if err != nil {
		return nil, err
	}
	hits, err := v.Vectors.SearchNotes(ctx, qv, pool, f)
	if err != nil {
		return nil, fmt.Errorf("searching the vector index: %w", err)
	}
	out := make([]laneHit, len(hits))
	for i, h := range hits {
		out[i] = laneHit{Path: h.Path, Score: float64(h.Score), Ordinal: h.Ordinal, Heading: h.Heading}
	}
	return out, nil
}

// refreshEmbeddings checks that embeddings are configured and brings them
// up to date before a semantic query.
func refreshEmbeddings(ctx context.Context, v *Vault, cat *vault.Catalog) error {
	if v.Embedder == nil || v.Vectors == nil {
		return errNoEmbeddings()
	}
	if v.Embeddings == nil {
		return nil
	}
	if _, _, err := v.Embeddings.Refresh(ctx, cat); err != nil {
		return fmt.Errorf("updating the embeddings: %w", err)
	}
	return nil
}

// errNoEmbeddings is the spec's "not configured" error of the semantic tools.
func errNoEmbeddings() *Error {
	return notConfigured("Semantic search (embeddings)",
		"no embeddings provider is set up; set SHEAF_EMBED_BASE_URL and SHEAF_EMBED_MODEL (any OpenAI-compatible /v1/embeddings endpoint)")
}

// embedQuery embeds question as a query and, when there is one, its
// expansion (a hypothetical passage, llm.Expand) as a document, and
// returns their mean direction.
func embedQuery(ctx context.Context, v *Vault, question, expansion string) ([]float32, error) {
	vecs, err := embed.Query(ctx, v.Embedder, []string{question})
	if err == nil && expansion != "" {
		var more [][]float32
		more, err = v.Embedder.Embed(ctx, []string{expansion})
		vecs = append(vecs, more...)
	}
	if err != nil {
		return nil, fmt.Errorf("embedding the query: %w", err)
	}
	want := 1
	if expansion != "" {
		want = 2
	}
	if len(vecs) != want || len(vecs[0]) == 0 {
		return nil, fmt.Errorf("embedding the query: the provider returned %d vectors for %d texts", len(vecs), want)
	}
	if len(vecs) == 1 {
		return vecs[0], nil
	}
	mean := make([]float32, len(vecs[0]))
	for _, vec := range vecs {
		if len(vec) != len(mean) {
			return nil, fmt.Errorf("embedding the query: vectors of %d and %d dimensions", len(mean), len(vec))
		}
		unitAdd(mean, vec)
	}
	return mean, nil
}

// vectorFilter turns a text filter into a vector filter. The vector index
// filters by path and tags itself; author and entities are resolved to the
// set of matching notes through the catalog first.
func vectorFilter(cat *vault.Catalog, f textindex.Filter) (vectors.Filter, error) {
	vf := vectors.Filter{PathPrefix: f.PathPrefix, Tags: f.Tags, Paths: f.Paths}
	if f.Author == "" && len(f.Entities) == 0 {
		return vf, nil
	}
	lf := vault.ListFilter{PathPrefix: f.PathPrefix, Tags: f.Tags, Author: f.Author, Entities: f.Entities}
	if f.Paths != nil {
		lf.Paths = map[string]bool{}
		for _, p := range f.Paths {
			lf.Paths[p] = true
		}
	}
	vf.Paths = []string{}
	for _, n := range cat.List(lf) {
		vf.Paths = append(vf.Paths, n.Path)
	}
	return vf, nil
}

// normalised returns each hit's score scaled to [0, 1] within its lane:
// divided by the best for BM25 (minMax false), min-max for cosines.
func normalised(hits []laneHit, minMax bool) map[string]float64 {
	out := make(map[string]float64, len(hits))
	if len(hits) == 0 {
		return out
	}
	hi, lo := math.Inf(-1), math.Inf(1)
	for _, h := range hits {
		hi, lo = max(hi, h.Score), min(lo, h.Score)
	}
	if !minMax {
		lo = 0
	}
	for _, h := range hits {
		if _, done := out[h.Path]; done {
			continue // a path's first hit is its best
		}
		switch {
		case hi-lo <= 1e-12:
			out[h.Path] = 1
		default:
			out[h.Path] = min(1, max(0, (h.Score-lo)/(hi-lo)))
		}
	}
	return out
}

// fuse combines the lanes with the vector lane's share w. With no
// vector lane it keeps BM25's order and normalised scores.
func fuse(lex, vec []laneHit, w float64) []Candidate {
	ln, vn := normalised(lex, false), normalised(vec, true)
	byPath := map[string]*Candidate{}
	var order []string
	add := func(h laneHit, share float64) {
		c := byPath[h.Path]
		if c == nil {
			c = &Candidate{Path: h.Path, Title: h.Title}
			byPath[h.Path] = c
			order = append(order, h.Path)
		}
		c.Score += share
		if h.Ordinal != vectors.NameOrdinal {
			c.Ordinals = appendOrdinal(c.Ordinals, h.Ordinal)
		}
		if c.Title == "" {
			c.Title = h.Title
		}
	}
	lex, vec = firstPerPath(lex), firstPerPath(vec)
	for _, h := range lex {
		add(h, (1-w)*ln[h.Path])
	}
	for _, h := range vec {
		add(h, w*vn[h.Path])
	}
	// A note's best passage is the lexical lane's when it has one (that
	// passage provably holds the query's words), else the vector lane's.
	best := map[string]laneHit{}
	for _, h := range vec {
		best[h.Path] = h
	}
	for _, h := range lex {
		best[h.Path] = h
	}
	out := make([]Candidate, 0, len(order))
	for _, p := range order {
		c := byPath[p]
		b := best[p]
		c.Heading, c.HeadingID = b.Heading, b.HeadingID
		if len(c.Ordinals) > 1 && c.Ordinals[0] != b.Ordinal {
			c.Ordinals[0], c.Ordinals[1] = c.Ordinals[1], c.Ordinals[0]
		}
		out = append(out, *c)
	}
	return out
}

// confidence is how sure the lexical lane is of its best note: the share
// of the question's weight that note holds (textindex.Hit.Matched); 0 for
// an adapter that does not measure it, or no note.
func confidence(lex []laneHit) float64 {
	if len(lex) == 0 {
		return 0
	}
	return min(max(lex[0].Matched, 0), 1)
}

// firstPerPath keeps each path's first (best) hit of a lane.
func firstPerPath(hits []laneHit) []laneHit {
	seen := make(map[string]bool, len(hits))
	out := hits[:0:0]
	for _, h := range hits {
		if !seen[h.Path] {
			seen[h.Path] = true
			out = append(out, h)
		}
	}
	return out
}

func appendOrdinal(ords []int, o int) []int {
	for _, x := range ords {
		if x == o {
			return ords
		}
	}
	return append(ords, o)
}

// candidatesOf keeps the vector lane's raw cosines (semantic mode).
func candidatesOf(hits []laneHit) []Candidate {
	out := make([]Candidate, len(hits))
	for i, h := range hits {
		out[i] = Candidate{Path: h.Path, Title: h.Title, Score: h.Score, Ordinals: passageOrdinals(h.Ordinal), Heading: h.Heading}
	}
	return out
}

// passageOrdinals is a vector hit's passage; none when the note's name
// matched best (vectors.NameOrdinal), and the note is shown from its
// first passage.
func passageOrdinals(ordinal int) []int {
	if ordinal == vectors.NameOrdinal {
		return nil
	}
	return []int{ordinal}
}

// sortCandidates orders best first, ties by path, stably.
func sortCandidates(cs []Candidate) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Score != cs[j].Score {
			return cs[i].Score > cs[j].Score
		}
		return cs[i].Path < cs[j].Path
	})
}

// unitAdd adds vec, scaled to unit length, to sum.
func unitAdd(sum, vec []float32) {
	var n float64
	for _, x := range vec {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for i, x := range vec {
		sum[i] += x * inv
	}
}
