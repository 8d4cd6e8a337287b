package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

const defaultLimit = 25

// Search ranks the notes matching q under opts.Filter by weighted BM25.
// Filters are part of the SQL, so they narrow the candidates before ranking
// and paging. Snippets come from each returned hit's best-matching passage.
// With opts.Unit == Passages, each ranked note is expanded into its passages
// that match q (see searchPassages).
func (ix *Index) Search(ctx context.Context, q textindex.Query, opts textindex.Options) (textindex.Result, error) {
	expr := matchExpr(q)
	if expr == "" || (opts.Filter.Paths != nil && len(opts.Filter.Paths) == 0) {
		return textindex.Result{}, nil
	}
	return ix.searchExpr(ctx, q, expr, opts)
}

// searchExpr runs the MATCH expression expr built from q. A malformed
// expression (which matchExpr should never build) finds nothing.
func (ix *Index) searchExpr(ctx context.Context, q textindex.Query, expr string, opts textindex.Options) (textindex.Result, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	offset := max(opts.Offset, 0)
	res, err := ix.search(ctx, q, expr, opts.Unit, opts.Filter, limit, offset)
	if err != nil {
		// SQLITE_ERROR: the statements are fixed, so only the MATCH
		// expression can be at fault (syntax, unknown column, ...).
		if sqliteCode(err) == sqliteError {
			slog.Debug("embedded: malformed match expression", "match", expr, "err", err)
			return textindex.Result{}, nil
		}
		return textindex.Result{}, fmt.Errorf("embedded: search: %w", err)
	}
	return res, nil
}

// search ranks the notes matching expr, then fills in each returned hit.
func (ix *Index) search(ctx context.Context, q textindex.Query, expr string, unit textindex.Unit, f textindex.Filter, limit, offset int) (textindex.Result, error) {
	where, args := filterSQL(f)
	from := ` FROM notes_fts`
	if where != "" {
		from += ` JOIN notes n ON n.id = notes_fts.rowid`
	}
	from += ` WHERE notes_fts MATCH ?` + where
	r := ranking{ix: ix, from: from, args: append([]any{expr}, args...)}
	if where == "" {
		r.terms = plainTerms(q)
	}
	if unit == textindex.Passages {
		return ix.searchPassages(ctx, q, r, limit, offset)
	}

	ranked, total, err := r.rankPage(ctx, limit, offset)
	if err != nil {
		return textindex.Result{}, err
	}
	if len(ranked) == 0 && offset > 0 { // past the end: count separately
		if err := ix.queryRow(ctx, `SELECT count(*)`+from, r.args, &total); err != nil {
			return textindex.Result{}, err
		}
	}
	res := textindex.Result{Total: total}
	ns := needles(q)
	for _, rn := range ranked {
		h := textindex.Hit{Score: rn.score}
		p, ok, err := ix.bestPassage(ctx, rn.id, &h, ns)
		if err != nil {
			return textindex.Result{}, err
		}
		if !ok {
			continue // deleted since the ranking query
		}
		res.Hits = append(res.Hits, passageHit(h, p, ns))
	}
	return res, nil
}

// searchPassages serves Unit == Passages: it ranks notes exactly as a note
// search does and expands each ranked note, in rank order, into its passages
// that match q themselves (heading path and text; see queryMatch), best first
// by scorePassage. Every passage hit carries its note's BM25 score; Offset
// and Limit page over this sequence of passages.
//
// Total counts the matching passages of every note read to fill the page,
// plus one for each matching note not read. It is the exact number of
// matching passages when the page reached the last matching note, and never
// less than Offset plus the hits returned.
func (ix *Index) searchPassages(ctx context.Context, q textindex.Query, r ranking, limit, offset int) (textindex.Result, error) {
	qm, ns := newQueryMatch(q), needles(q)
	var (
		res              textindex.Result
		skip             = offset
		counted, read    int // passages counted in the notes read; notes read
		notes            int // matching notes
		batch, notesSeen = maxBatch, 0
	)
	if offset < maxBatch-limit {
		batch = offset + limit
	}
	// Every matching note usually has a matching passage, so offset+limit
	// notes usually fill the page; ask for more only when they do not.
	for {
		ranked, total, err := r.rank(ctx, batch, notesSeen)
		if err != nil {
			return textindex.Result{}, err
		}
		notes = total
		if len(ranked) == 0 {
			notes = notesSeen // past the last note: all have been read
		}
		for _, rn := range ranked {
			if len(res.Hits) == limit {
				break
			}
			read++
			h := textindex.Hit{Score: rn.score}
			ps, ok, err := ix.matchingPassages(ctx, rn.id, &h, qm, ns)
			if err != nil {
				return textindex.Result{}, err
			}
			if !ok {
				continue // deleted since the ranking query
			}
			counted += len(ps)
			for _, p := range ps {
				if skip > 0 {
					skip--
				} else if len(res.Hits) < limit {
					res.Hits = append(res.Hits, passageHit(h, p, ns))
				}
			}
		}
		notesSeen += len(ranked)
		if len(res.Hits) == limit || len(ranked) < batch {
			break
		}
		batch = min(2*batch, maxBatch)
	}
	res.Total = counted + max(notes-read, 0)
	return res, nil
}

