package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// FileSnapshots keeps the catalog in a local folder: the same segmented
// layout as catalogstore.Snapshots (over an fs store), in a "catalog" folder beside Path. Path is the
// whole snapshot of Sheaf before catalog format 3, read when the folder
// holds no manifest yet.
type FileSnapshots struct {
	Path string

	once sync.Once
	s    *catalogstore.Snapshots
	err  error
}

func (f *FileSnapshots) open() (*catalogstore.Snapshots, error) {
	f.once.Do(func() {
		dir := filepath.Dir(f.Path)
		if f.err = os.MkdirAll(dir, 0o755); f.err != nil {
			return
		}
		var st *fs.Store
		if st, f.err = fs.Open(dir); f.err == nil {
			f.s = &catalogstore.Snapshots{Store: st, Key: filepath.Base(f.Path), Dir: "catalog/"}
		}
	})
	return f.s, f.err
}

// Load implements indexer.SnapshotStore.
func (f *FileSnapshots) Load(ctx context.Context) (*vault.Catalog, error) {
	s, err := f.open()
	if err != nil {
		return nil, err
	}
	c, err := s.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the catalog in %s: %w (delete it to rebuild)", filepath.Dir(f.Path), err)
	}
	return c, nil
}

// Save implements indexer.SnapshotStore.
func (f *FileSnapshots) Save(ctx context.Context, c *vault.Catalog) error {
	s, err := f.open()
	if err != nil {
		return err
	}
	return s.Save(ctx, c)
}

// SaveChanges implements indexer.ChangeSaver.
func (f *FileSnapshots) SaveChanges(ctx context.Context, c *vault.Catalog, paths []string) error {
	s, err := f.open()
	if err != nil {
		return err
	}
	return s.SaveChanges(ctx, c, paths)
}

// CatchUp implements indexer.ChangeSaver.
func (f *FileSnapshots) CatchUp(ctx context.Context, c *vault.Catalog) ([]string, bool, error) {
	s, err := f.open()
	if err != nil {
		return nil, false, err
	}
	return s.CatchUp(ctx, c)
}
