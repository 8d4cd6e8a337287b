// Package meili is the Meilisearch adapter of the full-text port
// (textindex.Index), for the cloud deployment. It needs Meilisearch 1.12 or
// later (federated multi-search, negative operators, prefixSearch).
//
// # Documents
//
// One index per vault holds two kinds of documents, told apart by the
// filterable field kind:
//   - a note ("note"): title, aliases, headings, tags, description (what
//     its frontmatter says it is about) and body (searchable, in that
//     ranking order), and the filter fields: note (its own id),
//     prefixes (hashes of every prefix of its path), tagKeys (the tags with
//     their ancestors, vault.ExpandTags), author (lower-cased), entities;
//     path, title and modified are returned;
//   - a passage ("passage"): headingPath and text (searchable), note (its
//     note's id), pidx (its index in the note), ordinal, heading, headingId.
//
// Meilisearch ids allow only [A-Za-z0-9_-] (511 bytes at most), so a note's
// id is the hex SHA-256 of its NFC path (first 128 bits) and a passage's is
// the note's id, '-', and its index in the note. Path prefixes are stored as
// hashes because Meilisearch compares filter strings case-insensitively and
// the spec's path_prefix is a case-sensitive string prefix.
//
// # Queries
//
// Each conjunction of the query becomes one Meilisearch query (matchingStrategy
// "all"): excluded terms as -word / -"phrase", phrases and terms of several
// words as "phrases", bare words last. A disjunction (OR, and the any-term
// queries of textindex.QuestionQuery) is one federated multi-search with a
// query per conjunction: Meilisearch merges them by ranking score, keeps
// each note once and counts the union, so Total is exact. Where Meilisearch
// differs from the spec's language (see the README):
//   - only the last bare word of a conjunction matches as a prefix; earlier
//     ones match whole words;
//   - excluded words are excluded as whole words, not as prefixes;
//   - at most 10 positive terms of a conjunction count;
//   - the words of a term that has several (other's, e-mail) must be
//     adjacent, and the last of them is not a prefix;
//   - text in scripts written without spaces matches at the granularity of
//     Meilisearch's segmenter (dictionary words), not character by character;
//   - only the first 65,535 words of a field are searchable;
//   - hits past the 1,000th (pagination.maxTotalHits) are not returned.
//
// Hit.Score is -_rankingScore (in [-1, 0], lower is better like BM25),
// forced non-decreasing along the page. A note hit's snippet is Meilisearch's
// crop (cropLength 30, no highlighting) of the passage that matches most of
// the terms of the conjunction that found the note, or of its first passage.
// A passage search ranks notes as a note search does, then fetches the
// matching passages of those notes and returns them note by note, each
// note's passages by their own ranking score.
//
// # Writes
//
// Upsert adds notes and passages in requests of at most 1,000 documents or
// 8 MiB, then deletes the passages a note no longer has; Delete deletes by
// filter. Both wait until their tasks have succeeded, so a following Search
// sees the change, and return a *TaskError for a failed task. Settings are
// sent once per process and index, before the first use or by
// EnsureSettings.
package meili

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"sync"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// Config locates one index.
type Config struct {
	URL    string // e.g. http://127.0.0.1:7700
	APIKey string // optional
	Index  string // the index uid, e.g. "sheaf-<vaultid>"
}

// Index is a Meilisearch full-text index. It is safe for concurrent use.
type Index struct {
	cfg    Config
	client meilisearch.ServiceManager

	// Batching limits of one document request; tests lower them.
	maxBatchDocs  int
	maxBatchBytes int
}

var _ textindex.Index = (*Index)(nil)

const (
	defaultBatchDocs  = 1000
	defaultBatchBytes = 8 << 20
)

