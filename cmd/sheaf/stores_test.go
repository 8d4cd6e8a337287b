package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
)

// storeVault is the sample vault on one kind of store, for the suites that
// run on a folder and on S3 alike.
type storeVault struct {
	vault string   // the --vault argument
	extra []string // the serve flags it needs
	// root is the folder that holds the notes on disk (versitygw's posix
	// backend keeps objects as files); state lists the files under the
	// state location's sub folder (a local vault's state folder, the
	// bucket's .sheaf/).
	root  string
	state func(sub string) []string
}

// file reads a vault file.
func (sv *storeVault) file(path string) ([]byte, error) {
	return os.ReadFile(filepath.Join(sv.root, filepath.FromSlash(path)))
}

// serve starts `sheaf serve` over stdio on the vault.
func (sv *storeVault) serve(t *testing.T, extra ...string) *mcp.ClientSession {
	return stdioSession(t, sv.vault, append(append([]string{}, sv.extra...), extra...)...)
}

// onStores runs fn on a folder vault and on an S3 vault (versitygw, a
// Meilisearch fake for its search), each a fresh copy of the sample vault.
func onStores(t *testing.T, fn func(t *testing.T, sv *storeVault)) {
	t.Run("folder", func(t *testing.T) { fn(t, onFolder(t)) })
	t.Run("s3", func(t *testing.T) { fn(t, onBucket(t)) })
}

func onFolder(t *testing.T) *storeVault {
	vault, state := sampleVault(t), t.TempDir()
	return &storeVault{
		vault: vault, extra: []string{"--state", state},
		root:  vault,
		state: func(sub string) []string { return filesUnder(filepath.Join(state, sub)) },
	}
}

// onBucket uploads the sample vault to a bucket's notes/ prefix and
// indexes it with `sheaf reconcile`; the AWS variables are set for the
// servers the test starts.
func onBucket(t *testing.T) *storeVault {
	v := &cloudVault{s3: s3test.Start(t, s3test.Options{}), meili: meilifake.New(t)}
	v.s3.CreateBucket(t, "vault")
	v.s3.PutDir(t, "vault", "notes", sampleVault(t))
	if out, err := v.command().CombinedOutput(); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	for _, kv := range v.s3.Env() {
		k, val, _ := strings.Cut(kv, "=")
		t.Setenv(k, val)
	}
	root := filepath.Join(v.s3.Dir, "vault", "notes") // versitygw's posix backend
	return &storeVault{
		vault: v.s3.URL("vault", "notes"), extra: []string{"--search", v.meili.URL},
		root:  root,
		state: func(sub string) []string { return filesUnder(filepath.Join(root, ".sheaf", sub)) },
	}
}

// filesUnder lists the files under dir, recursively.
func filesUnder(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}
