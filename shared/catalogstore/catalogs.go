package catalogstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Catalogs is the read side of the segmented catalog (see
// Snapshots) for stateless handlers: a cold one reads the manifest and
// every segment (several at once, decoded on all cores); then it
// revalidates at most once per MaxAge with a Stat of the manifest, and when
// its ETag changed reads only the segments saved since, applying them in
// place. Concurrent callers share one revalidation. A missing catalog is an
// empty one, so a fresh deployment answers before its first reconcile;
// with no manifest, a whole snapshot of an older Sheaf at Key is read.
// While the store cannot be reached, the catalog loaded last is served
// (and revalidated again after MaxAge).
type Catalogs struct {
	Store  store.Store
	Key    string        // the legacy whole snapshot; default DefaultSnapshotKey
	Dir    string        // default DefaultCatalogDir
	MaxAge time.Duration // default one second
	// Preload lets Prefetch load the catalog (and build its indexes) in
	// the background, for a long-lived server: its next call finds the
	// catalog ready. A Lambda function leaves it off: its instance is
	// frozen between invocations, so the load would only compete with the
	// first answer.
	Preload bool

	mu      sync.Mutex
	cat     *vault.Catalog
	view    view           // of cat
	legacy  string         // ETag of the legacy snapshot cat was read from
	checked time.Time      // last revalidation
	flight  *catalogFlight // revalidation in progress
	sum     *vault.Summary // the manifest's, while no catalog is loaded
	sumAt   time.Time      // when sum was read
}

type catalogFlight struct {
	done chan struct{}
	cat  *vault.Catalog
	err  error
}

// Catalog returns the current catalog. Callers must treat it as read-only.
func (c *Catalogs) Catalog(ctx context.Context) (*vault.Catalog, error) {
	c.mu.Lock()
	if c.cat != nil && time.Since(c.checked) < c.maxAge() {
		cat := c.cat
		c.mu.Unlock()
		return cat, nil
	}
	f := c.flight
	if f == nil {
		f = &catalogFlight{done: make(chan struct{})}
		c.flight = f
		go c.revalidate(context.WithoutCancel(ctx), f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.cat, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Summary returns the current catalog's summary without loading the
// catalog: from the manifest (one small read, then at most one per
// MaxAge) while no catalog is loaded. ok is false when the catalog is
// loaded, or the manifest has no summary (an older indexer wrote it), or
// cannot be read: the caller then loads the catalog with Catalog, which
// also reports any error.
func (c *Catalogs) Summary(ctx context.Context) (sum vault.Summary, ok bool, err error) {
	c.mu.Lock()
	loaded, cached, at := c.cat != nil, c.sum, c.sumAt
	c.mu.Unlock()
	switch {
	case loaded:
		return vault.Summary{}, false, nil
	case cached != nil && time.Since(at) < c.maxAge():
		return *cached, true, nil
	}
	m, _, found, err := c.files().readManifest(ctx)
	if err != nil || !found || m.Summary == nil {
		return vault.Summary{}, false, nil
	}
	c.mu.Lock()
	c.sum, c.sumAt = m.Summary, time.Now()
	c.mu.Unlock()
	return *m.Summary, true, nil
}

// Prefetch starts loading the catalog, and building its indexes, in the
// background, when Preload is set and no catalog is loaded: the tools
// call it after answering from the Summary. A failure is left for the next
// call to retry.
func (c *Catalogs) Prefetch(ctx context.Context) {
	c.mu.Lock()
	loaded := c.cat != nil
	c.mu.Unlock()
	if !c.Preload || loaded {
		return
	}
	go func() {
		if cat, err := c.Catalog(context.WithoutCancel(ctx)); err == nil {
			cat.Warm()
		}
	}()
}

// Missing reports whether the last catalog served came from no snapshot at
// all: no indexer has saved one yet, so the catalog is empty for want of
// indexing, not because the vault is.
func (c *Catalogs) Missing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cat != nil && !c.view.found && c.legacy == ""
}

// revalidate runs one flight: it is detached from any one caller's context,
// so a caller that gives up does not fail the others.
func (c *Catalogs) revalidate(ctx context.Context, f *catalogFlight) {
	c.mu.Lock()
	old, v, legacy := c.cat, c.view, c.legacy
	c.mu.Unlock()

	cat, nv, nlegacy, err := c.fetch(ctx, old, v, legacy)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil:
		c.cat, c.view, c.legacy = cat, nv, nlegacy
		c.checked = time.Now()
	case old != nil: // serve what we have; try again after MaxAge
		cat, err = old, nil
		c.checked = time.Now()
	}
	f.cat, f.err = cat, err
	c.flight = nil
	close(f.done)
}

// fetch returns the current catalog: old, updated in place by the segments
// saved since v, when that is enough; else a new one.
func (c *Catalogs) fetch(ctx context.Context, old *vault.Catalog, v view, legacy string) (*vault.Catalog, view, string, error) {
	f := c.files()
	if old != nil && v.found {
		obj, err := f.store.Stat(ctx, f.manifestKey())
		switch {
		case err == nil && obj.ETag == v.etag:
			return old, v, "", nil
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, v, "", fmt.Errorf("checking the catalog manifest: %w", err)
		}
		nv, segs, whole, err := f.update(ctx, v)
		if err != nil {
			return nil, v, "", fmt.Errorf("reading the catalog: %w", err)
		}
		if whole != nil {
			return whole, nv, "", nil
		}
		for _, s := range segs {
			old.Apply(s)
		}
		if nv.man.IndexedAt.After(old.IndexedAt()) {
			old.SetIndexedAt(nv.man.IndexedAt)
		}
		return old, nv, "", nil
	}
	if old != nil && !v.found { // an empty or legacy catalog: has a manifest appeared?
		_, err := f.store.Stat(ctx, f.manifestKey())
		if errors.Is(err, store.ErrNotFound) {
			obj, err := f.store.Stat(ctx, f.legacy)
			switch {
			case errors.Is(err, store.ErrNotFound) && legacy == "":
				return old, v, "", nil
			case err == nil && obj.ETag == legacy:
				return old, v, legacy, nil
			case err != nil && !errors.Is(err, store.ErrNotFound):
				return nil, v, "", fmt.Errorf("checking the catalog snapshot: %w", err)
			}
		} else if err != nil {
			return nil, v, "", fmt.Errorf("checking the catalog manifest: %w", err)
		}
	}
	cat, nv, err := f.load(ctx)
	if err != nil {
		return nil, v, "", fmt.Errorf("reading the catalog: %w", err)
	}
	if cat == nil {
		return vault.NewCatalog(), nv, "", nil
	}
	if !nv.found { // read from the legacy snapshot: remember its ETag
		if obj, err := f.store.Stat(ctx, f.legacy); err == nil {
			legacy = obj.ETag
		}
		return cat, nv, legacy, nil
	}
	return cat, nv, "", nil
}

func (c *Catalogs) files() catalogFiles {
	return (&Snapshots{Store: c.Store, Key: c.Key, Dir: c.Dir}).files()
}

func (c *Catalogs) maxAge() time.Duration {
	if c.MaxAge > 0 {
		return c.MaxAge
	}
	return time.Second
}
