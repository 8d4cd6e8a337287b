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
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sheaf-dev/sheaf/shared/history"
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

	// Cloud wiring, read by ApplyChanges; the zero values suit a local
	// vault.

	// KeyPath maps an object key from an event to a vault path; ok=false
	// means the key is outside the vault (another prefix). nil: the key is
	// the path.
	KeyPath func(key string) (path string, ok bool)
	// Uploads, when set, files an upload staged under UploadsDir (an
	// object event there, ingest_file's presigned upload); an error is
	// retried like a path that failed to index.
	Uploads func(ctx context.Context, path string) error
	// Bucket, when set, makes ApplyChanges ignore changes of other
	// buckets.
	Bucket string
	// Parallel is how many paths ApplyChanges applies at once; 0: 16.
	Parallel int
	// TrackChanges makes the indexer remember every path it changes until
	// TakeChanges hands them over: the cloud indexer embeds the paths of
	// each batch, not the whole vault.
	TrackChanges bool

	// mu is held shared by Apply (next to a per-path lock, so two events
	// for one path never interleave) and exclusively by Sync and by the
	// snapshot conflict recovery.
	mu    sync.RWMutex
	paths pathLocks
	group applyGroup // batches concurrent ApplyChanges calls

	saveMu     sync.Mutex // serialises snapshot saves
	saved      uint64     // generation of the last saved snapshot (under saveMu)
	gen        atomic.Uint64
	touchMu    sync.Mutex
	touched    map[string]uint64 // path -> generation of its last change, until saved
	followUp   map[string]bool   // paths changed since TakeChanges (with TrackChanges)
	touchedAll uint64            // generation of a Sync not saved yet (0: none)

	conflicts atomic.Int64 // saves retried after a conflict

	state atomic.Value // string
	done  atomic.Int64
	total atomic.Int64
	notes atomic.Int64 // Markdown files in the last listing; -1 until listed

	passMu sync.Mutex
	pass   chan struct{} // closed when the pass running or expected ends; nil: none

	unapplied    atomic.Int64 // changes a watcher has seen and not applied yet
	pendingSince atomic.Int64 // when the oldest of them was seen (Unix ns)

	// History, when set, hears of every note the indexer reads and every
	// note it finds gone, so that changes made outside Sheaf (an editor, a
	// sync client) become versions (folder vaults; S3 keeps them itself).
	History history.Observer

	// CheckpointEvery is how often a long Sync saves the catalog snapshot
	// while it runs, so that a process stopped (or killed) mid-pass resumes
	// where it stopped; 0: every 2 s.
	CheckpointEvery time.Duration
}

// Status is the indexer's progress, for get_vault_info and the CLI.
type Status struct {
	State    string            // "starting", "indexing", "ready", or "failed" (the last pass stopped on an error)
	Done     int               // notes processed in the current or last pass
	Total    int               // notes to process in it
	Notes    int               // Markdown files in the vault's last listing; 0 until listed
	Problems map[string]string // path -> reason (skipped or degraded files), from the Catalog
	// Pending counts the changes a file watcher has seen on disk and not
	// indexed yet (a file, a folder to rescan), the oldest seen at
	// PendingSince: answers from the index meanwhile may miss them.
	Pending      int
	PendingSince time.Time
}

// Status reports progress; safe to call at any time.
func (ix *Indexer) Status() Status {
	st, _ := ix.state.Load().(string)
	if st == "" {
		st = "starting"
	}
	s := Status{State: st, Done: int(ix.done.Load()), Total: int(ix.total.Load()),
		Notes: int(max(ix.notes.Load(), 0)), Problems: ix.Catalog.Problems()}
	if n := ix.unapplied.Load(); n > 0 {
		s.Pending, s.PendingSince = int(n), time.Unix(0, ix.pendingSince.Load())
	}
	return s
}

// SetPending records what a file watcher has seen and not applied yet: n
// changes, the oldest seen at since. Status reports them as Pending, so
// that answers meanwhile can say they are partial.
func (ix *Indexer) SetPending(n int, since time.Time) {
	if n > 0 && !since.IsZero() {
		ix.pendingSince.Store(since.UnixNano())
	}
	ix.unapplied.Store(int64(n))
}

