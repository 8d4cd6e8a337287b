package indexer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

// fileSnaps keeps the catalog in a folder beside path, as the local door
// does (local.FileSnapshots): catalogstore.Snapshots over an fs store.
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
