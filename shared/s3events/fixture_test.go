package s3events

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
)

// localVault writes files into a new folder and opens it as an fs store,
// next to an in-memory text index closed at cleanup.
func localVault(t *testing.T, files map[string]string) (string, *fs.Store, *embedded.Index) {
	t.Helper()
	dir := t.TempDir()
	for p, body := range files {
		write(t, dir, p, body)
	}
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, err := embedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { text.Close() })
	return dir, st, text
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

// search returns the paths ix's text index finds for q.
func search(t *testing.T, ix *indexer.Indexer, q string) []string {
	t.Helper()
	res, err := ix.Text.Search(context.Background(), textindex.ParseQuery(q), textindex.Options{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ps []string
	for _, h := range res.Hits {
		ps = append(ps, h.Path)
	}
	return ps
}
