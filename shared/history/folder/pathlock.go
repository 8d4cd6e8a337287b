package folder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sheaf-dev/sheaf/shared/history"
)

var _ history.PathLocker = (*Store)(nil)

// LockPaths implements history.PathLocker with flocks on the folder's
// locks/ files, one per first two hex digits of a path's hash (256 files:
// two paths sometimes share one, and wait for each other), taken in the
// files' order, so that writers of a path in several processes (servers
// and the shell on one vault) record its versions in the order they
// landed. The caller holds its in-process lock (history.PathLocks) first.
func (s *Store) LockPaths(ctx context.Context, paths ...string) (func(), error) {
	var stripes []string
	for _, p := range paths {
		stripes = append(stripes, history.Hash([]byte(p))[:2])
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	dir := filepath.Join(s.dir, "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	var held []*os.File
	unlock := func() {
		for i := len(held) - 1; i >= 0; i-- {
			_ = unlockFile(held[i])
			held[i].Close()
		}
	}
	for _, st := range stripes {
		f, err := os.OpenFile(filepath.Join(dir, st), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			unlock()
			return nil, fmt.Errorf("history: %w", err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			unlock()
			return nil, fmt.Errorf("history: lock: %w", err)
		}
		held = append(held, f)
	}
	return unlock, nil
}
