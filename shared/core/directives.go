package core

// Directives are "> [!ai]" callouts: work left in the vault for agents.
// pending_directives lists them; await_directives long-polls for changes.
//
// The await cursor is the directive revision, a counter kept in the store
// (not in process memory) so that any number of stateless servers share it:
// .sheaf/directives/state.json holds {revision, digest}, digest being the
// SHA-256 of the vault's pending directives. A server that sees its
// catalog's digest differ from the stored one advances the revision with a
// conditional write. Unrelated note writes leave the digest, and so the
// revision, alone.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

const (
	awaitPoll    = 150 * time.Millisecond // how often a waiting call looks at its catalog
	stateRecheck = time.Second            // how often it re-reads the stored revision
	minAwait     = time.Second
	maxAwait     = 55 * time.Second
)

// DirectiveItem is one pending "> [!ai]" callout.
type DirectiveItem struct {
	Path  string `json:"path"`
	Line  int    `json:"line" jsonschema:"1-based line of the [!ai] marker"`
	Title string `json:"title"`
	Body  string `json:"body"`
	Done  bool   `json:"done" jsonschema:"always false: only pending directives are listed"`
}

type pendingDirectivesIn struct {
	VaultArg
	Page
	Path string `json:"path,omitempty" jsonschema:"Only directives in this note, or in notes under this folder (vault-relative); default the whole vault."`
}

type awaitDirectivesIn struct {
	VaultArg
	Cursor    int64  `json:"cursor,omitempty" jsonschema:"The cursor the previous call returned; 0 on the first call, which returns the current backlog at once." schema:"minimum=0,default=0"`
	TimeoutMs int64  `json:"timeout_ms,omitempty" jsonschema:"How long to block, in milliseconds. Out-of-range values are clamped to [1000, 55000], not rejected, and the server may clamp lower (25000 behind a 30 s platform limit); clampedTimeoutMs then reports what was used." schema:"default=25000"`
	Path      string `json:"path,omitempty" jsonschema:"Only directives in this note, or in notes under this folder (vault-relative)."`
	Worker    string `json:"worker,omitempty" jsonschema:"A stable id for this worker (e.g. \"mac/serve\"). Directives leased to other workers are withheld; your own leases are listed in leases." schema:"minLength=1,maxLength=128"`
	Claim     bool   `json:"claim,omitempty" jsonschema:"Lease each returned directive to worker for about 2 minutes so other workers skip it (default false; no-op without worker). Leases are cooperative, not a security boundary." schema:"default=false"`
	Limit     int    `json:"limit,omitempty" jsonschema:"How many directives to return at most." schema:"minimum=1,maximum=100,default=25"`
}

// LeaseInfo is one live lease held by the calling worker.
type LeaseInfo struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Worker  string `json:"worker"`
	Expires string `json:"expires" jsonschema:"RFC 3339 time the lease lapses unless renewed by another claiming call"`
}

type awaitDirectivesOut struct {
	Coverage
	Cursor           int64           `json:"cursor" jsonschema:"pass it back on the next call"`
	TimedOut         bool            `json:"timedOut"`
	Directives       []DirectiveItem `json:"directives"`
	ClampedTimeoutMs int64           `json:"clampedTimeoutMs,omitempty" jsonschema:"the timeout actually used, when it differs from the one asked for"`
	Leases           []LeaseInfo     `json:"leases,omitempty" jsonschema:"the worker's own live leases in scope"`
}

// PendingDirectives implements pending_directives.
func (s *Core) PendingDirectives(ctx context.Context, in pendingDirectivesIn) (*Paged[DirectiveItem], error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	inScope, err := directiveScope(cat, in.Path, true)
	if err != nil {
		return nil, err
	}
	all := []DirectiveItem{}
	for _, d := range pendingOf(cat).all {
		if inScope(d.Path) {
			all = append(all, d)
		}
	}
	items, total := page(all, in.Page)
	return &Paged[DirectiveItem]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}

