package split_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/store/split"
	"github.com/sheaf-dev/sheaf/shared/store/storetest"
)

// open returns a split store over three new folders: vault, state, keys.
func open(t *testing.T) (*split.Store, [3]string) {
	t.Helper()
	dirs := [3]string{t.TempDir(), t.TempDir(), t.TempDir()}
	var st [3]*fs.Store
	for i, d := range dirs {
		s, err := fs.OpenWith(d, fs.Options{LockFile: filepath.Join(t.TempDir(), "lock"), Private: i > 0})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		st[i] = s
	}
	return &split.Store{Notes: st[0], State: st[1], Keys: st[2]}, dirs
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := open(t)
		return s
	})
}

// TestRouting checks where each kind of object lands on disk: notes, the
// trash and the ledger in the vault, Sheaf's own objects in the state
// folder, the keys in the keys folder, private (0600) outside the vault.
func TestRouting(t *testing.T) {
	ctx := context.Background()
	s, dirs := open(t)
	vault, state, keys := dirs[0], dirs[1], dirs[2]
	for _, p := range []string{"Inbox/Ideas.md", "log.md", ".sheaf/trash/2026/x.md", ".sheaf/leases/a.json", ".sheaf/keys/cursor", ".sheaf/keys.json", ".sheaf/proposals/p.json"} {
		if _, err := s.Put(ctx, p, []byte("x"), store.PutOptions{}); err != nil {
			t.Fatalf("Put(%s): %v", p, err)
		}
		if data, o, err := s.Get(ctx, p, 0); err != nil || string(data) != "x" || o.Path != p {
			t.Errorf("Get(%s) = %q, %q, %v", p, data, o.Path, err)
		}
	}
	want := map[string]string{
		filepath.Join(vault, "Inbox/Ideas.md"):         "",
		filepath.Join(vault, "log.md"):                 "",
		filepath.Join(vault, ".sheaf/trash/2026/x.md"): "",
		filepath.Join(state, "leases/a.json"):          "private",
		filepath.Join(state, "keys/cursor"):            "private",
		filepath.Join(state, "proposals/p.json"):       "private",
		filepath.Join(keys, "keys.json"):               "private",
	}
	for f, private := range want {
		fi, err := os.Stat(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if private != "" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	for _, f := range []string{".sheaf/leases", ".sheaf/keys", ".sheaf/keys.json", ".sheaf/proposals", ".sheaf/.write.lock"} {
		if _, err := os.Stat(filepath.Join(vault, f)); err == nil {
			t.Errorf("%s written into the vault", f)
		}
	}
	got := map[string]bool{}
	if err := s.List(ctx, ".sheaf", func(o store.Object) error { got[o.Path] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".sheaf/trash/2026/x.md", ".sheaf/leases/a.json", ".sheaf/keys/cursor", ".sheaf/keys.json", ".sheaf/proposals/p.json"} {
		if !got[p] {
			t.Errorf("List(.sheaf) misses %s (got %v)", p, got)
		}
	}
	got = map[string]bool{}
	if err := s.List(ctx, ".sheaf/leases/", func(o store.Object) error { got[o.Path] = true; return nil }); err != nil || len(got) != 1 || !got[".sheaf/leases/a.json"] {
		t.Errorf("List(.sheaf/leases/) = %v, %v", got, err)
	}
	if _, _, err := s.Get(ctx, ".sheaf/../../etc/passwd", 0); err == nil {
		t.Error("a path escaping through .sheaf/ was read")
	}
}
