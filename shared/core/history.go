package core

// Every write through the core records a version in the vault's history
// (Vault.History; see docs/history.md): who wrote it (the caller's
// identity), with which tool, in which transaction, and what it replaced.
// The write path holds the path's lock (history.PathLocks) from its
// conditional store write until the version is recorded, so that history
// has a path's versions in the order they landed; the write's attribution
// also travels as the object's metadata (history.Metadata), which is what
// a versioned bucket keeps.

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// TxArg is the transaction_id every write tool takes.
type TxArg struct {
	TransactionID string `json:"transaction_id,omitempty" jsonschema:"An id of your choosing (a UUID, say) that groups several write calls into one logical change: note_history shows it on each version, and undo_transaction reverts all of them at once." schema:"minLength=1,maxLength=128"`
}

type toolKey struct{}
type txKey struct{}

// WithTool returns ctx naming the tool or command a write is made by
// ("write_note", "sheaf restore"): history records it with the version.
// The MCP doors set it for every tool call; the first one set wins.
func WithTool(ctx context.Context, tool string) context.Context {
	if ToolFrom(ctx) != "" {
		return ctx
	}
	return context.WithValue(ctx, toolKey{}, tool)
}

// ToolFrom returns the tool WithTool set, or "".
func ToolFrom(ctx context.Context) string {
	t, _ := ctx.Value(toolKey{}).(string)
	return t
}

// withTx returns ctx carrying the caller's transaction id ("" leaves ctx).
func withTx(ctx context.Context, a TxArg) context.Context {
	if a.TransactionID == "" {
		return ctx
	}
	return context.WithValue(ctx, txKey{}, a.TransactionID)
}

func txFrom(ctx context.Context) string {
	t, _ := ctx.Value(txKey{}).(string)
	return t
}

// authorOf is the history author of the caller in ctx.
func authorOf(ctx context.Context) history.Author {
	id := auth.IdentityFrom(ctx)
	return history.Author{Subject: id.Subject, Name: id.Name}
}

// locks are the path locks of the vault's writes, shared by every view.
func (v *Vault) locks() *history.PathLocks { return &v.state().locks }

// change is the attribution of a write by the caller in ctx.
func (v *Vault) change(ctx context.Context, path string, op history.Op, data []byte, prev *current) history.Change {
	c := history.Change{Path: path, Op: op, Data: data, Author: authorOf(ctx), Tool: ToolFrom(ctx), Transaction: txFrom(ctx), Time: time.Now()}
	if prev != nil && prev.obj.ETag != "" {
		c.Prev, c.PrevObject = prev.data, prev.obj
	}
	return c
}

// lockPaths locks the given paths for recording (in a fixed order, so two
// writers never deadlock) and returns their unlock; a no-op without
// history.
func (v *Vault) lockPaths(paths ...string) func() {
	if v.History == nil {
		return func() {}
	}
	ordered := append([]string(nil), paths...)
	for i := range ordered {
		for j := i + 1; j < len(ordered); j++ {
			if ordered[j] < ordered[i] {
				ordered[i], ordered[j] = ordered[j], ordered[i]
			}
		}
	}
	var unlocks []func()
	for i, p := range ordered {
		if i > 0 && p == ordered[i-1] {
			continue
		}
		unlocks = append(unlocks, v.locks().Lock(p))
	}
	if pl, ok := v.History.(history.PathLocker); ok {
		// Other processes' writers of these paths too. Without the lock
		// the write still happens; history may then record a concurrent
		// write of another process out of order (nothing is lost).
		if unlock, err := pl.LockPaths(context.Background(), ordered...); err == nil {
			unlocks = append(unlocks, unlock)
		} else {
			slog.Warn("history: cannot lock across processes", "paths", ordered, "err", err)
		}
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}

// record adds the versions writes made to the vault's history. The
// writes have landed: a failure to record is logged, not returned (the
// caller's change stands, and the next write records what it replaced).
func (v *Vault) record(ctx context.Context, changes ...history.Change) []history.Version {
	if v.History == nil || len(changes) == 0 {
		return nil
	}
	vs, err := v.History.Record(context.WithoutCancel(ctx), changes...)
	if errors.Is(err, history.ErrOff) {
		if !v.state().historyOff.Swap(true) { // said once: every write would say it
			slog.Warn("history: this vault keeps no past versions (turn the bucket's versioning on)", "path", changes[0].Path, "err", err)
		}
		return nil
	}
	if err != nil {
		slog.Error("history: the write landed but its version was not recorded", "path", changes[0].Path, "op", changes[0].Op, "err", err)
		return nil
	}
	return vs
}

// putNote writes data at path as c (its Path, Op, Data, Prev set),
// conditional on prev's ETag (nil: create), and records the version. It
// returns the store's answer and the version (zero without history).
func (v *Vault) putNote(ctx context.Context, c history.Change, prev *current) (store.Object, history.Version, error) {
	if err := binaryText(c.Path, c.Data); err != nil {
		return store.Object{}, history.Version{}, err
	}
	opts := store.PutOptions{IfNoneMatch: true}
	if prev != nil {
		opts = store.PutOptions{IfMatch: prev.obj.ETag}
	}
	if v.History == nil {
		obj, err := v.Store.Put(ctx, c.Path, c.Data, opts)
		return obj, history.Version{}, err
	}
	unlock := v.lockPaths(c.Path)
	defer unlock()
	opts.Meta = history.Metadata(c)
	obj, err := v.Store.Put(ctx, c.Path, c.Data, opts)
	if err != nil {
		return obj, history.Version{}, err
	}
	c.Object = obj
	var ver history.Version
	if vs := v.record(ctx, c); len(vs) > 0 {
		ver = vs[len(vs)-1]
	}
	return obj, ver, nil
}

// deleteNote deletes the note prev was read as, if it is still that
// version, and records the tombstone c (its Op OpDelete or OpMoveAway).
func (v *Vault) deleteNote(ctx context.Context, c history.Change, prev *current) error {
	if v.History == nil {
		return v.Store.Delete(ctx, prev.path, prev.obj.ETag)
	}
	unlock := v.lockPaths(prev.path)
	defer unlock()
	if err := v.Store.Delete(ctx, prev.path, prev.obj.ETag); err != nil {
		return err
	}
	c.Path, c.Prev, c.PrevObject, c.Object = prev.path, prev.data, prev.obj, prev.obj
	v.record(ctx, c)
	return nil
}
