package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sheaf-dev/sheaf/shared/config"
)

// Layout says where a folder vault's files live besides its notes. By
// default nothing but notes, the trash (.sheaf/trash/) and the ledger is
// written into the vault, which iCloud, Dropbox, Syncthing or git may sync
// to other machines: the derived state (the index, the catalog, the
// vectors) and Sheaf's own objects (leases, proposals, directive state,
// append records, feedback, the cursor key) go to the user's cache folder,
// the API keys to the user's config folder, both in a folder named after
// the vault's path. So two servers of one vault on one machine share them,
// and two machines syncing one vault each keep their own.
type Layout struct {
	Vault string // the vault folder, absolute
	State string // derived state and Sheaf's own objects
	Keys  string // the folder of keys.json
	// Legacy: State is <vault>/.sheaf, where Sheaf kept it before
	// (`sheaf state migrate` moves it out).
	Legacy bool
	// VaultLock is the file every writer of the vault's notes locks ("":
	// .sheaf/.write.lock in the vault, as before).
	VaultLock string
}

// ErrNoStateFolder is returned when no folder for the derived state can be
// found or made; the message says what to do.
var ErrNoStateFolder = errors.New("no folder for Sheaf's index and state")

// Locate finds the layout of the vault folder root (absolute). state, when
// set (--state), is where the derived state goes. It creates the state
// folder; the keys folder is created when keys are first written.
func Locate(root, state string) (Layout, error) {
	l := Layout{Vault: root}
	legacy := filepath.Join(root, ".sheaf")
	switch {
	case state != "":
		abs, err := filepath.Abs(state)
		if err != nil {
			return l, err
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return l, fmt.Errorf("%w: --state %s: %v", ErrNoStateFolder, state, err)
		}
		l.State = abs
	case holdsState(legacy) && writable(legacy):
		l.State, l.Legacy = legacy, true
	default:
		dir, err := DefaultState(root)
		if err != nil {
			return l, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return l, fmt.Errorf("%w: cannot create %s (%v): pass --state DIR (or set SHEAF_STATE) to keep it elsewhere, or set XDG_CACHE_HOME", ErrNoStateFolder, dir, err)
		}
		l.State = dir
	}
	if !l.Legacy {
		l.VaultLock = filepath.Join(l.State, "vault.lock")
	}
	switch {
	case exists(filepath.Join(legacy, "keys.json")):
		l.Keys = legacy // keys made by an earlier Sheaf stay where they are
	default:
		if dir, err := DefaultKeys(root); err == nil {
			l.Keys = dir
		} else {
			l.Keys = filepath.Join(l.State, "keys") // no config folder: beside the state
		}
	}
	return l, nil
}

// vaultKey names a vault's folders: its id and a hash of its path.
func vaultKey(root string) string {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	sum := sha256.Sum256([]byte(root))
	return config.VaultIDFrom(root) + "-" + hex.EncodeToString(sum[:4])
}

// DefaultState is where the vault's derived state goes without --state:
// <user cache folder>/sheaf/<id>-<hash>.
func DefaultState(root string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: the user cache folder is unknown (%v): pass --state DIR (or set SHEAF_STATE), or set HOME", ErrNoStateFolder, err)
	}
	return filepath.Join(cache, "sheaf", vaultKey(root)), nil
}

// DefaultKeys is where the vault's API keys go: <user config
// folder>/sheaf/<id>-<hash>.
func DefaultKeys(root string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "sheaf", vaultKey(root)), nil
}

// holdsState reports whether dir holds Sheaf's derived state.
func holdsState(dir string) bool {
	for _, f := range []string{"index.db", "catalog", "catalog.json.gz"} {
		if exists(filepath.Join(dir, f)) {
			return true
		}
	}
	return false
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// writable reports whether files can be created in the existing folder dir.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
