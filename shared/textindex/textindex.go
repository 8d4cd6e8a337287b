// Package textindex is the full-text port: notes and their passages, searched
// with the spec's query language and ranked by BM25. Adapters live in
// sub-packages (embedded = SQLite FTS5, meilisearch); every adapter passes
// textindextest.Run.
package textindex

import (
	"context"
	"time"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Doc is one note as the text index sees it.
type Doc struct {
	Path     string
	Title    string
	Aliases  []string
	Tags     []string // as in vault.Note.Tags; filters match nested descendants
	Author   string
	Entities []string
	Headings []string // heading titles, weighted up in ranking
	// Description is what the frontmatter says the note is about
	// (vault.Note.Description), indexed with the tags.
	Description []string
	Body        string // the note's text without frontmatter
	Modified    time.Time
	Passages    []vault.Passage
}

// Filter narrows a search before ranking. Empty fields do not filter.
type Filter struct {
	PathPrefix string   // plain string prefix of the path
	Tags       []string // every tag must match (a tag matches itself and its nested descendants)
	Author     string   // exact, case-insensitive
	Entities   []string // every entity must be present (exact)
	Paths      []string // only these paths (nil: no restriction)
}

// Unit selects what a search ranks and returns.
type Unit int

const (
	Notes Unit = iota // one hit per note
	// Passages gives one hit per passage that matches the query itself
	// (its heading path and text), for the notes a Notes search ranks:
	// notes in rank order, each note's matching passages best first, every
	// passage hit scored with its note's score. A note excluded by a NOT
	// term contributes no passages.
	Passages
)

// Options control one search.
type Options struct {
	Filter Filter
	Unit   Unit
	Limit  int // <= 0: adapter default (25)
	Offset int
	// Ask tunes Ask in adapters that measure Features (zero: DefaultAsk).
	Ask AskOptions
}

// Hit is one ranked result.
type Hit struct {
	Path    string
	Title   string
	Snippet string  // a short excerpt around the match, from the best passage
	Score   float64 // BM25: lower (more negative) is better
	// Matched is, for an Ask hit, the share of the question's weight
	// (the idf of its words) that the note's text holds, in [0, 1]: near 1
	// when the note has every rare word of the question. 0 when the adapter
	// does not measure it (and past the leading hits).
	Matched float64
	// Features are what ranked an Ask hit, for adapters that measure
	// them (zero otherwise).
	Features Features
	// For Unit == Passages (and, for Notes, the best-matching passage).
	Passage   int
	Heading   string
	HeadingID string
}

// Result is one page of hits and the total number of matches.
type Result struct {
	Hits []Hit
	// Total is the number of matching notes (Unit Notes). For Unit
	// Passages an adapter may estimate it without reading every matching
	// note: it is then at least Offset plus the hits returned, and exact
	// once the page reaches the last match.
	Total int
}

// Reader is the read side of a text index: all the tools use, so that the
// tools never write an index (the indexer holds the Index).
type Reader interface {
	// Search ranks documents matching q. A query that cannot match anything
	// (empty, only exclusions) returns no hits and no error.
	Search(ctx context.Context, q Query, opts Options) (Result, error)
	// Ask ranks notes for a question in natural language, the lane of
	// every tool that serves questions: a note matches when it has any of
	// q's words, compared by stem in the languages of the question and of
	// the vault; passages are ranked with matches in titles, aliases,
	// headings, tags and path words weighted up, and collapsed to notes;
	// words near each other in the question that are near each other in a
	// passage rank it higher. Hits are notes, best first, each with its
	// best passage (Passage, Heading, HeadingID, Snippet); Score is lower
	// (more negative) for better, comparable only within one call.
	// opts.Unit is ignored. Total is the number of matching notes. An Empty
	// q returns no hits and no error. Adapters document what they
	// approximate.
	Ask(ctx context.Context, q Question, opts Options) (Result, error)
	// Paths returns every indexed path with the Modified time it was indexed with.
	Paths(ctx context.Context) (map[string]time.Time, error)
}

// Index is a full-text index of a vault.
type Index interface {
	Reader
	// Upsert replaces the documents with the same paths.
	Upsert(ctx context.Context, docs ...Doc) error
	// Delete removes documents; missing paths are not an error.
	Delete(ctx context.Context, paths ...string) error
	Close() error
}
