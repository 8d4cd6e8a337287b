package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// writeStmts are the statements of one write transaction.
type writeStmts struct {
	findNote, insertNote, updateNote                  *sql.Stmt
	deleteNote, deleteNoteFTS, deleteTags, deleteEnts *sql.Stmt
	deletePassages, deletePassageFTS                  *sql.Stmt
	insertNoteFTS, insertTag, insertEnt               *sql.Stmt
	insertPassage, insertPassageFTS                   *sql.Stmt
}

var writeSQL = map[string]string{
	"findNote":         `SELECT id, npassages FROM notes WHERE path = ?`,
	"insertNote":       `INSERT INTO notes(path, title, author, modified, npassages) VALUES(?, ?, ?, ?, ?)`,
	"updateNote":       `UPDATE notes SET title = ?, author = ?, modified = ?, npassages = ? WHERE id = ?`,
	"deleteNote":       `DELETE FROM notes WHERE id = ?`,
	"deleteNoteFTS":    `DELETE FROM notes_fts WHERE rowid = ?`,
	"deleteTags":       `DELETE FROM tags WHERE note_id = ?`,
	"deleteEnts":       `DELETE FROM entities WHERE note_id = ?`,
	"deletePassages":   `DELETE FROM passages WHERE id BETWEEN ? AND ?`,
	"deletePassageFTS": `DELETE FROM passages_fts WHERE rowid = ?`,
	"insertNoteFTS":    `INSERT INTO notes_fts(rowid, title, aliases, headings, tags, body) VALUES(?, ?, ?, ?, ?, ?)`,
	"insertTag":        `INSERT OR IGNORE INTO tags(tag, note_id) VALUES(?, ?)`,
	"insertEnt":        `INSERT OR IGNORE INTO entities(entity, note_id) VALUES(?, ?)`,
	"insertPassage":    `INSERT INTO passages(id, ordinal, heading, heading_id, text) VALUES(?, ?, ?, ?, ?)`,
	"insertPassageFTS": `INSERT INTO passages_fts(rowid, heading, text) VALUES(?, ?, ?)`,
}

func prepareWrite(ctx context.Context, tx *sql.Tx) (*writeStmts, func(), error) {
	var ws writeStmts
	dst := map[string]**sql.Stmt{
		"findNote": &ws.findNote, "insertNote": &ws.insertNote, "updateNote": &ws.updateNote,
		"deleteNote": &ws.deleteNote, "deleteNoteFTS": &ws.deleteNoteFTS, "deleteTags": &ws.deleteTags,
		"deleteEnts": &ws.deleteEnts, "deletePassages": &ws.deletePassages, "deletePassageFTS": &ws.deletePassageFTS,
		"insertNoteFTS": &ws.insertNoteFTS, "insertTag": &ws.insertTag, "insertEnt": &ws.insertEnt,
		"insertPassage": &ws.insertPassage, "insertPassageFTS": &ws.insertPassageFTS,
	}
	var all []*sql.Stmt
	closeAll := func() {
		for _, s := range all {
			s.Close()
		}
	}
	for name, q := range writeSQL {
		s, err := tx.PrepareContext(ctx, q)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("prepare %s: %w", name, err)
		}
		*dst[name] = s
		all = append(all, s)
	}
	return &ws, closeAll, nil
}

// Upsert replaces the documents with the same paths, all in one transaction.
// A Doc without Passages is indexed with its Body as a single passage, and
// one without a Body with its passages' text as the body.
func (ix *Index) Upsert(ctx context.Context, docs ...textindex.Doc) error {
	if len(docs) == 0 {
		return nil
	}
	// Normalise on another goroutine while this one feeds SQLite.
	prepared := make(chan preparedDoc, 64)
	go func() {
		defer close(prepared)
		for _, d := range docs {
			select {
			case prepared <- prepareDoc(d):
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		for range prepared { // let the producer finish on early return
		}
	}()
	return ix.write(ctx, func(ctx context.Context, ws *writeStmts) error {
		for p := range prepared {
			if err := upsertOne(ctx, ws, p); err != nil {
				return fmt.Errorf("upsert %q: %w", p.path, err)
			}
		}
		return ctx.Err()
	})
}

// Delete removes documents; missing paths are not an error.
func (ix *Index) Delete(ctx context.Context, paths ...string) error {
	if len(paths) == 0 {
		return nil
	}
	return ix.write(ctx, func(ctx context.Context, ws *writeStmts) error {
		for _, p := range paths {
			id, ok, err := removeOld(ctx, ws, norm.NFC.String(p))
			if err != nil {
				return fmt.Errorf("delete %q: %w", p, err)
			}
			if ok {
				if _, err := ws.deleteNote.ExecContext(ctx, id); err != nil {
					return fmt.Errorf("delete %q: %w", p, err)
				}
			}
		}
		return nil
	})
}

// write runs fn in one write transaction.
func (ix *Index) write(ctx context.Context, fn func(context.Context, *writeStmts) error) error {
	tx, err := ix.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("embedded: begin: %w", err)
	}
	defer tx.Rollback()
	ws, closeStmts, err := prepareWrite(ctx, tx)
	if err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	defer closeStmts()
	if err := fn(ctx, ws); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedded: commit: %w", err)
	}
	return nil
}

// preparedDoc is a Doc with every field ready for the tables.
type preparedDoc struct {
	path, title, author, modified string
	aliases, headings, tags, body string // FTS columns, cleaned
	tagKeys, entities             []string
	passages                      []preparedPassage
}

type preparedPassage struct {
	ordinal                         int
	heading, headingID, text, ftsHd string
	ftsText                         string
}