// ExpectWatch announces a file watcher (the local door's watch.Run) to
// start after the Sync that is about to: from now until the watcher's
// first walk of the vault is applied (it then calls SetPending), Status
// counts a change pending, since what changes between the end of the Sync
// and the watches being added is seen only by that walk. The returned
// func withdraws the announcement when no watcher will start after all.
func (ix *Indexer) ExpectWatch() (cancel func()) {
	ix.SetPending(max(int(ix.unapplied.Load()), 1), time.Now())
	return func() { ix.SetPending(0, time.Time{}) }
}

// Expect announces a Sync about to start, so that Ready waits for it.
func (ix *Indexer) Expect() {
	ix.passMu.Lock()
	defer ix.passMu.Unlock()
	if ix.pass == nil {
		ix.pass = make(chan struct{})
	}
}

// Ready returns a channel closed when the Sync running (or announced by
// Expect) ends, or nil when none is.
func (ix *Indexer) Ready() <-chan struct{} {
	ix.passMu.Lock()
	defer ix.passMu.Unlock()
	if ix.pass == nil {
		return nil
	}
	return ix.pass
}

// endPass closes the channel Ready handed out.
func (ix *Indexer) endPass() {
	ix.passMu.Lock()
	defer ix.passMu.Unlock()
	if ix.pass != nil {
		close(ix.pass)
		ix.pass = nil
	}
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

// setProblem records (why != "") or clears the problem of path in the
// Catalog, so the snapshot carries it to stateless readers; a change is
// saved by the next Save like any other.
//
// A problem of a file the store passed over (passedOver: the NFD twin of
// this note's path) stays when the note itself indexes cleanly: only a
// full Sync, which lists the vault, clears it (forceProblem).
func (ix *Indexer) setProblem(path, why string) {
	if why == "" && strings.HasPrefix(ix.Catalog.Problem(path), passedOver) {
		return
	}
	ix.forceProblem(path, why)
}

// forceProblem is setProblem without keeping a passed-over file's problem.
func (ix *Indexer) forceProblem(path, why string) {
	if ix.Catalog.SetProblem(path, why) {
		ix.changed(path)
	}
}

// passedOver starts the problem of a file the store passed over.
const passedOver = "not listed: "

// SyncStats counts what one Sync changed.
type SyncStats struct {
	Notes, Attachments     int // objects seen
	Indexed, Removed, Kept int // notes (re)indexed, removed, unchanged
	Skipped                int // notes that could not be indexed
	Elapsed                time.Duration
}

// Sync reconciles the whole vault: every new or changed note is parsed and
// indexed, every vanished one removed, attachments refreshed, then the
// catalog snapshot saved (a failed save is logged; Reconcile returns it).
// It trusts neither the catalog nor the text index: a note missing from
// either, stale in either, or present in either but gone from the store is
// repaired. progress, if non-nil, is called as notes are processed.
func (ix *Indexer) Sync(ctx context.Context, progress func(done, total int)) (SyncStats, error) {
	stats, err := ix.syncExclusive(ctx, progress)
	if err != nil {
		return stats, err
	}
	if err := ix.Save(ctx); err != nil {
		ix.log().Warn("saving the catalog snapshot", "err", err)
	}
	return stats, nil
}

// Reconcile is Sync followed by a snapshot save that must succeed: the
// entry point of `sheaf reconcile` and of the scheduled reconcile Lambda.
// It then deletes catalog segments that no manifest names (left by an
// indexer killed between writing a segment and its manifest).
// The save is conditional; when another indexer saved meanwhile, it reloads
// their snapshot, reconciles again and retries.
func (ix *Indexer) Reconcile(ctx context.Context) (SyncStats, error) {
	stats, err := ix.syncExclusive(ctx, nil)
	if err != nil {
		return stats, err
	}
	if err := ix.Save(ctx); err != nil {
		return stats, fmt.Errorf("saving the catalog snapshot: %w", err)
	}
	if sw, ok := ix.Snapshots.(interface {
		Sweep(context.Context, time.Duration) (int, error)
	}); ok {
		if n, err := sw.Sweep(ctx, sweepAge); err != nil {
			ix.log().Warn("deleting unused catalog segments", "err", err)
		} else if n > 0 {
			ix.log().Info("deleted unused catalog segments", "objects", n)
		}
	}
	return stats, nil
}

// sweepAge is how old a catalog segment no manifest names must be before
// Reconcile deletes it: older than any save still in flight.
const sweepAge = 15 * time.Minute

func (ix *Indexer) syncExclusive(ctx context.Context, progress func(done, total int)) (SyncStats, error) {
	ix.Expect()
	defer ix.endPass()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.syncLocked(ctx, progress)
}

func (ix *Indexer) syncLocked(ctx context.Context, progress func(done, total int)) (stats SyncStats, err error) {
	start := time.Now()
	ix.state.Store("indexing")
	defer func() {
		if err != nil {
			ix.state.Store("failed")
		} else {
			ix.state.Store("ready")
		}
	}()

	// The text index's paths are read while the vault is listed: the two
	// are independent, and a server restarted over its index waits for
	// both before its first search.
	type pathsRead struct {
		indexed map[string]time.Time
		err     error
	}
	read := make(chan pathsRead, 1)
	go func() {
		indexed, err := ix.Text.Paths(ctx)
		read <- pathsRead{indexed, err}
	}()
	var notes, atts []store.Object
	err = ix.Store.List(ctx, "", func(o store.Object) error {
		if vault.IsNotePath(o.Path) {
			notes = append(notes, o)
		} else if !vault.Ignored(o.Path) {
			atts = append(atts, o)
		}
		return nil
	})
	pr := <-read
	if err != nil {
		return SyncStats{}, fmt.Errorf("listing the vault: %w", err)
	}
	ix.notes.Store(int64(len(notes)))
	indexed := pr.indexed
	if pr.err != nil {
		return SyncStats{}, fmt.Errorf("reading the text index: %w", pr.err)
	}
	stats = SyncStats{Notes: len(notes), Attachments: len(atts)}

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

	n, dropped, skipped, err := ix.indexAll(ctx, todo, progress)
	stats.Indexed, stats.Skipped = n, skipped
	if err != nil {
		return stats, err
	}
	// A note that cannot be indexed now (binary, too large, vanished
	// meanwhile) must not stay searchable in an old version.
	var stale []string
	for _, p := range dropped {
		_, inText := indexed[p]
		if _, inCat := ix.Catalog.Note(p); inText || inCat {
			stale = append(stale, p)
		}
	}
	if len(stale) > 0 {
		if err := ix.Text.Delete(ctx, stale...); err != nil {
			return stats, fmt.Errorf("removing unindexable notes: %w", err)
		}
		for _, p := range stale {
			ix.Catalog.Remove(p)
			ix.changed(p)
		}
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
			ix.changed(p)
			ix.gone(ctx, p)
		}
	}
	// Files no longer in the store have no problems; the files the store
	// passed over (no path can name them) have theirs.
	var passed map[string]string
	if ps, ok := ix.Store.(store.Passer); ok {
		passed = ps.PassedOver()
	}
	for p, why := range ix.Catalog.Problems() {
		if _, still := passed[p]; !still && (!seen[p] || strings.HasPrefix(why, passedOver)) {
			ix.forceProblem(p, "")
		}
	}
	for p, why := range passed {
		ix.forceProblem(p, passedOver+why)
	}

	attSeen := make(map[string]bool, len(atts))
	for _, o := range atts {
		attSeen[o.Path] = true
		a := attachmentOf(o)
		if old, ok := ix.Catalog.Attachment(a.Path); !ok || old.Size != a.Size || !old.Modified.Equal(a.Modified) || old.MimeType != a.MimeType {
			ix.Catalog.UpsertAttachment(a)
			ix.changed(a.Path)
		}
	}
	for _, a := range ix.Catalog.Attachments() {
		if !attSeen[a.Path] {
			ix.Catalog.RemoveAttachment(a.Path)
			ix.changed(a.Path)
		}
	}
	ix.Catalog.SetIndexedAt(time.Now().UTC())
	g := ix.gen.Add(1)
	ix.touchMu.Lock()
	ix.touchedAll = g
	ix.touchMu.Unlock()
	stats.Elapsed = time.Since(start)
	return stats, nil
}

