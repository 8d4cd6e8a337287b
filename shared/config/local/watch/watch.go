// Package watch is the local door's file watcher: it follows a vault
// folder with fsnotify and hands what changed to the indexer, which it
// drives through exported methods only (ApplyPaths, Refresh, Save,
// SetPending).
package watch

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// The watcher's timing defaults (see Options).
const (
	DefaultWatchQuiet     = 150 * time.Millisecond
	DefaultWatchMaxWait   = time.Second
	DefaultReconcileEvery = 5 * time.Second
	// burstPaths is how many changed paths make a flush walk the whole
	// vault instead of applying them one by one: a burst that big (a sync
	// client, a git checkout) may well have overflowed the kernel's queue.
	burstPaths = 2048
	// reconcileShare bounds the time reconcile walks take: the interval
	// grows to this many times the last walk's duration.
	reconcileShare = 20
	// applyChunk is how many changed paths are applied as one batch.
	applyChunk = 256
)

// Options is the watcher's timing; zero values are the defaults.
type Options struct {
	// Quiet: a changed file is indexed after Quiet without changes
	// (DefaultWatchQuiet), at the latest MaxWait after it was seen
	// (DefaultWatchMaxWait).
	Quiet, MaxWait time.Duration
	// ReconcileEvery: the vault is walked and reconciled when Run starts,
	// then every ReconcileEvery (DefaultReconcileEvery; negative: never
	// again).
	ReconcileEvery time.Duration
}

// Run follows the vault folder root with fsnotify and feeds every change
// to ix as a hint. A changed file is re-read once changes pause for Quiet,
// and at the latest MaxWait after it was seen, so a file saved again and
// again is still indexed within MaxWait. A folder created, renamed or
// removed is rescanned (its watches added again first); an overflow of the
// kernel's event queue, a watcher error or a burst of changes rescans the
// whole vault. When Run starts, and then every ReconcileEvery (longer for
// a big vault: walks take at most 1/20 of the time), the vault is walked
// and anything the catalog does not hold as listed, whatever the events
// said or failed to say, applied: another process on the same folder, a
// lost watch or a missed event converge within that time. Changes seen and
// not indexed yet are counted in ix.Status().Pending (ix.SetPending), so
// that answers meanwhile can say they are partial; a caller that starts
// Run after a Sync announces it first with ix.ExpectWatch. The catalog
// snapshot is saved about 2 s after changes. Run returns when ctx ends.
func Run(ctx context.Context, ix *indexer.Indexer, root string, o Options) error {
	// Buffered: fsnotify's reader then handles a renamed folder's
	// IN_MOVE_SELF before intake adds the new name (see addTree).
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return err
	}
	defer fw.Close()
	w := &watcher{ix: ix, o: o, log: logger(ix), root: root, fw: fw, wake: make(chan struct{}, 1), bad: map[string]string{}}
	// What changes before the watches are added is seen only by the first
	// walk: it counts as pending until that walk is applied, so that a
	// caller waiting for the watcher to settle (a move) waits for it too.
	walked := w.hold()
	w.addTree(root)
	intakeDone := make(chan struct{})
	go func() {
		defer close(intakeDone)
		w.intake(ctx)
	}()
	defer func() { fw.Close(); <-intakeDone; ix.SetPending(0, time.Time{}) }()
	return w.run(ctx, walked)
}

// watcher is one Run: an intake goroutine queues what fsnotify reports,
// run flushes the queue into the indexer.
type watcher struct {
	ix   *indexer.Indexer
	o    Options
	log  *slog.Logger
	root string
	fw   *fsnotify.Watcher
	wake chan struct{} // a change was queued

	mu      sync.Mutex
	paths   map[string]bool // vault-relative paths changed
	folders map[string]bool // folders to rescan
	all     bool            // rescan the whole vault
	first   time.Time       // when the oldest queued change was seen
	last    time.Time       // when the newest was
	queued  int             // len(paths)+len(folders)+(all?1:0)
	working int             // taken by a flush, not applied yet
	since   time.Time       // when the oldest change not applied yet was seen

	bad map[string]string // path -> ETag of a file found unindexable at that version (run only)
}

func (o Options) quiet() time.Duration {
	if o.Quiet > 0 {
		return o.Quiet
	}
	return DefaultWatchQuiet
}

func (o Options) maxWait() time.Duration {
	if o.MaxWait > 0 {
		return o.MaxWait
	}
	return DefaultWatchMaxWait
}

func (o Options) reconcileEvery() time.Duration {
	if o.ReconcileEvery != 0 {
		return o.ReconcileEvery
	}
	return DefaultReconcileEvery
}

// logger is ix's logger.
func logger(ix *indexer.Indexer) *slog.Logger {
	if ix.Log != nil {
		return ix.Log
	}
	return slog.Default()
}

