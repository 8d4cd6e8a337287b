// Package embedded is the default full-text index: SQLite FTS5 through
// modernc.org/sqlite (pure Go), in one file such as .sheaf/index.db or in
// memory.
//
// Notes are indexed in one contentless FTS5 table (tokenizer unicode61 with
// diacritics removed, prefix indexes of 2 and 3 characters, rank = weighted
// bm25); the passage text and the filterable metadata live in ordinary
// tables. Scripts written without spaces (Chinese, Japanese, Thai, ...) are
// indexed one character per token. Filters are applied in SQL before
// ranking, and snippets are cut from the best-matching passage of each
// returned hit only.
//
// Passages are not indexed on their own: a passage search ranks notes
// exactly as a note search does and expands each ranked note, in rank order,
// into its passages that match the query, matched and ordered in Go (see
// Index.Search). Tokenizing every note twice, once per table, cost 40% of
// indexing time, and ranking a word found in every passage cost a BM25
// evaluation per passage.
package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// schemaVersion changes whenever the tables below change; an index file with
// another version is dropped and rebuilt (it is derived data).
const schemaVersion = "5"

// stemWeights are the bm25 column weights of stems_fts (title and aliases,
// headings, body, tags and path words): the question lane's first stage,
// which only picks the notes Ask measures (AskOptions.Pool).
const stemWeights = "3.0, 2.0, 1.0, 1.0"

// tables lists every table any schema version created, for dropping an old
// version (passages_fts: version 1; stems_fts, stems_vocab: version 3;
// version 4 added the question lane's fields to notes; version 5 the
// description column of notes_fts).
var tables = []string{"meta", "notes", "tags", "entities", "passages", "notes_fts", "passages_fts", "stems_vocab", "stems_fts"}

// Passage rows get the id noteID<<passageBits | index, so a note's passages
// are one contiguous rowid range. Notes with more passages than that keep only the first ones.
const (
	passageBits = 20
	maxPassages = 1 << passageBits
)

// The tokenizer folds case and diacritics. Prefix indexes serve 2 and 3
// character prefixes typed into search, which expand to hundreds of terms;
// each costs as much indexing work as the words themselves. Longer prefixes
// expand to few terms and are merged at query time: a 4-character index
// would cost a fifth of indexing time to save a few milliseconds on the
// largest expansions.
const tokenizer = `tokenize='unicode61 remove_diacritics 2'`

