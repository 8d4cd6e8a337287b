// Package split keeps Sheaf's own objects out of a folder vault. The tools
// address everything through one store: notes by their vault paths, Sheaf's
// own objects (leases, proposals, directive state, append records,
// feedback, the cursor key) under ".sheaf/". A split Store sends those to a
// second store rooted in the user's state folder, ".sheaf/keys.json" to a
// third in the user's config folder, and everything else, the trash
// (".sheaf/trash/") included, to the vault.
//
// A cloud vault does not need it: there Sheaf's objects live under the
// bucket's ".sheaf/" prefix beside the notes, where every handler sees them.
package split

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/store"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.RangeReader = (*Store)(nil)
	_ store.Passer      = (*Store)(nil)
)

const (
	own   = ".sheaf/"
	keys  = ".sheaf/keys.json"
	trash = ".sheaf/trash"
)

// Store routes paths to the vault, the state store or the keys store.
type Store struct {
	Notes store.Store // the vault folder: notes, attachments, the trash
	State store.Store // Sheaf's own objects, ".sheaf/" taken off their paths
	Keys  store.Store // holds "keys.json"; nil: keys go to State
	// KeysName says where the keys are, for messages (a file name).
	KeysName string
}

// Where names where path is kept, for messages: KeysName for the keys,
// else "" (the caller's own wording).
func (s *Store) Where(path string) string {
	if path == keys && s.KeysName != "" {
		return s.KeysName
	}
	return ""
}

// route says which store holds path and under what name.
func (s *Store) route(path string) (store.Store, string, func(string) string) {
	switch {
	case path == keys && s.Keys != nil:
		return s.Keys, "keys.json", func(string) string { return keys }
	case path == trash || strings.HasPrefix(path, trash+"/"):
		return s.Notes, path, nil
	case strings.HasPrefix(path, own):
		return s.State, strings.TrimPrefix(path, own), ownName
	}
	return s.Notes, path, nil
}

// back renames an Object from a routed store to its vault path.
func back(o store.Object, name func(string) string) store.Object {
	if name != nil {
		o.Path = name(o.Path)
	}
	return o
}

// clean is store.CleanPath for routing; an invalid path goes to the vault,
// whose adapter reports it.
func clean(path string) string {
	if p, err := store.CleanPath(path); err == nil {
		return p
	}
	return path
}

// Stat implements store.Store.
func (s *Store) Stat(ctx context.Context, path string) (store.Object, error) {
	st, p, name := s.route(clean(path))
	o, err := st.Stat(ctx, p)
	return back(o, name), err
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, path string, max int64) ([]byte, store.Object, error) {
	st, p, name := s.route(clean(path))
	data, o, err := st.Get(ctx, p, max)
	return data, back(o, name), err
}

// GetRange implements store.RangeReader.
func (s *Store) GetRange(ctx context.Context, path string, off, n int64) ([]byte, store.Object, error) {
	st, p, name := s.route(clean(path))
	data, o, err := store.GetRange(ctx, st, p, off, n)
	return data, back(o, name), err
}

// PassedOver implements store.Passer with the vault's store (nil when
// it cannot tell).
func (s *Store) PassedOver() map[string]string {
	if p, ok := s.Notes.(store.Passer); ok {
		return p.PassedOver()
	}
	return nil
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, path string, data []byte, opts store.PutOptions) (store.Object, error) {
	st, p, name := s.route(clean(path))
	o, err := st.Put(ctx, p, data, opts)
	return back(o, name), err
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, path string, ifMatch string) error {
	st, p, _ := s.route(clean(path))
	return st.Delete(ctx, p, ifMatch)
}

// List implements store.Store. Listing ".sheaf" itself lists Sheaf's own
// objects, the keys and the trash together.
func (s *Store) List(ctx context.Context, prefix string, fn func(store.Object) error) error {
	pre := strings.TrimSuffix(clean(prefix), "/")
	switch {
	case pre == ".sheaf":
		err := s.State.List(ctx, "", func(o store.Object) error {
			if o.Path == "keys.json" && s.Keys != nil {
				return nil // not the keys: a stray copy in the state folder
			}
			return fn(back(o, ownName))
		})
		if err != nil {
			return err
		}
		if s.Keys != nil {
			o, err := s.Keys.Stat(ctx, "keys.json")
			switch {
			case err == nil:
				o.Path = keys
				if err := fn(o); err != nil {
					return err
				}
			case !errors.Is(err, store.ErrNotFound):
				return err
			}
		}
		return s.Notes.List(ctx, trash, fn)
	case pre == trash || strings.HasPrefix(pre, trash+"/") || !strings.HasPrefix(pre, own):
		return s.Notes.List(ctx, prefix, fn)
	}
	return s.State.List(ctx, strings.TrimPrefix(pre, own), func(o store.Object) error { return fn(back(o, ownName)) })
}

// Folders implements store.Store.
func (s *Store) Folders(ctx context.Context, prefix string) ([]string, error) {
	pre := strings.TrimSuffix(clean(prefix), "/")
	if pre == trash || strings.HasPrefix(pre, trash+"/") || (pre != ".sheaf" && !strings.HasPrefix(pre, own)) {
		return s.Notes.Folders(ctx, prefix)
	}
	dirs, err := s.State.Folders(ctx, strings.TrimPrefix(strings.TrimPrefix(pre, ".sheaf"), "/"))
	if err != nil {
		return nil, err
	}
	for i, d := range dirs {
		dirs[i] = ownName(d)
	}
	if pre == ".sheaf" {
		t, err := s.Notes.Folders(ctx, trash)
		if err != nil {
			return nil, err
		}
		if _, err := s.Notes.Stat(ctx, trash); err == nil || len(t) > 0 {
			dirs = append(dirs, trash)
		}
		dirs = append(dirs, t...)
		slices.Sort(dirs)
	}
	return dirs, nil
}

// MakeFolder creates an empty folder in the store that holds path, when
// that store can.
func (s *Store) MakeFolder(ctx context.Context, path string) error {
	st, p, _ := s.route(clean(path))
	fm, ok := st.(interface {
		MakeFolder(ctx context.Context, path string) error
	})
	if !ok {
		return errors.New("split: this store cannot make folders")
	}
	return fm.MakeFolder(ctx, p)
}

func ownName(p string) string { return own + p }

// Close closes the stores that can be closed.
func (s *Store) Close() error {
	var errs []error
	for _, st := range []store.Store{s.Notes, s.State, s.Keys} {
		if c, ok := st.(interface{ Close() error }); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