func prepareDoc(d textindex.Doc) preparedDoc {
	p := preparedDoc{
		path:     norm.NFC.String(d.Path),
		title:    validText(d.Title),
		author:   foldKey(d.Author),
		modified: d.Modified.UTC().Format(time.RFC3339Nano),
		aliases:  cleanText(strings.Join(d.Aliases, "\n")),
		headings: cleanText(strings.Join(d.Headings, "\n")),
		tags:     cleanText(strings.Join(d.Tags, "\n")),
		body:     cleanText(body(d)),
		tagKeys:  tagKeys(d.Tags),
	}
	for _, e := range d.Entities {
		if e = norm.NFC.String(strings.ToValidUTF8(e, "\uFFFD")); e != "" {
			p.entities = append(p.entities, e)
		}
	}
	passages := d.Passages
	if len(passages) == 0 && strings.TrimSpace(d.Body) != "" {
		passages = []vault.Passage{{Text: d.Body}}
	}
	if len(passages) > maxPassages {
		passages = passages[:maxPassages]
	}
	for _, ps := range passages {
		p.passages = append(p.passages, preparedPassage{
			ordinal:   ps.Ordinal,
			heading:   validText(ps.Heading()),
			headingID: validText(ps.HeadingID),
			text:      validText(ps.Text),
			ftsHd:     cleanText(strings.Join(ps.HeadingPath, "\n")),
			ftsText:   cleanText(ps.Text),
		})
	}
	return p
}

// body returns d.Body, or the text of its passages when Body is empty.
func body(d textindex.Doc) string {
	if d.Body != "" || len(d.Passages) == 0 {
		return d.Body
	}
	texts := make([]string, len(d.Passages))
	for i, p := range d.Passages {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\n\n")
}

func upsertOne(ctx context.Context, ws *writeStmts, p preparedDoc) error {
	id, exists, err := removeOld(ctx, ws, p.path)
	if err != nil {
		return err
	}
	if exists {
		if _, err := ws.updateNote.ExecContext(ctx, p.title, p.author, p.modified, len(p.passages), id); err != nil {
			return err
		}
	} else {
		res, err := ws.insertNote.ExecContext(ctx, p.path, p.title, p.author, p.modified, len(p.passages))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
	}
	if _, err := ws.insertNoteFTS.ExecContext(ctx, id, cleanText(p.title), p.aliases, p.headings, p.tags, p.body); err != nil {
		return err
	}
	for _, t := range p.tagKeys {
		if _, err := ws.insertTag.ExecContext(ctx, t, id); err != nil {
			return err
		}
	}
	for _, e := range p.entities {
		if _, err := ws.insertEnt.ExecContext(ctx, e, id); err != nil {
			return err
		}
	}
	for i, ps := range p.passages {
		pid := id<<passageBits | int64(i)
		if _, err := ws.insertPassage.ExecContext(ctx, pid, ps.ordinal, ps.heading, ps.headingID, ps.text); err != nil {
			return err
		}
		if _, err := ws.insertPassageFTS.ExecContext(ctx, pid, ps.ftsHd, ps.ftsText); err != nil {
			return err
		}
	}
	return nil
}

// removeOld deletes every row derived from the note at path except its
// notes row, and returns the note's id.
func removeOld(ctx context.Context, ws *writeStmts, path string) (id int64, ok bool, err error) {
	var n int64
	err = ws.findNote.QueryRowContext(ctx, path).Scan(&id, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	for _, st := range []*sql.Stmt{ws.deleteNoteFTS, ws.deleteTags, ws.deleteEnts} {
		if _, err := st.ExecContext(ctx, id); err != nil {
			return 0, false, err
		}
	}
	first := id << passageBits
	for i := int64(0); i < n; i++ {
		if _, err := ws.deletePassageFTS.ExecContext(ctx, first+i); err != nil {
			return 0, false, err
		}
	}
	if _, err := ws.deletePassages.ExecContext(ctx, first, first+maxPassages-1); err != nil {
		return 0, false, err
	}
	return id, true, nil
}

// Paths returns every indexed path with the Modified time it was indexed with.
func (ix *Index) Paths(ctx context.Context) (map[string]time.Time, error) {
	rows, err := ix.r.QueryContext(ctx, `SELECT path, modified FROM notes`)
	if err != nil {
		return nil, fmt.Errorf("embedded: paths: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var p, m string
		if err := rows.Scan(&p, &m); err != nil {
			return nil, fmt.Errorf("embedded: paths: %w", err)
		}
		t, err := time.Parse(time.RFC3339Nano, m)
		if err != nil {
			return nil, fmt.Errorf("embedded: paths: bad time %q for %q: %w", m, p, err)
		}
		out[p] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("embedded: paths: %w", err)
	}
	return out, nil
}

// tagKeys returns the lower-cased tags and all their nested ancestors:
// "a/b/c" gives "a/b/c", "a/b" and "a".
func tagKeys(tags []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		t = tagKey(t)
		for t != "" {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
			i := strings.LastIndexByte(t, '/')
			if i < 0 {
				break
			}
			t = strings.TrimRight(t[:i], "/")
		}
	}
	return out
}

// tagKey normalises a tag as written in a note or a filter: no '#', no
// surrounding slashes, NFC, lower case.
func tagKey(t string) string {
	t = strings.TrimSpace(strings.ToValidUTF8(t, "\uFFFD"))
	t = strings.Trim(strings.TrimLeft(t, "#"), "/")
	return strings.ToLower(norm.NFC.String(t))
}

// foldKey normalises a value compared case-insensitively (authors).
func foldKey(s string) string {
	return strings.ToLower(norm.NFC.String(strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))))
}

// validText makes s safe to store as SQLite text.
func validText(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}
