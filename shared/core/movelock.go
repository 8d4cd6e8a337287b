package core

// Moves are one consistent change: a move plans its rewrites from the
// catalog and then writes several notes, so two moves (or a move and
// another write) interleaving could leave a link pointing at a name that
// no longer exists. So a move holds the vault's move lock from its plan to
// its last write:
//
//   - in the process, the vault's writes lock (every other write tool holds
//     it shared, a move exclusively);
//   - across processes and machines, a lock object, .sheaf/locks/move.json,
//     taken and released with conditional writes (If-None-Match, If-Match):
//     on a local vault .sheaf/ lives in the state folder, not among the
//     notes; on S3 it is the bucket's .sheaf/ prefix, shared by every
//     Lambda instance. A holder that dies leaves a lock that lapses after
//     moveLockTTL (a live holder renews it).
//
// The lock object also carries a journal of the moves made in the last few
// minutes (the paths each one changed). A catalog fed by a watcher or an
// indexer may not have heard of another process's move yet; before
// planning, a move re-reads the journal's paths the catalog disagrees with,
// so it plans against the notes as they are.

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

const (
	// moveLockPath is the lock object every mover of a vault takes.
	moveLockPath = ".sheaf/locks/move.json"
	// moveLockTTL is how long a lock lives unless its holder renews it.
	moveLockTTL = 30 * time.Second
	// moveJournalAge and moveJournalLen bound the journal of recent moves:
	// long enough for every watcher and indexer to have caught up.
	moveJournalAge = 10 * time.Minute
	moveJournalLen = 256
	// moveLockWait is the longest a move waits for another's lock before
	// answering target-is-being-edited.
	moveLockWait = 2 * moveLockTTL
)

// moveRecord is one move in the journal: the paths it changed.
type moveRecord struct {
	From    string    `json:"from"`
	To      string    `json:"to"`
	Changed []string  `json:"changed,omitempty"` // the other notes rewritten
	At      time.Time `json:"at"`
}

// moveLockBody is the lock object's content.
type moveLockBody struct {
	Holder  string       `json:"holder,omitempty"` // "" when free
	Expires time.Time    `json:"expires,omitzero"`
	Journal []moveRecord `json:"journal,omitempty"`
}

// moveLease is a held move lock.
type moveLease struct {
	st     store.Store
	unlock func() // the in-process writes lock

	mu    sync.Mutex
	etag  string
	body  moveLockBody
	lost  bool
	stop  chan struct{}
	done  chan struct{}
	owned bool // the lock object is ours (false when the store refused it)
}

// writing takes the vault's writes lock shared, for a write tool that is
// not a move; the returned func releases it.
func (v *Vault) writing() func() {
	st := v.state()
	st.writes.RLock()
	return st.writes.RUnlock
}

