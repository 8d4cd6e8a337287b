// Package indexer keeps the derived state of a vault (the Catalog, the text
// index) in step with its store. Every event is a hint: Apply re-reads the
// object and indexes what is there now, or removes it if it is gone, so
// duplicate, late and reordered events all converge; Sync reconciles the
// whole vault.
package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// DefaultMaxNoteBytes is the largest note indexed; bigger files are skipped
// and reported, never half-indexed.
const DefaultMaxNoteBytes = 16 << 20

// Indexer writes a vault's Catalog and text index.
type Indexer struct {
	Store        store.Store
	Catalog      *vault.Catalog
	Text         textindex.Index
	Snapshots    SnapshotStore // may be nil: nothing persisted
	MaxNoteBytes int64         // 0: DefaultMaxNoteBytes
	Log          *slog.Logger  // nil: slog.Default()

	mu      sync.Mutex // serialises writers (Sync, Apply)
	dirty   atomic.Bool
	state   atomic.Value // string
	done    atomic.Int64
	total   atomic.Int64
	probMu  sync.Mutex
	problem map[string]string // path -> why it was skipped or degraded
}

// Status is the indexer's progress, for get_vault_info and the CLI.
type Status struct {
	State    string            // "starting", "indexing", "ready"
	Done     int               // notes processed in the current or last pass
	Total    int               // notes to process in it
	Problems map[string]string // path -> reason (skipped or degraded files)
}

// Status reports progress; safe to call at any time.
func (ix *Indexer) Status() Status {
	st, _ := ix.state.Load().(string)
	if st == "" {
		st = "starting"
	}
	ix.probMu.Lock()
	probs := make(map[string]string, len(ix.problem))
	for k, v := range ix.problem {
		probs[k] = v
	}
	ix.probMu.Unlock()
	return Status{State: st, Done: int(ix.done.Load()), Total: int(ix.total.Load()), Problems: probs}
}

func (ix *Indexer) log() *slog.Logger {
	if ix.Log != nil {
		return ix.Log
	}
	return slog.Default()
}

func (ix *Indexer) maxNote() int64 {
	if ix.MaxNoteBytes > 0 {
		return ix.MaxNoteBytes
	}
	return DefaultMaxNoteBytes
}

func (ix *Indexer) setProblem(path, why string) {
	ix.probMu.Lock()
	defer ix.probMu.Unlock()
	if ix.problem == nil {
		ix.problem = map[string]string{}
	}
	if why == "" {
		delete(ix.problem, path)
	} else {
		ix.problem[path] = why
	}
}

// SyncStats counts what one Sync changed.
type SyncStats struct {
	Notes, Attachments     int // objects seen
	Indexed, Removed, Kept int // notes (re)indexed, removed, unchanged
	Skipped                int // notes that could not be indexed
	Elapsed                time.Duration
}

