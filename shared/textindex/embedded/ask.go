package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// The question lane's ranking (Ask). Tuned on our own question sets only
// (infra/sample-vault/eval/questions.jsonl and vaultgen.Questions; see
// shared/tools/quality_test.go).
const (
	// stemWeights are the bm25 column weights of stems_fts: title and
	// aliases, headings, body, tags and path words.
	stemWeights = "3.0, 2.0, 1.0, 1.0"
	// passageWeight is how much a note's best passage adds to its BM25:
	// a note that answers in one place ranks above one that has the words
	// scattered over many pages. On our sets the choice barely matters
	// (MRR within 0.01 from 0 to 0.5; above 0.25 a generated-vault
	// question drops out of the top 5).
	passageWeight = 0.1
	// proximityWeight scales the boost of a note whose best passage holds
	// the question's words near each other (see proximity).
	proximityWeight = 0.4
	// rerankNotes is the least number of notes, from the top of the BM25
	// ranking, whose passages are scored.
	rerankNotes = 30
	// BM25 parameters of the passage scores.
	bm25K1, bm25B = 1.2, 0.75
)

// Ask ranks notes for a question in natural language. Every word of q is
// stemmed in the question's language and in each language the vault's
// notes are written in (so an English question still finds the English
// words of a German note), and matched as a whole stem against stems_fts.
// Words in more than half of the notes are dropped when others remain:
// FTS5's BM25 gives them no weight anyway, and they would cost a score per
// note. The leading notes by weighted BM25 (title, headings, body, tags and
// path words) are then re-ranked by their passages: each passage is scored
// by BM25 over the stems stored with it, the best one adds passageWeight of
// its score to the note's, and the note gets a boost when that passage
// holds the question's words close together (proximity). A question of
// stopwords only ranks with Search, since stems_fts holds no stopwords.
func (ix *Index) Ask(ctx context.Context, q textindex.Question, opts textindex.Options) (textindex.Result, error) {
	if q.Empty() || (opts.Filter.Paths != nil && len(opts.Filter.Paths) == 0) {
		return textindex.Result{}, nil
	}
	if q.OnlyStopwords {
		return ix.Search(ctx, q.Query(), textindex.Options{Filter: opts.Filter, Limit: opts.Limit, Offset: opts.Offset})
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	offset := max(opts.Offset, 0)
	st, err := ix.vaultStats(ctx)
	if err != nil {
		return textindex.Result{}, fmt.Errorf("embedded: ask: %w", err)
	}
	terms := askTerms(q, st.langs)
	if err := ix.weigh(ctx, terms, st.notes); err != nil {
		return textindex.Result{}, fmt.Errorf("embedded: ask: %w", err)
	}
	expr := askExpr(terms)
	if expr == "" {
		return textindex.Result{}, nil
	}
	res, err := ix.ask(ctx, terms, expr, opts.Filter, limit, offset)
	if err != nil {
		if sqliteCode(err) == sqliteError {
			slog.Debug("embedded: malformed question expression", "match", expr, "err", err)
			return textindex.Result{}, nil
		}
		return textindex.Result{}, fmt.Errorf("embedded: ask: %w", err)
	}
	return res, nil
}

// askTerm is one word of a question: its alternatives (the word stemmed in
// each language, as sequences of index tokens) and its weight.
type askTerm struct {
	pos    int        // textindex.Word.Pos
	alts   [][]string // folded index tokens; one token for a word, two for an unspaced bigram
	idf    float64    // inverse note frequency of the rarest alternative
	pruned bool       // in more than half of the notes: not matched
}

// askTerms stems q's words in every language of langs (and the question's).
func askTerms(q textindex.Question, langs []textindex.Lang) []askTerm {
	if q.Lang != "" && !slices.Contains(langs, q.Lang) {
		langs = append([]textindex.Lang{q.Lang}, langs...)
	}
	if len(langs) == 0 {
		langs = []textindex.Lang{""}
	}
	var st textindex.Stemmer
	var out []askTerm
	for _, w := range q.Words {
		t := askTerm{pos: w.Pos}
		toks := tokens(norm.NFC.String(w.Text))
		for _, l := range langs {
			var alt []string
			for _, tok := range toks {
				if s, ok := stemToken(&st, l, tok); ok {
					alt = append(alt, fold(s))
				}
			}
			if len(alt) > 0 && !slices.ContainsFunc(t.alts, func(a []string) bool { return slices.Equal(a, alt) }) {
				t.alts = append(t.alts, alt)
			}
		}
		if len(t.alts) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// weigh sets each term's idf, as FTS5's bm25 computes it, from the note
// frequencies of its alternatives (the rarest counts), and prunes the terms
// in more than half of the n notes, unless every term is.
func (ix *Index) weigh(ctx context.Context, terms []askTerm, n int64) error {
	common := 0
	for i := range terms {
		t := &terms[i]
		df := int64(math.MaxInt64)
		for _, alt := range t.alts {
			d := int64(0) // a phrase: as rare as its rarest token
			if len(alt) > 0 {
				d = math.MaxInt64
			}
			for _, tok := range alt {
				f, err := ix.docFreq(ctx, tok)
				if err != nil {
					return err
				}
				d = min(d, f)
			}
			df = min(df, d)
		}
		if df == math.MaxInt64 {
			df = 0
		}
		t.idf = max(math.Log((float64(n)-float64(df)+0.5)/(float64(df)+0.5)), 1e-6)
		if n > 0 && 2*df > n {
			t.pruned = true
			common++
		}
	}
	if common == len(terms) {
		for i := range terms {
			terms[i].pruned = false
		}
	}
	return nil
}

// docFreq is the number of notes whose stems_fts row holds tok.
func (ix *Index) docFreq(ctx context.Context, tok string) (int64, error) {
	var n int64
	err := ix.queryRow(ctx, `SELECT doc FROM stems_vocab WHERE term = ?`, []any{tok}, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// askExpr is the MATCH expression of the terms not pruned: every
// alternative of every term, as an FTS5 string, OR'd.
func askExpr(terms []askTerm) string {
	var parts []string
	for _, t := range terms {
		if t.pruned {
			continue
		}
		for _, alt := range t.alts {
			parts = append(parts, `"`+strings.ReplaceAll(strings.Join(alt, " "), `"`, `""`)+`"`)
		}
	}
	return strings.Join(parts, " OR ")
}

// askNote is one note of a question's ranking.
type askNote struct {
	id   int64
	rel  float64 // relevance, higher is better
	best passage // its best passage, once read
	read bool    // best is set
	lang textindex.Lang
	hit  textindex.Hit
}

func (ix *Index) ask(ctx context.Context, terms []askTerm, expr string, f textindex.Filter, limit, offset int) (textindex.Result, error) {
	where, args := filterSQL(f)
	from := ` FROM stems_fts`
	if where != "" {
		from += ` JOIN notes n ON n.id = stems_fts.rowid`
	}
	from += ` WHERE stems_fts MATCH ?` + where
	r := ranking{ix: ix, from: from, args: append([]any{expr}, args...)}
	m := max(rerankNotes, 2*(offset+limit))
	ranked, total, err := r.rankIn(ctx, "stems_fts", max(m, offset+limit), 0)
	if err != nil {
		return textindex.Result{}, err
	}
	notes := make([]*askNote, 0, len(ranked))
	for _, rn := range ranked {
		notes = append(notes, &askNote{id: rn.id, rel: -rn.score})
	}
	// Re-rank the leading notes by their passages.
	lead := notes[:min(m, len(notes))]
	for _, n := range lead {
		ok, err := ix.askNote(ctx, n, terms)
		if err != nil {
			return textindex.Result{}, err
		}
		if !ok {
			n.rel = math.Inf(-1) // deleted since the ranking query
		}
	}
	sortNotes(lead)
	res := textindex.Result{Total: total}
	ns := askNeedles(terms)
	for i, n := range notes {
		if i < offset {
			continue
		}
		if len(res.Hits) == limit {
			break
		}
		if !n.read {
			if ok, err := ix.askNote(ctx, n, nil); err != nil {
				return textindex.Result{}, err
			} else if !ok {
				continue
			}
		}
		if math.IsInf(n.rel, -1) {
			continue
		}
		h := n.hit
		h.Score = -n.rel
		h.Passage, h.Heading, h.HeadingID = n.best.ordinal, n.best.heading, n.best.headingID
		h.Snippet = excerpt(n.best.text, ns)
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// sortNotes orders by relevance, best first, stably.
func sortNotes(ns []*askNote) {
	slices.SortStableFunc(ns, func(a, b *askNote) int {
		switch {
		case a.rel > b.rel:
			return -1
		case a.rel < b.rel:
			return 1
		}
		return 0
	})
}

// askNote reads note n: its path and title, and its passages, scored with
// terms (nil: just the first passage) to pick the best one and add it to
// n.rel with its proximity boost. ok is false when the note is gone.
func (ix *Index) askNote(ctx context.Context, n *askNote, terms []askTerm) (bool, error) {
	var (
		lang string
		np   int64
	)
	n.read = true
	err := ix.queryRow(ctx, `SELECT path, title, npassages, lang FROM notes WHERE id = ?`, []any{n.id}, &n.hit.Path, &n.hit.Title, &np, &lang)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n.lang = textindex.Lang(lang)
	if np <= 0 {
		return true, nil
	}
	first := n.id << passageBits
	bestID, bestScore, bestStems := first, 0.0, ""
	if terms != nil {
		rows, err := ix.query(ctx, `SELECT id, stems FROM passages WHERE id BETWEEN ? AND ? ORDER BY id`, first, first+np-1)
		if err != nil {
			return false, err
		}
		var ps []scoredPassage
		total := 0
		for rows.Next() {
			var sp scoredPassage
			if err := rows.Scan(&sp.id, &sp.stems); err != nil {
				rows.Close()
				return false, err
			}
			sp.toks = strings.Fields(sp.stems)
			total += len(sp.toks)
			ps = append(ps, sp)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return false, err
		}
		avg := float64(total) / float64(max(len(ps), 1))
		n.hit.Matched = matchedShare(terms, ps)
		for _, sp := range ps {
			if s := passageBM25(terms, sp.toks, avg); s > bestScore {
				bestID, bestScore, bestStems = sp.id, s, sp.stems
			}
		}
		n.rel += passageWeight * bestScore
		n.rel *= 1 + proximityWeight*proximity(terms, strings.Fields(bestStems))
	}
	err = ix.queryRow(ctx, `SELECT ordinal, heading, heading_id, text FROM passages WHERE id = ?`, []any{bestID},
		&n.best.ordinal, &n.best.heading, &n.best.headingID, &n.best.text)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	return true, nil
}

// matchedShare is the share of the terms' idf that occurs in the passages.
func matchedShare(terms []askTerm, ps []scoredPassage) float64 {
	found := make([]bool, len(terms))
	for _, sp := range ps {
		var prev []string
		for _, tok := range sp.toks {
			tok = fold(tok)
			for i, t := range terms {
				if !found[i] && t.matchesAt(tok, prev) {
					found[i] = true
				}
			}
			prev = append(prev[:0], tok)
		}
	}
	var got, all float64
	for i, t := range terms {
		all += t.idf
		if found[i] {
			got += t.idf
		}
	}
	if all == 0 {
		return 0
	}
	return got / all
}

// scoredPassage is one passage's stored stems.
type scoredPassage struct {
	id    int64
	stems string
	toks  []string
}

// passageBM25 scores a passage's index terms toks for terms (whose idf are
// set), with avg the mean passage length of its note.
func passageBM25(terms []askTerm, toks []string, avg float64) float64 {
	if len(toks) == 0 {
		return 0
	}
	tf := make([]int, len(terms))
	var prev []string
	for _, tok := range toks {
		tok = fold(tok)
		for i, t := range terms {
			if !t.pruned && t.matchesAt(tok, prev) {
				tf[i]++
			}
		}
		prev = append(prev[:0], tok)
	}
	norm := bm25K1 * (1 - bm25B + bm25B*float64(len(toks))/max(avg, 1))
	s := 0.0
	for i, t := range terms {
		if tf[i] > 0 {
			f := float64(tf[i])
			s += t.idf * f * (bm25K1 + 1) / (f + norm)
		}
	}
	return s
}

// askNeedles are the snippet needles of a question: each term's stems, as
// prefixes (a stem is usually a prefix of the words it stands for).
func askNeedles(terms []askTerm) []needle {
	var out []needle
	for _, t := range terms {
		for _, alt := range t.alts {
			for _, tok := range alt {
				out = append(out, needle{tok: tok, prefix: true})
			}
		}
	}
	return out
}

// proximityWindow is the distance, in index terms (stopwords are not
// counted), within which two of the question's words count as near.
const proximityWindow = 8

// proximity measures how close together text holds the question's words,
// in [0, 1]: for every pair of distinct words found within proximityWindow
// terms of each other, the smaller of their idfs divided by their distance
// (doubled for words next to each other in the question found next to
// each other, in order, in text), over the most the pairs could score.
// A question of one word scores 0.
func proximity(terms []askTerm, toks []string) float64 {
	if len(terms) < 2 {
		return 0
	}
	last := make([]int, len(terms)) // last position of each term, -1 if none yet
	for i := range last {
		last[i] = -1
	}
	best := make([]float64, len(terms)*len(terms)) // best closeness of each pair
	pos := 0
	var prev []string // the previous token, for two-token alternatives
	for _, tok := range toks {
		tok = fold(tok)
		for i, t := range terms {
			if !t.matchesAt(tok, prev) {
				continue
			}
			last[i] = pos
			for j := range terms {
				if j == i || last[j] < 0 || pos-last[j] > proximityWindow {
					continue
				}
				d := pos - last[j]
				c := 1 / float64(max(d, 1))
				if d == 1 && j < i && adjacent(terms[j], terms[i]) {
					c = 2
				}
				a, b := min(i, j), max(i, j)
				best[a*len(terms)+b] = max(best[a*len(terms)+b], c)
			}
		}
		prev = append(prev[:0], tok)
		pos++
	}
	var got, most float64
	for a := range terms {
		for b := a + 1; b < len(terms); b++ {
			w := min(terms[a].idf, terms[b].idf)
			if terms[a].pruned || terms[b].pruned {
				w = 0
			}
			most += 2 * w
			got += best[a*len(terms)+b] * w
		}
	}
	if most == 0 {
		return 0
	}
	return got / most
}

// adjacent reports whether a and b are next to each other in the question
// (at most one stopword between them), a first.
func adjacent(a, b askTerm) bool { return b.pos > a.pos && b.pos-a.pos <= 2 }

// matchesAt reports whether tok (after prev) ends one of t's alternatives.
func (t askTerm) matchesAt(tok string, prev []string) bool {
	for _, alt := range t.alts {
		switch len(alt) {
		case 1:
			if alt[0] == tok {
				return true
			}
		case 2:
			if alt[1] == tok && len(prev) == 1 && prev[0] == alt[0] {
				return true
			}
		}
	}
	return false
}

// vaultStats are what Ask needs to know about the whole index: the
// languages of its notes and their number. They are cached, and
// read again after this process writes or every statsTTL (another process
// may write the same file).
type vaultStats struct {
	langs []textindex.Lang
	notes int64
	gen   uint64
	at    time.Time
}

const statsTTL = 10 * time.Second

type statsCache struct {
	mu sync.Mutex
	vaultStats
	ok bool
}

func (ix *Index) vaultStats(ctx context.Context) (vaultStats, error) {
	c := &ix.stats
	c.mu.Lock()
	defer c.mu.Unlock()
	gen := ix.gen.Load()
	if c.ok && c.gen == gen && time.Since(c.at) < statsTTL {
		return c.vaultStats, nil
	}
	var s vaultStats
	rows, err := ix.query(ctx, `SELECT DISTINCT lang FROM notes`)
	if err != nil {
		return s, err
	}
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			rows.Close()
			return s, err
		}
		if l != "" {
			s.langs = append(s.langs, textindex.Lang(l))
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return s, err
	}
	if err := ix.queryRow(ctx, `SELECT count(*) FROM notes`, nil, &s.notes); err != nil {
		return s, err
	}
	s.gen, s.at = gen, time.Now()
	c.vaultStats, c.ok = s, true
	return s, nil
}
