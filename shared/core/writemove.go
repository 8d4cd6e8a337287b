package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

type MoveNoteIn struct {
	VaultArg
	TxArg
	Path         string `json:"path" jsonschema:"Vault-relative path of the note to move." schema:"minLength=1"`
	NewPath      string `json:"new_path" jsonschema:"Its new vault-relative path, ending in .md." schema:"minLength=1"`
	ExpectedHash string `json:"expected_hash,omitempty" jsonschema:"The content_hash read_note returned: fail with proposal-stale if the note changed since." schema:"pattern=^[0-9a-fA-F]{64}$"`
	DryRun       bool   `json:"dry_run,omitempty" jsonschema:"Report what would be rewritten, writing nothing."`
}

// RewrittenNote is one note whose links move_note rewrote.
type RewrittenNote struct {
	Path    string             `json:"path" jsonschema:"the note, at its path after the move"`
	Changes []vault.LinkChange `json:"changes"`
}

// NotRewritten is a note move_note could not rewrite.
type NotRewritten struct {
	Path   string `json:"path" jsonschema:"the note whose links still use the old path"`
	Reason string `json:"reason"`
	// MovedTo is where the note those links name went.
	MovedTo string `json:"moved_to" jsonschema:"where the note its links name is now"`
}

// NowResolved is a link that did not resolve before the move and does now.
type NowResolved struct {
	Path string `json:"path"`
	vault.LinkNotice
}

type moveOut struct {
	Coverage
	From         string          `json:"from"`
	To           string          `json:"to"`
	DryRun       bool            `json:"dry_run,omitempty"`
	ContentHash  string          `json:"content_hash,omitempty" jsonschema:"of the note at its new path"`
	LinksChanged int             `json:"links_rewritten"`
	Rewritten    []RewrittenNote `json:"rewritten" jsonschema:"every note whose links were rewritten, the moved note included"`
	NotRewritten []NotRewritten  `json:"not_rewritten,omitempty" jsonschema:"notes whose links to the note still use the old path: under an immutable path, or kept changing (or vanished) while being rewritten, or not indexed (too large, binary) with text that names the note; moved_to says where the note went"`
	NowResolved  []NowResolved   `json:"now_resolved,omitempty" jsonschema:"links that pointed nowhere (or were ambiguous) and now point to a note; left as written"`
	Index        WriteIndex      `json:"index"`
	Ledger       *string         `json:"ledger,omitempty"`
}

// sourceNote is one note a move rewrites, as read.
type sourceNote struct {
	cur     *current
	text    []byte // rewritten; nil when unchanged
	changes []vault.LinkChange
	notices []vault.LinkNotice
}

// MoveNote implements move_note.
//
// A move is one consistent change (see movelock.go): it holds the vault's
// move lock from its plan to its last write, plans against the catalog
// brought up to date with the recent moves of every process, and follows
// a linking note that moved meanwhile to its new path.
func (s *Core) MoveNote(ctx context.Context, in MoveNoteIn) (*moveOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, _, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	from, err := notePath(ctx, v, "path", in.Path)
	if err != nil {
		return nil, err
	}
	to, err := writablePath("new_path", in.NewPath)
	if err != nil {
		return nil, err
	}
	if to == from {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "new_path"}, "new_path is the note's own path: nothing to move.")
	}
	if err := linkableName("new_path", to); err != nil {
		return nil, err
	}
	if err := v.mustBeMutable("path", from, "moved"); err != nil {
		return nil, err
	}
	base, err := s.pick(in.VaultArg)
	if err != nil {
		return nil, err
	}
	var recent []moveRecord
	var rec *moveRecord
	if in.DryRun {
		recent = base.moveJournal(ctx)
	} else {
		lease, err := base.lockMoves(ctx)
		if err != nil {
			return nil, err
		}
		defer func() { lease.release(context.WithoutCancel(ctx), rec) }()
		recent = lease.recent()
	}
	out, changed, err := s.moveLocked(ctx, v, base, in, from, to, recent)
	if err == nil && !in.DryRun {
		rec = &moveRecord{From: from, To: to, Changed: changed}
	}
	return out, err
}

// settleWait bounds how long a move waits for the file watcher to index
// what it holds before planning.
const settleWait = 2 * time.Second

// goneGrace is the first wait, doubled each round, for the watcher's
// events after a linking note was found gone.
const goneGrace = 50 * time.Millisecond

