package indexer

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Change is one object a door heard changed: only a hint, since the
// indexer re-reads the object and indexes what is there now.
type Change struct {
	// Bucket is the event's bucket; a change of another bucket than
	// Indexer.Bucket is ignored. "" when the door does not say.
	Bucket string
	// Keys is the object's key, mapped to a vault path by KeyPath; two
	// readings of a key whose encoding the door could not tell (both are
	// applied).
	Keys []string
}

// ChangeResult is what ApplyChanges did.
type ChangeResult struct {
	Applied int      // distinct vault paths re-read
	Ignored int      // changes naming no vault path: another bucket, outside the vault, hidden (.sheaf/...)
	Skipped []string // unindexable notes, sorted (see Status().Problems)
	Failed  []string // paths to retry, in the order of the changes
	// Retry is parallel to the changes: true for a change naming a path
	// that failed for a reason a retry can fix.
	Retry []bool
}

// ApplyChanges is how an event door feeds the indexer: it maps each
// change's keys to vault paths (KeyPath; keys of other buckets, outside
// the vault or under hidden folders such as .sheaf/ are ignored), applies
// every distinct path once, together with those of concurrent callers,
// then saves the catalog snapshot. Unindexable objects (binary, too large)
// are reported in Skipped and Status().Problems, never as failures. err is
// a failure of the save: nothing is durable then.
func (ix *Indexer) ApplyChanges(ctx context.Context, changes []Change) (res ChangeResult, err error) {
	res = ChangeResult{Retry: make([]bool, len(changes))}
	byPath := map[string]*target{}
	var order []*target
	uploads := map[string]*target{}
	defer ix.fileUploads(ctx, uploads, &res) // after the notes, into the result
	for i, c := range changes {
		if ix.uploadOf(c, i, uploads) {
			continue
		}
		mapped := false
		for _, k := range c.Keys {
			p, ok := ix.pathOfKey(c.Bucket, k)
			if !ok {
				continue
			}
			mapped = true
			t := byPath[p]
			if t == nil {
				t = &target{path: p}
				byPath[p] = t
				order = append(order, t)
			}
			t.changes = append(t.changes, i)
		}
		if !mapped {
			res.Ignored++
		}
	}
	if len(order) == 0 {
		return res, nil
	}

	paths := make([]string, len(order))
	for i, t := range order {
		paths[i] = t.path
	}
	errs, saveErr := ix.applyGrouped(ctx, paths)
	if saveErr != nil {
		return res, fmt.Errorf("saving the catalog snapshot: %w", saveErr)
	}
	for i, t := range order {
		switch err := errs[i]; {
		case err == nil:
			res.Applied++
		case IsPermanent(err):
			res.Skipped = append(res.Skipped, t.path)
		default:
			ix.log().Warn("indexing after an event", "path", t.path, "err", err)
			res.Failed = append(res.Failed, t.path)
			for _, c := range t.changes {
				res.Retry[c] = true
			}
		}
	}
	sort.Strings(res.Skipped)
	return res, nil
}

// target is one distinct vault path of a batch and the changes naming it.
type target struct {
	path    string
	changes []int
}

// applyGroup batches concurrent callers of applyGrouped: a burst of
// webhook requests (versitygw posts every event on its own, all at once)
// becomes a few batches, each one text-index write and one snapshot save,
// instead of one of each per request.
type applyGroup struct {
	mu      sync.Mutex
	queue   []*groupReq
	leading bool
}

type groupReq struct {
	paths []string
	errs  []error
	save  error
	done  chan struct{} // closed when errs and save are set
	lead  chan struct{} // closed when this request is to run the next batch
}

// maxGroupPaths bounds the paths of one batch.
const maxGroupPaths = 512

// applyGrouped applies paths, together with those of concurrent callers,
// and saves the snapshot. It returns one error per path and the save's
// error. Batches run one at a time, each under the context of the caller
// that runs it (the first one queued).
func (ix *Indexer) applyGrouped(ctx context.Context, paths []string) ([]error, error) {
	g := &ix.group
	r := &groupReq{paths: paths, done: make(chan struct{}), lead: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, r)
	if !g.leading {
		g.leading = true
		close(r.lead)
	}
	g.mu.Unlock()
	select {
	case <-r.done:
	case <-r.lead:
		ix.runGroup(ctx)
		<-r.done
	}
	return r.errs, r.save
}

