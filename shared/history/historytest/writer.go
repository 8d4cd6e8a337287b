// Package historytest is the conformance suite every history adapter
// passes (Run), and Writer: the write path's calls to the store and to
// history, in the order the core's compare-and-swap writes make them.
package historytest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// Writer writes notes the way Sheaf's write path does with history on:
// under the path's lock, read the note, write it conditionally with the
// change's metadata (history.Metadata), then Record the change with the
// bytes it replaced and the store's answer.
type Writer struct {
	Vault   store.Store
	History history.Store
	Locks   history.PathLocks
}

// Put writes data at path (creating or replacing it) as op, retrying the
// conditional write when another writer lands first. c carries the
// attribution (Author, Tool, Transaction, Merged, Restored); its Path, Op
// and Data are set here.
func (w *Writer) Put(ctx context.Context, path string, op history.Op, data []byte, c history.Change) (history.Version, error) {
	c.Path, c.Op, c.Data = path, op, data
	return w.put(ctx, c, nil)
}

// Edit replaces the note at path by change(current content) as op (OpAppend,
// OpEdit, ...), retrying on a conflict with the new content.
func (w *Writer) Edit(ctx context.Context, path string, op history.Op, change func([]byte) []byte, c history.Change) (history.Version, error) {
	c.Path, c.Op = path, op
	return w.put(ctx, c, change)
}

func (w *Writer) put(ctx context.Context, c history.Change, change func([]byte) []byte) (history.Version, error) {
	for attempt := 0; attempt < 100; attempt++ {
		v, err := w.try(ctx, c, change)
		if !errors.Is(err, store.ErrConflict) {
			return v, err
		}
	}
	return history.Version{}, fmt.Errorf("historytest: %s: too many conflicts", c.Path)
}

func (w *Writer) try(ctx context.Context, c history.Change, change func([]byte) []byte) (history.Version, error) {
	unlock := w.Locks.Lock(c.Path)
	defer unlock()
	c.Time = time.Now()
	prev, cur, err := w.Vault.Get(ctx, c.Path, 0)
	opts := store.PutOptions{IfMatch: cur.ETag}
	switch {
	case errors.Is(err, store.ErrNotFound):
		prev, opts = nil, store.PutOptions{IfNoneMatch: true}
	case err != nil:
		return history.Version{}, err
	}
	if change != nil {
		c.Data = change(prev)
	}
	c.Prev, c.PrevObject = prev, cur
	opts.Meta = history.Metadata(c)
	obj, err := w.Vault.Put(ctx, c.Path, c.Data, opts)
	if err != nil {
		return history.Version{}, err
	}
	c.Object = obj
	vs, err := w.History.Record(ctx, c)
	if err != nil {
		return history.Version{}, err
	}
	return vs[0], nil
}

// Delete deletes the note at path if it is still the version read.
func (w *Writer) Delete(ctx context.Context, path string, c history.Change) (history.Version, error) {
	unlock := w.Locks.Lock(path)
	defer unlock()
	prev, cur, err := w.Vault.Get(ctx, path, 0)
	if err != nil {
		return history.Version{}, err
	}
	if err := w.Vault.Delete(ctx, path, cur.ETag); err != nil {
		return history.Version{}, err
	}
	c.Path, c.Op, c.Prev, c.PrevObject, c.Object, c.Time = path, history.OpDelete, prev, cur, cur, time.Now()
	vs, err := w.History.Record(ctx, c)
	if err != nil {
		return history.Version{}, err
	}
	return vs[0], nil
}

// Move moves the note at from to to (which must not exist): create, then
// delete the old one; both are recorded in one call.
func (w *Writer) Move(ctx context.Context, from, to string, c history.Change) (moved, away history.Version, err error) {
	u1, u2 := w.Locks.Lock(min(from, to)), w.Locks.Lock(max(from, to))
	defer u1()
	defer u2()
	data, cur, err := w.Vault.Get(ctx, from, 0)
	if err != nil {
		return moved, away, err
	}
	c.Time = time.Now()
	in := c
	in.Path, in.Op, in.Data, in.From = to, history.OpMove, data, from
	obj, err := w.Vault.Put(ctx, to, data, store.PutOptions{IfNoneMatch: true, Meta: history.Metadata(in)})
	if err != nil {
		return moved, away, err
	}
	if err := w.Vault.Delete(ctx, from, cur.ETag); err != nil {
		_ = w.Vault.Delete(ctx, to, obj.ETag)
		return moved, away, err
	}
	in.Object = obj
	out := c
	out.Path, out.Op, out.To, out.Prev, out.PrevObject, out.Object = from, history.OpMoveAway, to, data, cur, cur
	vs, err := w.History.Record(ctx, in, out)
	if err != nil {
		return moved, away, err
	}
	return vs[0], vs[1], nil
}