// checkpoints save the catalog snapshot now and then during a long pass:
// what is saved is a catalog the text index already holds (a batch goes to
// the text index first), so a process stopped at any moment, SIGKILL
// included, resumes with every note saved as indexed and redoes at most
// what it did since the last checkpoint.
type checkpoints struct {
	ix    *Indexer
	every time.Duration
	last  time.Time
}

func (ix *Indexer) newCheckpoints() *checkpoints {
	every := ix.CheckpointEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	return &checkpoints{ix: ix, every: every, last: time.Now()}
}

// maybe saves a checkpoint when one is due. A checkpoint never takes more
// than a fifth of the pass: the interval grows to four times the last
// save's duration. A conflict (another writer saved) ends checkpoints for
// this pass: the pass's final Save merges properly.
func (cp *checkpoints) maybe(ctx context.Context) {
	if cp.ix.Snapshots == nil || time.Since(cp.last) < cp.every {
		return
	}
	start := time.Now()
	err := cp.ix.checkpoint(ctx)
	took := time.Since(start)
	cp.last = time.Now()
	cp.every = max(cp.every, 4*took)
	switch {
	case errors.Is(err, store.ErrConflict):
		cp.every = time.Duration(1<<63 - 1)
	case err != nil:
		cp.ix.log().Debug("checkpoint of the catalog snapshot failed", "err", err)
	default:
		cp.ix.log().Debug("checkpoint of the catalog snapshot", "notes", cp.ix.Catalog.Len(), "took", took)
	}
}

