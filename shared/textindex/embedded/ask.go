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
// (infra/sample-vault/eval/questions.jsonl and the generated vault's; see
// shared/tools/quality_test.go).
const (
	// stemWeights are the bm25 column weights of stems_fts: title and
	// aliases, heading path, passage text, tags and path words.
	stemWeights = "1.0, 1.0, 1.0, 1.0"
	// collapseWeight is how much a note's second and third best passages
	// add to its best one: a note that answers in several places ranks
	// above one that mentions the words once.
	collapseWeight = 0.25
	collapseN = 3
	// proximityWeight scales the boost of a note whose best passage holds
	// the question's words near each other (see proximity).
	proximityWeight = 0.4
	// askPool is the least number of passages ranked before collapsing
	// them to notes; more when a page reaches further.
	askPool = 300
	// rerankNotes is the least number of notes whose best passage is read
	// to measure proximity.
	rerankNotes = 40
)

// Ask ranks notes for a question in natural language. Every word of q is
// stemmed in the question's language and in each language the vault's
// notes are written in (so an English question still finds the English
// words of a German note), and matched as a whole stem against stems_fts,
// where each passage is indexed with its note's title, aliases, tags and
// path words. Words in more than half of the passages are dropped when
// others remain: FTS5's BM25 gives them no weight anyway, and they would
// cost a score per passage. The best passages by weighted BM25 are
// collapsed to notes (best passage plus collapseWeight times the next two),
// and the leading notes get a boost when their best passage holds the
// question's words close together (proximity). A question of stopwords
// only ranks with Search, since stems_fts holds no stopwords.
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
	if err := ix.weigh(ctx, terms, st.passages); err != nil {
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
	idf    float64    // inverse passage frequency of the rarest alternative
	pruned bool       // in more than half of the passages: not matched
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

// weigh sets each term's idf from the passage frequencies of its
// alternatives and prunes the terms in more than half of the passages,
// unless every term is.
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
		t.idf = math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
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

// docFreq is the number of stems_fts rows holding tok.
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
	id       int64
	rel      float64 // relevance, higher is better
	passages []int64 // passage ids, best first
}

