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

// writeStmts are the write statements, prepared once on the writer
// connection and bound to each transaction with Tx.StmtContext.
type writeStmts struct {
	findNote, insertNote, updateNote                  *sql.Stmt
	deleteNote, deleteNoteFTS, deleteTags, deleteEnts *sql.Stmt
	deletePassages, insertNoteFTS, insertTag          *sql.Stmt
	insertEnt, insertPassage                          *sql.Stmt
	deleteStems, insertStems                          *sql.Stmt
}

// stmtDef is one field of writeStmts and its SQL.
type stmtDef struct {
	stmt **sql.Stmt
	sql  string
}

// defs lists the statements of ws, always in the same order.
func (ws *writeStmts) defs() []stmtDef {
	return []stmtDef{
		{&ws.findNote, `SELECT id FROM notes WHERE path = ?`},
		{&ws.insertNote, `INSERT INTO notes(path, title, author, modified, npassages, lang, names, heads, meta, nterms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&ws.updateNote, `UPDATE notes SET title = ?, author = ?, modified = ?, npassages = ?, lang = ?, names = ?, heads = ?, meta = ?, nterms = ? WHERE id = ?`},
		{&ws.deleteNote, `DELETE FROM notes WHERE id = ?`},
		{&ws.deleteNoteFTS, `DELETE FROM notes_fts WHERE rowid = ?`},
		{&ws.deleteTags, `DELETE FROM tags WHERE note_id = ?`},
		{&ws.deleteEnts, `DELETE FROM entities WHERE note_id = ?`},
		{&ws.deletePassages, `DELETE FROM passages WHERE id BETWEEN ? AND ?`},
		{&ws.insertNoteFTS, `INSERT INTO notes_fts(rowid, title, aliases, headings, tags, description, body) VALUES(?, ?, ?, ?, ?, ?, ?)`},
		{&ws.insertTag, `INSERT OR IGNORE INTO tags(tag, note_id) VALUES(?, ?)`},
		{&ws.insertEnt, `INSERT OR IGNORE INTO entities(entity, note_id) VALUES(?, ?)`},
		{&ws.insertPassage, `INSERT INTO passages(id, ordinal, heading, heading_id, heading_path, text, stems) VALUES(?, ?, ?, ?, ?, ?, ?)`},
		{&ws.deleteStems, `DELETE FROM stems_fts WHERE rowid = ?`},
		{&ws.insertStems, `INSERT INTO stems_fts(rowid, title, headings, body, meta) VALUES(?, ?, ?, ?, ?)`},
	}
}

// writeStmts returns the write statements, prepared on the first write
// (not at Open: a server answers its first request before it writes, and
// preparing them parses 14 statements); a failed preparation is retried
// by the next write.
func (ix *Index) writeStmts(ctx context.Context) (*writeStmts, error) {
	ix.wsMu.Lock()
	defer ix.wsMu.Unlock()
	if ix.ws == nil {
		ws, err := prepareWrite(ctx, ix.w)
		if err != nil {
			return nil, err
		}
		ix.ws = ws
	}
	return ix.ws, nil
}

// prepareWrite prepares the write statements on db.
func prepareWrite(ctx context.Context, db *sql.DB) (*writeStmts, error) {
	ws := &writeStmts{}
	for _, d := range ws.defs() {
		s, err := db.PrepareContext(ctx, d.sql)
		if err != nil {
			ws.close()
			return nil, fmt.Errorf("prepare %q: %w", d.sql, err)
		}
		*d.stmt = s
	}
	return ws, nil
}

// in returns the statements bound to tx; they close with it.
func (ws *writeStmts) in(ctx context.Context, tx *sql.Tx) *writeStmts {
	out := &writeStmts{}
	src, dst := ws.defs(), out.defs()
	for i := range src {
		*dst[i].stmt = tx.StmtContext(ctx, *src[i].stmt)
	}
	return out
}

func (ws *writeStmts) close() {
	for _, d := range ws.defs() {
		if *d.stmt != nil {
			(*d.stmt).Close()
		}
	}
}

// Upsert replaces the documents with the same paths, all in one transaction.
// A Doc without Passages is indexed with its Body as a single passage, and
// one without a Body with its passages' text as the body.
func (ix *Index) Upsert(ctx context.Context, docs ...textindex.Doc) error {
	if len(docs) == 0 {
		return nil
	}
	// Normalise on another goroutine while this one feeds SQLite.
	ctx, cancel := context.WithCancel(ctx)
	prepared := make(chan preparedDoc, 64)
	go func() {
		defer close(prepared)
		var st textindex.Stemmer
		for _, d := range docs {
			select {
			case prepared <- prepareDoc(d, &st):
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		cancel()
		for range prepared { // wait for the producer to stop
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
	ws, err := ix.writeStmts(ctx) // before BeginTx: the writer has one connection
	if err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	tx, err := ix.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("embedded: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(ctx, ws.in(ctx, tx)); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedded: commit: %w", err)
	}
	ix.gen.Add(1)
	return nil
}

// preparedDoc is a Doc with every field ready for the tables.
type preparedDoc struct {
	path, title, author, modified              string
	aliases, headings, tags, description, body string // FTS columns, cleaned
	tagKeys, entities                          []string
	passages                                   []preparedPassage
	lang                                       textindex.Lang
	stemTitle, stemMeta                        string // stems_fts columns
	stemHeadings                               string
}

type preparedPassage struct {
	ordinal                               int
	heading, headingID, headingPath, text string
	stems                                 string // index terms of the heading path and the text
}

func prepareDoc(d textindex.Doc, st *textindex.Stemmer) preparedDoc {
	p := preparedDoc{
		path:        norm.NFC.String(d.Path),
		title:       validText(d.Title),
		author:      foldKey(d.Author),
		modified:    d.Modified.UTC().Format(time.RFC3339Nano),
		aliases:     cleanText(strings.Join(d.Aliases, "\n")),
		headings:    cleanText(strings.Join(d.Headings, "\n")),
		tags:        cleanText(strings.Join(d.Tags, "\n")),
		description: cleanText(strings.Join(d.Description, "\n")),
		body:        cleanText(body(d)),
		tagKeys:     vault.ExpandTags(d.Tags),
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
	p.lang = textindex.DetectLang(langSample(d))
	p.stemTitle = stemText(st, p.lang, d.Title+"\n"+strings.Join(d.Aliases, "\n"))
	p.stemMeta = stemText(st, p.lang, strings.Join(d.Tags, "\n")+"\n"+pathWords(p.path))
	p.stemHeadings = stemText(st, p.lang, strings.Join(d.Headings, "\n"))
	for i, ps := range passages {
		// The description counts as the note's lead: the question lane
		// reads it with the first passage (its text stays the note's).
		lead := ""
		if i == 0 && len(d.Description) > 0 {
			lead = strings.Join(d.Description, "\n") + "\n"
		}
		p.passages = append(p.passages, preparedPassage{
			ordinal:     ps.Ordinal,
			heading:     validText(ps.Heading()),
			headingID:   validText(ps.HeadingID),
			headingPath: cleanText(strings.Join(ps.HeadingPath, "\n")),
			text:        validText(ps.Text),
			stems:       stemText(st, p.lang, lead+strings.Join(ps.HeadingPath, "\n")+"\n"+ps.Text),
		})
	}
	return p
}

// langSample is the text a note's language is detected from.
func langSample(d textindex.Doc) string {
	const n = 4 << 10
	b := body(d)
	if len(b) > n {
		b = b[:n]
	}
	return d.Title + "\n" + b
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
	nterms := 0
	for _, ps := range p.passages {
		nterms += countTerms(ps.stems)
	}
	if exists {
		if _, err := ws.updateNote.ExecContext(ctx, p.title, p.author, p.modified, len(p.passages), string(p.lang), p.stemTitle, p.stemHeadings, p.stemMeta, nterms, id); err != nil {
			return err
		}
	} else {
		res, err := ws.insertNote.ExecContext(ctx, p.path, p.title, p.author, p.modified, len(p.passages), string(p.lang), p.stemTitle, p.stemHeadings, p.stemMeta, nterms)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
	}
	if _, err := ws.insertNoteFTS.ExecContext(ctx, id, cleanText(p.title), p.aliases, p.headings, p.tags, p.description, p.body); err != nil {
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
	var body strings.Builder
	for i, ps := range p.passages {
		pid := id<<passageBits | int64(i)
		if _, err := ws.insertPassage.ExecContext(ctx, pid, ps.ordinal, ps.heading, ps.headingID, ps.headingPath, ps.text, ps.stems); err != nil {
			return err
		}
		body.WriteString(ps.stems)
		body.WriteByte('\n')
	}
	_, err = ws.insertStems.ExecContext(ctx, id, p.stemTitle, p.stemHeadings, body.String(), p.stemMeta)
	return err
}

// removeOld deletes every row derived from the note at path except its
// notes row, and returns the note's id.
func removeOld(ctx context.Context, ws *writeStmts, path string) (id int64, ok bool, err error) {
	err = ws.findNote.QueryRowContext(ctx, path).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	for _, st := range []*sql.Stmt{ws.deleteNoteFTS, ws.deleteStems, ws.deleteTags, ws.deleteEnts} {
		if _, err := st.ExecContext(ctx, id); err != nil {
			return 0, false, err
		}
	}
	first := id << passageBits
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

// foldKey normalises a value compared case-insensitively (authors).
func foldKey(s string) string {
	return strings.ToLower(norm.NFC.String(strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))))
}

// validText makes s safe to store as SQLite text.
func validText(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}

// countTerms is the number of space-separated terms of a stems string.
func countTerms(stems string) int {
	n, in := 0, false
	for i := 0; i < len(stems); i++ {
		switch sp := stems[i] == ' ' || stems[i] == '\n'; {
		case sp:
			in = false
		case !in:
			in = true
			n++
		}
	}
	return n
}
