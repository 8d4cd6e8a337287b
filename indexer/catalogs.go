package indexer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// StoreCatalogs is the read side of the catalog snapshot for stateless
// handlers: it loads the snapshot once, then revalidates it at most once
// per MaxAge with a Stat, reloading only when the ETag changed. Concurrent
// callers share one revalidation. A missing snapshot is an empty catalog,
// so a fresh deployment answers before its first reconcile. While the store
// cannot be reached, the catalog loaded last is served (and revalidated
// again after MaxAge).
type StoreCatalogs struct {
	Store  store.Store
	Key    string        // default DefaultSnapshotKey
	MaxAge time.Duration // default one second

	mu      sync.Mutex
	cat     *vault.Catalog
	etag    string         // of cat; "" for the empty catalog of a missing snapshot
	checked time.Time      // last revalidation
	flight  *catalogFlight // revalidation in progress
}

type catalogFlight struct {
	done chan struct{}
	cat  *vault.Catalog
	err  error
}

// Catalog returns the current catalog. Callers must treat it as read-only.
func (c *StoreCatalogs) Catalog(ctx context.Context) (*vault.Catalog, error) {
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

// Missing reports whether the last catalog served came from no snapshot at
// all: no indexer has saved one yet, so the catalog is empty for want of
// indexing, not because the vault is.
func (c *StoreCatalogs) Missing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cat != nil && c.etag == ""
}

// revalidate runs one flight: it is detached from any one caller's context,
// so a caller that gives up does not fail the others.
func (c *StoreCatalogs) revalidate(ctx context.Context, f *catalogFlight) {
	c.mu.Lock()
	old, oldTag := c.cat, c.etag
	c.mu.Unlock()

	cat, etag, err := c.fetch(ctx, old, oldTag)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil:
		c.cat, c.etag = cat, etag
		c.checked = time.Now()
	case old != nil: // serve what we have; try again after MaxAge
		cat, err = old, nil
		c.checked = time.Now()
	}
	f.cat, f.err = cat, err
	c.flight = nil
	close(f.done)
}

// fetch returns the snapshot's catalog: old when its ETag is still oldTag.
func (c *StoreCatalogs) fetch(ctx context.Context, old *vault.Catalog, oldTag string) (*vault.Catalog, string, error) {
	obj, err := c.Store.Stat(ctx, c.key())
	switch {
	case errors.Is(err, store.ErrNotFound):
		if old != nil && oldTag == "" {
			return old, "", nil
		}
		return vault.NewCatalog(), "", nil
	case err != nil:
		return nil, "", fmt.Errorf("checking the catalog snapshot: %w", err)
	case old != nil && obj.ETag == oldTag:
		return old, oldTag, nil
	}
	data, obj, err := c.Store.Get(ctx, c.key(), 0)
	if errors.Is(err, store.ErrNotFound) { // deleted between Stat and Get
		return vault.NewCatalog(), "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the catalog snapshot: %w", err)
	}
	cat, err := vault.ReadSnapshot(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("reading the catalog snapshot %s: %w", c.key(), err)
	}
	return cat, obj.ETag, nil
}

func (c *StoreCatalogs) key() string {
	if c.Key == "" {
		return DefaultSnapshotKey
	}
	return c.Key
}

func (c *StoreCatalogs) maxAge() time.Duration {
	if c.MaxAge > 0 {
		return c.MaxAge
	}
	return time.Second
}
