package history

import (
	"context"
	"sync"
)

// PathLocker is a Store whose writers may be in several processes (a
// folder vault's servers and shell): LockPaths locks paths across them,
// from the conditional store write until Record returns, as PathLocks
// does within one process (whose locks the caller takes first). unlock
// releases them.
type PathLocker interface {
	LockPaths(ctx context.Context, paths ...string) (unlock func(), err error)
}

// PathLocks serialises the writes of one path within a process. Record
// must see the writes of a path in the order they landed: the write path
// holds the path's lock from its conditional store write until Record
// returns. (An S3 bucket orders its versions itself; the lock then only
// orders the transaction index.)
type PathLocks struct {
	mu    sync.Mutex
	locks map[string]*pathLock
}

type pathLock struct {
	mu   sync.Mutex
	refs int
}

// Lock locks path and returns its unlock.
func (l *PathLocks) Lock(path string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*pathLock{}
	}
	pl := l.locks[path]
	if pl == nil {
		pl = &pathLock{}
		l.locks[path] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.mu.Lock()
	return func() {
		pl.mu.Unlock()
		l.mu.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(l.locks, path)
		}
		l.mu.Unlock()
	}
}
