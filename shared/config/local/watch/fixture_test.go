package watch

import (
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// fixture is a folder vault, its indexer and the watcher's timing.
type fixture struct {
	dir string
	ix  *indexer.Indexer
	o   Options
}

func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	dir, st, text := indexertest.LocalVault(t, files)
	ix := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text,
		Snapshots: indexertest.FileSnaps(t, filepath.Join(t.TempDir(), "catalog.json.gz")), MaxNoteBytes: 1 << 20}
	return &fixture{dir: dir, ix: ix}
}