// Sync reconciles the whole vault: every new or changed note is parsed and
// indexed, every vanished one removed, attachments refreshed. progress, if
// non-nil, is called as notes are processed.
func (ix *Indexer) Sync(ctx context.Context, progress func(done, total int)) (SyncStats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	start := time.Now()
	ix.state.Store("indexing")
	defer ix.state.Store("ready")

	var notes, atts []store.Object
	err := ix.Store.List(ctx, "", func(o store.Object) error {
		if vault.IsNotePath(o.Path) {
			notes = append(notes, o)
		} else if !vault.IsHidden(o.Path) {
			atts = append(atts, o)
		}
		return nil
	})
	if err != nil {
		return SyncStats{}, fmt.Errorf("listing the vault: %w", err)
	}
	indexed, err := ix.Text.Paths(ctx)
	if err != nil {
		return SyncStats{}, fmt.Errorf("reading the text index: %w", err)
	}
	stats := SyncStats{Notes: len(notes), Attachments: len(atts)}

	var todo []store.Object
	seen := make(map[string]bool, len(notes))
	for _, o := range notes {
		seen[o.Path] = true
		if n, ok := ix.Catalog.Note(o.Path); ok && n.Path == o.Path && n.ETag == o.ETag && n.Size == o.Size {
			if m, ok := indexed[o.Path]; ok && m.Equal(n.Modified) {
				stats.Kept++
				continue
			}
		}
		todo = append(todo, o)
	}
	// Big files first keeps the workers evenly loaded to the end.
	sort.Slice(todo, func(i, j int) bool { return todo[i].Size > todo[j].Size })
	ix.done.Store(0)
	ix.total.Store(int64(len(todo)))

	n, skipped, err := ix.indexAll(ctx, todo, progress)
	stats.Indexed, stats.Skipped = n, skipped
	if err != nil {
		return stats, err
	}

	var gone []string
	for _, old := range ix.Catalog.Notes() {
		if !seen[old.Path] {
			gone = append(gone, old.Path)
		}
	}
	for p := range indexed {
		if !seen[p] {
			if _, inCat := ix.Catalog.Note(p); !inCat {
				gone = append(gone, p)
			}
		}
	}
	if len(gone) > 0 {
		if err := ix.Text.Delete(ctx, gone...); err != nil {
			return stats, fmt.Errorf("removing deleted notes: %w", err)
		}
		for _, p := range gone {
			if ix.Catalog.Remove(p) {
				stats.Removed++
			}
			ix.setProblem(p, "")
		}
	}
	// Notes that were skipped stay out of both indexes.
	for p := range ix.Status().Problems {
		if !seen[p] {
			ix.setProblem(p, "")
		}
	}

	attSeen := make(map[string]bool, len(atts))
	for _, o := range atts {
		attSeen[o.Path] = true
		ix.Catalog.UpsertAttachment(attachmentOf(o))
	}
	for _, a := range ix.Catalog.Attachments() {
		if !attSeen[a.Path] {
			ix.Catalog.RemoveAttachment(a.Path)
		}
	}
	ix.Catalog.SetIndexedAt(time.Now().UTC())
	ix.dirty.Store(true)
	stats.Elapsed = time.Since(start)
	if err := ix.saveLocked(ctx); err != nil {
		ix.log().Warn("saving the catalog snapshot", "err", err)
	}
	return stats, nil
}

// parsed is one note ready to index.
type parsed struct {
	note vault.Note
	doc  textindex.Doc
}