// checkpoint saves what changed, as Save does but without merging on a
// conflict (it runs under ix.mu, which merging takes): with a ChangeSaver
// it writes only what changed since the last save, so checkpoints of a
// long pass cost what the pass did meanwhile, not the vault. While another
// save runs it does nothing.
func (ix *Indexer) checkpoint(ctx context.Context) error {
	if !ix.saveMu.TryLock() {
		return nil
	}
	defer ix.saveMu.Unlock()
	return ix.saveOnce(ctx)
}

// saveOnce writes what changed since the last save (everything, without a
// ChangeSaver) and, when that succeeds, forgets it. ix.saveMu must be held.
func (ix *Indexer) saveOnce(ctx context.Context) error {
	g, paths := ix.pending()
	var err error
	if cs, ok := ix.Snapshots.(ChangeSaver); ok {
		err = cs.SaveChanges(ctx, ix.Catalog, paths)
	} else {
		err = ix.Snapshots.Save(ctx, ix.Catalog)
	}
	if err == nil {
		ix.saved = g
		ix.forget(g)
	}
	return err
}

// parsed is one note ready to index.
type parsed struct {
	note vault.Note
	doc  textindex.Doc
}

// indexAll reads and parses objs on all cores and writes them in batches.
// dropped lists the notes that could not be indexed (their problem is
// recorded) or vanished before they were read.
func (ix *Indexer) indexAll(ctx context.Context, objs []store.Object, progress func(done, total int)) (indexed int, dropped []string, skipped int, err error) {
	if len(objs) == 0 {
		return 0, nil, 0, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan store.Object)
	results := make(chan *parsed, 256)
	var wg sync.WaitGroup
	var dropMu sync.Mutex
	drop := func(p string, failed bool) {
		dropMu.Lock()
		dropped = append(dropped, p)
		if failed {
			skipped++
		}
		dropMu.Unlock()
		ix.done.Add(1)
	}
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range jobs {
				p, perr := ix.load(ctx, o.Path)
				if perr != nil {
					if ctx.Err() != nil {
						return
					}
					drop(o.Path, true)
					continue
				}
				if p == nil { // vanished meanwhile
					drop(o.Path, false)
					continue
				}
				results <- p // drained to the end: a parsed note is always written
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
	// SQLite writes: the two overlap instead of taking turns. It writes
	// every note already parsed even once ctx ends (a server shutting down
	// keeps what it did: the next start resumes after it).
	wctx := context.WithoutCancel(ctx)
	// Batches start small, so the first notes are searchable at once, and
	// grow to batchSize, which SQLite writes fastest.
	const batchSize = 256
	next := 16
	batches := make(chan []*parsed, 2)
	written := make(chan error, 1)
	go func() {
		var werr error
		cp := ix.newCheckpoints()
		for batch := range batches {
			if werr != nil {
				continue
			}
			if werr = ix.write(wctx, batch); werr != nil {
				cancel()
				continue
			}
			indexed += len(batch)
			if progress != nil {
				progress(int(ix.done.Load()), len(objs))
			}
			cp.maybe(wctx)
		}
		written <- werr
	}()
	batch := make([]*parsed, 0, next)
	for p := range results {
		batch = append(batch, p)
		if len(batch) == next {
			batches <- batch
			next = min(2*next, batchSize)
			batch = make([]*parsed, 0, next)
		}
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	if err := <-written; err != nil {
		return indexed, dropped, skipped, err
	}
	if err := ctx.Err(); err != nil {
		return indexed, dropped, skipped, err
	}
	if progress != nil {
		progress(len(objs), len(objs))
	}
	return indexed, dropped, skipped, nil
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
		ix.changed(p.note.Path)
	}
	ix.done.Add(int64(len(batch)))
	// Unsaved work of a pass: Save writes it even if the pass never ends
	// (a server stopped mid-pass), and a conflicting save re-syncs.
	g := ix.gen.Add(1)
	ix.touchMu.Lock()
	ix.touchedAll = g
	ix.touchMu.Unlock()
	return nil
}

// load reads and parses one note. It returns (nil, nil) when the note is
// gone, and an error (also recorded as a problem) when it cannot be indexed.
func (ix *Indexer) load(ctx context.Context, path string) (*parsed, error) {
	data, obj, err := ix.Store.Get(ctx, path, ix.maxNote())
	switch {
	case errors.Is(err, store.ErrNotFound):
		ix.setProblem(path, "")
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
	why := "" // the problem of a degraded note; none clears an old one
	switch cerr := vault.Check(data); {
	case errors.Is(cerr, vault.ErrBinary):
		ix.setProblem(path, "binary content in a .md file, not indexed")
		return nil, cerr
	case errors.Is(cerr, vault.ErrInvalidUTF8):
		why = "invalid UTF-8: indexed with replacement characters"
	}
	p := vault.Parse(obj.Path, data)
	sum := sha256.Sum256(data)
	n := p.Note
	n.Size, n.Modified, n.ETag, n.Hash = obj.Size, obj.Modified.UTC(), obj.ETag, hex.EncodeToString(sum[:])
	if n.FrontmatterError != "" {
		why = "frontmatter: " + n.FrontmatterError
	}
	ix.setProblem(path, why)
	ix.observe(ctx, obj.Path, data, obj)
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
		Author: n.Author, Entities: n.Entities, Headings: heads, Description: n.Description(),
		Body: p.Body, Modified: n.Modified, Passages: p.Passages,
	}
}

func attachmentOf(o store.Object) vault.Attachment {
	return vault.Attachment{Path: o.Path, Size: o.Size, Modified: o.Modified.UTC(), MimeType: vault.MimeTypeOf(o.Path)}
}

// Apply treats an event for path as a hint: it looks at the object now and
// indexes it, or removes it when it is gone. Paths under hidden folders
// (Sheaf's own .sheaf/ among them) are ignored. A note that cannot be
// indexed (binary, too large) is taken out of both indexes, recorded in the
// Catalog's problems (and Status().Problems), and its error returned (see
// IsPermanent). Its problem is cleared when it indexes cleanly or is gone.
func (ix *Indexer) Apply(ctx context.Context, path string) error {
	clean, err := store.CleanPath(path)
	if err != nil {
		return err
	}
	if vault.Ignored(clean) {
		return nil
	}
	return ix.applyMany(ctx, []string{clean})[0]
}

// ApplyPaths applies distinct vault paths, already clean and visible (see
// store.CleanPath and vault.Ignored), as one batch, each as Apply does; it
// returns one error per path. The file watcher calls it.
func (ix *Indexer) ApplyPaths(ctx context.Context, paths []string) []error {
	return ix.applyMany(ctx, paths)
}

// IsPermanent reports whether an error from Apply is about the object
// itself (binary, too large, an invalid path), so retrying cannot help.
func IsPermanent(err error) bool {
	return errors.Is(err, vault.ErrBinary) || errors.Is(err, store.ErrTooLarge) || errors.Is(err, store.ErrPathInvalid)
}

// applyMany applies distinct clean, visible paths as one batch: each is
// read concurrently, then the text index gets one delete and one upsert
// for all of them. It returns one error per path.
func (ix *Indexer) applyMany(ctx context.Context, paths []string) []error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	sorted := slices.Clone(paths)
	slices.Sort(sorted) // one locking order: batches never deadlock
	for _, p := range sorted {
		defer ix.paths.lock(p)()
	}
	return ix.applyLocked(ctx, paths, false)
}

