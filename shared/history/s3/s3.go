// Package s3 is the history adapter of vaults in an S3 bucket with
// versioning on: the versions are the bucket's object versions, so every
// write makes one, Sheaf's or not, and nothing is copied.
//
// Attribution travels with each version as object metadata
// (history.Metadata, put on the write by the write path). Delete markers
// carry no metadata: who deleted a note (or moved it away) and why is a
// small JSON object per marker,
//
//	.sheaf/history/deleted/<sha256(path)>/<marker version id>.json
//
// and each transaction is a folder of JSON objects, one per version,
//
//	.sheaf/history/tx/<sha256(transaction id)>/<time>-<version id>.json
//
// A version without metadata was written outside Sheaf (OpExternal by
// history.ExternalAuthor); a marker without its object, a delete outside
// Sheaf. The indexer has nothing to tell this adapter: it is no
// history.Observer.
//
// Costs: List is one ListObjectVersions per path of the note's history
// (1,000 versions a page) and one HEAD per version listed (16 at once),
// plus a GET per delete marker; Read is one GET; Record writes nothing for
// a plain write, one object for a delete or a move, one per version of a
// transaction. Retention is the bucket's lifecycle rule
// (NoncurrentVersionExpiration: docs/history.md), which knows no
// transactions: undo of a transaction older than the rule's days may find
// versions gone.
package s3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/store"
)

var _ history.Store = (*Store)(nil)

// Prefixes of the adapter's own objects in the vault.
const (
	DeletedPrefix = ".sheaf/history/deleted/"
	TxPrefix      = ".sheaf/history/tx/"
)

// Store is the history of a vault on a versioned store.
type Store struct {
	vault store.Store
	v     store.Versioned
	// Parallel is how many versions' metadata List reads at once; 0: 16.
	Parallel int
	// MaxFind bounds the versions Find reads whole to hash them (those
	// written outside Sheaf carry no hash); 0: 200.
	MaxFind int
}

// New returns the history of vault, which must keep versions
// (store.Versioned; an error wrapping history.ErrOff otherwise).
func New(vault store.Store) (*Store, error) {
	v, ok := vault.(store.Versioned)
	if !ok {
		return nil, fmt.Errorf("history: this store keeps no versions: %w", history.ErrOff)
	}
	return &Store{vault: vault, v: v}, nil
}

// Check reports, wrapping history.ErrOff, a bucket whose versioning is
// not on, and how to turn it on.
func (s *Store) Check(ctx context.Context) error {
	on, err := s.v.Versioning(ctx)
	if err != nil {
		return err
	}
	if !on {
		return fmt.Errorf("history: the bucket's versioning is off (aws s3api put-bucket-versioning --versioning-configuration Status=Enabled; the SAM template turns it on): %w", history.ErrOff)
	}
	return nil
}

func pathKey(p string) string { return history.Hash([]byte(p)) }

