package indexer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// SnapshotStore persists the Catalog between runs.
type SnapshotStore interface {
	// Load returns the saved catalog, or (nil, nil) when there is none or it
	// is of another format version (the caller then rebuilds).
	Load(ctx context.Context) (*vault.Catalog, error)
	Save(ctx context.Context, c *vault.Catalog) error
}

// FileSnapshots keeps the snapshot in a local file, written atomically.
type FileSnapshots struct{ Path string }

// Load implements SnapshotStore.
func (f FileSnapshots) Load(context.Context) (*vault.Catalog, error) {
	fh, err := os.Open(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	c, err := vault.ReadSnapshot(fh)
	if errors.Is(err, vault.ErrSnapshotVersion) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w (delete it to rebuild)", f.Path, err)
	}
	return c, nil
}

// Save implements SnapshotStore.
func (f FileSnapshots) Save(_ context.Context, c *vault.Catalog) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".catalog-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := c.WriteSnapshot(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}

// DefaultSnapshotKey is where the catalog snapshot lives in a store.
const DefaultSnapshotKey = ".sheaf/catalog.json.gz"

// StoreSnapshots keeps the snapshot as an object in the vault's store (the
// cloud layout: ".sheaf/catalog.json.gz"). Saves are conditional on the ETag
// last loaded or saved (IfNoneMatch when there was none), so two writers can
// never silently overwrite each other: the loser gets store.ErrConflict.
type StoreSnapshots struct {
	Store store.Store
	Key   string // default DefaultSnapshotKey

	mu   sync.Mutex
	etag string
}

func (s *StoreSnapshots) key() string {
	if s.Key == "" {
		return DefaultSnapshotKey
	}
	return s.Key
}

// Load implements SnapshotStore. A snapshot of another format version gives
// (nil, nil) and is overwritten by the next Save.
func (s *StoreSnapshots) Load(ctx context.Context) (*vault.Catalog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, obj, err := s.Store.Get(ctx, s.key(), 0)
	if errors.Is(err, store.ErrNotFound) {
		s.etag = ""
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := vault.ReadSnapshot(bytes.NewReader(data))
	if errors.Is(err, vault.ErrSnapshotVersion) {
		s.etag = obj.ETag
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the catalog snapshot %s: %w", s.key(), err)
	}
	s.etag = obj.ETag
	return c, nil
}

// Save implements SnapshotStore; store.ErrConflict means another writer won.
func (s *StoreSnapshots) Save(ctx context.Context, c *vault.Catalog) error {
	var buf bytes.Buffer
	if err := c.WriteSnapshot(&buf); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	opts := store.PutOptions{IfMatch: s.etag, IfNoneMatch: s.etag == ""}
	obj, err := s.Store.Put(ctx, s.key(), buf.Bytes(), opts)
	if err != nil {
		return err
	}
	s.etag = obj.ETag
	return nil
}