// step is what applying one path comes to.
type step struct {
	path   string
	obj    store.Object
	remove bool    // take path out of both indexes
	att    bool    // upsert obj as an attachment
	parsed *parsed // upsert this note
	err    error
}

// applyLocked is applyMany with ix.mu held (shared with the paths' locks,
// or exclusively). With force, a note is re-read and re-indexed even when
// the catalog already holds its current version: after a conflict the
// catalog may hold another indexer's version while the text index holds
// this one's.
func (ix *Indexer) applyLocked(ctx context.Context, paths []string, force bool) []error {
	steps := make([]step, len(paths))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(ix.parallel(), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(steps); i = int(next.Add(1) - 1) {
				steps[i] = ix.prepare(ctx, paths[i], force)
			}
		}()
	}
	wg.Wait()

	var gone []string
	var docs []textindex.Doc
	for i := range steps {
		switch st := &steps[i]; {
		case st.remove:
			gone = append(gone, st.path)
		case st.parsed != nil:
			docs = append(docs, st.parsed.doc)
		}
	}
	var delErr, upErr error
	if len(gone) > 0 {
		delErr = ix.Text.Delete(ctx, gone...)
	}
	if len(docs) > 0 {
		upErr = ix.Text.Upsert(ctx, docs...)
	}
	errs := make([]error, len(steps))
	for i := range steps {
		st := &steps[i]
		errs[i] = st.err
		switch {
		case st.remove && delErr != nil:
			errs[i] = delErr
		case st.remove:
			ix.Catalog.Remove(st.path)
			ix.Catalog.RemoveAttachment(st.path)
			ix.gone(ctx, st.path)
			// A change even when this catalog did not hold the path: the
			// saved snapshot, written by another indexer, may.
			ix.changed(st.path)
		case st.parsed != nil && upErr != nil:
			errs[i] = upErr
		case st.parsed != nil:
			ix.Catalog.Upsert(st.parsed.note)
			ix.changed(st.parsed.note.Path)
		case st.att:
			ix.Catalog.UpsertAttachment(attachmentOf(st.obj))
			ix.changed(st.obj.Path)
		}
	}
	return errs
}