// Record implements history.Store: the versions exist already; it writes
// the attribution of tombstones and the transaction index.
func (s *Store) Record(ctx context.Context, changes ...history.Change) ([]history.Version, error) {
	out := make([]history.Version, 0, len(changes))
	for _, c := range changes {
		if _, err := store.CleanPath(c.Path); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		if c.Op == "" {
			return nil, fmt.Errorf("history: record %q: no op", c.Path)
		}
		t := c.Time.UTC()
		if c.Time.IsZero() {
			t = time.Now().UTC()
		}
		v := history.Version{
			Path: c.Path, Time: t, Author: c.Author, Tool: c.Tool, Transaction: c.Transaction,
			Op: c.Op, From: c.From, To: c.To, Merged: c.Merged, Restored: c.Restored,
			Parent: c.PrevObject.Version,
		}
		if c.Op == history.OpExternal {
			v.Author = history.ExternalAuthor
		}
		if c.Op.Deletes() {
			id, err := s.marker(ctx, c.Path)
			if err != nil {
				return nil, err
			}
			v.ID = id
			if err := s.putJSON(ctx, DeletedPrefix+pathKey(c.Path)+"/"+id+".json", v); err != nil {
				return nil, err
			}
		} else {
			if c.Object.Version == "" || c.Object.Version == "null" {
				return nil, fmt.Errorf("history: %s was written, but the bucket kept no version of it (versioning is off): %w", c.Path, history.ErrOff)
			}
			v.ID, v.Hash, v.Size = c.Object.Version, history.Hash(c.Data), int64(len(c.Data))
		}
		if c.Transaction != "" {
			name := fmt.Sprintf("%s%s/%s-%s.json", TxPrefix, pathKey(c.Transaction), t.Format("20060102T150405.000000000Z"), v.ID)
			if err := s.putJSON(ctx, name, v); err != nil {
				return nil, err
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// marker is the id of the delete marker now current at path.
func (s *Store) marker(ctx context.Context, p string) (string, error) {
	id := ""
	err := s.v.Versions(ctx, p, func(v store.ObjectVersion) error {
		if v.Deleted && v.Latest {
			id = v.Version
		}
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return "", err
	}
	if id == "" {
		return "", fmt.Errorf("history: %s was deleted, but the bucket kept no delete marker (versioning is off): %w", p, history.ErrOff)
	}
	return id, nil
}

var errStop = errors.New("stop")

func (s *Store) putJSON(ctx context.Context, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := s.vault.Put(ctx, name, b, store.PutOptions{}); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// walk calls fn with the versions of path, newest first, following moves
// (see history.Store.List), until fn returns false. At a path the note
// was moved from, its history starts after the tombstone the move left
// there (a delete marker attributed OpMoveAway to the path it came to);
// without one, at the versions no newer than the move.
//
// Until the version after is met (when after is not ""), versions are
// described from the listing alone, without a HEAD, except those that may
// have brought the note to their path (the oldest version of a path, or
// the one after a delete marker: a move creates its note where none is):
// pages deep in a long history cost a listing, not a HEAD per version.
func (s *Store) walk(ctx context.Context, path, after string, fn func(history.Version) bool) error {
	cur, came := path, ""
	light := after != ""
	var before time.Time
	seen := map[string]bool{}
	for cur != "" {
		var listed []store.ObjectVersion
		if err := s.v.Versions(ctx, cur, func(v store.ObjectVersion) error { listed = append(listed, v); return nil }); err != nil {
			return err
		}
		start := 0
		if came != "" {
			var err error
			if start, err = s.resume(ctx, cur, came, before, listed); err != nil {
				return err
			}
		}
		next := ""
		for start < len(listed) && next == "" {
			n := s.parallel()
			if light {
				n = len(listed) // cheap: only candidates are read
			}
			batch := listed[start:min(len(listed), start+n)]
			first := start
			start += len(batch)
			var vs []history.Version
			var err error
			if light {
				vs, err = s.describeLight(ctx, cur, listed, first, len(batch))
			} else {
				vs, err = s.describe(ctx, cur, batch)
			}
			if err != nil {
				return err
			}
			for _, v := range vs {
				key := cur + "\x00" + v.ID
				if seen[key] {
					return nil // a cycle: cannot happen with the rules above
				}
				seen[key] = true
				if !fn(v) {
					return nil
				}
				moved := v.Op == history.OpMove && v.From != "" && v.From != cur
				if light && v.ID == after {
					// The page starts after it: describe the rest in full.
					light = false
					if !moved {
						start = first + indexOf(vs, v.ID) + 1
						break
					}
				}
				if moved {
					next, before = v.From, v.Time
					break
				}
			}
		}
		came, cur = cur, next
	}
	return nil
}

// resume is where the history of a note moved from path to came begins in
// path's listing.
func (s *Store) resume(ctx context.Context, path, came string, before time.Time, listed []store.ObjectVersion) (int, error) {
	for i, ov := range listed {
		if !ov.Deleted {
			continue
		}
		v, err := s.version(ctx, path, ov)
		if err != nil {
			return 0, err
		}
		if v.Op == history.OpMoveAway && v.To == came {
			return i + 1, nil
		}
	}
	for i, ov := range listed {
		if !ov.Modified.After(before) {
			return i, nil
		}
	}
	return len(listed), nil
}

func indexOf(vs []history.Version, id string) int {
	for i, v := range vs {
		if v.ID == id {
			return i
		}
	}
	return len(vs) - 1
}

// describeLight describes listed[first:first+n]: the versions that may
// have brought the note to the path in full, the others from the listing.
func (s *Store) describeLight(ctx context.Context, p string, listed []store.ObjectVersion, first, n int) ([]history.Version, error) {
	out := make([]history.Version, n)
	var full []store.ObjectVersion
	var at []int
	for i := range n {
		ov := listed[first+i]
		k := first + i
		if ov.Deleted || k == len(listed)-1 || listed[k+1].Deleted {
			full, at = append(full, ov), append(at, i)
			continue
		}
		out[i] = history.Version{ID: ov.Version, Path: p, Time: ov.Modified, Size: ov.Size}
	}
	vs, err := s.describe(ctx, p, full)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = vs[j]
	}
	return out, nil
}

func (s *Store) parallel() int {
	if s.Parallel > 0 {
		return s.Parallel
	}
	return 16
}

// describe reads what each listed version is: its metadata, or a
// marker's attribution.
func (s *Store) describe(ctx context.Context, p string, batch []store.ObjectVersion) ([]history.Version, error) {
	out := make([]history.Version, len(batch))
	errs := make([]error, len(batch))
	var wg sync.WaitGroup
	for i, ov := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = s.version(ctx, p, ov)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func (s *Store) version(ctx context.Context, p string, ov store.ObjectVersion) (history.Version, error) {
	v := history.Version{ID: ov.Version, Path: p, Time: ov.Modified, Size: ov.Size}
	if ov.Deleted {
		data, _, err := s.vault.Get(ctx, DeletedPrefix+pathKey(p)+"/"+ov.Version+".json", 1<<20)
		switch {
		case errors.Is(err, store.ErrNotFound):
			v.Op, v.Author = history.OpDelete, history.ExternalAuthor
			return v, nil
		case err != nil:
			return v, err
		}
		var rec history.Version
		if err := json.Unmarshal(data, &rec); err != nil {
			return v, fmt.Errorf("history: %s: marker %s: %w", p, ov.Version, err)
		}
		rec.ID, rec.Path, rec.Size = ov.Version, p, 0
		return rec, nil
	}
	obj, err := s.v.StatVersion(ctx, p, ov.Version)
	if errors.Is(err, store.ErrNotFound) {
		// Expired between the listing and now: shown without attribution.
		v.Op, v.Author = history.OpExternal, history.ExternalAuthor
		return v, nil
	}
	if err != nil {
		return v, err
	}
	history.FromMetadata(&v, obj.Meta)
	return v, nil
}

// chain is path's whole history, newest first, Parent filled in.
func (s *Store) chain(ctx context.Context, path, after string, stop func(history.Version) bool) ([]history.Version, error) {
	var vs []history.Version
	err := s.walk(ctx, path, after, func(v history.Version) bool {
		if n := len(vs); n > 0 {
			vs[n-1].Parent = v.ID
		}
		vs = append(vs, v)
		return stop == nil || !stop(v)
	})
	return vs, err
}

// List implements history.Store.
func (s *Store) List(ctx context.Context, path string, opts history.ListOptions) (history.Page, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = history.DefaultLimit
	}
	found, n := opts.After == "", 0
	vs, err := s.chain(ctx, path, opts.After, func(v history.Version) bool {
		if found {
			n++
		}
		found = found || v.ID == opts.After
		return n > limit // one more than the page: the previous one's Parent, and More
	})
	if err != nil {
		return history.Page{}, err
	}
	start := 0
	if opts.After != "" {
		start = slices.IndexFunc(vs, func(v history.Version) bool { return v.ID == opts.After })
		if start < 0 {
			return history.Page{}, fmt.Errorf("history: %s: no version %q: %w", path, opts.After, history.ErrNotFound)
		}
		start++
	}
	end := min(len(vs), start+limit)
	page := history.Page{Versions: slices.Clone(vs[start:end]), More: end < len(vs)}
	if page.Versions == nil {
		page.Versions = []history.Version{}
	}
	return page, nil
}

// Read implements history.Store: one GET when id is a version of path's
// own key, else the history is walked to find the path that holds it.
func (s *Store) Read(ctx context.Context, path, id string) ([]byte, history.Version, error) {
	if id == "" {
		return nil, history.Version{}, fmt.Errorf("history: %s: no version id: %w", path, history.ErrNotFound)
	}
	at := path
	data, obj, err := s.v.GetVersion(ctx, path, id, 0)
	if errors.Is(err, store.ErrNotFound) {
		var hit *history.Version
		if _, err := s.chain(ctx, path, "", func(v history.Version) bool {
			if v.ID == id {
				hit = &v
			}
			return hit != nil
		}); err != nil {
			return nil, history.Version{}, err
		}
		if hit == nil || hit.Path == path || hit.Deleted() {
			return nil, history.Version{}, fmt.Errorf("history: %s: no version %q with content: %w", path, id, history.ErrNotFound)
		}
		at = hit.Path
		data, obj, err = s.v.GetVersion(ctx, at, id, 0)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, history.Version{}, fmt.Errorf("history: %s: no version %q: %w", path, id, history.ErrNotFound)
	}
	if err != nil {
		return nil, history.Version{}, err
	}
	v := history.Version{ID: id, Path: at, Size: int64(len(data)), Time: obj.Modified}
	history.FromMetadata(&v, obj.Meta)
	v.Hash = history.Hash(data) // what the bytes are, whatever the metadata says
	return data, v, nil
}

// Find implements history.Store. Versions written outside Sheaf carry no
// hash: up to MaxFind of them are read whole and hashed.
func (s *Store) Find(ctx context.Context, path, hash string) (history.Version, error) {
	hash = strings.ToLower(strings.TrimSpace(hash))
	var hit *history.Version
	read := 0
	limit := s.MaxFind
	if limit <= 0 {
		limit = 200
	}
	var ferr error
	_, err := s.chain(ctx, path, "", func(v history.Version) bool {
		switch {
		case v.Deleted():
			return false
		case v.Hash == "" && read < limit:
			read++
			data, _, err := s.v.GetVersion(ctx, v.Path, v.ID, 0)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				ferr = err
				return true
			}
			if err == nil {
				v.Hash = history.Hash(data)
			}
		}
		if v.Hash == hash {
			hit = &v
		}
		return hit != nil
	})
	if err = errors.Join(err, ferr); err != nil {
		return history.Version{}, err
	}
	if hit == nil {
		return history.Version{}, fmt.Errorf("history: %s: no version with hash %s: %w", path, hash, history.ErrNotFound)
	}
	return *hit, nil
}

// Transaction implements history.Store.
func (s *Store) Transaction(ctx context.Context, id string) ([]history.Version, error) {
	if id == "" {
		return nil, nil
	}
	var names []string
	err := s.vault.List(ctx, TxPrefix+pathKey(id)+"/", func(o store.Object) error {
		names = append(names, o.Path)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names) // by time, then version id
	out := make([]history.Version, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, s.parallel())
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			data, _, err := s.vault.Get(ctx, name, 1<<20)
			if err == nil {
				err = json.Unmarshal(data, &out[i])
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("history: transaction %q: %w", id, err)
	}
	return out, nil
}
