package embedded

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// A plain search for common words ranks thousands of matches: FTS5
// computes BM25 for each, about 2 µs a match, so two words that most notes
// of a 10k-note vault hold cost 10 ms whatever the page. FTS5's BM25 of an
// expression is a sum over its phrases, and each phrase's term (its idf,
// from the rows holding the phrase; its frequency in the row) does not
// depend on the rest of the expression. So a plain search ranks exactly as
// FTS5 does from each phrase's scores alone, and termCache keeps those:
// a search whose words were searched before is a merge in Go. Reading a
// phrase's scores costs about as much as FTS5's ranking of it alone, so a
// search of one phrase always reads them; a search of several reads a
// phrase only the second time a costly search asks for it (searched says
// when), and until then FTS5 ranks it as before. The question lane, which
// knows each phrase's note frequency, also reads a phrase in few notes,
// or, while the index's states last (lasting), new phrases whose postings
// are at most three quarters of its question's (termPostings). The sums
// are the same floating-point additions in the same order, so every score
// is FTS5's bit for bit; notes of equal score come in rowid order.
//
// Entries are used only while the index is unchanged, as in rankCache:
// this process's write counter and FTS5's structure record must both be
// what they were when the entries were read.
//
// The question lane's first stage is a disjunction of phrases over
// stems_fts, and the stems cache (stems set) ranks it the same way.
type termCache struct {
	stems    bool // of stems_fts, not notes_fts
	mu       sync.Mutex
	at       indexState // what the entries were read at
	entries  map[string]*termEntry
	postings int             // the cost of all entries (entryCost): their postings and keys
	clock    uint64          // last use, for eviction
	budget   int             // postings kept at most; 0 is termCacheBudget
	costly   map[string]bool // phrases of searches FTS5 ranked that matched many notes
	// Lookups (termPostings calls) made at the current state, and at the
	// one before it (0 before a second state: lasting counts the first
	// state as lasting): how long entries live, which decides whether
	// phrases never asked before are worth reading.
	lookups, lastLookups int
	states               int // states the cache has been at
}

// minLasting is how many lookups a state of the index must have lasted,
// the one before or the current one, for the question lane to read the
// postings of phrases never asked before (termPostings): reading them
// pays only if later questions ask for them before the next write, and
// costs more than FTS5's ranking of the question they first come in.
const minLasting = 20

// lasting reports whether entries read now are likely to serve later
// lookups: the index's states last at least minLasting lookups, or have
// not been seen to change yet. Callers hold c.mu.
func (c *termCache) lasting() bool {
	return c.states <= 1 || c.lastLookups >= minLasting || c.lookups >= minLasting
}

// maxCostly bounds the phrases remembered in costly; past it, the memory
// starts again empty.
const maxCostly = 4096

// table is the FTS5 table the cache's postings are read from.
func (c *termCache) table() string {
	if c.stems {
		return "stems_fts"
	}
	return "notes_fts"
}

type termEntry struct {
	postings
	used uint64
	cost int // entryCost
}

// postings are the notes holding one phrase and the phrase's own BM25
// there (FTS5's rank of a search for the phrase alone: negative, lower is
// better), by ascending note id.
type postings struct {
	ids    []int64
	scores []float64
}

// termCacheBudget bounds the postings kept (16 bytes each, so 16 MB): a
// word held by every note of a 10k-note vault takes 10k. A phrase with more
// than half the budget is used for its search but not kept.
const termCacheBudget = 1 << 20

// maxTermPhrases bounds the phrases of a search ranked from the cache, and
// maxPhraseBytes the length of each (the cache keys them by their text).
const (
	maxTermPhrases = 8
	maxPhraseBytes = 256
)

// maxAskPhrases bounds the phrases of a question's first stage ranked from
// the stems cache: a question's words, each stemmed in every language of
// the vault, often make more than 8.
const maxAskPhrases = 32

// termQuery is a plain search as its phrases: FTS5 expressions of one
// term each (termExpr), in the order they appear in the search's MATCH
// expression. Either one conjunction (all of all, none of not) or a
// disjunction of single terms (any of all, when not is empty and any is
// set).
type termQuery struct {
	all, not []string
	any      bool
	dfs      map[string]int64 // each phrase's note frequency, when known: which are worth reading (termPostings)
}