// prepare looks at one path in the store and decides what to do with it.
func (ix *Indexer) prepare(ctx context.Context, clean string, force bool) step {
	st := step{path: clean}
	if vault.IsNotePath(clean) {
		if _, known := ix.Catalog.Note(clean); !known {
			return ix.loadStep(ctx, st) // a new note: one GET, no HEAD first
		}
	}
	obj, err := ix.Store.Stat(ctx, clean)
	switch {
	case errors.Is(err, store.ErrNotFound):
		ix.setProblem(clean, "") // as load does for a note gone
		st.remove = true
		return st
	case err != nil:
		st.err = err
		return st
	}
	st.obj = obj
	if !vault.IsNotePath(obj.Path) {
		a := attachmentOf(obj)
		old, ok := ix.Catalog.Attachment(a.Path)
		st.att = !ok || old.Size != a.Size || !old.Modified.Equal(a.Modified)
		return st
	}
	if n, ok := ix.Catalog.Note(obj.Path); !force && ok && n.Path == obj.Path && n.ETag == obj.ETag && n.Size == obj.Size {
		return st // duplicate or stale event: nothing changed
	}
	st.path = obj.Path
	return ix.loadStep(ctx, st)
}

// loadStep reads and parses the note at st.path.
func (ix *Indexer) loadStep(ctx context.Context, st step) step {
	p, err := ix.load(ctx, st.path)
	switch {
	case p != nil:
		st.parsed = p
	case err == nil || IsPermanent(err):
		// Gone meanwhile, or unindexable now: no stale copy may stay
		// searchable.
		st.remove, st.err = true, err
	default:
		st.err = err // unreadable for now: keep what is indexed, retry
	}
	return st
}

