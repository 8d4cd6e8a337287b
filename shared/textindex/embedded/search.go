package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	limit := opts.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	offset := max(opts.Offset, 0)
	res, err := ix.search(ctx, q, expr, opts.Unit, opts.Filter, limit, offset)
	if err != nil {
		if sqliteCode(err) == 1 && strings.Contains(err.Error(), "fts5") {
			slog.Debug("embedded: malformed match expression", "match", expr, "err", err)
			return textindex.Result{}, nil
		}
		return textindex.Result{}, fmt.Errorf("embedded: search: %w", err)
	}
	return res, nil
}

// search runs the ranking query, the count and the per-hit snippet lookups.
func (ix *Index) search(ctx context.Context, q textindex.Query, expr string, unit textindex.Unit, f textindex.Filter, limit, offset int) (textindex.Result, error) {
	fts := "notes_fts"
	from := ` FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid WHERE notes_fts MATCH ?`
	if unit == textindex.Passages {
		fts = "passages_fts"
		from = ` FROM passages_fts JOIN notes n ON n.id = (passages_fts.rowid >> 20) WHERE passages_fts MATCH ?`
	}
	where, args := filterSQL(f)
	args = append([]any{expr}, args...)

	type row struct {
		id    int64 // note id, or passage id for Passages
		npass int64
		hit   textindex.Hit
	}
	rows, err := ix.query(ctx, `SELECT `+fts+`.rank, n.path, n.title, n.npassages, `+fts+`.rowid`+
		from+where+` ORDER BY `+fts+`.rank LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	if err != nil {
		return textindex.Result{}, err
	}
	var found []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.hit.Score, &r.hit.Path, &r.hit.Title, &r.npass, &r.id); err != nil {
			rows.Close()
			return textindex.Result{}, err
		}
		found = append(found, r)
	}
	// Close before any other query: an in-memory index has one connection.
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return textindex.Result{}, err
	}

	res := textindex.Result{Total: offset + len(found)}
	if len(found) == limit || (len(found) == 0 && offset > 0) {
		countFrom := from
		if where == "" { // every row has its note: skip the join
			countFrom = ` FROM ` + fts + ` WHERE ` + fts + ` MATCH ?`
		}
		if err := ix.queryRow(ctx, `SELECT count(*)`+countFrom+where, args, &res.Total); err != nil {
			return textindex.Result{}, err
		}
	}

	ns := needles(q)
	for _, r := range found {
		h := r.hit
		var pid int64
		if unit == textindex.Passages {
			pid = r.id
		} else if pid, err = ix.bestPassage(ctx, q, expr, r.id, r.npass); err != nil {
			return textindex.Result{}, err
		}
		if pid >= 0 {
			var text string
			err := ix.queryRow(ctx, `SELECT ordinal, heading, heading_id, text FROM passages WHERE id = ?`,
				[]any{pid}, &h.Passage, &h.Heading, &h.HeadingID, &text)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return textindex.Result{}, err
			}
			h.Snippet = excerpt(text, ns)
		}
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// bestPassage returns the id of note id's passage that best matches expr;
// failing that, the one that best matches any term of q; failing that
// (the match was in the title, tags or aliases), its first passage. It
// returns -1 for a note without passages.
func (ix *Index) bestPassage(ctx context.Context, q textindex.Query, expr string, id, npass int64) (int64, error) {
	if npass <= 0 {
		return -1, nil
	}
	first := id << passageBits
	for _, e := range []string{expr, anyTermExpr(q)} {
		var pid int64
		err := ix.queryRow(ctx, `SELECT rowid FROM passages_fts WHERE passages_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank LIMIT 1`,
			[]any{e, first, first + npass - 1}, &pid)
		if err == nil {
			return pid, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, err
		}
	}
	return first, nil
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