// plainTerms returns q as a termQuery, or nil when the cache cannot rank
// it: more than one conjunction with more than one term (FTS5 does not
// count the words of a conjunction that failed), NOT in a disjunction, too
// many phrases, or a phrase too long to be worth a key. The phrases are checked against matchExpr(q), the
// expression FTS5 would rank, so the two can never disagree.
func plainTerms(q textindex.Query) *termQuery {
	var conjs [][2][]string
	for _, c := range q.Any {
		var all, not []string
		for _, t := range c.All {
			if e := termExpr(t); e != "" {
				all = append(all, e)
			}
		}
		if len(all) == 0 {
			continue
		}
		for _, t := range c.Not {
			if e := termExpr(t); e != "" {
				not = append(not, e)
			}
		}
		conjs = append(conjs, [2][]string{all, not})
	}
	var tq termQuery
	switch {
	case len(conjs) == 1:
		tq.all, tq.not = conjs[0][0], conjs[0][1]
	case len(conjs) > 1:
		tq.any = true
		for _, c := range conjs {
			if len(c[0]) != 1 || len(c[1]) != 0 {
				return nil
			}
			tq.all = append(tq.all, c[0][0])
		}
	default:
		return nil
	}
	if len(tq.all)+len(tq.not) > maxTermPhrases || tq.expr() != matchExpr(q) {
		return nil
	}
	for _, p := range append(slices.Clip(tq.all), tq.not...) {
		if len(p) > maxPhraseBytes {
			return nil
		}
	}
	return &tq
}

// expr is the MATCH expression of tq, as matchExpr writes it.
func (tq *termQuery) expr() string {
	if !tq.any {
		s := "(" + strings.Join(tq.all, " AND ") + ")"
		for _, n := range tq.not {
			s += " NOT " + n
		}
		return s
	}
	conjs := make([]string, len(tq.all))
	for i, t := range tq.all {
		conjs[i] = "((" + t + "))"
	}
	return strings.Join(conjs, " OR ")
}

// rankTerms ranks tq from its phrases' postings: up to limit notes from
// offset on, best first, and the number of matching notes (0 when no note
// is returned), as rank does. It reads the postings it lacks only when
// they are worth reading (termPostings); otherwise it returns ok false for
// the caller to rank with FTS5 and tell the cache what that matched
// (searched).
func (ix *Index) rankTerms(ctx context.Context, c *termCache, tq *termQuery, limit, offset int) (_ []ranked, total int, ok bool, _ error) {
	phrases := append(slices.Clip(tq.all), tq.not...)
	lists, ok, err := ix.termPostings(ctx, c, phrases, tq.dfs)
	if err != nil || !ok {
		return nil, 0, ok, err
	}
	var matches []ranked
	if tq.any {
		matches = union(lists)
	} else {
		matches = intersect(lists[:len(tq.all)], lists[len(tq.all):])
	}
	top := bestFirst(matches, offset+limit)
	if offset >= len(top) {
		return nil, 0, true, nil
	}
	return top[offset:min(offset+limit, len(top))], len(matches), true, nil
}

