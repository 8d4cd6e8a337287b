package core

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Reading a note's past versions, below read_note (its version argument)
// and the history tools (historytools.go): the vault's history, or
// unsupported when it keeps none, a version as the caller may see it, and
// the history's errors mapped to their kinds.

// allows reports whether the caller whose view v is may see path.
func (v *Vault) allows(p string) bool {
	return v.scope == nil || v.scope.folders.Allows(p)
}

// historyOf returns the vault's history, or unsupported when it keeps none.
func (v *Vault) historyOf(ctx context.Context) (history.Store, error) {
	if v.History == nil {
		return nil, newError(KindUnsupported, nil,
			"This vault keeps no note history (the server runs with --history off): there are no past versions to read.")
	}
	if err := v.checkHistory(ctx); err != nil {
		return nil, historyError("", "", "", err)
	}
	return v.History, nil
}

// checker is a history that can tell whether it keeps anything (an S3
// bucket whose versioning is off keeps nothing).
type checker interface {
	Check(ctx context.Context) error
}

// checkHistory asks the history once (a history tool's first call, never
// a write: a Lambda's cold start makes no call) whether it keeps versions.
func (v *Vault) checkHistory(ctx context.Context) error {
	c, ok := v.History.(checker)
	st := v.state()
	if !ok || st.historyChecked.Load() {
		return nil
	}
	err := c.Check(ctx)
	if err == nil {
		st.historyChecked.Store(true)
	}
	return err
}

// historyError maps a history error to its kind.
func historyError(arg, p, id string, err error) error {
	switch {
	case errors.Is(err, history.ErrNotFound):
		return newError(KindNoteNotFound, map[string]any{"argument": arg},
			"%s has no version %q (never kept, or pruned): list its versions with note_history.", p, id)
	case errors.Is(err, history.ErrOff):
		return newError(KindUnsupported, nil, "%s", strings.TrimPrefix(err.Error(), "history: "))
	}
	return err
}

// historyPath cleans a path argument of a history tool: a note's path, now
// or before it was deleted or moved (".md" may be omitted).
func historyPath(ctx context.Context, v *Vault, arg, raw string) (string, error) {
	p, err := cleanArg(arg, raw)
	if err != nil {
		return "", err
	}
	if !vault.IsNotePath(p) && path.Ext(p) == "" {
		p += ".md"
	}
	return notePath(ctx, v, arg, p)
}

// readVersion reads version id of the note at p, as the caller may see it.
func (v *Vault) readVersion(ctx context.Context, p, id string) ([]byte, history.Version, error) {
	h, err := v.historyOf(ctx)
	if err != nil {
		return nil, history.Version{}, err
	}
	data, ver, err := h.Read(ctx, p, id)
	if err == nil && !v.allows(ver.Path) {
		err = history.ErrNotFound
	}
	if err != nil {
		return nil, history.Version{}, historyError("version", p, id, err)
	}
	return data, ver, nil
}
