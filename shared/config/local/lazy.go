package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

var _ store.Store = (*lazyDir)(nil)

// lazyDir is a private fs store over a folder made on the first write, so
// that reading keys that were never written leaves no empty folder behind.
type lazyDir struct {
	dir string

	mu sync.Mutex
	st *fs.Store
}

// open returns the store, creating the folder when create is set; nil,
// nil when the folder does not exist and create is not set.
func (l *lazyDir) open(create bool) (*fs.Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st != nil {
		return l.st, nil
	}
	if _, err := os.Stat(l.dir); errors.Is(err, os.ErrNotExist) {
		if !create {
			return nil, nil
		}
		if err := os.MkdirAll(l.dir, 0o700); err != nil {
			return nil, err
		}
	}
	st, err := fs.OpenWith(l.dir, fs.Options{Private: true})
	if err != nil {
		return nil, err
	}
	l.st = st
	return st, nil
}

func (l *lazyDir) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st != nil {
		return l.st.Close()
	}
	return nil
}

func (l *lazyDir) List(ctx context.Context, prefix string, fn func(store.Object) error) error {
	st, err := l.open(false)
	if st == nil {
		return err
	}
	return st.List(ctx, prefix, fn)
}

func (l *lazyDir) Stat(ctx context.Context, path string) (store.Object, error) {
	st, err := l.open(false)
	if st == nil {
		if err == nil {
			err = store.ErrNotFound
		}
		return store.Object{}, err
	}
	return st.Stat(ctx, path)
}

func (l *lazyDir) Get(ctx context.Context, path string, max int64) ([]byte, store.Object, error) {
	st, err := l.open(false)
	if st == nil {
		if err == nil {
			err = store.ErrNotFound
		}
		return nil, store.Object{}, err
	}
	return st.Get(ctx, path, max)
}

func (l *lazyDir) Put(ctx context.Context, path string, data []byte, opts store.PutOptions) (store.Object, error) {
	st, err := l.open(true)
	if err != nil {
		return store.Object{}, fmt.Errorf("the keys folder %s: %w: set XDG_CONFIG_HOME (or HOME), or pass --keys FILE", l.dir, err)
	}
	return st.Put(ctx, path, data, opts)
}

func (l *lazyDir) Delete(ctx context.Context, path string, ifMatch string) error {
	st, err := l.open(false)
	if st == nil {
		return err
	}
	return st.Delete(ctx, path, ifMatch)
}

func (l *lazyDir) Folders(ctx context.Context, prefix string) ([]string, error) {
	st, err := l.open(false)
	if st == nil {
		return nil, err
	}
	return st.Folders(ctx, prefix)
}