func (ix *Index) ask(ctx context.Context, terms []askTerm, expr string, f textindex.Filter, limit, offset int) (textindex.Result, error) {
	where, args := filterSQL(f)
	from := ` FROM stems_fts`
	if where != "" {
		from += ` JOIN notes n ON n.id = (stems_fts.rowid >> ` + fmt.Sprint(passageBits) + `)`
	}
	from += ` WHERE stems_fts MATCH ?` + where
	args = append([]any{expr}, args...)
	pool := max(askPool, 8*(offset+limit))
	rows, err := ix.query(ctx, `SELECT stems_fts.rowid, stems_fts.rank`+from+` ORDER BY stems_fts.rank LIMIT ?`, append(args, pool)...)
	if err != nil {
		return textindex.Result{}, err
	}
	var (
		notes  []*askNote
		byID   = map[int64]*askNote{}
		nrows  int
		scanEr error
	)
	for rows.Next() {
		var pid int64
		var rank float64
		if scanEr = rows.Scan(&pid, &rank); scanEr != nil {
			break
		}
		nrows++
		id := pid >> passageBits
		n := byID[id]
		if n == nil {
			n = &askNote{id: id}
			byID[id] = n
			notes = append(notes, n)
		}
		switch k := len(n.passages); {
		case k == 0:
			n.rel = -rank
		case k < collapseN:
			n.rel += collapseWeight * -rank
		}
		n.passages = append(n.passages, pid)
	}
	if err := errors.Join(scanEr, rows.Err(), rows.Close()); err != nil {
		return textindex.Result{}, err
	}
	total := len(notes)
	if nrows == pool {
		if err := ix.queryRow(ctx, `SELECT count(DISTINCT stems_fts.rowid >> `+fmt.Sprint(passageBits)+`)`+from, args, &total); err != nil {
			return textindex.Result{}, err
		}
	}
	sortNotes(notes)

	// Read the leading notes' best passages once: for proximity and for the hits.
	m := min(len(notes), max(rerankNotes, 2*(offset+limit)))
	ns := askNeedles(terms)
	hits := make(map[int64]textindex.Hit, m)
	for _, n := range notes[:m] {
		h, p, lang, ok, err := ix.askHit(ctx, n)
		if err != nil {
			return textindex.Result{}, err
		}
		if !ok {
			n.rel = math.Inf(-1) // deleted since the ranking query
			continue
		}
		n.rel *= 1 + proximityWeight*proximity(terms, lang, p.heading+"\n"+clip(p.text, proximityScan))
		h.Passage, h.Heading, h.HeadingID = p.ordinal, p.heading, p.headingID
		h.Snippet = excerpt(p.text, ns)
		hits[n.id] = h
	}
	lead := notes[:m]
	sortNotes(lead)
	res := textindex.Result{Total: total}
	for i, n := range notes {
		if i < offset {
			continue
		}
		if len(res.Hits) == limit {
			break
		}
		h, ok := hits[n.id]
		if !ok && i >= m {
			// Past the notes read: fetch this one now (pages far down).
			var p passage
			var okNote bool
			var err error
			h, p, _, okNote, err = ix.askHit(ctx, n)
			if err != nil {
				return textindex.Result{}, err
			}
			if okNote {
				h.Passage, h.Heading, h.HeadingID = p.ordinal, p.heading, p.headingID
				h.Snippet = excerpt(p.text, ns)
			}
			ok = okNote
		}
		if !ok {
			continue
		}
		h.Score = -n.rel
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// sortNotes orders by relevance, best first, ties by id.
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

// askHit reads note n's path, title and language and its best passage;
// ok is false when the note is gone.
func (ix *Index) askHit(ctx context.Context, n *askNote) (textindex.Hit, passage, textindex.Lang, bool, error) {
	var (
		h    textindex.Hit
		lang string
		np   int64
		p    passage
	)
	err := ix.queryRow(ctx, `SELECT path, title, npassages, lang FROM notes WHERE id = ?`, []any{n.id}, &h.Path, &h.Title, &np, &lang)
	if errors.Is(err, sql.ErrNoRows) {
		return h, p, "", false, nil
	}
	if err != nil {
		return h, p, "", false, err
	}
	if len(n.passages) > 0 && np > 0 {
		err := ix.queryRow(ctx, `SELECT ordinal, heading, heading_id, text FROM passages WHERE id = ?`, []any{n.passages[0]},
			&p.ordinal, &p.heading, &p.headingID, &p.text)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return h, p, "", false, err
		}
	}
	if len(p.text) > passageScan {
		p.text = strings.ToValidUTF8(p.text[:passageScan], "")
	}
	return h, p, textindex.Lang(lang), true, nil
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

// proximityScan bounds the bytes of a passage read for proximity.
const proximityScan = 16 << 10

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
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
func proximity(terms []askTerm, lang textindex.Lang, text string) float64 {
	if len(terms) < 2 {
		return 0
	}
	var st textindex.Stemmer
	last := make([]int, len(terms)) // last position of each term, -1 if none yet
	for i := range last {
		last[i] = -1
	}
	best := make([]float64, len(terms)*len(terms)) // best closeness of each pair
	pos := 0
	var prev []string // the previous token, for two-token alternatives
	stemTokens(&st, lang, text, func(tok string) {
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
	})
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
// languages of its notes and its number of passages. They are cached, and
// read again after this process writes or every statsTTL (another process
// may write the same file).
type vaultStats struct {
	langs    []textindex.Lang
	passages int64
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
	if err := ix.queryRow(ctx, `SELECT coalesce(sum(max(npassages, 1)), 0) FROM notes`, nil, &s.passages); err != nil {
		return s, err
	}
	s.gen, s.at = gen, time.Now()
	c.vaultStats, c.ok = s, true
	return s, nil
}