// changed records that path changed in the catalog: the next Save writes
// it, and re-applies it should another indexer have saved meanwhile.
func (ix *Indexer) changed(path string) {
	g := ix.gen.Add(1)
	ix.touchMu.Lock()
	if ix.touched == nil {
		ix.touched = map[string]uint64{}
	}
	ix.touched[path] = g
	if ix.TrackChanges {
		if ix.followUp == nil {
			ix.followUp = map[string]bool{}
		}
		ix.followUp[path] = true
	}
	ix.touchMu.Unlock()
}

// TakeChanges returns the paths changed since the last call, sorted, and
// forgets them (only with TrackChanges).
func (ix *Indexer) TakeChanges() []string {
	ix.touchMu.Lock()
	defer ix.touchMu.Unlock()
	out := make([]string, 0, len(ix.followUp))
	for p := range ix.followUp {
		out = append(out, p)
	}
	ix.followUp = nil
	slices.Sort(out)
	return out
}

// GiveBack returns paths taken by TakeChanges whose follow-up work failed:
// the next TakeChanges returns them again.
func (ix *Indexer) GiveBack(paths []string) {
	ix.touchMu.Lock()
	defer ix.touchMu.Unlock()
	if ix.followUp == nil {
		ix.followUp = map[string]bool{}
	}
	for _, p := range paths {
		ix.followUp[p] = true
	}
}

// Save persists the catalog snapshot if anything changed since the last
// save. Concurrent callers share one write (whoever finds their changes
// already saved returns at once). With a ChangeSaver (catalogstore.Snapshots,
// local.FileSnapshots) only the paths changed since the last successful
// save are written, so a save costs what changed, not the vault; a checkpoint during
// a long Sync is cheap. The write is conditional: when another indexer
// saved first, Save catches up on what it saved, re-applies every path both
// changed (re-reading it from the store: events are hints), and retries, a
// bounded number of times with jittered backoff. ConflictRetries counts
// those retries.
func (ix *Indexer) Save(ctx context.Context) error {
	if ix.Snapshots == nil {
		return nil
	}
	want := ix.gen.Load()
	ix.saveMu.Lock()
	defer ix.saveMu.Unlock()
	if ix.saved >= want {
		return nil
	}
	myTurn := false
	for attempt := 1; ; attempt++ {
		err := ix.saveOnce(ctx)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrConflict) || attempt == maxSaveAttempts {
			return err
		}
		ix.conflicts.Add(1)
		ix.log().Debug("catalog saved by another indexer: merging", "attempt", attempt)
		if !myTurn {
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
		}
		if tt, ok := ix.Snapshots.(turnTaker); ok && attempt >= turnAfter && !myTurn {
			// Losing again and again: claim the next save, then catch up.
			if myTurn, err = tt.TakeTurn(ctx); err != nil {
				return err
			}
		}
		if err := ix.merge(ctx); err != nil {
			return fmt.Errorf("merging after a snapshot conflict: %w", err)
		}
	}
}

