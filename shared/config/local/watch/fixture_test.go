package watch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
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
	dir, st, text := localVault(t, files)
	ix := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text,
		Snapshots: fileSnaps(t, filepath.Join(t.TempDir(), "catalog.json.gz")), MaxNoteBytes: 1 << 20}
	return &fixture{dir: dir, ix: ix}
}

// localVault writes files into a new folder and opens it (see openLocal).
func localVault(t *testing.T, files map[string]string) (string, *fs.Store, *embedded.Index) {
	t.Helper()
	dir := t.TempDir()
	for p, body := range files {
		write(t, dir, p, body)
	}
	st, text := openLocal(t, dir)
	return dir, st, text
}

// openLocal opens dir as an fs store, next to an in-memory text index
// closed at cleanup.
func openLocal(tb testing.TB, dir string) (*fs.Store, *embedded.Index) {
	tb.Helper()
	st, err := fs.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	text, err := embedded.Open("")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { text.Close() })
	return st, text
}

func write(t *testing.T, dir, p, body string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileSnaps keeps the catalog in a folder beside path, as the local door
// does (local.FileSnapshots).
func fileSnaps(tb testing.TB, path string) *catalogstore.Snapshots {
	tb.Helper()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	st, err := fs.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return &catalogstore.Snapshots{Store: st, Key: filepath.Base(path), Dir: "catalog/"}
}