// termPostings returns the postings of each phrase, all of the index as
// it is now: from the cache, or read from FTS5 when the phrases missing
// are worth reading; ok is false when they are not. Worth reading: the one
// phrase of a search of one (that costs what FTS5's ranking of it does); a
// phrase a search that matched many notes asked for before (searched); a
// phrase in at most fillMatches notes by dfs; and, when dfs knows every
// phrase's note frequency and the index's states last (lasting),
// phrases whose postings are at most three quarters of all the search's.
// Reading a phrase's postings costs 1.5-2 µs a posting, FTS5's ranking of
// a disjunction about 1.8 µs a matching note, so a question of new words
// costs less through FTS5; but a phrase read
// once serves every later question that asks for it, and the questions of
// BenchmarkAskIndexFile (200 in a row on 10k notes) cost 10.0 CPU-ms each
// with three quarters (p50 8.4 ms, p99 25.6 ms), against 12.0 (10.4 ms,
// 29.2 ms) with half.
func (ix *Index) termPostings(ctx context.Context, c *termCache, phrases []string, dfs map[string]int64) ([]postings, bool, error) {
	now, err := ix.stateOf(ctx, c.table())
	if err != nil {
		return nil, false, err
	}
	lists := make([]postings, len(phrases))
	var missing []int
	c.mu.Lock()
	if !c.at.is(now) {
		c.at, c.entries, c.postings = now, nil, 0
		c.states++
		c.lastLookups, c.lookups = c.lookups, 0
	}
	c.lookups++
	lasting := c.lasting()
	var all, unasked int64 // postings of every phrase, of those missing and never asked
	for i, p := range phrases {
		df, known := dfs[p]
		all += df
		if e, ok := c.entries[p]; ok {
			c.clock++
			e.used = c.clock
			lists[i] = e.postings
			continue
		}
		switch {
		case len(phrases) == 1 || c.costly[p] || known && df <= fillMatches:
		case known && lasting:
			unasked += df
		default:
			c.mu.Unlock()
			return nil, false, nil
		}
		missing = append(missing, i)
	}
	c.mu.Unlock()
	if 4*unasked > 3*all {
		return nil, false, nil
	}
	if len(missing) == 0 {
		return lists, true, nil
	}
	read := map[string]postings{} // a phrase asked twice is read once
	for _, i := range missing {
		p, ok := read[phrases[i]]
		if !ok {
			if p, err = ix.readPostings(ctx, c.table(), phrases[i]); err != nil {
				return nil, false, err
			}
			read[phrases[i]] = p
		}
		lists[i] = p
	}
	// Postings read one by one describe one state only if the index did
	// not change meanwhile.
	after, err := ix.stateOf(ctx, c.table())
	if err != nil {
		return nil, false, err
	}
	if !after.is(now) {
		return nil, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.is(now) {
		for phrase, p := range read {
			c.add(phrase, p)
		}
	}
	return lists, true, nil
}

// fillMatches is how many notes a search ranked by FTS5 must match for
// its phrases to be worth reading: below it, FTS5 ranks in well under a
// millisecond.
const fillMatches = 256

// searched tells the cache that FTS5 ranked a search of phrases, which
// matched that many notes. Reading a phrase's postings costs about as much
// as a search of it alone, more than FTS5's ranking of several, so a
// phrase of such a search is read only when a search asks for it again
// after one that matched at least fillMatches notes: a word searched once,
// or only in cheap searches, is never read for a search of several.
func (c *termCache) searched(phrases []string, matched int) {
	if matched < fillMatches {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.costly == nil || len(c.costly)+len(phrases) > maxCostly {
		c.costly = map[string]bool{}
	}
	for _, p := range phrases {
		c.costly[p] = true
	}
}

// indexState is what a cached value depends on: this process's write
// counter and an FTS5 table's structure record, which every committed
// write, this process's or another's, changes.
type indexState struct {
	gen       uint64
	structure []byte
}

// is reports whether s and o are the same state of the index.
func (s indexState) is(o indexState) bool {
	return s.gen == o.gen && bytes.Equal(s.structure, o.structure)
}

// stateOf returns the index's state as FTS5 table table records it. It
// reads the counter first: a write in between makes what is read next
// look older, never newer.
func (ix *Index) stateOf(ctx context.Context, table string) (indexState, error) {
	st := indexState{gen: ix.gen.Load()}
	err := ix.queryRow(ctx, `SELECT block FROM `+table+`_data WHERE id = 10`, nil, &st.structure)
	return st, err
}

// readPostings reads one phrase's postings from FTS5 table table.
func (ix *Index) readPostings(ctx context.Context, table, phrase string) (postings, error) {
	rows, err := ix.query(ctx, `SELECT rowid, rank FROM `+table+` WHERE `+table+` MATCH ?`, phrase)
	if err != nil {
		return postings{}, err
	}
	var p postings
	for rows.Next() {
		var id int64
		var s float64
		if err := rows.Scan(&id, &s); err != nil {
			rows.Close()
			return postings{}, err
		}
		p.ids, p.scores = append(p.ids, id), append(p.scores, s)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return postings{}, err
	}
	if !slices.IsSorted(p.ids) { // FTS5 reads a MATCH in rowid order
		sortPostings(&p)
	}
	return p, nil
}

func sortPostings(p *postings) {
	idx := make([]int, len(p.ids))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(p.ids[a], p.ids[b]) })
	ids, scores := make([]int64, len(idx)), make([]float64, len(idx))
	for i, j := range idx {
		ids[i], scores[i] = p.ids[j], p.scores[j]
	}
	p.ids, p.scores = ids, scores
}

