// Package vaultsync keeps a vault folder and a remote copy of it (an S3
// prefix) in step, over the store port: Push copies what changed here to
// the remote, Pull the other way. It knows no protocol and no command
// line; `sheaf sync` wires it.
//
// Changes are found by content: a State file (outside the vault) records,
// per path, the content hash both sides held after the last sync with the
// local file's and the remote object's ETags, so an unchanged file is
// neither read nor sent again, and a change is told apart from a change on
// the other side. Every remote write is conditional (If-Match on the ETag
// last seen, If-None-Match for a new object): a change made in the bucket
// since the last sync is never overwritten. When both sides changed a
// file, both versions are kept: the other side's next to it as
// ConflictName, and the sync says so.
//
// A file that disappeared here while one with the same content appeared
// is a move, carried as one (the new path written, the old one deleted),
// with or without Delete. Deletions are carried only with Delete, and only
// of what this sync put there and nobody changed since.
package vaultsync

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Direction says which way a sync copies.
type Direction int

// The directions.
const (
	Push Direction = iota // the local folder to the remote vault
	Pull                  // the remote vault to the local folder
)

// Options tune a sync.
type Options struct {
	Direction Direction
	// Delete carries deletions: a file deleted on the source side since
	// the last sync is deleted on the other, unless it changed there.
	Delete bool
	// DryRun plans and reports without writing anything (the state
	// included).
	DryRun bool
	// Host names the machine in conflict copies; "" is Hostname().
	Host string
	// Parallel is how many files are read or sent at once; 0 is 16.
	Parallel int
	// MaxFileBytes skips bigger files (reported); 0 is 512 MiB.
	MaxFileBytes int64
	// Now is the clock of conflict names; nil is time.Now.
	Now func() time.Time
	// Progress, when set, is called once the plan is made with the
	// number of actions that move data, and after each of them.
	Progress Progress
}

// Progress follows a sync.
type Progress interface {
	// Planned says how many actions will run.
	Planned(n int)
	// Done reports one finished action (Err set when it failed).
	Done(a Action)
}

// Kind is what a sync did with one path.
type Kind string

// The kinds of action.
const (
	KindUpload       Kind = "upload"        // sent to the remote
	KindDownload     Kind = "download"      // fetched from the remote
	KindDeleteRemote Kind = "delete-remote" // deleted from the remote (--delete)
	KindDeleteLocal  Kind = "delete-local"  // deleted here (--pull --delete)
	KindMove         Kind = "move"          // moved from From on the other side
	KindConflict     Kind = "conflict"      // both sides changed: the other side's version kept as Copy
	KindSame         Kind = "same"          // both sides hold the same content already: recorded
	KindKept         Kind = "kept"          // left as it is, for Reason
	KindUnchanged    Kind = "unchanged"     // nothing to do
)

// Action is one path's part in a sync.
type Action struct {
	Kind   Kind   `json:"kind"`
	Path   string `json:"path"`
	From   string `json:"from,omitempty"`   // a move's old path
	Copy   string `json:"copy,omitempty"`   // a conflict's copy of the other side's version
	Reason string `json:"reason,omitempty"` // why a path was kept
	Bytes  int64  `json:"bytes,omitempty"`  // content sent or received
	Err    error  `json:"-"`
}

// ErrText is the action's error as text, for reports.
func (a Action) ErrText() string {
	if a.Err == nil {
		return ""
	}
	return a.Err.Error()
}

// Report is what a sync did.
type Report struct {
	Actions []Action // every action but unchanged ones, sorted by path
	Counts  map[Kind]int
	Failed  int
	Bytes   int64 // content sent (push) or received (pull)
	// Expect is what the remote index must show once it has caught up
	// with the notes this sync wrote to or deleted from the remote (see
	// Wait).
	Expect []Expect
}

// Syncer syncs one local folder with one remote vault.
type Syncer struct {
	Local  store.Store
	Remote store.Store
	State  *State
	Filter *Filter // nil: only vault.Ignored paths stay out
	Options
}

