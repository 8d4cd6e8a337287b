package config

import (
	"context"
	"time"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

var _ textindex.Index = lazyText{}

// lazyText is the embedded text index opened in the background: its first
// connection and schema check (a few ms) overlap the declaration of the
// tools rather than delay the answer to initialize. Every method waits
// for the open (or for its context) and then answers as the index does,
// or with the error that kept it from opening.
type lazyText struct{ *opening[textindex.Index] }

// Search implements textindex.Reader.
func (l lazyText) Search(ctx context.Context, q textindex.Query, opts textindex.Options) (textindex.Result, error) {
	ix, err := l.index(ctx)
	if err != nil {
		return textindex.Result{}, err
	}
	return ix.Search(ctx, q, opts)
}

// Ask implements textindex.Reader.
func (l lazyText) Ask(ctx context.Context, q textindex.Question, opts textindex.Options) (textindex.Result, error) {
	ix, err := l.index(ctx)
	if err != nil {
		return textindex.Result{}, err
	}
	return ix.Ask(ctx, q, opts)
}

// Paths implements textindex.Reader.
func (l lazyText) Paths(ctx context.Context) (map[string]time.Time, error) {
	ix, err := l.index(ctx)
	if err != nil {
		return nil, err
	}
	return ix.Paths(ctx)
}

// Upsert implements textindex.Index.
func (l lazyText) Upsert(ctx context.Context, docs ...textindex.Doc) error {
	ix, err := l.index(ctx)
	if err != nil {
		return err
	}
	return ix.Upsert(ctx, docs...)
}

// Delete implements textindex.Index.
func (l lazyText) Delete(ctx context.Context, paths ...string) error {
	ix, err := l.index(ctx)
	if err != nil {
		return err
	}
	return ix.Delete(ctx, paths...)
}