var schema = []string{
	`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	`CREATE TABLE notes(
		id INTEGER PRIMARY KEY,
		path TEXT NOT NULL UNIQUE,
		title TEXT NOT NULL,
		author TEXT NOT NULL, -- case-folded, for the author filter
		modified TEXT NOT NULL, -- RFC 3339, UTC
		npassages INTEGER NOT NULL,
		lang TEXT NOT NULL, -- textindex.DetectLang of the note, '' when unsure
		-- the question lane's fields (see Ask): the index terms of the title
		-- and aliases, of the headings, and of the tags and path words, as
		-- in stems_fts; and the number of index terms of the body
		names TEXT NOT NULL,
		heads TEXT NOT NULL,
		meta TEXT NOT NULL,
		nterms INTEGER NOT NULL
	)`,
	// The question lane's vault statistics (the languages, the number of
	// notes and their mean length) read this index, not every note's row.
	`CREATE INDEX notes_lang_nterms ON notes(lang, nterms)`,
	// tags holds every tag and its nested ancestors ("a/b/c", "a/b", "a"),
	// lower-cased, so a tag filter matches descendants with one lookup.
	`CREATE TABLE tags(tag TEXT NOT NULL, note_id INTEGER NOT NULL, PRIMARY KEY(tag, note_id)) WITHOUT ROWID`,
	`CREATE INDEX tags_note ON tags(note_id)`,
	`CREATE TABLE entities(entity TEXT NOT NULL, note_id INTEGER NOT NULL, PRIMARY KEY(entity, note_id)) WITHOUT ROWID`,
	`CREATE INDEX entities_note ON entities(note_id)`,
	`CREATE TABLE passages(
		id INTEGER PRIMARY KEY, -- note id << 20 | index
		ordinal INTEGER NOT NULL,
		heading TEXT NOT NULL,
		heading_id TEXT NOT NULL,
		heading_path TEXT NOT NULL, -- cleaned heading path, one per line, matched with the text
		text TEXT NOT NULL,
		stems TEXT NOT NULL -- the heading path's and the text's index terms for stems_fts, space-separated
	)`,
	// description: what the frontmatter says the note is about
	// (textindex.Doc.Description), weighted as the tags.
	`CREATE VIRTUAL TABLE notes_fts USING fts5(title, aliases, headings, tags, description, body,
		content='', contentless_delete=1, ` + tokenizer + `, prefix='2 3')`,
	`INSERT INTO notes_fts(notes_fts, rank) VALUES('rank', 'bm25(10.0, 8.0, 4.0, 3.0, 3.0, 1.0)')`,
	// stems_fts is the question lane's index (see Ask): one row per note
	// (rowid = the note's id), every word stemmed in its note's language
	// and stopwords dropped, in Go before FTS5 sees the text: title and
	// aliases, headings, body, and meta (tags and path words). No prefix
	// indexes: the question lane matches whole stems.
	`CREATE VIRTUAL TABLE stems_fts USING fts5(title, headings, body, meta,
		content='', contentless_delete=1, ` + tokenizer + `)`,
	`INSERT INTO stems_fts(stems_fts, rank) VALUES('rank', 'bm25(` + stemWeights + `)')`,
	`INSERT INTO stems_fts(stems_fts, rank) VALUES('hashsize', 8388608)`,
	`INSERT INTO stems_fts(stems_fts, rank) VALUES('automerge', 8)`,
	`CREATE VIRTUAL TABLE stems_vocab USING fts5vocab(stems_fts, 'row')`,
	// A bigger in-memory hash before each flush (8 MB, default 1 MB) and
	// merging 8 segments at a time (default 4) halve the CPU time of a bulk
	// index, which otherwise goes to merging segments over and over.
	`INSERT INTO notes_fts(notes_fts, rank) VALUES('hashsize', 8388608)`,
	`INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 8)`,
	`INSERT INTO meta(key, value) VALUES('schema_version', '` + schemaVersion + `')`,
}

// Index is a SQLite FTS5 full-text index. It is safe for concurrent use:
// one connection writes while a pool of connections reads (WAL), so searches
// run while an Upsert is in progress. An in-memory index has one connection
// and serialises everything.
type Index struct {
	w    *sql.DB // the single writer
	r    *sql.DB // readers (== w in memory)
	wsMu sync.Mutex
	ws   *writeStmts // prepared on w by the first write (writeStmts)

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // prepared read statements by SQL text

	gen   atomic.Uint64 // incremented by every write of this process
	stats statsCache    // for Ask
	ranks rankCache     // for plain searches
	terms termCache     // for plain searches without filters
	stems termCache     // for the question lane's first stage (stems set by Open)
	notes noteCache     // the question lane's notes, as readAskNotes reads them
	freqs freqCache     // the question lane's note frequencies
}

var _ textindex.Index = (*Index)(nil)

// Open opens or creates the index at path, a SQLite file (its folder must
// exist); path "" opens a private in-memory index. An index written by
// another schema version is dropped and recreated empty; one of this
// version is upgraded in place (upgrades) when it can be.
func Open(path string) (*Index, error) {
	ix := &Index{stmts: map[string]*sql.Stmt{}, stems: termCache{stems: true}}
	if path == "" {
		db, err := sql.Open("sqlite", ":memory:?_txlock=immediate")
		if err != nil {
			return nil, fmt.Errorf("embedded: open in-memory index: %w", err)
		}
		// One connection for ever: closing it would lose the database.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		ix.w, ix.r = db, db
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("embedded: open %s: %w", path, err)
		}
		u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
		// The writer keeps up to 32 MB of pages, each reader SQLite's
		// default 2 MB. In WAL mode a reader drops its whole cache the
		// next time it reads after any commit, and freeing and refilling
		// a big one costs more than it saves once the vault is being
		// written: with a write before every fifth question
		// (BenchmarkAskIndexFile, SHEAF_BENCH_WRITE_EVERY=5) questions
		// cost 26 CPU-ms each with 8 MB per reader, 17 with 2 MB. In a
		// vault never written, 8 MB made plain searches for common words
		// about 9% cheaper (0.17 ms: fewer pages read again), and
		// questions no cheaper.
		n := max(4, runtime.GOMAXPROCS(0))
		common := "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
		if ix.w, err = sql.Open("sqlite", u+common+"&_txlock=immediate&_pragma=cache_size(-32000)"); err != nil {
			return nil, fmt.Errorf("embedded: open %s: %w", path, err)
		}
		ix.w.SetMaxOpenConns(1)
		ix.w.SetMaxIdleConns(1)
		if ix.r, err = sql.Open("sqlite", u+common+"&_pragma=cache_size(-2000)&_pragma=query_only(1)"); err != nil {
			ix.w.Close()
			return nil, fmt.Errorf("embedded: open %s: %w", path, err)
		}
		ix.r.SetMaxOpenConns(n)
		ix.r.SetMaxIdleConns(n)
	}
	ctx := context.Background()
	if err := ix.migrate(ctx); err != nil {
		ix.Close()
		return nil, fmt.Errorf("embedded: open %s: %w", path, err)
	}
	return ix, nil
}

// upgrades bring an index of the current version written by an earlier
// Sheaf up to date in place, in order. Each is idempotent, and once done
// costs a read of the schema, no write lock. They only make the index
// faster, so one that fails (another process holding a long write, a full
// disk) is logged and the index opens as it is, to try again next time.
var upgrades = []string{
	// vaultStats read every note's row to count them: 36 ms on a 10k-note
	// index whose pages were not in memory, against 4 ms from this index.
	`CREATE INDEX IF NOT EXISTS notes_lang_nterms ON notes(lang, nterms)`,
	`DROP INDEX IF EXISTS notes_lang`,
}

// upgrade runs upgrades, stopping at the first that fails.
func (ix *Index) upgrade(ctx context.Context) {
	for _, u := range upgrades {
		if _, err := ix.w.ExecContext(ctx, u); err != nil {
			slog.Warn("embedded: index upgrade not applied; the index works without it and is upgraded at a later start", "upgrade", u, "err", err)
			return
		}
	}
}

// migrate creates the schema, or drops and recreates it when the stored
// version differs, or upgrades it when it is the same.
func (ix *Index) migrate(ctx context.Context) error {
	var v string
	err := ix.w.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
	if err == nil && v == schemaVersion {
		ix.upgrade(ctx)
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) && !isNoTable(err) {
		return err
	}
	tx, err := ix.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+t); err != nil {
			return err
		}
	}
	for _, s := range schema {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return tx.Commit()
}

// Close releases the database. The Index must not be used afterwards.
func (ix *Index) Close() error {
	ix.mu.Lock()
	for _, s := range ix.stmts {
		s.Close()
	}
	ix.stmts = nil
	ix.mu.Unlock()
	ix.wsMu.Lock()
	if ix.ws != nil {
		ix.ws.close()
		ix.ws = nil
	}
	ix.wsMu.Unlock()
	err := ix.w.Close()
	if ix.r != ix.w {
		err = errors.Join(err, ix.r.Close())
	}
	return err
}

// maxStmts bounds the prepared-statement cache; filter shapes beyond it
// are prepared per call.
const maxStmts = 128

// query runs a read statement, prepared once per distinct SQL text.
func (ix *Index) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ix.mu.Lock()
	st, ok := ix.stmts[q]
	if !ok && ix.stmts != nil && len(ix.stmts) < maxStmts {
		var err error
		if st, err = ix.r.PrepareContext(ctx, q); err != nil {
			ix.mu.Unlock()
			return nil, err
		}
		ix.stmts[q] = st
		ok = true
	}
	ix.mu.Unlock()
	if !ok {
		return ix.r.QueryContext(ctx, q, args...)
	}
	return st.QueryContext(ctx, args...)
}

// sqliteCode returns the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// sqliteError is SQLITE_ERROR, the generic error code ("no such table",
// FTS5 syntax errors, ...).
const sqliteError = 1

func isNoTable(err error) bool {
	return sqliteCode(err) == sqliteError // "no such table: meta"
}
