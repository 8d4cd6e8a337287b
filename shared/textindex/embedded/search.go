package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

const defaultLimit = 25

// Search ranks the notes (or passages) matching q under opts.Filter by
// weighted BM25. Filters are part of the SQL, so they narrow the candidates
// before ranking and paging. Snippets come from each returned hit's
// best-matching passage.
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

// search runs the ranking query (which also counts every match), then
// fills in each returned hit.
func (ix *Index) search(ctx context.Context, q textindex.Query, expr string, unit textindex.Unit, f textindex.Filter, limit, offset int) (textindex.Result, error) {
	fts := "notes_fts"
	noteID := "notes_fts.rowid"
	if unit == textindex.Passages {
		fts = "passages_fts"
		noteID = "(passages_fts.rowid >> " + strconv.Itoa(passageBits) + ")"
	}
	where, args := filterSQL(f)
	from := ` FROM ` + fts
	if where != "" {
		from += ` JOIN notes n ON n.id = ` + noteID
	}
	from += ` WHERE ` + fts + ` MATCH ?` + where
	args = append([]any{expr}, args...)

	// count(*) OVER () counts the matches in the same pass that ranks them:
	// FTS5 ranks every match before the LIMIT anyway.
	rows, err := ix.query(ctx, `SELECT `+fts+`.rowid, `+fts+`.rank, count(*) OVER ()`+from+
		` ORDER BY `+fts+`.rank LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	if err != nil {
		return textindex.Result{}, err
	}
	type found struct {
		id    int64 // note id, or passage id for Passages
		score float64
	}
	var hits []found
	var res textindex.Result
	for rows.Next() {
		var h found
		if err := rows.Scan(&h.id, &h.score, &res.Total); err != nil {
			rows.Close()
			return textindex.Result{}, err
		}
		hits = append(hits, h)
	}
	// Close before any other query: an in-memory index has one connection.
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return textindex.Result{}, err
	}
	if len(hits) == 0 && offset > 0 { // past the end: count separately
		if err := ix.queryRow(ctx, `SELECT count(*)`+from, args, &res.Total); err != nil {
			return textindex.Result{}, err
		}
	}

	ns := needles(q)
	for _, fh := range hits {
		h := textindex.Hit{Score: fh.score}
		id := fh.id
		if unit == textindex.Passages {
			id = fh.id >> passageBits
		}
		var npass int64
		err := ix.queryRow(ctx, `SELECT path, title, npassages FROM notes WHERE id = ?`, []any{id}, &h.Path, &h.Title, &npass)
		if errors.Is(err, sql.ErrNoRows) {
			continue // deleted since the ranking query
		}
		if err != nil {
			return textindex.Result{}, err
		}
		var p passage
		if unit == textindex.Passages {
			p, err = ix.passage(ctx, fh.id)
		} else {
			p, err = ix.bestPassage(ctx, id, npass, ns)
		}
		if err != nil {
			return textindex.Result{}, err
		}
		h.Passage, h.Heading, h.HeadingID = p.ordinal, p.heading, p.headingID
		h.Snippet = excerpt(p.text, ns)
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// passage is one stored passage.
type passage struct {
	ordinal                  int
	heading, headingID, text string
}

// passage loads one passage by id; a missing one is the zero passage.
func (ix *Index) passage(ctx context.Context, id int64) (passage, error) {
	var p passage
	err := ix.queryRow(ctx, `SELECT ordinal, heading, heading_id, text FROM passages WHERE id = ?`,
		[]any{id}, &p.ordinal, &p.heading, &p.headingID, &p.text)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return p, err
}

// bestPassageScan bounds the text bestPassage reads from one note.
const bestPassageScan = 1 << 20

// bestPassage picks the passage of note id that best explains a match: the
// one containing the most distinct query tokens (in its text or heading),
// then the most occurrences, then the first. It reads the note's passages
// in order, up to bestPassageScan bytes. Scoring in Go over one note's short
// passages costs far less than a second FTS5 query per hit, which would
// expand every prefix term over the whole index again.
func (ix *Index) bestPassage(ctx context.Context, id, npass int64, ns []needle) (passage, error) {
	if npass <= 0 {
		return passage{}, nil
	}
	first := id << passageBits
	rows, err := ix.query(ctx, `SELECT ordinal, heading, heading_id, text FROM passages WHERE id BETWEEN ? AND ? ORDER BY id`,
		first, first+npass-1)
	if err != nil {
		return passage{}, err
	}
	defer rows.Close()
	var (
		best      passage
		bestScore = score{-1, -1}
		read      int
	)
	for read < bestPassageScan && rows.Next() {
		var p passage
		if err := rows.Scan(&p.ordinal, &p.heading, &p.headingID, &p.text); err != nil {
			return passage{}, err
		}
		read += len(p.text)
		if s := scorePassage(p.heading+"\n"+p.text, ns); s.better(bestScore) {
			best, bestScore = p, s
		}
	}
	return best, errors.Join(rows.Err(), rows.Close())
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
		args = append(args, tagKey(t))
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