// file is one side's object, with its content hashes once read.
type file struct {
	obj    store.Object
	sha    string // hex SHA-256; "" until known
	md5    string // hex MD5, when read
	data   []byte // kept when small, to send without reading again
	err    error
	hashed bool
}

// item is a planned action.
type item struct {
	Action
	local, remote *file
	entry         *Entry
	fromEntry     *Entry       // a move's old entry
	fromObj       store.Object // a move's old object on the side deleted from
}

// keepData is the largest content kept in memory between hashing and
// sending.
const keepData = 1 << 20

func (s *Syncer) parallel() int {
	if s.Parallel > 0 {
		return s.Parallel
	}
	return 16
}

func (s *Syncer) maxBytes() int64 {
	if s.MaxFileBytes > 0 {
		return s.MaxFileBytes
	}
	return 512 << 20
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Syncer) host() string {
	if s.Host != "" {
		return hostLabel(s.Host)
	}
	return Hostname()
}

// Run syncs every path of both sides.
func (s *Syncer) Run(ctx context.Context) (*Report, error) {
	locals, err := s.list(ctx, s.Local, "here")
	if err != nil {
		return nil, err
	}
	remotes, err := s.list(ctx, s.Remote, "in the remote vault")
	if err != nil {
		return nil, err
	}
	return s.run(ctx, locals, remotes, nil)
}

