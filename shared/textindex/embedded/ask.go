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

// BM25 parameters of the question lane's note and passage scores.
const bm25K1, bm25B = 1.2, 0.75

// Ask ranks notes for a question in natural language. Every word of q is
// stemmed in the question's language and in each language the vault's
// notes are written in (so an English question still finds the English
// words of a German note), and matched as a whole stem against stems_fts.
// Words in more than half of the notes are dropped when others found in
// some note remain: FTS5's BM25 gives them no weight anyway, and they
// would cost a score per note. The first AskOptions.Pool notes by FTS5's weighted BM25 (title,
// headings, body, tags and path words) are then measured in Go from their
// stored index terms (textindex.Features: whole-note and best-passage BM25,
// proximity, and the share of the question found in names, headings,
// meta and the whole note), scored by AskOptions.Weights, and, with
// feedback on, scored again with the feedback words added. A question of
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
	ao := opts.Ask
	if ao.IsZero() {
		ao = textindex.DefaultAsk
	}
	res, err := ix.ask(ctx, terms, expr, opts.Filter, ao, limit, offset, st)
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
	pos    int        // textindex.Word.Pos; -1 for a feedback word
	weight float64    // 1 for a word of the question; less for a feedback word
	alts   [][]string // folded index tokens; one token for a word, two for an unspaced bigram
	dfs    []int64    // each alternative's note frequency (a phrase's: its rarest token's), set by weigh
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
		t := askTerm{pos: w.Pos, weight: 1}
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
// in more than half of the n notes, unless no other term is in any note
// (then those common words are all the question can be matched by).
func (ix *Index) weigh(ctx context.Context, terms []askTerm, n int64) error {
	var toks []string
	for _, t := range terms {
		for _, alt := range t.alts {
			toks = append(toks, alt...)
		}
	}
	freqs, err := ix.noteFreqs(ctx, toks)
	if err != nil {
		return err
	}
	found := 0 // terms in some note, not pruned
	for i := range terms {
		t := &terms[i]
		df := int64(math.MaxInt64)
		t.dfs = make([]int64, len(t.alts))
		for j, alt := range t.alts {
			d := int64(0) // a phrase: as rare as its rarest token
			if len(alt) > 0 {
				d = math.MaxInt64
			}
			for _, tok := range alt {
				d = min(d, freqs[tok])
			}
			t.dfs[j] = d
			df = min(df, d)
		}
		if df == math.MaxInt64 {
			df = 0
		}
		t.idf = max(math.Log((float64(n)-float64(df)+0.5)/(float64(df)+0.5)), 1e-6)
		if n > 0 && 2*df > n {
			t.pruned = true
		} else if df > 0 {
			found++
		}
	}
	if found == 0 {
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
	return strings.Join(askPhrases(terms), " OR ")
}

// askPhrases are the phrases of askExpr, in its order.
func askPhrases(terms []askTerm) []string {
	var parts []string
	for _, t := range terms {
		if t.pruned {
			continue
		}
		for _, alt := range t.alts {
			parts = append(parts, askPhrase(alt))
		}
	}
	return parts
}

// askPhrase is alternative alt as an FTS5 string.
func askPhrase(alt []string) string {
	return `"` + strings.ReplaceAll(strings.Join(alt, " "), `"`, `""`) + `"`
}

// askTermQuery is askExpr as a disjunction the stems cache can rank, or
// nil when it has too many phrases or one too long to key. It carries
// each phrase's note frequency (weigh's counts), by which the cache tells
// the phrases worth reading though no search asked for them before.
func askTermQuery(terms []askTerm) *termQuery {
	phrases := askPhrases(terms)
	if len(phrases) == 0 || len(phrases) > maxAskPhrases {
		return nil
	}
	for _, p := range phrases {
		if len(p) > maxPhraseBytes {
			return nil
		}
	}
	tq := &termQuery{all: phrases, any: true, dfs: map[string]int64{}}
	for _, t := range terms {
		for j, alt := range t.alts {
			if !t.pruned && j < len(t.dfs) {
				tq.dfs[askPhrase(alt)] = t.dfs[j]
			}
		}
	}
	return tq
}

// scoredPassage is one passage's stored stems, folded.
type scoredPassage struct {
	id    int64
	terms folded
	size  int // terms.size()
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
func proximity(terms []askTerm, text folded) float64 {
	if len(terms) < 2 {
		return 0
	}
	last := make([]int, len(terms)) // last position of each term, -1 if none yet
	for i := range last {
		last[i] = -1
	}
	best := make([]float64, len(terms)*len(terms)) // best closeness of each pair
	pos := 0
	prev := "" // the previous token, for two-token alternatives
	for tok := range text.terms() {
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
		prev = tok
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

// matchesAt reports whether tok (after prev, "" at the start) ends one of
// t's alternatives.
func (t askTerm) matchesAt(tok, prev string) bool {
	for _, alt := range t.alts {
		switch len(alt) {
		case 1:
			if alt[0] == tok {
				return true
			}
		case 2:
			if alt[1] == tok && prev != "" && prev == alt[0] {
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
	langs    []textindex.Lang
	notes    int64
	avgTerms float64 // mean index terms of a note's body
	gen      uint64
	at       time.Time
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
	if err := ix.queryRow(ctx, `SELECT count(*), coalesce(avg(nterms), 0) FROM notes`, nil, &s.notes, &s.avgTerms); err != nil {
		return s, err
	}
	s.gen, s.at = gen, time.Now()
	c.vaultStats, c.ok = s, true
	return s, nil
}