// directiveScope returns a test for note paths within p: a note, or a
// folder prefix ("" is the whole vault). With mustExist a path ending in
// ".md" that names no note is note-not-found; otherwise it scopes to a note
// that may yet appear.
func directiveScope(cat *vault.Catalog, p string, mustExist bool) (func(string) bool, error) {
	dir, err := cleanDirArg("path", p)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return func(string) bool { return true }, nil
	}
	if n, ok := cat.Note(dir); ok {
		return func(q string) bool { return q == n.Path }, nil
	}
	if strings.EqualFold(path.Ext(dir), ".md") {
		if mustExist {
			return nil, noNote("path", dir)
		}
		return func(q string) bool { return q == dir }, nil
	}
	prefix := dir + "/"
	if n, ok := cat.Note(dir + ".md"); ok && !slices.ContainsFunc(cat.Paths(), func(q string) bool { return strings.HasPrefix(q, prefix) }) {
		return func(q string) bool { return q == n.Path }, nil // a note named without .md, as other tools take it
	}
	return func(q string) bool { return strings.HasPrefix(q, prefix) }, nil
}

// directiveSet is the vault's pending directives at one catalog generation.
type directiveSet struct {
	all    []DirectiveItem // sorted by path, then line
	keys   map[string]bool // leaseKey of each
	digest string          // hex SHA-256 of all
}

// pendingSets caches the directive set of recently seen catalogs, by
// catalog and generation, so that waiting calls poll cheaply. Weak pointers
// keep it from holding on to catalogs nobody else uses.
var pendingSets struct {
	mu      sync.Mutex
	entries [8]struct {
		cat weak.Pointer[vault.Catalog]
		gen uint64
		set *directiveSet
	}
	next int
}

// pendingOf returns cat's pending directives.
func pendingOf(cat *vault.Catalog) *directiveSet {
	gen := cat.Generation() // before reading: a racing write then just causes a recompute
	wp := weak.Make(cat)
	pendingSets.mu.Lock()
	for _, e := range pendingSets.entries {
		if e.set != nil && e.cat == wp && e.gen == gen {
			pendingSets.mu.Unlock()
			return e.set
		}
	}
	pendingSets.mu.Unlock()

	set := &directiveSet{all: []DirectiveItem{}, keys: map[string]bool{}}
	cat.Each(func(n *vault.Note) {
		for _, d := range n.Directives {
			if !d.Done {
				set.all = append(set.all, DirectiveItem{Path: n.Path, Line: d.Line, Title: d.Title, Body: d.Body})
				set.keys[leaseKey(n.Path, d.Line, d.Title)] = true
			}
		}
	})
	slices.SortStableFunc(set.all, func(a, b DirectiveItem) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(set.all)
	set.digest = hex.EncodeToString(h.Sum(nil))

	pendingSets.mu.Lock()
	defer pendingSets.mu.Unlock()
	i := pendingSets.next
	for j, e := range pendingSets.entries {
		if e.cat == wp {
			i = j // replace this catalog's older generation
			break
		}
	}
	if i == pendingSets.next {
		pendingSets.next = (pendingSets.next + 1) % len(pendingSets.entries)
	}
	e := &pendingSets.entries[i]
	e.cat, e.gen, e.set = wp, gen, set
	return set
}

// directiveState is the stored revision of the pending directive set.
type directiveState struct {
	Revision int64  `json:"revision"`
	Digest   string `json:"digest"`
}

// readState returns the stored state and its ETag ("" when there is none).
// A damaged state reads as revision 0, to be overwritten.
func readState(ctx context.Context, st store.Store) (directiveState, string, error) {
	var ds directiveState
	data, obj, err := st.Get(ctx, directiveStatePath, 1<<16)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ds, "", nil
	case errors.Is(err, store.ErrTooLarge):
		obj, err = st.Stat(ctx, directiveStatePath)
		return ds, obj.ETag, err
	case err != nil:
		return ds, "", err
	}
	if json.Unmarshal(data, &ds) != nil || ds.Revision < 0 {
		ds = directiveState{}
	}
	return ds, obj.ETag, nil
}