// add keeps p for phrase, evicting the least recently used entries to stay
// within the budget. c.mu is held.
func (c *termCache) add(phrase string, p postings) {
	cost, budget := entryCost(phrase, len(p.ids)), c.budget
	if budget == 0 {
		budget = termCacheBudget
	}
	if cost > budget/2 {
		return
	}
	if c.entries == nil {
		c.entries = map[string]*termEntry{}
	}
	if old, ok := c.entries[phrase]; ok {
		c.postings -= old.cost
		delete(c.entries, phrase)
	}
	if c.postings+cost > budget {
		c.evict(budget - cost)
	}
	c.clock++
	c.entries[phrase] = &termEntry{postings: p, used: c.clock, cost: cost}
	c.postings += cost
}

// entryCost is what an entry of phrase holding n postings counts against
// the budget: its postings, and its key and bookkeeping in postings'
// size, so that phrases matching nothing (typos) are bounded too.
func entryCost(phrase string, n int) int {
	const postingBytes, entryBytes = 16, 64
	return n + (len(phrase)+entryBytes)/postingBytes
}

// evict drops the least recently used entries until the rest cost at most
// keep, sorting them once however many go. c.mu is held.
func (c *termCache) evict(keep int) {
	for _, phrase := range leastRecent(c.entries, func(e *termEntry) uint64 { return e.used }) {
		if c.postings <= keep {
			return
		}
		c.postings -= c.entries[phrase].cost
		delete(c.entries, phrase)
	}
}

// leastRecent returns m's keys, the least recently used (by used) first.
func leastRecent[K comparable, E any](m map[K]E, used func(E) uint64) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b K) int { return cmp.Compare(used(m[a]), used(m[b])) })
	return keys
}

// intersect returns the notes holding every list of all and none of not,
// each scored by the sum of its phrases' scores in phrase order (the not
// phrases add FTS5's exact 0.0 there, so they are left out).
func intersect(all, not []postings) []ranked {
	shortest := 0
	for i, l := range all {
		if len(l.ids) < len(all[shortest].ids) {
			shortest = i
		}
	}
	at := make([]int, len(all)+len(not)) // cursors: every list is read in id order
	var out []ranked
next:
	for _, id := range all[shortest].ids {
		score := 0.0
		for i, l := range all {
			j, ok := seek(l.ids, at[i], id)
			at[i] = j
			if !ok {
				continue next
			}
			if i == 0 {
				score = l.scores[j]
			} else {
				score += l.scores[j]
			}
		}
		for i, l := range not {
			j, ok := seek(l.ids, at[len(all)+i], id)
			at[len(all)+i] = j
			if ok {
				continue next
			}
		}
		out = append(out, ranked{id: id, score: score})
	}
	return out
}

// union returns the notes holding any of lists, each scored by the sum of
// the scores of the phrases it holds, in phrase order.
func union(lists []postings) []ranked {
	at := make([]int, len(lists))
	var out []ranked
	for {
		id, any := int64(0), false
		for i, l := range lists {
			if at[i] < len(l.ids) && (!any || l.ids[at[i]] < id) {
				id, any = l.ids[at[i]], true
			}
		}
		if !any {
			return out
		}
		score, first := 0.0, true
		for i, l := range lists {
			if at[i] < len(l.ids) && l.ids[at[i]] == id {
				if first {
					score, first = l.scores[at[i]], false
				} else {
					score += l.scores[at[i]]
				}
				at[i]++
			}
		}
		out = append(out, ranked{id: id, score: score})
	}
}

// seek returns the first index from i on whose id is at least id, and
// whether it is id.
func seek(ids []int64, i int, id int64) (int, bool) {
	// Gallop from i: the ids asked for rise, usually by a little.
	step := 1
	for i+step < len(ids) && ids[i+step] < id {
		i += step
		step *= 2
	}
	j, ok := slices.BinarySearch(ids[i:min(i+step+1, len(ids))], id)
	return i + j, ok
}

// bestFirst returns the n best of rs (lowest score first, then lowest
// id), sorted.
func bestFirst(rs []ranked, n int) []ranked {
	order := func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.id, b.id))
	}
	if n >= len(rs) {
		slices.SortFunc(rs, order)
		return rs
	}
	// Keep the n best in a max-heap of the worst kept at the root.
	h := slices.Clone(rs[:n])
	worse := func(i, j int) bool { return order(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			if r := l + 1; r < n && worse(r, l) {
				l = r
			}
			if !worse(l, i) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, r := range rs[n:] {
		if n > 0 && order(r, h[0]) < 0 {
			h[0] = r
			down(0)
		}
	}
	slices.SortFunc(h, order)
	return h
}