// moveLocked is MoveNote once the lock is held: the plan, the checks, the
// writes. changed lists the other notes it rewrote.
func (s *Core) moveLocked(ctx context.Context, v, base *Vault, in MoveNoteIn, from, to string, recent []moveRecord) (*moveOut, []string, error) {
	if _, err := v.Store.Stat(ctx, to); err == nil {
		return nil, nil, newError(KindNoteExists, map[string]any{"argument": "new_path", "current_hash": v.currentHash(ctx, to)},
			"%s already exists: nothing was moved.", to)
	}
	if err := v.caseTwin("new_path", to, from); err != nil {
		return nil, nil, err
	}
	id := auth.IdentityFrom(ctx)
	if id.Scoped() {
		// A folder-scoped caller sees part of the vault, but a move must
		// keep every link whole: plan it on the whole vault, and refuse it
		// when it would rewrite a note outside the caller's folders.
		v = base
	}
	out := &moveOut{From: from, To: to, DryRun: in.DryRun, Rewritten: []RewrittenNote{}}
	var (
		plan    *vault.MovePlan
		sources map[string]*sourceNote
		order   []string
		planned *vault.Catalog // the catalog the plan was made on
	)
	// Plan and read every note first: nothing is written unless every
	// rewrite can be made. A linking note gone when read may have moved
	// (renamed on disk, by a person or another process): the watcher is
	// given time to report it and the plan is made again.
	for round := 0; ; round++ {
		settled := base.settle(ctx, settleWait)
		cat, err := base.Catalogs.Catalog(ctx)
		if err != nil {
			return nil, nil, err
		}
		if cat, err = base.freshCatalog(ctx, cat, recent); err != nil {
			return nil, nil, err
		}
		if _, ok := cat.Note(from); !ok {
			switch _, err := v.Store.Stat(ctx, from); {
			case errors.Is(err, store.ErrNotFound):
				return nil, nil, noNote("path", from)
			case errors.Is(err, store.ErrPathInvalid):
				return nil, nil, newError(KindPathInvalid, map[string]any{"argument": "path"},
					"%s leads outside the vault (a symbolic link): Sheaf does not move it.", from)
			case err != nil:
				return nil, nil, err
			}
			// A file no index holds for good (binary, too large) is said
			// so; only a note not indexed yet is worth asking again.
			if _, err := v.readForWrite(ctx, from); err != nil {
				return nil, nil, err
			}
			return nil, nil, newError(KindNoteNotFound, map[string]any{"argument": "path"},
				"%s is not indexed yet (it may have just been created): try again in a moment.", from)
		}
		planned = cat
		if plan, err = vault.PlanMove(cat, from, to); err != nil {
			return nil, nil, matchError("new_path", err)
		}
		if id.Scoped() {
			for _, p := range plan.Sources() {
				if !id.Folders.Allows(p) {
					return nil, nil, newError(KindForbidden, nil,
						"Moving %s would rewrite links in notes outside your folders: nothing was moved. Ask someone who may write to the whole vault.", from)
				}
			}
		}
		all := plan.Sources()
		read := make([]*sourceNote, len(all))
		errs := make([]error, len(all))
		parallel(len(all), func(i int) { read[i], errs[i] = s.rewriteSource(ctx, v, plan, all[i]) })
		sources, order = map[string]*sourceNote{}, nil
		gone := false
		for i, p := range all {
			sn, err := read[i], errs[i]
			if errors.Is(err, errGone) {
				if p == from {
					return nil, nil, noNote("path", from)
				}
				gone = true
				continue // deleted, or moved: see below
			}
			if err != nil {
				return nil, nil, err
			}
			sources[p] = sn
			order = append(order, p)
		}
		if !gone || (settled && round > 1) || round == 3 {
			break // what is gone was deleted
		}
		// The file system may not have told the watcher of the rename yet
		// (its events are read by another goroutine, late on a busy
		// machine): give them a moment to arrive before settling again.
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(goneGrace << round):
		}
	}
	for _, p := range unindexedLinkers(ctx, base, planned, from, id) {
		out.NotRewritten = append(out.NotRewritten, NotRewritten{Path: p, MovedTo: to,
			Reason: "not indexed (" + planned.Problem(p) + "), so its links cannot be read or rewritten; its text names " + vault.NameOf(from) + ", so it may still link to " + from})
	}
	for _, p := range order {
		sn := sources[p]
		if sn.text != nil && p != from {
			if v.immutablePrefix(p) != "" {
				// A note nobody may write keeps its links as written; the
				// caller is told where the note they point to went.
				out.NotRewritten = append(out.NotRewritten, NotRewritten{Path: p, MovedTo: to,
					Reason: "under an immutable path (" + v.immutablePrefix(p) + "): its links still name " + from})
				sn.text = nil
			}
		}
		for _, n := range sn.notices {
			out.NowResolved = append(out.NowResolved, NowResolved{Path: afterPath(p, from, to), LinkNotice: n})
		}
	}
	moved := sources[from]
	if err := checkExpected(moved.cur, in.ExpectedHash); err != nil {
		return nil, nil, err
	}
	if in.DryRun {
		for _, p := range order {
			if sn := sources[p]; sn.text != nil {
				out.Rewritten = append(out.Rewritten, RewrittenNote{Path: afterPath(p, from, to), Changes: sn.changes})
				out.LinksChanged += len(sn.changes)
			}
		}
		return out, nil, nil
	}

	// From here the move completes even if the call is cancelled: a
	// client giving up must not leave the note in two places, or half
	// its links rewritten.
	ctx = context.WithoutCancel(ctx)
	// The move: create the new note, then delete the old one if it is
	// still the version read (else undo the create).
	data := moved.cur.data
	if moved.text != nil {
		data = moved.text
	}
	if err := v.move(ctx, moved.cur, to, data); err != nil {
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			return nil, nil, staleError(from, in.ExpectedHash, v.currentHash(ctx, from))
		}
		return nil, nil, err
	}
	out.ContentHash = hashOf(data)
	changed := []string{from, to}
	if moved.text != nil {
		out.Rewritten = append(out.Rewritten, RewrittenNote{Path: to, Changes: moved.changes})
		out.LinksChanged += len(moved.changes)
	}

	// The other notes, each compare-and-swap; one that changed meanwhile is
	// read and rewritten again.
	var todo []string
	for _, p := range order {
		if p != from && sources[p].text != nil {
			todo = append(todo, p)
		}
	}
	werrs := make([]error, len(todo))
	parallel(len(todo), func(i int) { werrs[i] = s.writeRewrite(ctx, v, plan, todo[i], sources[todo[i]]) })
	var others []string
	for i, p := range todo {
		sn := sources[p]
		if werrs[i] != nil {
			out.NotRewritten = append(out.NotRewritten, NotRewritten{Path: p, MovedTo: to, Reason: toError(werrs[i]).Message})
			continue
		}
		if sn.text != nil {
			out.Rewritten = append(out.Rewritten, RewrittenNote{Path: p, Changes: sn.changes})
			out.LinksChanged += len(sn.changes)
			changed = append(changed, p)
			others = append(others, p)
		}
	}
	// Notes that came to link to the note while it was being moved (another
	// process's write, a person's edit, reported by the watcher since the
	// plan) are planned again and rewritten too.
	moveAppliedHook()
	if plan2, late := s.lateLinkers(ctx, base, from, to, data, recent, sources); plan2 != nil {
		for _, p := range late {
			sn, err := s.rewriteSource(ctx, v, plan2, p)
			switch {
			case errors.Is(err, errGone):
				continue
			case err == nil && sn.text == nil:
				continue
			case err == nil && id.Scoped() && !id.Folders.Allows(p):
				continue // not the caller's to see, nor to write
			case err == nil && v.immutablePrefix(p) != "":
				err = fmt.Errorf("under an immutable path (%s): its links still name %s", v.immutablePrefix(p), from)
			case err == nil:
				err = s.writeRewrite(ctx, v, plan2, p, sn)
			}
			if err != nil {
				out.NotRewritten = append(out.NotRewritten, NotRewritten{Path: p, MovedTo: to, Reason: toError(err).Message})
				continue
			}
			if sn.text != nil {
				out.Rewritten = append(out.Rewritten, RewrittenNote{Path: p, Changes: sn.changes})
				out.LinksChanged += len(sn.changes)
				changed = append(changed, p)
				others = append(others, p)
			}
		}
	}
	sort.Slice(out.Rewritten, func(i, j int) bool { return out.Rewritten[i].Path < out.Rewritten[j].Path })
	out.Index, out.Ledger = s.written(ctx, v, "move", from+" -> "+to, changed...)
	return out, others, nil
}

