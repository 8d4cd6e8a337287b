package meili

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/meilisearch/meilisearch-go"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

const (
	defaultLimit = 25
	// maxHits is Meilisearch's default pagination.maxTotalHits: no search
	// returns hits past it.
	maxHits = 1000
	// Snippets: Meilisearch crops to cropWords words; snippetBytes caps
	// the result for long words and unsegmented scripts.
	cropWords    = 30
	cropMarker   = "…"
	snippetBytes = 320
)

// Search ranks the notes matching q under opts.Filter (see the package
// documentation for how the query maps onto Meilisearch).
func (ix *Index) Search(ctx context.Context, q textindex.Query, opts textindex.Options) (textindex.Result, error) {
	cs := conjs(q)
	if len(cs) == 0 || (opts.Filter.Paths != nil && len(opts.Filter.Paths) == 0) {
		return textindex.Result{}, nil
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	offset := max(opts.Offset, 0)
	if err := ix.EnsureSettings(ctx); err != nil {
		return textindex.Result{}, err
	}
	filter := noteFilter(opts.Filter)
	if opts.Unit == textindex.Passages {
		return ix.searchPassages(ctx, cs, filter, limit, offset)
	}
	notes, total, err := ix.rankNotes(ctx, cs, filter, limit, offset)
	if err != nil {
		return textindex.Result{}, err
	}
	res := textindex.Result{Total: total}
	best, err := ix.bestPassages(ctx, cs, notes)
	if err != nil {
		return textindex.Result{}, err
	}
	for i, n := range notes {
		h := n.hit()
		best[i].fill(&h)
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// rankedNote is one note hit of a ranking.
type rankedNote struct {
	id, path, title string
	score           float64 // -_rankingScore
	conj            int     // the conjunction that found it
}

func (n rankedNote) hit() textindex.Hit {
	return textindex.Hit{Path: n.path, Title: n.title, Score: n.score}
}

// rankNotes runs the conjunctions as one federated search over note
// documents and returns the page and the number of matching notes.
func (ix *Index) rankNotes(ctx context.Context, cs []conj, filter string, limit, offset int) ([]rankedNote, int, error) {
	req := &meilisearch.MultiSearchRequest{Federation: &meilisearch.MultiSearchFederation{
		Offset: int64(offset), Limit: int64(limit)}}
	for _, c := range cs {
		req.Queries = append(req.Queries, &meilisearch.SearchRequest{
			IndexUID: ix.cfg.Index, Query: c.q, Filter: filter, MatchingStrategy: meilisearch.All,
			ShowRankingScore: true, AttributesToRetrieve: []string{fNote, fPath, fTitle},
		})
	}
	resp, err := ix.client.MultiSearch(ctx, req)
	if err != nil {
		return nil, 0, fmt.Errorf("meili: search: %w", err)
	}
	notes := make([]rankedNote, 0, len(resp.Hits))
	for _, h := range resp.Hits {
		var d struct {
			Note       string  `json:"note"`
			Path       string  `json:"path"`
			Title      string  `json:"title"`
			Score      float64 `json:"_rankingScore"`
			Federation struct {
				Query int `json:"queriesPosition"`
			} `json:"_federation"`
		}
		if err := decodeHit(h, &d); err != nil {
			return nil, 0, err
		}
		n := rankedNote{id: d.Note, path: d.Path, title: d.Title, score: -d.Score, conj: d.Federation.Query}
		if k := len(notes); k > 0 {
			n.score = max(n.score, notes[k-1].score) // best first, whatever the rounding
		}
		if n.conj < 0 || n.conj >= len(cs) {
			n.conj = 0
		}
		notes = append(notes, n)
	}
	return notes, int(resp.EstimatedTotalHits), nil
}

// decodeHit decodes a hit's fields into v.
func decodeHit(h meilisearch.Hit, v any) error {
	raw, err := json.Marshal(h)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		return fmt.Errorf("meili: decode hit: %w", err)
	}
	return nil
}

// passage is one passage hit with its crop.
type passage struct {
	Note      string  `json:"note"`
	Pidx      int     `json:"pidx"`
	Ordinal   int     `json:"ordinal"`
	Heading   string  `json:"heading"`
	HeadingID string  `json:"headingId"`
	Score     float64 `json:"_rankingScore"`
	Formatted struct {
		Text string `json:"text"`
	} `json:"_formatted"`
	found bool
}

func (p passage) fill(h *textindex.Hit) {
	h.Passage, h.Heading, h.HeadingID = p.Ordinal, p.Heading, p.HeadingID
	h.Snippet = snippet(p.Formatted.Text)
}

// passageRequest asks for passages with their crop.
func (ix *Index) passageRequest(q, filter string, strategy meilisearch.MatchingStrategy) *meilisearch.SearchRequest {
	return &meilisearch.SearchRequest{
		IndexUID: ix.cfg.Index, Query: q, Filter: filter, MatchingStrategy: strategy, ShowRankingScore: true,
		AttributesToRetrieve: []string{fNote, fPidx, fOrdinal, fHeading, fHeadingID},
		AttributesToCrop:     []string{fText}, CropLength: cropWords, CropMarker: cropMarker,
	}
}

// bestPassages finds, for each note, the passage that matches most terms
// of the conjunction that found the note (matchingStrategy "last"), or
// else its first passage: one multi-search with a query per note, and one
// more for the notes whose passages match no term.
func (ix *Index) bestPassages(ctx context.Context, cs []conj, notes []rankedNote) ([]passage, error) {
	best := make([]passage, len(notes))
	if len(notes) == 0 {
		return best, nil
	}
	run := func(idx []int, query func(n rankedNote) *meilisearch.SearchRequest) error {
		req := &meilisearch.MultiSearchRequest{}
		for _, i := range idx {
			req.Queries = append(req.Queries, query(notes[i]))
		}
		resp, err := ix.client.MultiSearch(ctx, req)
		if err != nil {
			return fmt.Errorf("meili: search passages: %w", err)
		}
		if len(resp.Results) != len(idx) {
			return fmt.Errorf("meili: search passages: %d results for %d queries", len(resp.Results), len(idx))
		}
		for k, r := range resp.Results {
			if len(r.Hits) == 0 {
				continue
			}
			if err := decodeHit(r.Hits[0], &best[idx[k]]); err != nil {
				return err
			}
			best[idx[k]].found = true
		}
		return nil
	}
	all := make([]int, len(notes))
	for i := range all {
		all[i] = i
	}
	err := run(all, func(n rankedNote) *meilisearch.SearchRequest {
		r := ix.passageRequest(cs[n.conj].positive, passageFilter(n.id), meilisearch.Last)
		r.Limit = 1
		return r
	})
	if err != nil {
		return nil, err
	}
	var missing []int
	for i, b := range best {
		if !b.found {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return best, nil
	}
	err = run(missing, func(n rankedNote) *meilisearch.SearchRequest {
		r := ix.passageRequest("", passageFilter(n.id)+" AND "+fPidx+" = 0", meilisearch.Last)
		r.Limit = 1
		return r
	})
	return best, err
}

// passageFilter selects the passages of one note.
func passageFilter(note string) string {
	return kindFilter(kindPassage) + " AND " + fNote + " = " + quote(note)
}

// searchPassages serves Unit Passages: it ranks notes as a note search does
// and expands each note, in rank order, into its passages that match a
// conjunction themselves, best first by their own ranking score; every
// passage hit carries its note's score. Offset and Limit page over this
// sequence. Total counts the matching passages of the notes read plus one
// for each matching note not read: exact once the page reaches the last
// matching note.
func (ix *Index) searchPassages(ctx context.Context, cs []conj, filter string, limit, offset int) (textindex.Result, error) {
	var (
		res        textindex.Result
		skip       = offset
		counted    int
		read, seen int
		total      int
		batch      = min(max(offset+limit, 1), maxHits)
	)
	for {
		notes, t, err := ix.rankNotes(ctx, cs, filter, batch, seen)
		if err != nil {
			return textindex.Result{}, err
		}
		total = t
		if len(notes) == 0 {
			break
		}
		byNote, err := ix.matchingPassages(ctx, cs, notes)
		if err != nil {
			return textindex.Result{}, err
		}
		for _, n := range notes {
			if len(res.Hits) == limit {
				break
			}
			read++
			ps := byNote[n.id]
			counted += len(ps)
			for _, p := range ps {
				if skip > 0 {
					skip--
					continue
				}
				if len(res.Hits) < limit {
					h := n.hit()
					p.fill(&h)
					res.Hits = append(res.Hits, h)
				}
			}
		}
		seen += len(notes)
		if len(res.Hits) == limit || len(notes) < batch || seen >= maxHits {
			break
		}
		batch = min(2*batch, maxHits)
	}
	res.Total = counted + max(total-read, 0)
	return res, nil
}

// matchingPassages returns, per note id, the passages of notes that match
// one of the conjunctions, best first (ties in reading order). One
// federated search returns at most maxHits passages.
func (ix *Index) matchingPassages(ctx context.Context, cs []conj, notes []rankedNote) (map[string][]passage, error) {
	ids := make([]string, len(notes))
	for i, n := range notes {
		ids[i] = n.id
	}
	filter := kindFilter(kindPassage) + " AND " + inFilter(fNote, ids)
	req := &meilisearch.MultiSearchRequest{Federation: &meilisearch.MultiSearchFederation{Limit: maxHits}}
	for _, c := range cs {
		req.Queries = append(req.Queries, ix.passageRequest(c.q, filter, meilisearch.All))
	}
	resp, err := ix.client.MultiSearch(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("meili: search passages: %w", err)
	}
	out := map[string][]passage{}
	for _, h := range resp.Hits {
		var p passage
		if err := decodeHit(h, &p); err != nil {
			return nil, err
		}
		out[p.Note] = append(out[p.Note], p)
	}
	for _, ps := range out {
		slices.SortStableFunc(ps, func(a, b passage) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return a.Pidx - b.Pidx
		})
	}
	return out, nil
}

// snippet collapses white space in a crop and caps its length.
func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= snippetBytes {
		return s
	}
	cut := snippetBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + cropMarker
}

// Ask implements textindex.Index approximately: Meilisearch does not stem,
// so each word of q becomes a prefix term of its stem (in the question's
// language, English when unknown) when that is shorter, which finds most of
// the word's inflections ("flushed" finds "flush" and "flushing"), and the
// words are OR'd as in Search (one federated query per word, merged by
// Meilisearch's ranking score). Meilisearch ranks whole note documents by
// its own rules (words, proximity, attribute order, exactness): there is no
// passage ranking, and a note matching several of the words is not summed
// up over them as BM25 would. It measures no textindex.Features and ignores
// opts.Ask (weights, pool, feedback): the hits keep Meilisearch's order,
// which the question lane's catalog features (link prior, anchor text)
// then adjust.
func (ix *Index) Ask(ctx context.Context, q textindex.Question, opts textindex.Options) (textindex.Result, error) {
	var st textindex.Stemmer
	var out textindex.Query
	for _, c := range q.Query().Any {
		t := c.All[0]
		if !t.Phrase && !q.OnlyStopwords {
			if s := st.Stem(q.Lang, t.Text); s != t.Text && utf8.RuneCountInString(s) >= 3 {
				t = textindex.Term{Text: s, Prefix: true}
			}
		}
		out.Any = append(out.Any, textindex.Conj{All: []textindex.Term{t}})
	}
	opts.Unit = textindex.Notes
	return ix.Search(ctx, out, opts)
}