// addTree watches dir and every visible folder below it. Adding a folder
// already watched is harmless, and repairs a watch fsnotify dropped: when a
// watched folder is renamed and the new name is added before fsnotify has
// read the old name's IN_MOVE_SELF, fsnotify removes the new name's watch
// (the two share the inode's watch descriptor), and events inside the
// folder are lost until it is added again.
func (w *watcher) addTree(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != w.root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		_ = w.fw.Add(p)
		return nil
	})
}

// rel maps an event's name to a clean, visible vault path; ok is false for
// the root, paths outside it and ignored ones (vault.Ignored).
func (w *watcher) rel(name string) (string, bool) {
	r, err := filepath.Rel(w.root, name)
	if err != nil || r == "." || strings.HasPrefix(r, "..") {
		return "", false
	}
	r = norm.NFC.String(filepath.ToSlash(r))
	if vault.Ignored(r) {
		return "", false
	}
	return r, true
}

// intake queues what fsnotify reports until it closes.
func (w *watcher) intake(ctx context.Context) {
	for {
		select {
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("file watcher: the kernel's event queue overflowed; rescanning the vault")
			} else {
				w.log.Warn("file watcher", "err", err)
			}
			w.queue("", false, true)
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			rel, ok := w.rel(ev.Name)
			if !ok {
				continue
			}
			folder := false
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
					w.addTree(ev.Name) // now, so that what is written into it is seen
					folder = true
				}
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				// A folder may have gone with everything in it: unless the
				// catalog knows the path as a file, rescan it as a folder.
				if _, ok := w.ix.Catalog.Attachment(rel); !ok {
					if n, ok := w.ix.Catalog.Note(rel); !ok || n.Path != rel {
						folder = !vault.IsNotePath(rel) || hasUnder(w.ix.Catalog, rel)
					}
				}
			}
			w.queue(rel, folder, false)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// hasUnder reports whether catalog c holds a note under folder rel.
func hasUnder(c *vault.Catalog, rel string) bool {
	prefix := rel + "/"
	found := false
	c.Each(func(n *vault.Note) {
		found = found || strings.HasPrefix(n.Path, prefix)
	})
	return found
}

// queue records a change to path (a folder to rescan when folder, the
// whole vault when all) and wakes run.
func (w *watcher) queue(path string, folder, all bool) {
	now := time.Now()
	w.mu.Lock()
	if w.paths == nil {
		w.paths, w.folders = map[string]bool{}, map[string]bool{}
	}
	switch {
	case all:
		if !w.all {
			w.all = true
			w.queued++
		}
	case folder:
		if !w.folders[path] {
			w.folders[path] = true
			w.queued++
		}
	default:
		if !w.paths[path] {
			w.paths[path] = true
			w.queued++
		}
	}
	if w.first.IsZero() {
		w.first = now
	}
	if w.since.IsZero() {
		w.since = now
	}
	w.last = now
	w.publish()
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// publish hands the count of changes not indexed yet to Status (w.mu held).
func (w *watcher) publish() {
	w.ix.SetPending(w.queued+w.working, w.since)
}

// due is when the queue should be flushed: after Quiet of quiet, at the
// latest MaxWait after its first change; zero when it is empty.
func (w *watcher) due() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queued == 0 {
		return time.Time{}
	}
	return minTime(w.last.Add(w.o.quiet()), w.first.Add(w.o.maxWait()))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// take empties the queue into a batch; the changes stay counted as pending
// until done is called.
func (w *watcher) take() (paths, folders []string, all bool, done func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.paths {
		paths = append(paths, p)
	}
	for f := range w.folders {
		folders = append(folders, f)
	}
	all = w.all || len(paths) > burstPaths
	n := w.queued
	clear(w.paths)
	clear(w.folders)
	w.all, w.queued, w.first, w.last = false, 0, time.Time{}, time.Time{}
	w.working += n
	w.publish()
	return paths, folders, all, func() { w.release(n) }
}

// hold counts one change pending (working) until the returned func is
// called.
func (w *watcher) hold() func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		w.since = time.Now()
	}
	w.working++
	w.publish()
	return sync.OnceFunc(func() { w.release(1) })
}

// release ends n changes taken (see take and hold).
func (w *watcher) release(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.working -= n
	switch {
	case w.queued+w.working == 0:
		w.since = time.Time{}
	case w.working == 0:
		w.since = w.first
	}
	w.publish()
}