// move creates the note at to with data, then deletes the note cur was
// read as if it is still that version (else undoes the create), and
// records both versions: OpMove at to, OpMoveAway at the old path.
func (v *Vault) move(ctx context.Context, cur *current, to string, data []byte) error {
	unlock := v.lockPaths(cur.path, to)
	defer unlock()
	in := v.change(ctx, to, history.OpMove, data, nil)
	in.From = cur.path
	created, err := v.createUnrecorded(ctx, "new_path", in)
	if err != nil {
		return err
	}
	if err := v.Store.Delete(ctx, cur.path, cur.obj.ETag); err != nil {
		_ = v.Store.Delete(ctx, to, created.ETag)
		return err
	}
	in.Object = created
	out := v.change(ctx, cur.path, history.OpMoveAway, nil, cur)
	out.To, out.Object, out.Time = to, cur.obj, in.Time
	v.record(ctx, in, out)
	return nil
}

// moveAppliedHook runs once a move has written its notes, before it looks
// for late linkers: tests write a linking note there.
var moveAppliedHook = func() {}

// lateLinkers plans the move again once it is made, on the catalog as it
// is now (the watcher given time to report what changed) with the moved
// note, data, put back at from: its sources that the first plan did not
// read are notes that came to link to the note meanwhile. nil when the
// plan cannot be made.
func (s *Core) lateLinkers(ctx context.Context, base *Vault, from, to string, data []byte, recent []moveRecord, done map[string]*sourceNote) (*vault.MovePlan, []string) {
	base.settle(ctx, settleWait)
	cat, err := base.Catalogs.Catalog(ctx)
	if err != nil {
		return nil, nil
	}
	if cat, err = base.freshCatalog(ctx, cat, recent); err != nil {
		return nil, nil
	}
	c := cat.Clone()
	c.Remove(to)
	c.Upsert(vault.Parse(from, data).Note)
	plan, err := vault.PlanMove(c, from, to)
	if err != nil {
		return nil, nil
	}
	var late []string
	for _, p := range plan.Sources() {
		if _, ok := done[p]; !ok && p != from && p != to {
			late = append(late, p)
		}
	}
	return plan, late
}

