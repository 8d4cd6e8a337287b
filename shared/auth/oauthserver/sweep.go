package oauthserver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// sweepEvery is how often the state is swept of what expired.
const sweepEvery = time.Hour

// maxSweep bounds one sweep's deletions, so that no request waits long.
const maxSweep = 500

// sweepMark records the last sweep.
type sweepMark struct {
	At time.Time `json:"at"`
}

// sweepSometimes sweeps the state when the last sweep (by any instance)
// is older than sweepEvery: the instance that claims the sweep with a
// conditional write does it, the others go on. It runs on registrations
// and code exchanges, which are rare, not on every call.
func (s *Server) sweepSometimes(ctx context.Context) {
	var m sweepMark
	etag, found, err := s.load(ctx, sweepPath, &m)
	if err != nil || (found && s.now().Sub(m.At) < sweepEvery) {
		return
	}
	opts := store.PutOptions{IfMatch: etag}
	if !found {
		opts = store.PutOptions{IfNoneMatch: true}
	}
	if _, err := s.save(ctx, sweepPath, sweepMark{At: s.now().UTC()}, opts); err != nil {
		return // another instance sweeps
	}
	n, err := s.Sweep(ctx)
	if err != nil {
		s.log().Warn("oauth: sweeping expired state", "err", err)
	}
	if n > 0 {
		s.log().Info("oauth: swept expired state", "deleted", n)
	}
}

// Sweep deletes what expired: authorization requests and codes, refresh
// tokens, grants past their end (or revoked long enough for every token
// of theirs to have expired), registered clients never approved within
// UnusedClientTTL, stale metadata documents and old counters. It deletes
// at most maxSweep records and returns how many.
func (s *Server) Sweep(ctx context.Context) (int, error) {
	now := s.now()
	deleted := 0
	var errs []error
	expired := func(dir string, dead func(etag string, p string) bool) {
		var paths []store.Object
		err := s.cfg.Store.List(ctx, dir, func(o store.Object) error {
			paths = append(paths, o)
			return nil
		})
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, o := range paths {
			if deleted >= maxSweep || ctx.Err() != nil {
				return
			}
			if dead(o.ETag, o.Path) {
				if err := s.cfg.Store.Delete(ctx, o.Path, o.ETag); err == nil {
					deleted++
				} else if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
					errs = append(errs, err)
				}
			}
		}
	}
	read := func(p string, v any) bool {
		_, found, err := s.load(ctx, p, v)
		return err == nil && found
	}
	expired(requestsDir, func(_, p string) bool {
		var r request
		return read(p, &r) && now.After(r.Expires)
	})
	expired(codesDir, func(_, p string) bool {
		var c code
		return read(p, &c) && now.After(c.Expires.Add(time.Hour))
	})
	expired(refreshDir, func(_, p string) bool {
		var r refresh
		return read(p, &r) && now.After(r.Expires)
	})
	expired(grantsDir, func(_, p string) bool {
		var g grant
		return read(p, &g) && (now.After(g.Expires) || g.Revoked != nil && now.After(g.Revoked.Add(s.cfg.RefreshTTL)))
	})
	expired(clientsDir, func(_, p string) bool {
		var c client
		return read(p, &c) && c.Used == nil && now.After(c.Created.Add(s.cfg.UnusedClientTTL))
	})
	expired(cimdDir, func(_, p string) bool {
		var c client
		return read(p, &c) && now.After(c.Expires.Add(24*time.Hour))
	})
	expired(limitsDir, func(_, p string) bool {
		name := strings.TrimSuffix(p[strings.LastIndexByte(p, '/')+1:], ".json")
		stamp := name[strings.LastIndexByte(name, '-')+1:]
		t, err := time.Parse("2006010215", stamp)
		return err == nil && now.After(t.Add(2*time.Hour))
	})
	return deleted, errors.Join(errs...)
}