var validIndexUID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,400}$`) })

// Open returns an Index for c. It does no network I/O: settings are sent on
// first use, or by EnsureSettings.
func Open(ctx context.Context, c Config) (*Index, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("meili: invalid URL %q: want http(s)://host[:port]", c.URL)
	}
	if !validIndexUID().MatchString(c.Index) {
		return nil, fmt.Errorf("meili: invalid index uid %q: want 1-400 characters of [A-Za-z0-9_-]", c.Index)
	}
	var opts []meilisearch.Option
	if c.APIKey != "" {
		opts = append(opts, meilisearch.WithAPIKey(c.APIKey))
	}
	return &Index{cfg: c, client: meilisearch.New(c.URL, opts...),
		maxBatchDocs: defaultBatchDocs, maxBatchBytes: defaultBatchBytes}, nil
}

// Close releases nothing: the HTTP client needs no closing.
func (ix *Index) Close() error { return nil }

// Field names of the documents.
const (
	fKind        = "kind"
	fNote        = "note"
	fPath        = "path"
	fTitle       = "title"
	fAliases     = "aliases"
	fHeadings    = "headings"
	fTags        = "tags"
	fDescription = "description"
	fBody        = "body"
	fTagKeys     = "tagKeys"
	fAuthor      = "author"
	fEntities    = "entities"
	fPrefixes    = "prefixes"
	fModified    = "modified"
	fPidx        = "pidx"
	fOrdinal     = "ordinal"
	fNoteTitle   = "noteTitle"
	fHeading     = "heading"
	fHeadingID   = "headingId"
	fHeadingPath = "headingPath"
	fText        = "text"

	kindNote    = "note"
	kindPassage = "passage"
)

// settings are the index settings the adapter relies on. Typo tolerance is
// off: the spec's words match as typed (or as prefixes), and paths and tags
// must never match approximately.
func settings() *meilisearch.Settings {
	prefix := "indexingTime"
	return &meilisearch.Settings{
		SearchableAttributes: []string{fTitle, fAliases, fHeadings, fTags, fDescription, fHeadingPath, fBody, fText},
		FilterableAttributes: []string{fKind, fNote, fPrefixes, fTagKeys, fAuthor, fEntities, fPidx},
		TypoTolerance: &meilisearch.TypoTolerance{
			Enabled:             false,
			MinWordSizeForTypos: meilisearch.MinWordSizeForTypos{OneTypo: 5, TwoTypos: 9},
			DisableOnWords:      []string{},
			DisableOnAttributes: []string{fPath, fTags, fTagKeys, fPrefixes},
		},
		PrefixSearch: &prefix,
	}
}

// settingsState records, per server and index, that settings were applied
// in this process.
type settingsState struct {
	mu   sync.Mutex
	done bool
}

var applied sync.Map // URL + "\x00" + index uid -> *settingsState

// EnsureSettings applies the index settings (creating the index) and waits
// for them, once per process and index; a failed attempt is retried on the
// next call.
func (ix *Index) EnsureSettings(ctx context.Context) error {
	v, _ := applied.LoadOrStore(ix.cfg.URL+"\x00"+ix.cfg.Index, &settingsState{})
	st := v.(*settingsState)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return nil
	}
	info, err := ix.indexManager().UpdateSettings(ctx, settings())
	if err != nil {
		return fmt.Errorf("meili: update settings of %s: %w", ix.cfg.Index, err)
	}
	if err := ix.wait(ctx, info.TaskUID); err != nil {
		return fmt.Errorf("meili: update settings of %s: %w", ix.cfg.Index, err)
	}
	st.done = true
	return nil
}

// TaskError is a Meilisearch task that failed; Code and Message are
// Meilisearch's.
type TaskError struct {
	Task    int64
	Type    string // the task type, e.g. documentAdditionOrUpdate
	Status  string // failed or canceled
	Code    string
	Message string
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("meilisearch task %d (%s) %s: %s: %s", e.Task, e.Type, e.Status, e.Code, e.Message)
}

// wait polls task uid until it has finished, backing off from 1 ms to
// 100 ms, and returns a *TaskError unless it succeeded.
func (ix *Index) wait(ctx context.Context, uid int64) error {
	delay := time.Millisecond
	for {
		t, err := ix.client.GetTask(ctx, uid)
		if err != nil {
			return fmt.Errorf("get task %d: %w", uid, err)
		}
		switch t.Status {
		case meilisearch.TaskStatusSucceeded:
			return nil
		case meilisearch.TaskStatusFailed, meilisearch.TaskStatusCanceled:
			return &TaskError{Task: uid, Type: string(t.Type), Status: string(t.Status), Code: string(t.Error.Code), Message: t.Error.Message}
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// indexManager returns a fresh handle on the index: the client's handle
// records the primary key on document additions, so sharing one between
// goroutines would race.
func (ix *Index) indexManager() meilisearch.IndexManager { return ix.client.Index(ix.cfg.Index) }