// errGone is a source note that vanished before it could be read.
var errGone = errors.New("gone")

// parallel runs fn(0..n-1) on up to eight goroutines (the notes a move
// reads and writes are independent; the store's writes are each atomic).
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(n, 8) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// rewriteSource reads the note at p and plans its rewrite.
func (s *Core) rewriteSource(ctx context.Context, v *Vault, plan *vault.MovePlan, p string) (*sourceNote, error) {
	c, err := v.readForWrite(ctx, p)
	if err != nil {
		var te *Error
		if errors.As(err, &te) && te.Kind == KindNoteNotFound {
			return nil, errGone
		}
		if errors.As(err, &te) && (te.Kind == KindNotMarkdown || te.Kind == KindUnsupported) {
			return &sourceNote{cur: &current{path: p}}, nil // not a text we can edit: it holds no links we know
		}
		return nil, err
	}
	text, changes, notices, err := plan.Rewrite(p, c.data)
	if err != nil {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "new_path", "note": p},
			"Moving to %s would break a link in %s that no spelling can keep: %s. Nothing was moved.", plan.To, p,
			strings.TrimPrefix(err.Error(), vault.ErrBadEdit.Error()+": "))
	}
	return &sourceNote{cur: c, text: text, changes: changes, notices: notices}, nil
}

// writeRewrite writes a rewritten note conditionally, re-reading and
// re-planning it when it changed since it was read.
func (s *Core) writeRewrite(ctx context.Context, v *Vault, plan *vault.MovePlan, p string, sn *sourceNote) error {
	for attempt := 0; ; attempt++ {
		_, err := v.putIfMatch(ctx, sn.cur, sn.text, history.OpEdit)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errStale) {
			return err
		}
		if attempt == casRetries {
			return fmt.Errorf("%s kept changing while its links were being rewritten", p)
		}
		c, err := v.readForWrite(ctx, p)
		if err != nil {
			return err
		}
		text, changes, _, err := plan.Rewrite(p, c.data)
		if err != nil {
			return err
		}
		sn.cur, sn.text, sn.changes = c, text, changes
		if text == nil {
			return nil // the links are gone: nothing to rewrite
		}
	}
}

func afterPath(p, from, to string) string {
	if p == from {
		return to
	}
	return p
}

// unindexedLinkers lists the notes the index does not hold (too large,
// binary) whose text names the note at from (its name, in any case): their
// links were never read, so a move cannot rewrite them and may leave them
// pointing at nothing.
// A folder-scoped caller hears only of notes in its folders.
func unindexedLinkers(ctx context.Context, v *Vault, cat *vault.Catalog, from string, id auth.Identity) []string {
	var out []string
	name := []byte(strings.ToLower(vault.NameOf(from)))
	for _, p := range cat.Unindexed() {
		if id.Scoped() && !id.Folders.Allows(p) {
			continue
		}
		if mentions(ctx, v.Store, p, name) {
			out = append(out, p)
		}
	}
	return out
}

// mentions reports whether the object at p holds name (lower-case) in
// its first maxMention bytes, reading them a few MiB at a time.
func mentions(ctx context.Context, st store.Store, p string, name []byte) bool {
	const chunk = 4 << 20
	for off := int64(0); off < maxMention; off += chunk {
		b, obj, err := store.GetRange(ctx, st, p, off, chunk+int64(len(name)))
		if err != nil || len(b) == 0 {
			return false
		}
		if bytes.Contains(bytes.ToLower(b), name) {
			return true
		}
		if off+chunk >= obj.Size {
			return false
		}
	}
	return false
}

// maxMention bounds what a move reads of each unindexed note (they are
// rare, but each may be hundreds of MiB).
const maxMention = 64 << 20