// indexAll reads and parses objs on all cores and writes them in batches.
func (ix *Indexer) indexAll(ctx context.Context, objs []store.Object, progress func(done, total int)) (indexed, skipped int, err error) {
	if len(objs) == 0 {
		return 0, 0, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan store.Object)
	results := make(chan *parsed, 256)
	var wg sync.WaitGroup
	var skippedN atomic.Int64
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range jobs {
				p, perr := ix.load(ctx, o.Path)
				if perr != nil {
					if errors.Is(perr, context.Canceled) {
						return
					}
					skippedN.Add(1)
					ix.done.Add(1)
					continue
				}
				if p == nil { // vanished meanwhile
					ix.done.Add(1)
					continue
				}
				select {
				case results <- p:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, o := range objs {
			select {
			case jobs <- o:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	// A writer goroutine takes whole batches, so parsing goes on while
	// SQLite writes: the two overlap instead of taking turns.
	const batchSize = 256
	batches := make(chan []*parsed, 2)
	written := make(chan error, 1)
	go func() {
		var werr error
		for batch := range batches {
			if werr != nil {
				continue
			}
			if werr = ix.write(ctx, batch); werr != nil {
				cancel()
				continue
			}
			indexed += len(batch)
			if progress != nil {
				progress(int(ix.done.Load()), len(objs))
			}
		}
		written <- werr
	}()
	batch := make([]*parsed, 0, batchSize)
	for p := range results {
		batch = append(batch, p)
		if len(batch) == batchSize {
			batches <- batch
			batch = make([]*parsed, 0, batchSize)
		}
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	if err := <-written; err != nil {
		return indexed, int(skippedN.Load()), err
	}
	if err := ctx.Err(); err != nil {
		return indexed, int(skippedN.Load()), err
	}
	if progress != nil {
		progress(len(objs), len(objs))
	}
	return indexed, int(skippedN.Load()), nil
}

// write puts one batch in the text index, then in the catalog.
func (ix *Indexer) write(ctx context.Context, batch []*parsed) error {
	docs := make([]textindex.Doc, len(batch))
	for i, p := range batch {
		docs[i] = p.doc
	}
	if err := ix.Text.Upsert(ctx, docs...); err != nil {
		return fmt.Errorf("writing the text index: %w", err)
	}
	for _, p := range batch {
		ix.Catalog.Upsert(p.note)
	}
	ix.done.Add(int64(len(batch)))
	return nil
}

// load reads and parses one note. It returns (nil, nil) when the note is
// gone, and an error (also recorded as a problem) when it cannot be indexed.
func (ix *Indexer) load(ctx context.Context, path string) (*parsed, error) {
	data, obj, err := ix.Store.Get(ctx, path, ix.maxNote())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case errors.Is(err, store.ErrTooLarge):
		ix.setProblem(path, fmt.Sprintf("too large: over %d bytes, not indexed", ix.maxNote()))
		return nil, err
	case err != nil:
		if ctx.Err() == nil {
			ix.setProblem(path, "unreadable: "+err.Error())
		}
		return nil, err
	}
	switch cerr := vault.Check(data); {
	case errors.Is(cerr, vault.ErrBinary):
		ix.setProblem(path, "binary content in a .md file, not indexed")
		return nil, cerr
	case errors.Is(cerr, vault.ErrInvalidUTF8):
		ix.setProblem(path, "invalid UTF-8: indexed with replacement characters")
	default:
		ix.setProblem(path, "")
	}
	p := vault.Parse(obj.Path, data)
	sum := sha256.Sum256(data)
	n := p.Note
	n.Size, n.Modified, n.ETag, n.Hash = obj.Size, obj.Modified.UTC(), obj.ETag, hex.EncodeToString(sum[:])
	if n.FrontmatterError != "" {
		ix.setProblem(path, "frontmatter: "+n.FrontmatterError)
	}
	return &parsed{note: n, doc: DocOf(&n, p)}, nil
}

// DocOf is the text index's view of a parsed note.
func DocOf(n *vault.Note, p *vault.Parsed) textindex.Doc {
	heads := make([]string, len(n.Headings))
	for i, h := range n.Headings {
		heads[i] = h.Title
	}
	return textindex.Doc{
		Path: n.Path, Title: n.Title, Aliases: n.Aliases, Tags: n.Tags,
		Author: n.Author, Entities: n.Entities, Headings: heads,
		Body: p.Body, Modified: n.Modified, Passages: p.Passages,
	}
}

func attachmentOf(o store.Object) vault.Attachment {
	return vault.Attachment{Path: o.Path, Size: o.Size, Modified: o.Modified.UTC(), MimeType: vault.MimeTypeOf(o.Path)}
}

// Apply treats an event for path as a hint: it looks at the object now and
// indexes it, or removes it when it is gone. Paths under hidden folders
// (Sheaf's own .sheaf/ among them) are ignored.
func (ix *Indexer) Apply(ctx context.Context, path string) error {
	clean, err := store.CleanPath(path)
	if err != nil {
		return err
	}
	if vault.IsHidden(clean) {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	defer ix.dirty.Store(true)

	obj, err := ix.Store.Stat(ctx, clean)
	if errors.Is(err, store.ErrNotFound) {
		return ix.removeLocked(ctx, clean)
	}
	if err != nil {
		return err
	}
	if !vault.IsNotePath(obj.Path) {
		ix.Catalog.UpsertAttachment(attachmentOf(obj))
		return nil
	}
	if n, ok := ix.Catalog.Note(obj.Path); ok && n.Path == obj.Path && n.ETag == obj.ETag && n.Size == obj.Size {
		return nil // duplicate or stale event: nothing changed
	}
	p, err := ix.load(ctx, obj.Path)
	if err != nil || p == nil {
		// Unindexable now (or gone): make sure no stale copy stays searchable.
		if rerr := ix.removeLocked(ctx, obj.Path); rerr != nil {
			return rerr
		}
		if p == nil && err == nil {
			return nil
		}
		return err
	}
	if err := ix.Text.Upsert(ctx, p.doc); err != nil {
		return err
	}
	ix.Catalog.Upsert(p.note)
	return nil
}

func (ix *Indexer) removeLocked(ctx context.Context, path string) error {
	if err := ix.Text.Delete(ctx, path); err != nil {
		return err
	}
	ix.Catalog.Remove(path)
	ix.Catalog.RemoveAttachment(path)
	return nil
}

// Save persists the catalog snapshot if anything changed since the last save.
func (ix *Indexer) Save(ctx context.Context) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.saveLocked(ctx)
}

func (ix *Indexer) saveLocked(ctx context.Context) error {
	if ix.Snapshots == nil || !ix.dirty.Swap(false) {
		return nil
	}
	if err := ix.Snapshots.Save(ctx, ix.Catalog); err != nil {
		ix.dirty.Store(true)
		return err
	}
	return nil
}