// RunPaths syncs only paths (and, for a path that names a folder in the
// state, every path under it): what a watcher saw change. Both sides are
// looked at path by path, not listed.
func (s *Syncer) RunPaths(ctx context.Context, paths []string) (*Report, error) {
	state := s.State.Snapshot()
	scope := map[string]bool{}
	for _, p := range paths {
		p, err := store.CleanPath(p)
		if err != nil || s.Filter.Skip(p) {
			continue
		}
		scope[p] = true
		for q := range state {
			if strings.HasPrefix(q, p+"/") {
				scope[q] = true
			}
		}
	}
	locals, remotes := map[string]store.Object{}, map[string]store.Object{}
	for p := range scope {
		if o, err := s.Local.Stat(ctx, p); err == nil {
			locals[p] = o
		} else if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrPathInvalid) {
			return nil, err
		}
		if o, err := s.Remote.Stat(ctx, p); err == nil {
			remotes[p] = o
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return s.run(ctx, locals, remotes, scope)
}

// list returns a side's objects the filter lets through.
func (s *Syncer) list(ctx context.Context, st store.Store, where string) (map[string]store.Object, error) {
	out := map[string]store.Object{}
	err := st.List(ctx, "", func(o store.Object) error {
		if !s.Filter.Skip(o.Path) {
			out[o.Path] = o
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the files %s: %w", where, err)
	}
	return out, nil
}

// run plans and carries out a sync of the given objects; scope, when not
// nil, limits the state entries considered to its paths.
func (s *Syncer) run(ctx context.Context, locals, remotes map[string]store.Object, scope map[string]bool) (*Report, error) {
	state := s.State.Snapshot()
	paths := map[string]bool{}
	for p := range locals {
		paths[p] = true
	}
	for p := range remotes {
		paths[p] = true
	}
	for p := range state {
		if (scope == nil || scope[p]) && !s.Filter.Skip(p) {
			paths[p] = true
		}
	}
	// The source side's changed files are read and hashed first: a plan
	// needs their content hashes (and moves are found by them).
	files := map[string]*file{}
	otherFiles := map[string]*file{}
	var toHash []*file
	for p := range paths {
		var e *Entry
		if en, ok := state[p]; ok {
			e = &en
		}
		if o, ok := locals[p]; ok {
			f := &file{obj: o}
			if e != nil && e.LocalETag == o.ETag && e.Hash != "" {
				f.sha, f.hashed = e.Hash, true
			} else if o.Size <= s.maxBytes() {
				toHash = append(toHash, f)
			}
			if s.Direction == Push {
				files[p] = f
			} else {
				otherFiles[p] = f
			}
		}
		if o, ok := remotes[p]; ok {
			f := &file{obj: o}
			if e != nil && e.RemoteETag == o.ETag && e.Hash != "" {
				f.sha, f.hashed = e.Hash, true
			}
			if s.Direction == Pull {
				files[p] = f
			} else {
				otherFiles[p] = f
			}
		}
	}
	s.hashLocal(ctx, toHash)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var items []*item
	if s.Direction == Push {
		items = s.planPush(paths, state, files, otherFiles)
	} else {
		items = s.planPull(paths, state, files, otherFiles)
	}
	return s.execute(ctx, items)
}

// hashLocal reads local files and hashes them, several at once.
func (s *Syncer) hashLocal(ctx context.Context, files []*file) {
	work := make(chan *file)
	var wg sync.WaitGroup
	for range min(s.parallel(), max(1, len(files))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if ctx.Err() != nil {
					f.err = ctx.Err()
					continue
				}
				data, obj, err := s.Local.Get(ctx, f.obj.Path, s.maxBytes())
				if err != nil {
					f.err = err
					continue
				}
				f.obj = obj
				f.setData(data)
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
}

func (f *file) setData(data []byte) {
	f.sha, f.md5, f.hashed = sha(data), md5hex(data), true
	if len(data) <= keepData {
		f.data = data
	}
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func md5hex(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// sameContent reports whether the remote object surely holds the content
// of f without reading it: its ETag is the MD5 of f's content (S3's ETag
// of an object written in one part without KMS encryption).
func sameContent(f *file, remoteETag string) bool {
	return f.md5 != "" && strings.EqualFold(f.md5, remoteETag)
}

// planPush decides, path by path, what sending the local folder takes.
// files are the local side, others the remote one.
func (s *Syncer) planPush(paths map[string]bool, state map[string]Entry, locals, remotes map[string]*file) []*item {
	var items []*item
	// Moves: a path synced before, gone here and unchanged in the remote,
	// whose content reappeared here under a path the remote lacks.
	vanished := map[string][]string{} // hash -> old paths
	for p := range paths {
		e, ok := state[p]
		r := remotes[p]
		if _, here := locals[p]; !here && ok && r != nil && r.obj.ETag == e.RemoteETag {
			vanished[e.Hash] = append(vanished[e.Hash], p)
		}
	}
	moved := map[string]bool{}
	sorted := sortedKeys(paths)
	for _, p := range sorted {
		l, r := locals[p], remotes[p]
		var e *Entry
		if en, ok := state[p]; ok {
			e = &en
		}
		it := &item{Action: Action{Path: p}, local: l, remote: r, entry: e}
		switch {
		case l != nil && l.err != nil:
			it.Kind, it.Err = KindKept, l.err
		case l != nil && l.obj.Size > s.maxBytes():
			it.Kind, it.Reason = KindKept, fmt.Sprintf("larger than %d bytes", s.maxBytes())
		case l != nil && e != nil && e.Hash == l.sha: // unchanged here
			switch {
			case r != nil && r.obj.ETag == e.RemoteETag:
				it.Kind = KindUnchanged
			case r != nil:
				it.Kind, it.Reason = KindKept, "changed in the remote vault since the last sync: not overwritten (sheaf sync --pull fetches it)"
			default:
				it.Kind, it.Reason = KindKept, "deleted in the remote vault since the last sync: not sent again (sheaf sync --pull --delete deletes it here)"
			}
		case l != nil && e != nil: // changed here
			switch {
			case r != nil && r.obj.ETag == e.RemoteETag:
				it.Kind = KindUpload
			case r != nil:
				it.Kind = KindConflict // unless the contents agree
			default:
				it.Kind = KindUpload // deleted there, changed here: nothing is lost by sending it
			}
		case l != nil: // never synced
			if r != nil {
				it.Kind = KindConflict // unless the contents agree
				break
			}
			if olds := vanished[l.sha]; len(olds) > 0 {
				old := olds[0]
				vanished[l.sha] = olds[1:]
				oe := state[old]
				it.Kind, it.From, it.fromEntry, it.fromObj = KindMove, old, &oe, remotes[old].obj
				moved[old] = true
				break
			}
			it.Kind = KindUpload
		case r != nil && e != nil: // deleted here
			switch {
			case moved[p]:
				continue // the move deletes it
			case r.obj.ETag != e.RemoteETag:
				it.Kind, it.Reason = KindKept, "deleted here but changed in the remote vault since the last sync: kept there"
			case s.Delete:
				it.Kind = KindDeleteRemote
			default:
				it.Kind, it.Reason = KindKept, "deleted here: kept in the remote vault (--delete deletes it there)"
			}
		case r != nil: // only in the remote vault
			it.Kind, it.Reason = KindKept, "only in the remote vault (sheaf sync --pull fetches it)"
		default: // on neither side any more
			it.Kind = KindUnchanged
			it.entry = nil
			it.Reason = "forget"
		}
		items = append(items, it)
	}
	// A move found after its old path was planned as a deletion or kept:
	// the move deletes the old path, so drop those.
	return slices.DeleteFunc(items, func(it *item) bool {
		return moved[it.Path] && it.Kind != KindMove && it.local == nil
	})
}

// planPull decides, path by path, what fetching the remote vault takes.
// files are the remote side, others the local one.
func (s *Syncer) planPull(paths map[string]bool, state map[string]Entry, remotes, locals map[string]*file) []*item {
	var items []*item
	// Moves: a path synced before, gone from the remote and unchanged here,
	// whose object reappeared in the remote (same ETag) under a path this
	// folder lacks.
	vanished := map[string][]string{} // remote ETag -> old paths
	for p := range paths {
		e, ok := state[p]
		l := locals[p]
		if _, there := remotes[p]; !there && ok && l != nil && l.sha == e.Hash {
			vanished[e.RemoteETag] = append(vanished[e.RemoteETag], p)
		}
	}
	moved := map[string]bool{}
	for _, p := range sortedKeys(paths) {
		r, l := remotes[p], locals[p]
		var e *Entry
		if en, ok := state[p]; ok {
			e = &en
		}
		it := &item{Action: Action{Path: p}, local: l, remote: r, entry: e}
		localChanged := l != nil && e != nil && l.sha != e.Hash
		switch {
		case l != nil && l.err != nil:
			it.Kind, it.Err = KindKept, l.err
		case r != nil && r.obj.Size > s.maxBytes():
			it.Kind, it.Reason = KindKept, fmt.Sprintf("larger than %d bytes", s.maxBytes())
		case r != nil && e != nil && r.obj.ETag == e.RemoteETag: // unchanged there
			switch {
			case l != nil && !localChanged:
				it.Kind = KindUnchanged
			case l != nil:
				it.Kind, it.Reason = KindKept, "changed here since the last sync: not overwritten (sheaf sync sends it)"
			default:
				it.Kind, it.Reason = KindKept, "deleted here since the last sync: not fetched again (sheaf sync --delete deletes it there)"
			}
		case r != nil && e != nil: // changed there
			switch {
			case l != nil && !localChanged:
				it.Kind = KindDownload
			case l != nil:
				it.Kind = KindConflict
			default:
				it.Kind = KindDownload // deleted here, changed there: nothing is lost by fetching it
			}
		case r != nil: // never synced
			if l != nil {
				it.Kind = KindConflict // unless the contents agree
				break
			}
			if olds := vanished[r.obj.ETag]; len(olds) > 0 && r.obj.ETag != "" {
				old := olds[0]
				vanished[r.obj.ETag] = olds[1:]
				oe := state[old]
				it.Kind, it.From, it.fromEntry, it.fromObj = KindMove, old, &oe, locals[old].obj
				moved[old] = true
				break
			}
			it.Kind = KindDownload
		case l != nil && e != nil: // deleted there
			switch {
			case moved[p]:
				continue
			case localChanged:
				it.Kind, it.Reason = KindKept, "deleted in the remote vault but changed here since the last sync: kept here"
			case s.Delete:
				it.Kind = KindDeleteLocal
			default:
				it.Kind, it.Reason = KindKept, "deleted in the remote vault: kept here (--delete deletes it here)"
			}
		case l != nil:
			it.Kind, it.Reason = KindKept, "only here (sheaf sync sends it)"
		default:
			it.Kind = KindUnchanged
			it.entry = nil
			it.Reason = "forget"
		}
		items = append(items, it)
	}
	return slices.DeleteFunc(items, func(it *item) bool {
		return moved[it.Path] && it.Kind != KindMove && it.remote == nil
	})
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// moves data: the kinds that read or write a side.
func (k Kind) movesData() bool {
	switch k {
	case KindUpload, KindDownload, KindDeleteRemote, KindDeleteLocal, KindMove, KindConflict:
		return true
	}
	return false
}

// execute carries out the plan, several actions at once, saving the state
// every few seconds and at the end.
func (s *Syncer) execute(ctx context.Context, items []*item) (*Report, error) {
	rep := &Report{Counts: map[Kind]int{}}
	var work []*item
	for _, it := range items {
		if it.Kind.movesData() {
			work = append(work, it)
		}
	}
	if s.Progress != nil {
		s.Progress.Planned(len(work))
	}
	var mu sync.Mutex
	finish := func(it *item) {
		mu.Lock()
		defer mu.Unlock()
		if it.Err != nil {
			rep.Failed++
		} else {
			rep.Counts[it.Kind]++
			rep.Bytes += it.Bytes
		}
		if it.Kind != KindUnchanged || it.Err != nil {
			rep.Actions = append(rep.Actions, it.Action)
		}
		if s.Progress != nil && it.Kind.movesData() {
			s.Progress.Done(it.Action)
		}
	}
	// What needs no data moved is settled at once.
	for _, it := range items {
		if it.Kind.movesData() {
			continue
		}
		if !s.DryRun {
			s.settle(it)
		}
		finish(it)
	}
	stop := make(chan struct{})
	var saver sync.WaitGroup
	if !s.DryRun {
		saver.Add(1)
		go func() {
			defer saver.Done()
			t := time.NewTicker(2 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					_ = s.State.Save()
				}
			}
		}()
	}
	queue := make(chan *item)
	var wg sync.WaitGroup
	for range min(s.parallel(), max(1, len(work))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range queue {
				switch {
				case ctx.Err() != nil:
					it.Err = ctx.Err()
				case s.DryRun:
				default:
					it.Err = s.do(ctx, it, rep, &mu)
				}
				finish(it)
			}
		}()
	}
	for _, it := range work {
		queue <- it
	}
	close(queue)
	wg.Wait()
	close(stop)
	saver.Wait()
	slices.SortFunc(rep.Actions, func(a, b Action) int { return strings.Compare(a.Path, b.Path) })
	if s.DryRun {
		return rep, ctx.Err()
	}
	if err := s.State.Save(); err != nil {
		return rep, fmt.Errorf("saving the sync state: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if rep.Failed > 0 {
		return rep, fmt.Errorf("%d of %d files failed", rep.Failed, len(work))
	}
	return rep, nil
}

// settle records what needs no data moved: an unchanged file whose local
// ETag changed (touched, same content), or a path on neither side.
func (s *Syncer) settle(it *item) {
	switch {
	case it.Reason == "forget":
		s.State.Forget(it.Path)
	case it.Kind == KindUnchanged && it.entry != nil && it.local != nil && it.entry.LocalETag != it.local.obj.ETag:
		e := *it.entry
		e.LocalETag = it.local.obj.ETag
		s.State.Set(it.Path, e)
	}
}

// expect adds what the remote index must show for a note: the searchable
// part of the vault. Attachments are left out: where the bucket notifies
// only on notes (the template's filter), the hourly reconcile indexes them.
func expect(rep *Report, mu *sync.Mutex, x Expect) {
	if !IsNote(x.Path) {
		return
	}
	mu.Lock()
	rep.Expect = append(rep.Expect, x)
	mu.Unlock()
}

// do carries out one action.
func (s *Syncer) do(ctx context.Context, it *item, rep *Report, mu *sync.Mutex) error {
	switch it.Kind {
	case KindUpload:
		return s.upload(ctx, it, rep, mu)
	case KindMove:
		if s.Direction == Push {
			if err := s.upload(ctx, it, rep, mu); err != nil {
				return err
			}
			return s.deleteRemote(ctx, it.From, it.fromEntry.RemoteETag, rep, mu)
		}
		if err := s.download(ctx, it); err != nil {
			return err
		}
		return s.deleteLocal(ctx, it.From, it.fromObj.ETag)
	case KindDeleteRemote:
		return s.deleteRemote(ctx, it.Path, it.entry.RemoteETag, rep, mu)
	case KindDownload:
		return s.download(ctx, it)
	case KindDeleteLocal:
		return s.deleteLocal(ctx, it.Path, it.local.obj.ETag)
	case KindConflict:
		if s.Direction == Push {
			return s.pushConflict(ctx, it, rep, mu)
		}
		return s.pullConflict(ctx, it)
	}
	return fmt.Errorf("vaultsync: unknown action %q", it.Kind)
}

// localData returns the local file's content as hashed, or reads it again
// (then hashing what was read: a file saved since is sent as it is now).
func (s *Syncer) localData(ctx context.Context, f *file) ([]byte, error) {
	if f.data != nil {
		return f.data, nil
	}
	data, obj, err := s.Local.Get(ctx, f.obj.Path, s.maxBytes())
	if err != nil {
		return nil, err
	}
	f.obj = obj
	f.sha, f.md5 = sha(data), md5hex(data)
	return data, nil
}

// upload sends the local file at it.Path, conditionally on the remote
// object being what the plan saw; when it changed meanwhile, the upload
// becomes a conflict.
func (s *Syncer) upload(ctx context.Context, it *item, rep *Report, mu *sync.Mutex) error {
	data, err := s.localData(ctx, it.local)
	if err != nil {
		return err
	}
	opts := store.PutOptions{IfNoneMatch: true}
	if it.remote != nil && it.Kind != KindMove {
		opts = store.PutOptions{IfMatch: it.remote.obj.ETag}
	}
	obj, err := s.Remote.Put(ctx, it.Path, data, opts)
	if errors.Is(err, store.ErrConflict) {
		it.Kind = KindConflict
		return s.pushConflict(ctx, it, rep, mu)
	}
	if err != nil {
		return err
	}
	it.Bytes = int64(len(data))
	s.State.Set(it.Path, Entry{Hash: sha(data), LocalETag: it.local.obj.ETag, RemoteETag: obj.ETag, RemoteVersion: obj.Version})
	expect(rep, mu, Expect{Path: it.Path, Hash: sha(data), Size: int64(len(data))})
	return nil
}

// deleteRemote deletes p from the remote if it still is what was synced.
func (s *Syncer) deleteRemote(ctx context.Context, p, etag string, rep *Report, mu *sync.Mutex) error {
	err := s.Remote.Delete(ctx, p, etag)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("%s changed in the remote vault meanwhile: not deleted", p)
	case err != nil:
		return err
	}
	s.State.Forget(p)
	expect(rep, mu, Expect{Path: p, Deleted: true})
	return nil
}

// download fetches the remote object at it.Path into the local folder,
// conditionally on the local file being what the plan saw.
func (s *Syncer) download(ctx context.Context, it *item) error {
	data, robj, err := s.Remote.Get(ctx, it.Path, s.maxBytes())
	if err != nil {
		return err
	}
	opts := store.PutOptions{IfNoneMatch: true}
	if it.local != nil && it.Kind != KindMove {
		opts = store.PutOptions{IfMatch: it.local.obj.ETag}
	}
	lobj, err := s.Local.Put(ctx, it.Path, data, opts)
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("%s changed here meanwhile: not overwritten (sync again)", it.Path)
	}
	if err != nil {
		return err
	}
	it.Bytes = int64(len(data))
	s.State.Set(it.Path, Entry{Hash: sha(data), LocalETag: lobj.ETag, RemoteETag: robj.ETag, RemoteVersion: robj.Version})
	return nil
}

// deleteLocal deletes p here if it still is what was synced.
func (s *Syncer) deleteLocal(ctx context.Context, p, etag string) error {
	err := s.Local.Delete(ctx, p, etag)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("%s changed here meanwhile: not deleted", p)
	case err != nil:
		return err
	}
	s.State.Forget(p)
	return nil
}

// maxConflictRounds bounds how often a conflict is retried while the
// remote object keeps changing under it.
const maxConflictRounds = 3

// pushConflict keeps both versions of a path changed on both sides: the
// remote one is copied to a conflict name (in the remote vault and here),
// then the local one is written over it, conditionally on the remote
// version just copied. When the contents agree there is nothing to keep:
// the path is recorded as synced.
func (s *Syncer) pushConflict(ctx context.Context, it *item, rep *Report, mu *sync.Mutex) error {
	data, err := s.localData(ctx, it.local)
	if err != nil {
		return err
	}
	hash := sha(data)
	for range maxConflictRounds {
		if it.remote != nil && it.Copy == "" && sameContent(&file{md5: md5hex(data)}, it.remote.obj.ETag) {
			it.Kind = KindSame
			s.State.Set(it.Path, Entry{Hash: hash, LocalETag: it.local.obj.ETag, RemoteETag: it.remote.obj.ETag})
			return nil
		}
		theirs, robj, err := s.Remote.Get(ctx, it.Path, s.maxBytes())
		if errors.Is(err, store.ErrNotFound) { // deleted meanwhile: just send
			obj, err := s.Remote.Put(ctx, it.Path, data, store.PutOptions{IfNoneMatch: true})
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			if err != nil {
				return err
			}
			it.Kind, it.Bytes = KindUpload, it.Bytes+int64(len(data))
			s.State.Set(it.Path, Entry{Hash: hash, LocalETag: it.local.obj.ETag, RemoteETag: obj.ETag, RemoteVersion: obj.Version})
			expect(rep, mu, Expect{Path: it.Path, Hash: hash, Size: int64(len(data))})
			return nil
		}
		if err != nil {
			return err
		}
		if sha(theirs) == hash {
			if it.Copy == "" {
				it.Kind = KindSame
			}
			s.State.Set(it.Path, Entry{Hash: hash, LocalETag: it.local.obj.ETag, RemoteETag: robj.ETag, RemoteVersion: robj.Version})
			return nil
		}
		cp, cobj, lcobj, err := s.keepCopy(ctx, it.Path, theirs)
		if err != nil {
			return err
		}
		it.Copy = cp
		s.State.Set(cp, Entry{Hash: sha(theirs), LocalETag: lcobj.ETag, RemoteETag: cobj.ETag, RemoteVersion: cobj.Version})
		expect(rep, mu, Expect{Path: cp, Hash: sha(theirs), Size: int64(len(theirs))})
		obj, err := s.Remote.Put(ctx, it.Path, data, store.PutOptions{IfMatch: robj.ETag})
		if errors.Is(err, store.ErrConflict) {
			continue // changed again: keep that version too
		}
		if err != nil {
			return err
		}
		it.Kind, it.Bytes = KindConflict, it.Bytes+int64(len(data))+int64(len(theirs))
		s.State.Set(it.Path, Entry{Hash: hash, LocalETag: it.local.obj.ETag, RemoteETag: obj.ETag, RemoteVersion: obj.Version})
		expect(rep, mu, Expect{Path: it.Path, Hash: hash, Size: int64(len(data))})
		return nil
	}
	return fmt.Errorf("%s keeps changing in the remote vault: not sent (sync again)", it.Path)
}

// keepCopy writes the remote version of p under a new conflict name, in
// the remote vault and here, neither overwriting anything.
func (s *Syncer) keepCopy(ctx context.Context, p string, data []byte) (string, store.Object, store.Object, error) {
	at := s.now()
	for n := 0; n < 20; n++ {
		cp := ConflictName(p, s.host(), at)
		if n > 0 {
			cp = ConflictName(p, fmt.Sprintf("%s-%d", s.host(), n+1), at)
		}
		robj, err := s.Remote.Put(ctx, cp, data, store.PutOptions{IfNoneMatch: true})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return "", store.Object{}, store.Object{}, err
		}
		lobj, err := s.Local.Put(ctx, cp, data, store.PutOptions{IfNoneMatch: true})
		if err != nil {
			return "", store.Object{}, store.Object{}, fmt.Errorf("keeping the remote version of %s here as %s: %w", p, cp, err)
		}
		return cp, robj, lobj, nil
	}
	return "", store.Object{}, store.Object{}, fmt.Errorf("no free conflict name for %s", p)
}

// pullConflict keeps both versions of a path changed on both sides: the
// local one is copied to a conflict name here (the next push sends it),
// then the remote one is written over it, conditionally on the local file
// being the version just copied.
func (s *Syncer) pullConflict(ctx context.Context, it *item) error {
	theirs, robj, err := s.Remote.Get(ctx, it.Path, s.maxBytes())
	if err != nil {
		return err
	}
	copied := ""
	for range maxConflictRounds {
		mine, lobj, err := s.Local.Get(ctx, it.Path, s.maxBytes())
		if errors.Is(err, store.ErrNotFound) {
			nobj, err := s.Local.Put(ctx, it.Path, theirs, store.PutOptions{IfNoneMatch: true})
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			if err != nil {
				return err
			}
			it.Kind, it.Bytes = KindDownload, int64(len(theirs))
			s.State.Set(it.Path, Entry{Hash: sha(theirs), LocalETag: nobj.ETag, RemoteETag: robj.ETag, RemoteVersion: robj.Version})
			return nil
		}
		if err != nil {
			return err
		}
		if sha(mine) == sha(theirs) {
			if it.Copy == "" {
				it.Kind = KindSame
			}
			s.State.Set(it.Path, Entry{Hash: sha(theirs), LocalETag: lobj.ETag, RemoteETag: robj.ETag, RemoteVersion: robj.Version})
			return nil
		}
		if sha(mine) != copied { // not kept yet (a save since the last copy is kept too)
			cp, err := s.keepLocalCopy(ctx, it.Path, mine)
			if err != nil {
				return err
			}
			it.Copy, copied = cp, sha(mine)
		}
		nobj, err := s.Local.Put(ctx, it.Path, theirs, store.PutOptions{IfMatch: lobj.ETag})
		if errors.Is(err, store.ErrConflict) {
			continue // saved again meanwhile: it is not in the copy yet
		}
		if err != nil {
			return err
		}
		it.Kind, it.Bytes = KindConflict, int64(len(theirs))
		s.State.Set(it.Path, Entry{Hash: sha(theirs), LocalETag: nobj.ETag, RemoteETag: robj.ETag, RemoteVersion: robj.Version})
		return nil
	}
	return fmt.Errorf("%s keeps changing here: not fetched (sync again)", it.Path)
}

// keepLocalCopy writes the local version of p under a new conflict name
// here, overwriting nothing.
func (s *Syncer) keepLocalCopy(ctx context.Context, p string, data []byte) (string, error) {
	at := s.now()
	for n := 0; n < 20; n++ {
		cp := ConflictName(p, s.host(), at)
		if n > 0 {
			cp = ConflictName(p, fmt.Sprintf("%s-%d", s.host(), n+1), at)
		}
		_, err := s.Local.Put(ctx, cp, data, store.PutOptions{IfNoneMatch: true})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("keeping the local version of %s as %s: %w", p, cp, err)
		}
		return cp, nil
	}
	return "", fmt.Errorf("no free conflict name for %s", p)
}

// IsNote reports whether the remote index keeps p as a note (else as an
// attachment).
func IsNote(p string) bool { return vault.IsNotePath(p) }