// run flushes queued changes when they are due, walks the vault every
// reconcile interval, and saves the catalog snapshot after changes. walked
// is called once the first walk is applied.
func (w *watcher) run(ctx context.Context, walked func()) error {
	ix := w.ix
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	save := time.NewTimer(time.Hour)
	save.Stop()
	saving := false
	// A walk at once, whatever the interval: what changed between the
	// caller's last pass and the watches being added.
	every := w.o.reconcileEvery()
	recon := time.NewTimer(0)
	defer recon.Stop()
	changed := func() {
		if !saving {
			saving = true
			save.Reset(2 * time.Second)
		}
	}
	for {
		select {
		case <-ctx.Done():
			_ = ix.Save(context.WithoutCancel(ctx))
			return nil
		case <-w.wake:
			if d := w.due(); !d.IsZero() {
				flush.Reset(time.Until(d))
			}
		case <-flush.C:
			d := w.due()
			if d.IsZero() {
				continue
			}
			if wait := time.Until(d); wait > 0 { // more changes came: not due yet
				flush.Reset(wait)
				continue
			}
			if w.flush(ctx) {
				changed()
			}
			if d := w.due(); !d.IsZero() {
				flush.Reset(time.Until(d))
			}
		case <-recon.C:
			start := time.Now()
			if w.reconcile(ctx) {
				changed()
			}
			walked()
			if every > 0 {
				recon.Reset(max(every, reconcileShare*time.Since(start)))
			}
		case <-save.C:
			saving = false
			if err := ix.Save(ctx); err != nil && ctx.Err() == nil {
				w.log.Warn("saving the catalog snapshot", "err", err)
			}
		}
	}
}

// flush applies what the queue holds; it reports whether anything was
// applied.
func (w *watcher) flush(ctx context.Context) bool {
	paths, folders, all, done := w.take()
	defer done()
	if all {
		return w.reconcile(ctx)
	}
	n := 0
	// Folders first, each after its watches are added again (see addTree),
	// so that the rescan sees whatever happened in it while unwatched; all
	// in one refresh, so that a folder renamed moves at once.
	slices.Sort(folders)
	folders = slices.CompactFunc(folders, func(a, b string) bool { return strings.HasPrefix(b, a+"/") })
	if len(folders) > 0 {
		var listed []store.Object
		for _, f := range folders {
			disk := filepath.Join(w.root, filepath.FromSlash(f))
			if st, err := os.Stat(disk); err == nil && st.IsDir() {
				w.addTree(disk)
			}
			err := w.ix.Store.List(ctx, f, func(o store.Object) error {
				listed = append(listed, o)
				return nil
			})
			if err != nil {
				if ctx.Err() == nil {
					w.log.Warn("rescanning a folder after a change; rescanning the vault", "folder", f, "err", err)
					return w.reconcile(ctx)
				}
				return false
			}
		}
		applied, errs := w.ix.Refresh(ctx, folders, listed, w.skip)
		w.log.Debug("rescanned folders after a change", "folders", len(folders), "applied", len(applied))
		n += w.apply(ctx, applied, errs)
	}
	var todo []string
	for _, p := range paths {
		clean, err := store.CleanPath(p)
		if err != nil || vault.Ignored(clean) || under(clean, folders) {
			continue
		}
		todo = append(todo, clean)
	}
	slices.Sort(todo)
	todo = slices.Compact(todo)
	for i := 0; i < len(todo); i += applyChunk {
		chunk := todo[i:min(i+applyChunk, len(todo))]
		n += w.apply(ctx, chunk, w.ix.ApplyPaths(ctx, chunk))
	}
	return n > 0
}

// under reports whether p is inside one of folders.
func under(p string, folders []string) bool {
	for _, f := range folders {
		if strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}

// apply logs the errors of applied paths, remembers the ones that cannot
// be indexed at their version (so reconcile walks do not read them again
// and again), and returns how many were applied.
func (w *watcher) apply(ctx context.Context, paths []string, errs []error) int {
	for i, p := range paths {
		err := errs[i]
		switch {
		case err == nil:
			delete(w.bad, p)
		case indexer.IsPermanent(err):
			if o, serr := w.ix.Store.Stat(ctx, p); serr == nil {
				w.bad[p] = o.ETag
			}
		case ctx.Err() == nil:
			w.log.Debug("indexing after change", "path", p, "err", err)
		}
	}
	return len(paths)
}

// skip leaves out of a reconcile a file already found unindexable at the
// version listed.
func (w *watcher) skip(o store.Object) bool {
	etag, ok := w.bad[o.Path]
	return ok && etag == o.ETag
}

// reconcile walks the vault: watches are added again (repairing any
// fsnotify dropped), and whatever the catalog does not hold as listed is
// applied. It reports whether anything was.
func (w *watcher) reconcile(ctx context.Context) bool {
	w.addTree(w.root)
	var listed []store.Object
	err := w.ix.Store.List(ctx, "", func(o store.Object) error {
		listed = append(listed, o)
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("walking the vault", "err", err)
		}
		return false
	}
	paths, errs := w.ix.Refresh(ctx, nil, listed, w.skip)
	if len(w.bad) > 0 {
		keep := make(map[string]bool, len(w.bad))
		for _, o := range listed {
			if _, ok := w.bad[o.Path]; ok {
				keep[o.Path] = true
			}
		}
		maps.DeleteFunc(w.bad, func(p, _ string) bool { return !keep[p] })
	}
	if len(paths) > 0 {
		w.log.Debug("reconciled the vault with the disk", "paths", len(paths))
	}
	return w.apply(ctx, paths, errs) > 0
}