// syncRevision makes the stored state agree with digest, advancing the
// revision when it does not, and returns the revision. Concurrent servers
// race through conditional writes: the loser re-reads and usually finds the
// winner already wrote the same digest.
func syncRevision(ctx context.Context, st store.Store, digest string) (int64, error) {
	for range 16 {
		ds, etag, err := readState(ctx, st)
		if err != nil {
			return 0, err
		}
		if etag != "" && ds.Digest == digest {
			return ds.Revision, nil
		}
		next := directiveState{Revision: ds.Revision + 1, Digest: digest}
		data, _ := json.Marshal(next)
		_, err = st.Put(ctx, directiveStatePath, data, store.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		if err == nil {
			return next.Revision, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return 0, err
		}
	}
	return 0, fmt.Errorf("the directive revision at %s kept changing; try again", directiveStatePath)
}

func (v *Vault) maxWait() time.Duration {
	if v.MaxWait > 0 {
		return v.MaxWait
	}
	return maxAwait
}

// awaitTimeout clamps the requested timeout to [minAwait, maxAwait] and to
// limit; clamped is the result in ms when it differs from the request.
func awaitTimeout(requestMs int64, limit time.Duration) (wait time.Duration, clamped int64) {
	ms := min(max(requestMs, minAwait.Milliseconds()), maxAwait.Milliseconds())
	if l := limit.Milliseconds(); l > 0 && ms > l {
		ms = l
	}
	if ms != requestMs {
		clamped = ms
	}
	return time.Duration(ms) * time.Millisecond, clamped
}

// AwaitDirectives implements await_directives.
func (s *Core) AwaitDirectives(ctx context.Context, in awaitDirectivesIn) (*awaitDirectivesOut, error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if in.Limit <= 0 {
		in.Limit = 25
	}
	inScope, err := directiveScope(cat, in.Path, false)
	if err != nil {
		return nil, err
	}
	wait, clamped := awaitTimeout(in.TimeoutMs, v.maxWait())
	deadline := time.NewTimer(wait)
	defer deadline.Stop()

	set := pendingOf(cat)
	rev, err := syncRevision(ctx, v.Store, set.digest)
	if err != nil {
		return nil, err
	}
	deliver := func() (*awaitDirectivesOut, time.Time, error) {
		return s.deliver(ctx, v, set, rev, in, inScope, clamped)
	}
	// Cursor 0, an older cursor, or one this store never issued (its state
	// was rebuilt): answer at once.
	if in.Cursor != rev {
		out, _, err := deliver()
		return out, err
	}
	var freeAt time.Time // when a lease withholding a directive from this worker lapses
	if in.Worker != "" {
		if freeAt, err = s.withheldUntil(ctx, v, set, in, inScope); err != nil {
			return nil, err
		}
	}
	// Wake when this catalog's in-scope set changes. The catalog, not the
	// stored revision, decides: a revision another server advanced for a set
	// this catalog does not have yet wakes the call once the catalog catches
	// up, never with a stale set.
	scoped := scopedDigest(set, inScope)
	tick := time.NewTicker(awaitPoll)
	defer tick.Stop()
	lastRead := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			// rev stands for the same in-scope set as the caller's cursor.
			return &awaitDirectivesOut{Cursor: rev, TimedOut: true, Directives: []DirectiveItem{}, ClampedTimeoutMs: clamped}, nil
		case <-tick.C:
		}
		if _, cat, err = s.open(ctx, in.VaultArg); err != nil {
			return nil, err
		}
		if next := pendingOf(cat); next.digest != set.digest {
			set = next
			if rev, err = syncRevision(ctx, v.Store, set.digest); err != nil {
				return nil, err
			}
			lastRead = time.Now()
			if scopedDigest(set, inScope) != scoped {
				out, _, err := deliver()
				return out, err
			}
		} else if time.Since(lastRead) >= stateRecheck {
			// Follow revisions other servers advanced for this same set (or
			// recreate a deleted state); a different set waits for the catalog.
			ds, etag, err := readState(ctx, v.Store)
			if err != nil {
				return nil, err
			}
			lastRead = time.Now()
			switch {
			case etag == "":
				if rev, err = syncRevision(ctx, v.Store, set.digest); err != nil {
					return nil, err
				}
			case ds.Digest == set.digest:
				rev = ds.Revision
			}
		}
		if !freeAt.IsZero() && !s.now().Before(freeAt) {
			out, next, err := deliver()
			if err != nil || len(out.Directives) > 0 {
				return out, err
			}
			freeAt = next
		}
	}
}