// maxBatch bounds the notes one ranking query of a passage search returns.
const maxBatch = 1 << 30

// ranking is the ranking query of one search: FROM and WHERE clauses and
// their arguments.
type ranking struct {
	ix   *Index
	from string
	args []any

	terms *termQuery // the search as phrases, when termCache can rank it
}

// ranked is one note of a ranking.
type ranked struct {
	id    int64
	score float64
}

// rank returns up to limit notes from offset on, best first, and the number
// of matching notes (0 when no row is returned).
func (r ranking) rank(ctx context.Context, limit, offset int) ([]ranked, int, error) {
	if r.terms == nil {
		return r.rankIn(ctx, "notes_fts", limit, offset)
	}
	out, total, ok, err := r.ix.rankTerms(ctx, &r.ix.terms, r.terms, limit, offset)
	if err != nil || ok {
		return out, total, err
	}
	if out, total, err = r.rankIn(ctx, "notes_fts", limit, offset); err == nil {
		r.ix.terms.searched(append(slices.Clip(r.terms.all), r.terms.not...), total)
	}
	return out, total, err
}

// rankIn is rank over the FTS5 table the ranking's query matches.
func (r ranking) rankIn(ctx context.Context, table string, limit, offset int) ([]ranked, int, error) {
	// count(*) OVER () counts the matches in the same pass that ranks them:
	// FTS5 ranks every match before the LIMIT anyway.
	rows, err := r.ix.query(ctx, `SELECT `+table+`.rowid, `+table+`.rank, count(*) OVER ()`+r.from+
		` ORDER BY `+table+`.rank LIMIT ? OFFSET ?`, append(r.args[:len(r.args):len(r.args)], limit, offset)...)
	if err != nil {
		return nil, 0, err
	}
	var (
		out   []ranked
		total int
	)
	for rows.Next() {
		var rn ranked
		if err := rows.Scan(&rn.id, &rn.score, &total); err != nil {
			rows.Close()
			return nil, 0, err
		}
		out = append(out, rn)
	}
	// Close before any other query: an in-memory index has one connection.
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// passageHit completes h with passage p and its snippet.
func passageHit(h textindex.Hit, p passage, ns []needle) textindex.Hit {
	h.Passage, h.Heading, h.HeadingID = p.ordinal, p.heading, p.headingID
	h.Snippet = excerpt(p.text, ns)
	return h
}

// passage is one stored passage.
type passage struct {
	ordinal                         int
	heading, headingID, hpath, text string // hpath: the cleaned heading path, one heading a line
}

// tokens returns the folded tokens of p's heading path, "" (a field
// separator), then those of its text: what queryMatch matches.
func (p passage) tokens() []string {
	return append(append(foldedTokens(p.hpath), ""), foldedTokens(p.text)...)
}

// passageScan bounds the text read from one note to choose or match its
// passages: passages after the first passageScan bytes are never a hit.
const passageScan = 1 << 20

// scanNote fills in h's path and title from note id, then calls fn with
// each of its passages in order, up to passageScan bytes of text; ok is
// false when the note no longer exists. One query reads both: a search
// reads every returned hit this way.
func (ix *Index) scanNote(ctx context.Context, id int64, h *textindex.Hit, fn func(passage)) (ok bool, err error) {
	rows, err := ix.query(ctx, `SELECT n.path, n.title, p.id IS NOT NULL, ifnull(p.ordinal, 0), ifnull(p.heading, ''),
		ifnull(p.heading_id, ''), ifnull(p.heading_path, ''), ifnull(p.text, '')
		FROM notes n LEFT JOIN passages p ON p.id BETWEEN n.id << `+passageShift+` AND (n.id << `+passageShift+`) + n.npassages - 1
		WHERE n.id = ? ORDER BY p.id`, id)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for read := 0; read < passageScan && rows.Next(); {
		var (
			p   passage
			has bool
		)
		if err := rows.Scan(&h.Path, &h.Title, &has, &p.ordinal, &p.heading, &p.headingID, &p.hpath, &p.text); err != nil {
			return false, err
		}
		ok = true
		if !has { // a note without passages: one row, its passage NULL
			break
		}
		read += len(p.text)
		fn(p)
	}
	return ok, errors.Join(rows.Err(), rows.Close())
}

// passageShift is passageBits in SQL.
var passageShift = strconv.Itoa(passageBits)

// bestPassage fills in h's path and title from note id (see scanNote) and
// picks the passage that best explains a match: the one containing the
// most distinct query tokens (in its text or heading path), then the most
// occurrences, then the first. Scoring in Go over one note's short
// passages costs far less than a second FTS5 query per hit, which would
// expand every prefix term over the whole index again.
func (ix *Index) bestPassage(ctx context.Context, id int64, h *textindex.Hit, ns []needle) (passage, bool, error) {
	var (
		best      passage
		bestScore = score{-1, -1}
	)
	ok, err := ix.scanNote(ctx, id, h, func(p passage) {
		if s := scorePassage(ns, p.hpath, p.text); s.better(bestScore) {
			best, bestScore = p, s
		}
	})
	return best, ok, err
}

// matchingPassages fills in h's path and title from note id (see scanNote)
// and returns its passages that match qm, best first as bestPassage ranks
// them, in reading order among equals.
func (ix *Index) matchingPassages(ctx context.Context, id int64, h *textindex.Hit, qm queryMatch, ns []needle) ([]passage, bool, error) {
	type scored struct {
		p passage
		s score
	}
	var out []scored
	ok, err := ix.scanNote(ctx, id, h, func(p passage) {
		if toks := p.tokens(); qm.matches(toks) {
			out = append(out, scored{p, scoreTokens(toks, ns)})
		}
	})
	if err != nil || !ok {
		return nil, ok, err
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.s.better(b.s):
			return -1
		case b.s.better(a.s):
			return 1
		}
		return 0
	})
	ps := make([]passage, len(out))
	for i, o := range out {
		ps[i] = o.p
	}
	return ps, true, nil
}

