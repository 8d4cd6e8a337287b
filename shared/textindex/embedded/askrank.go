package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// askNote is one note of a question's ranking: what is stored about it
// and, once measured, its features and score.
type askNote struct {
	id                int64
	path, title, lang string
	names, heads      folded // index terms of the title and aliases, of the headings
	meta              folded // of the tags and path words
	passages          []scoredPassage
	nterms            int
	stage             float64 // the first stage's score over the pool's best
	gone              bool    // deleted since the ranking query
	f                 textindex.Features
	score             float64
	best              int // index in passages of the best one, -1 if none
}

// firstStage ranks the notes matching the question's terms by FTS5's
// BM25 over stems_fts, the first pool of them: from the stems cache when
// the question has no filter (plain) and its phrases are cached or worth
// reading, else by FTS5, telling the cache what that matched.
func (ix *Index) firstStage(ctx context.Context, r ranking, terms []askTerm, plain bool, pool int) ([]ranked, int, error) {
	var tq *termQuery
	if plain {
		tq = askTermQuery(terms)
	}
	if tq != nil {
		out, total, ok, err := ix.rankTerms(ctx, &ix.stems, tq, pool, 0)
		if err != nil || ok {
			return out, total, err
		}
	}
	out, total, err := r.rankIn(ctx, "stems_fts", pool, 0)
	if err == nil && tq != nil {
		ix.stems.searched(tq.all, total)
	}
	return out, total, err
}