// lockMoves takes the vault's move lock: the writes lock of this process,
// then the lock object. It waits for another holder up to moveLockWait
// (MaxWait when shorter, or ctx's end), then answers
// target-is-being-edited.
func (v *Vault) lockMoves(ctx context.Context) (*moveLease, error) {
	st := v.state()
	st.writes.Lock()
	l := &moveLease{st: v.Store, unlock: st.writes.Unlock, stop: make(chan struct{}), done: make(chan struct{})}
	var id [12]byte
	_, _ = crand.Read(id[:])
	holder := hex.EncodeToString(id[:])
	wait := moveLockWait
	if v.MaxWait > 0 {
		wait = min(wait, v.MaxWait) // a platform's request limit (API Gateway)
	}
	deadline := time.Now().Add(wait)
	for attempt := 0; ; attempt++ {
		ok, err := l.try(ctx, holder)
		if err != nil {
			l.unlock()
			return nil, err
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			l.unlock()
			left := time.Until(l.body.Expires)
			return nil, newError(KindTargetIsBeingEdited, map[string]any{"retry_after_ms": max(left.Milliseconds(), 100)},
				"Another move of this vault is under way: nothing was moved. Try again in a moment.")
		}
		wait := time.Duration(20+rand.IntN(30)) * time.Millisecond << min(attempt, 4)
		select {
		case <-ctx.Done():
			l.unlock()
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	go l.renew()
	return l, nil
}

// try takes the lock object once if it is free (absent, released or
// lapsed); false when another holds it.
func (l *moveLease) try(ctx context.Context, holder string) (bool, error) {
	data, obj, err := l.st.Get(ctx, moveLockPath, 1<<20)
	var body moveLockBody
	switch {
	case errors.Is(err, store.ErrNotFound):
		obj.ETag = ""
	case err != nil:
		return false, err
	default:
		if json.Unmarshal(data, &body) != nil {
			body = moveLockBody{} // damaged: free, its journal lost
		}
	}
	now := time.Now()
	if body.Holder != "" && now.Before(body.Expires) {
		l.body = body
		return false, nil
	}
	body.Holder, body.Expires = holder, now.Add(moveLockTTL)
	etag, err := l.put(ctx, obj.ETag, body)
	if errors.Is(err, store.ErrConflict) {
		return false, nil // another took it first
	}
	if err != nil {
		return false, err
	}
	l.etag, l.body, l.owned = etag, body, true
	return true, nil
}

// put writes body conditionally on etag ("": the object must not exist).
func (l *moveLease) put(ctx context.Context, etag string, body moveLockBody) (string, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	opts := store.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""}
	obj, err := l.st.Put(ctx, moveLockPath, data, opts)
	return obj.ETag, err
}

// renew extends the lock while it is held, every third of its life.
func (l *moveLease) renew() {
	defer close(l.done)
	t := time.NewTicker(moveLockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		body := l.body
		body.Expires = time.Now().Add(moveLockTTL)
		ctx, cancel := context.WithTimeout(context.Background(), moveLockTTL/3)
		etag, err := l.put(ctx, l.etag, body)
		cancel()
		switch {
		case err == nil:
			l.etag, l.body = etag, body
		case errors.Is(err, store.ErrConflict):
			l.lost = true
			slog.Warn("move lock: lost (it lapsed and another process took it)")
		}
		l.mu.Unlock()
	}
}

// recent returns the journal as the lock was taken.
func (l *moveLease) recent() []moveRecord { return l.body.Journal }

// release records rec (nil: the move wrote nothing) in the journal and
// frees the lock.
func (l *moveLease) release(ctx context.Context, rec *moveRecord) {
	close(l.stop)
	<-l.done
	defer l.unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost || !l.owned {
		return
	}
	body := moveLockBody{}
	now := time.Now()
	for _, r := range l.body.Journal {
		if now.Sub(r.At) < moveJournalAge {
			body.Journal = append(body.Journal, r)
		}
	}
	if rec != nil {
		rec.At = now
		body.Journal = append(body.Journal, *rec)
	}
	if n := len(body.Journal); n > moveJournalLen {
		body.Journal = body.Journal[n-moveJournalLen:]
	}
	ctx = context.WithoutCancel(ctx) // a cancelled call still frees the lock
	ctx, cancel := context.WithTimeout(ctx, moveLockTTL/3)
	defer cancel()
	if _, err := l.put(ctx, l.etag, body); err != nil {
		slog.Warn("move lock: not released (it lapses by itself)", "err", err)
	}
}

// moveJournal reads the journal of recent moves without taking the lock
// (a dry run plans against the same fresh state as a move).
func (v *Vault) moveJournal(ctx context.Context) []moveRecord {
	data, _, err := v.Store.Get(ctx, moveLockPath, 1<<20)
	if err != nil {
		return nil
	}
	var body moveLockBody
	if json.Unmarshal(data, &body) != nil {
		return nil
	}
	return body.Journal
}

// freshCatalog returns cat, or a copy of it brought up to date with the
// notes the recent moves changed wherever cat disagrees with the store
// (another process's move its watcher or indexer has not reported yet).
func (v *Vault) freshCatalog(ctx context.Context, cat *vault.Catalog, recent []moveRecord) (*vault.Catalog, error) {
	var paths []string
	for _, r := range recent {
		paths = append(paths, r.From, r.To)
		paths = append(paths, r.Changed...)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var stale []string
	for _, p := range paths {
		n, known := cat.Note(p)
		obj, err := v.Store.Stat(ctx, p)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if known {
				stale = append(stale, p)
			}
		case err != nil:
			return nil, err
		case !known || n.ETag != obj.ETag:
			stale = append(stale, p)
		}
	}
	if len(stale) == 0 {
		return cat, nil
	}
	fresh := cat.Clone()
	for _, p := range stale {
		data, obj, err := v.Store.Get(ctx, p, v.maxNote())
		switch {
		case errors.Is(err, store.ErrNotFound):
			fresh.Remove(p)
			continue
		case errors.Is(err, store.ErrTooLarge):
			continue // not indexed anyway
		case err != nil:
			return nil, err
		}
		if errors.Is(vault.Check(data), vault.ErrBinary) {
			fresh.Remove(p)
			continue
		}
		n := vault.Parse(obj.Path, data).Note
		sum := sha256.Sum256(data)
		n.Size, n.Modified, n.ETag, n.Hash = obj.Size, obj.Modified.UTC(), obj.ETag, hex.EncodeToString(sum[:])
		fresh.Upsert(n)
	}
	return fresh, nil
}

// settle waits, up to wait, until the file watcher holds no change it has
// not indexed (a linking note renamed by a person or another process is
// then in the catalog); it returns whether it did.
func (v *Vault) settle(ctx context.Context, wait time.Duration) bool {
	if v.Status == nil {
		return true
	}
	deadline := time.Now().Add(wait)
	for v.Status().Pending > 0 {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(25 * time.Millisecond):
		}
	}
	return true
}
