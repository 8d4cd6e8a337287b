package indexer

import (
	"context"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// SnapshotStore persists the Catalog between runs.
type SnapshotStore interface {
	// Load returns the saved catalog, or (nil, nil) when there is none or it
	// is of another format version (the caller then rebuilds).
	Load(ctx context.Context) (*vault.Catalog, error)
	// Save writes the whole catalog.
	Save(ctx context.Context, c *vault.Catalog) error
}

// ChangeSaver is a SnapshotStore that can save only what changed: its cost
// depends on the change, not on the vault. The Indexer uses it when its
// SnapshotStore has it.
type ChangeSaver interface {
	// SaveChanges saves the state in c of paths (and c's index time);
	// store.ErrConflict means another writer saved first: CatchUp, then
	// try again.
	SaveChanges(ctx context.Context, c *vault.Catalog, paths []string) error
	// CatchUp applies to c, in place, what other writers saved since this
	// store last loaded, saved or caught up, and returns the paths they
	// changed; all is true when c had to be reloaded whole.
	CatchUp(ctx context.Context, c *vault.Catalog) (paths []string, all bool, err error)
}