// ask ranks the notes matching expr: the first ao.Pool by FTS5's rank are
// measured and scored, with feedback when ao asks for it, and the page
// [offset, offset+limit) of that ranking is returned.
func (ix *Index) ask(ctx context.Context, terms []askTerm, expr string, f textindex.Filter, ao textindex.AskOptions, limit, offset int, st vaultStats) (textindex.Result, error) {
	where, args := filterSQL(f)
	from := ` FROM stems_fts`
	if where != "" {
		from += ` JOIN notes n ON n.id = stems_fts.rowid`
	}
	from += ` WHERE stems_fts MATCH ?` + where
	r := ranking{ix: ix, from: from, args: append([]any{expr}, args...)}
	pool := max(ao.Pool, offset+limit)
	ranked, total, err := ix.firstStage(ctx, r, terms, where == "", pool)
	if err != nil {
		return textindex.Result{}, err
	}
	ids := make([]int64, len(ranked))
	for i, rn := range ranked {
		ids[i] = rn.id
	}
	loaded, err := ix.loadAskNotes(ctx, ids)
	if err != nil {
		return textindex.Result{}, err
	}
	notes := make([]*askNote, 0, len(ranked))
	for i, rn := range ranked {
		n := loaded[i]
		if !n.gone {
			if best := -ranked[0].score; best > 0 {
				n.stage = -rn.score / best
			}
			notes = append(notes, n)
		}
	}
	// Feedback reads the leading notes of the first stage (FTS5's BM25),
	// not of the weighted ranking: the words it adds do not depend on the
	// weights, so the two can be tuned apart.
	lead := slices.Clone(notes[:min(ao.Feedback.Notes, len(notes))])
	for _, n := range notes {
		n.measure(terms, st.avgTerms, ao.Weights)
	}
	sortAsk(notes)
	if fb := ao.Feedback; fb.Notes > 0 && fb.Terms > 0 && fb.Weight > 0 && len(lead) > 0 {
		more, err := ix.feedbackTerms(ctx, terms, lead, fb, st.notes)
		if err != nil {
			return textindex.Result{}, err
		}
		if len(more) > 0 {
			all := slices.Concat(terms, more)
			// The feedback words find notes of their own: a second first
			// stage over every word, whose new notes join the pool.
			r.args[0] = askExpr(all)
			again, _, err := r.rankIn(ctx, "stems_fts", pool, 0)
			if err != nil {
				return textindex.Result{}, err
			}
			have := make(map[int64]bool, len(notes))
			for _, n := range notes {
				have[n.id] = true
			}
			var fresh []int64
			for _, rn := range again {
				if !have[rn.id] {
					fresh = append(fresh, rn.id)
				}
			}
			found, err := ix.loadAskNotes(ctx, fresh)
			if err != nil {
				return textindex.Result{}, err
			}
			for _, n := range found {
				if !n.gone {
					notes = append(notes, n)
				}
			}
			for _, n := range notes {
				n.measure(all, st.avgTerms, ao.Weights)
			}
			sortAsk(notes)
		}
	}
	res := textindex.Result{Total: total}
	ns := askNeedles(terms)
	for _, n := range notes[min(offset, len(notes)):] {
		if len(res.Hits) == limit {
			break
		}
		h := textindex.Hit{Path: n.path, Title: n.title, Score: -n.score, Matched: n.f.Matched, Features: n.f}
		if n.best >= 0 {
			var p passage
			err := ix.queryRow(ctx, `SELECT ordinal, heading, heading_id, text FROM passages WHERE id = ?`, []any{n.passages[n.best].id},
				&p.ordinal, &p.heading, &p.headingID, &p.text)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return textindex.Result{}, err
			}
			h.Passage, h.Heading, h.HeadingID = p.ordinal, p.heading, p.headingID
			h.Snippet = excerpt(p.text, ns)
		}
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// sortAsk orders by score, best first, stably (FTS5's order among equals).
func sortAsk(ns []*askNote) {
	slices.SortStableFunc(ns, func(a, b *askNote) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
}

// readAskNotes reads what Ask measures of the notes ids, in ids' order, in
// two queries whatever their number: a note no longer in the index comes
// back gone.
func (ix *Index) readAskNotes(ctx context.Context, ids []int64) ([]*askNote, error) {
	out := make([]*askNote, len(ids))
	at := make(map[int64]*askNote, len(ids))
	unique := make([]int64, 0, len(ids))
	for i, id := range ids {
		if n, ok := at[id]; ok {
			out[i] = n
			continue
		}
		out[i] = &askNote{id: id, best: -1, gone: true}
		at[id] = out[i]
		unique = append(unique, id)
	}
	list, err := json.Marshal(unique)
	if err != nil {
		return nil, err
	}
	rows, err := ix.query(ctx, `SELECT n.id, n.path, n.title, n.lang, n.names, n.heads, n.meta, n.nterms
		FROM json_each(?) j JOIN notes n ON n.id = j.value`, string(list))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r askNote
		var names, heads, meta string
		if err := rows.Scan(&r.id, &r.path, &r.title, &r.lang, &names, &heads, &meta, &r.nterms); err != nil {
			rows.Close()
			return nil, err
		}
		if n := at[r.id]; n != nil {
			n.path, n.title, n.lang, n.nterms, n.gone = r.path, r.title, r.lang, r.nterms, false
			n.names, n.heads, n.meta = foldTerms(names), foldTerms(heads), foldTerms(meta)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	// A note's passages are the rows numbered from its id << passageBits.
	rows, err = ix.query(ctx, `SELECT p.id, p.stems FROM json_each(?) j JOIN notes n ON n.id = j.value
		JOIN passages p ON p.id BETWEEN n.id << `+passageShift+` AND (n.id << `+passageShift+`) + n.npassages - 1
		ORDER BY p.id`, string(list))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var stems string
		if err := rows.Scan(&id, &stems); err != nil {
			rows.Close()
			return nil, err
		}
		if n := at[id>>passageBits]; n != nil && !n.gone {
			terms := foldTerms(stems)
			n.passages = append(n.passages, scoredPassage{id: id, terms: terms, size: terms.size()})
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	return out, nil
}

// measure sets n's features for terms and its score by w. avgTerms is the
// vault's mean body length in index terms.
func (n *askNote) measure(terms []askTerm, avgTerms float64, w textindex.Weights) {
	f := textindex.Features{Stage: n.stage}
	most := 0.0 // the most a BM25 score over terms can be
	share := 0.0
	asked := terms // the question's own words, without feedback
	for i, t := range terms {
		if !t.pruned {
			most += t.weight * t.idf * (bm25K1 + 1)
		}
		if t.pos < 0 {
			asked = terms[:i]
			break
		}
		share += t.idf
	}
	for _, t := range terms[len(asked):] {
		most += t.weight * t.idf * (bm25K1 + 1)
	}
	tf := make([]float64, len(terms)) // in the whole body
	seen := make([]bool, len(terms))
	total := 0
	for _, sp := range n.passages {
		total += sp.size
	}
	avgPassage := float64(total) / float64(max(len(n.passages), 1))
	bestScore := -1.0
	for i, sp := range n.passages {
		ptf := termFreqs(terms, sp.terms)
		for j, x := range ptf {
			tf[j] += x
			if x > 0 {
				seen[j] = true
			}
		}
		if s := bm25(terms, ptf, float64(sp.size), avgPassage); s > bestScore {
			bestScore, n.best = s, i
		}
	}
	if most > 0 {
		f.Body = bm25(terms, tf, float64(n.nterms), avgTerms) / most
		f.Passage = max(bestScore, 0) / most
	}
	if n.best >= 0 {
		f.Proximity = proximity(asked, n.passages[n.best].terms)
	}
	if share > 0 {
		f.Name = foundIn(asked, n.names) / share
		f.Headings = foundIn(asked, n.heads) / share
		f.Meta = foundIn(asked, n.meta) / share
		f.Matched = found(asked, seen[:len(asked)]) / share
	}
	n.f = f
	n.score = w.Score(f)
}

// termFreqs counts each term's occurrences in text (pruned terms too).
func termFreqs(terms []askTerm, text folded) []float64 {
	tf := make([]float64, len(terms))
	for i, t := range terms {
		tf[i] = float64(text.freq(t))
	}
	return tf
}

// bm25 scores term frequencies tf in a text of n terms, avg the mean
// length, each term weighted by its weight and idf; pruned terms count 0.
func bm25(terms []askTerm, tf []float64, n, avg float64) float64 {
	norm := bm25K1 * (1 - bm25B + bm25B*n/max(avg, 1))
	s := 0.0
	for i, t := range terms {
		if tf[i] > 0 && !t.pruned {
			s += t.weight * t.idf * tf[i] * (bm25K1 + 1) / (tf[i] + norm)
		}
	}
	return s
}

// found is the idf of the terms marked in seen.
func found(terms []askTerm, seen []bool) float64 {
	s := 0.0
	for i, t := range terms {
		if seen[i] {
			s += t.idf
		}
	}
	return s
}

// foundIn is the idf of the terms found in text.
func foundIn(terms []askTerm, text folded) float64 {
	s := 0.0
	for _, t := range terms {
		if text.freq(t) > 0 {
			s += t.idf
		}
	}
	return s
}

// feedbackTerms are the fb.Terms index terms that best tell the leading
// notes apart from the vault (frequency in their text, relative to its
// length, times idf), other than the question's own, each weighted
// fb.Weight times its strength relative to the strongest.
func (ix *Index) feedbackTerms(ctx context.Context, terms []askTerm, lead []*askNote, fb textindex.Feedback, n int64) ([]askTerm, error) {
	have := map[string]bool{}
	for _, t := range terms {
		for _, alt := range t.alts {
			have[strings.Join(alt, " ")] = true
		}
	}
	weight := map[string]float64{}
	for _, note := range lead {
		counts := map[string]float64{}
		total := 0.0
		for _, sp := range note.passages {
			for tok := range sp.terms.terms() {
				if len(tok) > 2 && !have[tok] {
					counts[tok]++
				}
				total++
			}
		}
		for tok, c := range counts {
			weight[tok] += c / max(total, 1)
		}
	}
	type cand struct {
		tok string
		w   float64
	}
	cands := make([]cand, 0, len(weight))
	for tok, w := range weight {
		cands = append(cands, cand{tok, w})
	}
	// The most frequent words first, then by idf: look up only those.
	slices.SortFunc(cands, func(a, b cand) int {
		if a.w != b.w {
			if a.w > b.w {
				return -1
			}
			return 1
		}
		return strings.Compare(a.tok, b.tok)
	})
	cands = cands[:min(len(cands), 8*fb.Terms)]
	for i := range cands {
		df, err := ix.docFreq(ctx, cands[i].tok)
		if err != nil {
			return nil, err
		}
		if df <= 1 || 2*df > n { // in no other note, or too common to tell anything
			cands[i].w = 0
			continue
		}
		cands[i].w *= math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.w != b.w {
			if a.w > b.w {
				return -1
			}
			return 1
		}
		return strings.Compare(a.tok, b.tok)
	})
	var out []askTerm
	for _, c := range cands[:min(fb.Terms, len(cands))] {
		if c.w <= 0 {
			break
		}
		df, err := ix.docFreq(ctx, c.tok)
		if err != nil {
			return nil, err
		}
		idf := math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
		out = append(out, askTerm{pos: -1, alts: [][]string{{c.tok}}, idf: max(idf, 1e-6), weight: fb.Weight * c.w / cands[0].w})
	}
	return out, nil
}
