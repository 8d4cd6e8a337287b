package core

// Leases let several workers share a vault's directives: await_directives
// with a worker id and claim leases each directive it returns to that
// worker, and withholds directives leased to other live workers. A lease is
// an object in the store, .sheaf/leases/<key>.json, so every server sees the
// same ones; it is created with If-None-Match and renewed or taken over with
// If-Match. Leases are cooperative bookkeeping, not a security boundary: any
// caller can name any worker.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

const (
	leaseTTL = 2 * time.Minute
	// leaseGrace is how long a lease on a directive this server's catalog
	// does not know is kept: another server may have indexed it first.
	leaseGrace = 30 * time.Second
)

// lease is one stored lease.
type lease struct {
	Path    string    `json:"path"`
	Line    int       `json:"line"`
	Title   string    `json:"title"`
	Worker  string    `json:"worker"`
	Expires time.Time `json:"expires"`

	etag string
}

// live reports whether l exists and has not lapsed at now.
func (l *lease) live(now time.Time) bool { return l != nil && now.Before(l.Expires) }

// leaseKey names a directive's lease: its path, line and title.
func leaseKey(path string, line int, title string) string {
	h := sha256.Sum256([]byte(path + "\n" + strconv.Itoa(line) + "\n" + title))
	return hex.EncodeToString(h[:])
}

func leasePath(key string) string { return leaseDir + "/" + key + ".json" }

// getLease reads one lease; nil when there is none. A damaged lease reads
// as lapsed, so anyone may take it over.
func getLease(ctx context.Context, st store.Store, key string) (*lease, error) {
	data, obj, err := st.Get(ctx, leasePath(key), 1<<16)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case errors.Is(err, store.ErrTooLarge):
		obj, err = st.Stat(ctx, leasePath(key))
		if err != nil {
			return nil, err
		}
		return &lease{etag: obj.ETag}, nil
	case err != nil:
		return nil, err
	}
	var l lease
	if json.Unmarshal(data, &l) != nil {
		l = lease{}
	}
	l.etag = obj.ETag
	return &l, nil
}

// loadLeases reads every stored lease, by key.
func loadLeases(ctx context.Context, st store.Store) (map[string]*lease, error) {
	var keys []string
	err := st.List(ctx, leaseDir, func(o store.Object) error {
		name, ok := strings.CutPrefix(o.Path, leaseDir+"/")
		if key, isJSON := strings.CutSuffix(name, ".json"); ok && isJSON && len(key) == 64 && !strings.Contains(key, "/") {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*lease, len(keys))
	for _, k := range keys {
		l, err := getLease(ctx, st, k)
		if err != nil {
			return nil, err
		}
		if l != nil {
			out[k] = l
		}
	}
	return out, nil
}

// tidyLeases loads the leases and deletes, best effort, those that have
// lapsed or whose directive is no longer pending (completed or removed),
// once past leaseGrace. It returns the rest.
func tidyLeases(ctx context.Context, st store.Store, set *directiveSet, now time.Time) (map[string]*lease, error) {
	leases, err := loadLeases(ctx, st)
	if err != nil {
		return nil, err
	}
	for k, l := range leases {
		gone := !set.keys[k] && now.Sub(l.Expires.Add(-leaseTTL)) > leaseGrace
		if !l.live(now) || gone {
			// A conflict means someone renewed it meanwhile: keep what we read,
			// a claim then fails its If-Match and re-reads.
			if err := st.Delete(ctx, leasePath(k), l.etag); err == nil {
				delete(leases, k)
			}
		}
	}
	return leases, nil
}

// claimLease leases d to worker until now+leaseTTL, given cur, the lease
// last read (nil: none). It reports the lease as it now stands and whether
// worker holds it; a live lease of another worker is left alone.
func claimLease(ctx context.Context, st store.Store, d DirectiveItem, worker string, cur *lease, now time.Time) (*lease, bool, error) {
	key := leaseKey(d.Path, d.Line, d.Title)
	for range 3 {
		if cur.live(now) && cur.Worker != worker {
			return cur, false, nil
		}
		next := &lease{Path: d.Path, Line: d.Line, Title: d.Title, Worker: worker, Expires: now.Add(leaseTTL).UTC()}
		data, _ := json.Marshal(next)
		opts := store.PutOptions{IfNoneMatch: cur == nil}
		if cur != nil {
			opts.IfMatch = cur.etag
		}
		_, err := st.Put(ctx, leasePath(key), data, opts)
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return nil, false, err
		}
		if err == nil {
			// Read back: a racing server's write that landed last wins here
			// (a store that checks conditions less strictly than it should
			// is caught too).
			got, err := getLease(ctx, st, key)
			if err != nil {
				return nil, false, err
			}
			return got, got != nil && got.Worker == worker && got.Expires.Equal(next.Expires), nil
		}
		if cur, err = getLease(ctx, st, key); err != nil {
			return nil, false, err
		}
	}
	return cur, false, nil
}

// releaseLease drops the lease of a directive, whoever holds it: completing
// a directive frees it at once.
func releaseLease(ctx context.Context, st store.Store, path string, line int, title string) error {
	return st.Delete(ctx, leasePath(leaseKey(path, line, title)), "")
}
