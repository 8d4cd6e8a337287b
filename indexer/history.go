package indexer

import (
	"context"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// observe tells the note history (Indexer.History) about a note as the
// indexer read it, so that a change made outside Sheaf becomes a version.
// A failure is logged: it never fails indexing.
func (ix *Indexer) observe(ctx context.Context, path string, data []byte, obj store.Object) {
	if ix.History == nil {
		return
	}
	if err := ix.History.Seen(ctx, path, data, obj); err != nil && ctx.Err() == nil {
		ix.log().Warn("history: recording an external change", "path", path, "err", err)
	}
}

// gone tells the note history that the note at path is gone.
func (ix *Indexer) gone(ctx context.Context, path string) {
	if ix.History == nil {
		return
	}
	if err := ix.History.Gone(ctx, path); err != nil && ctx.Err() == nil {
		ix.log().Warn("history: recording an external delete", "path", path, "err", err)
	}
}