// turnTaker is a ChangeSaver that can hold the other writers back for a
// writer that keeps losing races (catalogstore.Snapshots.TakeTurn).
type turnTaker interface {
	TakeTurn(ctx context.Context) (bool, error)
}

// turnAfter is how many lost races in a row make Save claim the next save.
const turnAfter = 3

// ConflictRetries counts the saves retried because another indexer saved
// first.
func (ix *Indexer) ConflictRetries() int64 { return ix.conflicts.Load() }

// pending returns the current generation and the paths changed up to it
// and not saved yet, sorted.
func (ix *Indexer) pending() (uint64, []string) {
	ix.touchMu.Lock()
	defer ix.touchMu.Unlock()
	g := ix.gen.Load()
	paths := make([]string, 0, len(ix.touched))
	for p := range ix.touched {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return g, paths
}

// maxSaveAttempts bounds Save's conflict retries.
const maxSaveAttempts = 12

// backoff sleeps before retry attempt+1: exponential from 20 ms, capped at
// one second, with full jitter so racing indexers spread out.
func backoff(ctx context.Context, attempt int) error {
	d := min(20*time.Millisecond<<(attempt-1), time.Second)
	t := time.NewTimer(d/2 + rand.N(d/2+1))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// forget drops the changes a snapshot of generation g holds.
func (ix *Indexer) forget(g uint64) {
	ix.touchMu.Lock()
	defer ix.touchMu.Unlock()
	for p, pg := range ix.touched {
		if pg <= g {
			delete(ix.touched, p)
		}
	}
	if ix.touchedAll <= g {
		ix.touchedAll = 0
	}
}

// merge brings Catalog up to what another indexer saved and replays this
// indexer's unsaved changes on top: events are hints, so re-applying a
// path converges on what the store holds now. With a ChangeSaver only the
// paths both changed are replayed; otherwise the other's whole snapshot is
// loaded and every unsaved change (or, after a Sync, the whole vault)
// replayed.
func (ix *Indexer) merge(ctx context.Context) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.touchMu.Lock()
	all := ix.touchedAll != 0
	mine := make(map[string]bool, len(ix.touched))
	for p := range ix.touched {
		mine[p] = true
	}
	ix.touchMu.Unlock()

	var replay []string
	if cs, ok := ix.Snapshots.(ChangeSaver); ok {
		theirs, reloaded, err := cs.CatchUp(ctx, ix.Catalog)
		if err != nil {
			return err
		}
		if reloaded && ix.Catalog.Len() == 0 { // gone, or of another format: rebuild
			_, err := ix.syncLocked(ctx, nil)
			return err
		}
		if reloaded {
			theirs = slices.Collect(maps.Keys(mine))
		}
		for _, p := range theirs {
			if mine[p] {
				replay = append(replay, p)
			}
		}
	} else {
		theirs, err := ix.Snapshots.Load(ctx)
		if err != nil {
			return err
		}
		if theirs == nil { // deleted, or of another format: rebuild
			theirs, all = vault.NewCatalog(), true
		}
		ix.Catalog.ReplaceWith(theirs)
		if all {
			_, err := ix.syncLocked(ctx, nil)
			return err
		}
		replay = slices.Collect(maps.Keys(mine))
	}
	sort.Strings(replay)
	for _, err := range ix.applyLocked(ctx, replay, true) {
		if err != nil && !IsPermanent(err) {
			return err
		}
	}
	return nil
}

// pathLocks is a set of per-path mutexes, created on demand and dropped
// when unused.
type pathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	sync.Mutex
	refs int
}

// lock locks path and returns its unlock function.
func (l *pathLocks) lock(path string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*pathLock{}
	}
	pl := l.m[path]
	if pl == nil {
		pl = &pathLock{}
		l.m[path] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.Lock()
	return func() {
		pl.Unlock()
		l.mu.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(l.m, path)
		}
		l.mu.Unlock()
	}
}
