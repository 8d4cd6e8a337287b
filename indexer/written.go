package indexer

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// ErrReindexLater is Reindex's answer while a whole-vault pass (Sync)
// holds the indexes: the paths are applied in the background as soon as it
// ends.
var ErrReindexLater = errors.New("the vault is being indexed: the write is indexed as soon as that pass ends")

// Reindex applies the paths a write just changed, at once, so that the
// writer's next read, search or graph call sees the write: the file
// watcher's event for the same change then finds nothing new. Hidden and
// invalid paths are ignored. A note that cannot be indexed is reported the
// way Apply reports it. It never waits for a running Sync: it returns
// ErrReindexLater and applies the paths when the Sync is done.
func (ix *Indexer) Reindex(ctx context.Context, paths ...string) error {
	var clean []string
	seen := map[string]bool{}
	for _, p := range paths {
		c, err := store.CleanPath(p)
		if err != nil || vault.Ignored(c) || seen[c] {
			continue
		}
		seen[c] = true
		clean = append(clean, c)
	}
	if len(clean) == 0 {
		return nil
	}
	if !ix.mu.TryRLock() {
		go ix.applyMany(context.WithoutCancel(ctx), clean)
		return ErrReindexLater
	}
	defer ix.mu.RUnlock()
	sorted := slices.Clone(clean)
	slices.Sort(sorted) // applyMany's locking order
	for _, p := range sorted {
		defer ix.paths.lock(p)()
	}
	var errs []error
	for _, err := range ix.applyLocked(ctx, clean, true) {
		if err != nil && !IsPermanent(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Catalogs is where Overlay gets the shared catalog (catalogstore.Catalogs).
type Catalogs interface {
	Catalog(ctx context.Context) (*vault.Catalog, error)
}

// Overlay is the catalog of a stateless handler that writes (the cloud):
// the shared snapshot the indexer maintains, with this handler's own writes
// laid over it until the snapshot has caught up with each of them. The
// handler's own answers therefore see its writes at once, while other
// handlers see them when the indexer has processed the store's events and
// saved the snapshot (usually seconds). Reindex also writes the changed
// notes to the text index, which every handler shares.
type Overlay struct {
	Base         Catalogs
	Store        store.Store
	Text         textindex.Index
	MaxNoteBytes int64

	mu      sync.Mutex
	pending map[string]overlayWrite // path -> what this handler wrote
	version uint64                  // bumped by every Reindex
	merged  *vault.Catalog          // Base's catalog plus pending, built from of at its generation gen, at version at
	of      *vault.Catalog
	gen     uint64
	at      uint64
}

// overlayWrite is one write not yet in the shared snapshot.
type overlayWrite struct {
	note *vault.Note // nil: the note was removed
	at   time.Time
}

// maxOverlay bounds the writes an Overlay remembers (oldest dropped).
const maxOverlay = 4096

// Lag is a note this handler wrote that the shared snapshot does not hold
// yet, and since when.
type Lag struct {
	Path  string
	Since time.Time
}

// Catalog returns the shared catalog with this handler's pending writes
// applied; treat it as read-only.
func (o *Overlay) Catalog(ctx context.Context) (*vault.Catalog, error) {
	base, err := o.Base.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.settle(base)
	if len(o.pending) == 0 {
		return base, nil
	}
	// A handler's catalog applies new segments in place: the same pointer
	// at another generation is another catalog.
	gen := base.Generation()
	if o.merged != nil && o.of == base && o.gen == gen && o.at == o.version {
		return o.merged, nil
	}
	m := base.Clone()
	for p, w := range o.pending {
		if w.note == nil {
			m.Remove(p)
		} else {
			m.Upsert(*w.note)
		}
	}
	o.merged, o.of, o.gen, o.at = m, base, gen, o.version
	return m, nil
}

// Summary is Base's summary (see catalogstore.Catalogs.Summary) while this
// handler has no write of its own pending; ok is false otherwise.
func (o *Overlay) Summary(ctx context.Context) (vault.Summary, bool, error) {
	o.mu.Lock()
	pending := len(o.pending)
	o.mu.Unlock()
	sums, ok := o.Base.(interface {
		Summary(context.Context) (vault.Summary, bool, error)
	})
	if pending > 0 || !ok {
		return vault.Summary{}, false, nil
	}
	return sums.Summary(ctx)
}

// Prefetch is Base's (see catalogstore.Catalogs.Prefetch), when it has one.
func (o *Overlay) Prefetch(ctx context.Context) {
	if p, ok := o.Base.(interface{ Prefetch(context.Context) }); ok {
		p.Prefetch(ctx)
	}
}

// settle drops the writes base already holds (the same version of the
// note, or its absence).
func (o *Overlay) settle(base *vault.Catalog) {
	for p, w := range o.pending {
		n, ok := base.Note(p)
		caught := (w.note == nil && (!ok || n.Path != p)) ||
			(w.note != nil && ok && n.Path == p && n.ETag == w.note.ETag && n.Hash == w.note.Hash)
		if caught {
			delete(o.pending, p)
			o.version++
		}
	}
}

// Reindex reads the paths back from the store and lays what is there over
// the shared catalog (removing what is gone), and writes them to the text
// index.
func (o *Overlay) Reindex(ctx context.Context, paths ...string) error {
	reader := &Indexer{Store: o.Store, Catalog: vault.NewCatalog(), MaxNoteBytes: o.MaxNoteBytes}
	var docs []textindex.Doc
	var gone []string
	writes := map[string]overlayWrite{}
	var errs []error
	for _, raw := range paths {
		p, err := store.CleanPath(raw)
		if err != nil || vault.IsHidden(p) || !vault.IsNotePath(p) {
			continue
		}
		got, err := reader.load(ctx, p)
		switch {
		case err != nil && !IsPermanent(err):
			errs = append(errs, err)
			continue
		case got == nil: // gone, or not indexable
			gone = append(gone, p)
			writes[p] = overlayWrite{at: time.Now()}
		default:
			n := got.note
			docs = append(docs, got.doc)
			writes[p] = overlayWrite{note: &n, at: time.Now()}
		}
	}
	if len(gone) > 0 {
		if err := o.Text.Delete(ctx, gone...); err != nil {
			errs = append(errs, err)
		}
	}
	if len(docs) > 0 {
		if err := o.Text.Upsert(ctx, docs...); err != nil {
			errs = append(errs, err)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending == nil {
		o.pending = map[string]overlayWrite{}
	}
	for p, w := range writes {
		o.pending[p] = w
	}
	for len(o.pending) > maxOverlay {
		oldest := ""
		for p, w := range o.pending {
			if oldest == "" || w.at.Before(o.pending[oldest].at) {
				oldest = p
			}
		}
		delete(o.pending, oldest)
	}
	o.version++
	return errors.Join(errs...)
}

// Lagging lists the writes of this handler the shared catalog does not
// hold yet, oldest first, as of the last Catalog call.
func (o *Overlay) Lagging() []Lag {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Lag, 0, len(o.pending))
	for p, w := range o.pending {
		out = append(out, Lag{Path: p, Since: w.at})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}
