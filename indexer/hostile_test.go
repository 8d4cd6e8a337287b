package indexer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/store"
)

func TestPathOfKey(t *testing.T) {
	ix := newCloudIndexer(nil, nil)
	for key, want := range map[string]string{
		"vault/a.md":             "a.md",
		"vault/Cafe\u0301.md":    "Caf\u00e9.md",
		"vault/p/./b.md":         "p/b.md",
		"vault/q//b.md":          "q/b.md",
		"vault/./c.md":           "c.md",
		"vault/a/../b.md":        "b.md",
		"vault/../x.md":          "",
		"vault/../vault2/x.md":   "",
		"vault":                  "",
		"vault/":                 "",
		"vault-other/x.md":       "",
		"vaultx.md":              "",
		"vault/.sheaf/x.md":      "",
		"vault/x/.obsidian/y.md": "",
		"vault/p/./.sheaf/y.md":  "",
		"vault/dir.md/":          "",
		"vault/dir//":            "",
		"vault/bad\xff.md":       "",
		"/vault/a.md":            "",
	} {
		got, ok := ix.pathOfKey("sheaf-vault", key)
		if got != want || ok != (want != "") {
			t.Errorf("pathOfKey(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if _, ok := ix.pathOfKey("other-bucket", "vault/a.md"); ok {
		t.Errorf("a key of another bucket was mapped")
	}
}

// swapStore rewrites a note right after its Stat: the content changes
// between HEAD and GET.
type swapStore struct {
	store.Store
	dir  string
	path string
	body string
}

func (s *swapStore) Stat(ctx context.Context, p string) (store.Object, error) {
	obj, err := s.Store.Stat(ctx, p)
	if p == s.path && s.body != "" {
		if werr := os.WriteFile(filepath.Join(s.dir, p), []byte(s.body), 0o644); werr != nil {
			return obj, werr
		}
		s.body = ""
	}
	return obj, err
}

func TestContentChangesBetweenHeadAndGet(t *testing.T) {
	f := newCloudFixture(t, map[string]string{"a.md": "# A\nfirst version"})
	f.handle(t, objects("a.md"))
	write(t, f.dir, "a.md", "# A\nsecond version, longer")
	sw := &swapStore{Store: f.ix.Store, dir: f.dir, path: "a.md", body: "# A\nthird version, the one that stays"}
	f.ix.Store = sw
	f.handle(t, objects("a.md"))
	n, ok := f.ix.Catalog.Note("a.md")
	_, cur, err := sw.Store.Get(context.Background(), "a.md", 0)
	if err != nil || !ok || n.ETag != cur.ETag || n.Size != cur.Size {
		t.Errorf("catalog %+v, store %+v, %v", n, cur, err)
	}
	if got := (&fixture{ix: f.ix}).search(t, "stays"); len(got) != 1 {
		t.Errorf("the content read last is not the one indexed: %v", got)
	}
}
