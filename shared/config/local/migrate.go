package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Moved is what Migrate moved.
type Moved struct {
	From    string   // <vault>/.sheaf
	State   string   // where the state went
	Keys    string   // where keys.json went; "" if there was none
	Entries []string // the names moved into State
}

// Migrate moves the state an earlier Sheaf kept in <vault>/.sheaf/ out of
// the vault: everything but the trash to the state folder (state, or the
// default one), keys.json to the user's config folder (mode 0600). The
// trash stays: it holds notes. No Sheaf process may have the vault open
// meanwhile. It refuses to overwrite state or keys already at the target.
func Migrate(root, state string) (Moved, error) {
	from := filepath.Join(root, ".sheaf")
	m := Moved{From: from}
	entries, err := os.ReadDir(from)
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("%s does not exist: there is nothing to migrate", from)
	} else if err != nil {
		return m, err
	}
	if state == "" {
		if state, err = DefaultState(root); err != nil {
			return m, err
		}
	}
	if m.State, err = filepath.Abs(state); err != nil {
		return m, err
	}
	if m.State == from {
		return m, fmt.Errorf("the target is %s itself: pass another --state", from)
	}
	if holdsState(m.State) {
		return m, fmt.Errorf("%s already holds Sheaf's state: remove it (it is rebuilt from the notes) or pass another --state", m.State)
	}
	var keys string
	for _, e := range entries {
		if e.Name() == "keys.json" {
			dir, err := DefaultKeys(root)
			if err != nil {
				return m, fmt.Errorf("no config folder for the keys (%v): set HOME or XDG_CONFIG_HOME", err)
			}
			keys = filepath.Join(dir, "keys.json")
			if exists(keys) {
				return m, fmt.Errorf("%s already exists: merge the keys by hand (or remove it) and run migrate again", keys)
			}
		}
	}
	if err := os.MkdirAll(m.State, 0o700); err != nil {
		return m, fmt.Errorf("%w: cannot create %s (%v): pass --state DIR", ErrNoStateFolder, m.State, err)
	}
	for _, e := range entries {
		name := e.Name()
		src := filepath.Join(from, name)
		switch name {
		case "trash":
			continue // notes: they stay in the vault
		case ".write.lock":
			if err := os.Remove(src); err != nil {
				return m, err
			}
			continue
		case "keys.json":
			if err := os.MkdirAll(filepath.Dir(keys), 0o700); err != nil {
				return m, err
			}
			if err := move(src, keys); err != nil {
				return m, fmt.Errorf("moving the keys: %w", err)
			}
			if err := os.Chmod(keys, 0o600); err != nil {
				return m, err
			}
			m.Keys = keys
			continue
		}
		if err := move(src, filepath.Join(m.State, name)); err != nil {
			return m, fmt.Errorf("moving %s: %w", name, err)
		}
		m.Entries = append(m.Entries, name)
	}
	sort.Strings(m.Entries)
	_ = os.Remove(from) // only if empty: a trash keeps it
	return m, nil
}

// move renames src to dst, or copies and removes it across file systems.
func move(src, dst string) error {
	if exists(dst) {
		return fmt.Errorf("%s exists", dst)
	}
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	if err := copyTree(src, dst); err != nil {
		os.RemoveAll(dst)
		return err
	}
	return os.RemoveAll(src)
}

// copyTree copies the file or folder src to dst, keeping modes.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, fi.Mode().Perm()|0o700)
		}
		if !fi.Mode().IsRegular() {
			return nil // sockets, symlinks: Sheaf makes none
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		if err := out.Sync(); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