// scopedDigest is the SHA-256 of set's directives within scope.
func scopedDigest(set *directiveSet, inScope func(string) bool) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, d := range set.all {
		if inScope(d.Path) {
			_ = enc.Encode(d)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// deliver returns the in-scope directives of set at revision rev, minus
// those leased to other workers, claiming them for in.Worker when asked.
// freeAt is when the earliest lease withholding one of them lapses.
func (s *Core) deliver(ctx context.Context, v *Vault, set *directiveSet, rev int64, in awaitDirectivesIn, inScope func(string) bool, clamped int64) (out *awaitDirectivesOut, freeAt time.Time, err error) {
	out = &awaitDirectivesOut{Cursor: rev, Directives: []DirectiveItem{}, ClampedTimeoutMs: clamped}
	var scoped []DirectiveItem
	for _, d := range set.all {
		if inScope(d.Path) {
			scoped = append(scoped, d)
		}
	}
	if in.Worker == "" {
		out.Directives = append(out.Directives, scoped[:min(len(scoped), in.Limit)]...)
		return out, time.Time{}, nil
	}
	now := s.now()
	leases, err := tidyLeases(ctx, v.Store, set, now)
	if err != nil {
		return nil, time.Time{}, err
	}
	for _, d := range scoped {
		if len(out.Directives) == in.Limit {
			break
		}
		k := leaseKey(d.Path, d.Line, d.Title)
		cur, mine := leases[k], true
		if in.Claim {
			if cur, mine, err = claimLease(ctx, v.Store, d, in.Worker, cur, now); err != nil {
				return nil, time.Time{}, err
			}
			leases[k] = cur
		} else {
			mine = !cur.live(now) || cur.Worker == in.Worker
		}
		if !mine {
			if cur.live(now) {
				freeAt = earliest(freeAt, cur.Expires)
			}
			continue
		}
		out.Directives = append(out.Directives, d)
	}
	for _, d := range scoped {
		if l := leases[leaseKey(d.Path, d.Line, d.Title)]; l.live(now) && l.Worker == in.Worker {
			out.Leases = append(out.Leases, LeaseInfo{Path: d.Path, Line: d.Line, Worker: l.Worker, Expires: l.Expires.UTC().Format(time.RFC3339)})
		}
	}
	return out, freeAt, nil
}

// withheldUntil returns when the earliest lease held by another worker on
// an in-scope directive lapses (zero if none).
func (s *Core) withheldUntil(ctx context.Context, v *Vault, set *directiveSet, in awaitDirectivesIn, inScope func(string) bool) (time.Time, error) {
	leases, err := loadLeases(ctx, v.Store)
	if err != nil {
		return time.Time{}, err
	}
	now := s.now()
	var at time.Time
	for _, d := range set.all {
		if l := leases[leaseKey(d.Path, d.Line, d.Title)]; inScope(d.Path) && l.live(now) && l.Worker != in.Worker {
			at = earliest(at, l.Expires)
		}
	}
	return at, nil
}

// earliest returns the earlier of a and b, ignoring a zero a.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