// runGroup runs one batch of queued requests, then hands the lead to the
// next request waiting, if any.
func (ix *Indexer) runGroup(ctx context.Context) {
	g := &ix.group
	g.mu.Lock()
	n, size := 0, 0
	for n < len(g.queue) && (n == 0 || size+len(g.queue[n].paths) <= maxGroupPaths) {
		size += len(g.queue[n].paths)
		n++
	}
	batch := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()

	at := map[string]int{}
	var all []string
	for _, r := range batch {
		for _, p := range r.paths {
			if _, ok := at[p]; !ok {
				at[p] = len(all)
				all = append(all, p)
			}
		}
	}
	errs := ix.applyMany(ctx, all)
	saveErr := ix.Save(ctx)
	for _, r := range batch {
		r.errs = make([]error, len(r.paths))
		for i, p := range r.paths {
			r.errs[i] = errs[at[p]]
		}
		r.save = saveErr
		close(r.done)
	}

	g.mu.Lock()
	if len(g.queue) > 0 {
		close(g.queue[0].lead)
	} else {
		g.leading = false
	}
	g.mu.Unlock()
}

// pathOfKey maps an event's bucket and key to a clean vault path, or false
// when the event is not the indexer's business: another bucket, a key
// outside the vault, an invalid path, or a hidden one (Sheaf's own .sheaf/
// objects above all: the indexer must never index or loop on its writes).
//
// A key with "." or empty segments ("v/a/./b.md", "v/a//b.md") is no path,
// but a file-backed server (versitygw's posix backend) stores it as the
// file of its lexically clean form, which listings then show: that form is
// used. On AWS it names an object of its own that is no note, and the clean
// path is only re-read, which is harmless.
func (ix *Indexer) pathOfKey(bucket, key string) (string, bool) {
	if ix.Bucket != "" && bucket != "" && bucket != ix.Bucket {
		return "", false
	}
	p, ok := ix.keyPath(key)
	if !ok && !strings.HasSuffix(key, "/") { // folder markers stay out
		if c := path.Clean(key); c != key {
			p, ok = ix.keyPath(c)
		}
	}
	return p, ok
}

// keyPath maps a key to a clean, visible vault path.
func (ix *Indexer) keyPath(key string) (string, bool) {
	p, ok := key, true
	if ix.KeyPath != nil {
		p, ok = ix.KeyPath(key)
	}
	if !ok {
		return "", false
	}
	clean, err := store.CleanPath(p)
	if err != nil || vault.Ignored(clean) {
		return "", false
	}
	return clean, true
}

func (ix *Indexer) parallel() int {
	if ix.Parallel > 0 {
		return ix.Parallel
	}
	return 16
}

// UploadsDir holds the files staged by ingest_file's presigned upload,
// <id>.bin beside its record.
const UploadsDir = ".sheaf/ingest/uploads/"

// uploadOf records change i in uploads when it stages an upload (and
// Uploads is set); false for any other change.
func (ix *Indexer) uploadOf(c Change, i int, uploads map[string]*target) bool {
	if ix.Uploads == nil || (ix.Bucket != "" && c.Bucket != "" && c.Bucket != ix.Bucket) {
		return false
	}
	for _, k := range c.Keys {
		p, ok := k, true
		if ix.KeyPath != nil {
			p, ok = ix.KeyPath(k)
		}
		rest, staged := strings.CutPrefix(p, UploadsDir)
		if !ok || !staged || !strings.HasSuffix(rest, ".bin") || strings.Contains(rest, "/") {
			continue
		}
		t := uploads[p]
		if t == nil {
			t = &target{path: p}
			uploads[p] = t
		}
		t.changes = append(t.changes, i)
		return true
	}
	return false
}

// fileUploads files the batch's staged uploads: each is applied, or
// failed and retried with its changes.
func (ix *Indexer) fileUploads(ctx context.Context, uploads map[string]*target, res *ChangeResult) {
	for _, t := range uploads {
		if err := ix.Uploads(ctx, t.path); err != nil {
			ix.log().Warn("filing an upload", "path", t.path, "err", err)
			res.Failed = append(res.Failed, t.path)
			for _, c := range t.changes {
				res.Retry[c] = true
			}
		} else {
			res.Applied++
		}
	}
}