// queryRow runs a prepared single-row query.
func (ix *Index) queryRow(ctx context.Context, q string, args []any, dest ...any) error {
	rows, err := ix.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

// filterSQL returns the WHERE conditions (each starting with " AND ") on the
// notes table n for f, and their arguments.
func filterSQL(f textindex.Filter) (string, []any) {
	var b strings.Builder
	var args []any
	if f.PathPrefix != "" {
		b.WriteString(` AND n.path GLOB ?`)
		args = append(args, globEscape(norm.NFC.String(f.PathPrefix))+"*")
	}
	if f.Author != "" {
		b.WriteString(` AND n.author = ?`)
		args = append(args, foldKey(f.Author))
	}
	for _, t := range f.Tags {
		b.WriteString(` AND n.id IN (SELECT note_id FROM tags WHERE tag = ?)`)
		args = append(args, vault.NormalizeTag(t))
	}
	for _, e := range f.Entities {
		b.WriteString(` AND n.id IN (SELECT note_id FROM entities WHERE entity = ?)`)
		args = append(args, norm.NFC.String(strings.ToValidUTF8(e, "\uFFFD")))
	}
	if f.Paths != nil {
		paths := make([]string, len(f.Paths))
		for i, p := range f.Paths {
			paths[i] = norm.NFC.String(p)
		}
		js, _ := json.Marshal(paths) // []string always marshals
		b.WriteString(` AND n.path IN (SELECT value FROM json_each(?))`)
		args = append(args, string(js))
	}
	return b.String(), args
}

// globEscape quotes GLOB's special characters so s matches literally.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[':
			b.WriteByte('[')
			b.WriteRune(r)
			b.WriteByte(']')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
