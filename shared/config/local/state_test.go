package local

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// freshHome points HOME at a new, empty folder and unsets the XDG
// folders, as on a new machine; it returns HOME.
func freshHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	return home
}

// newVault makes a vault folder with two notes.
func newVault(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "My Notes")
	for p, text := range map[string]string{"a.md": "# A\n\nalpha [[b]]\n", "sub/b.md": "# B\n\nbeta\n"} {
		f := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// files lists every file and folder under dir, relative to it.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var quiet = slog.New(slog.DiscardHandler)

// openSynced opens the vault with c and indexes it.
func openSynced(t *testing.T, c *config.Config) *Vault {
	t.Helper()
	l, err := Open(t.Context(), c, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Indexer.Sync(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	return l
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestFreshHome: on a new machine the index, the catalog, Sheaf's own
// objects and the cursor key go to ~/.cache/sheaf/<id>-<hash>, the keys to
// ~/.config/sheaf/<id>-<hash> (0600), and the vault gets nothing but notes
// and, once someone writes, the ledger.
func TestFreshHome(t *testing.T) {
	home := freshHome(t)
	dir := newVault(t)
	before := files(t, dir)
	l := openSynced(t, &config.Config{Vault: dir})
	ctx := context.Background()

	if !strings.HasPrefix(l.State, filepath.Join(home, ".cache", "sheaf", "my-notes-")) || l.Layout.Legacy {
		t.Errorf("state in %s (legacy %v), want ~/.cache/sheaf/my-notes-<hash>", l.State, l.Layout.Legacy)
	}
	if got := files(t, dir); !slices.Equal(got, before) {
		t.Errorf("opening and indexing wrote into the vault: %v, was %v", got, before)
	}
	// The cursor key, a lease-like object and the keys, through the store
	// every tool uses.
	if _, err := auth.LoadCursorKey(ctx, l.Vault.Store, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Vault.Store.Put(ctx, auth.KeysPath, []byte(`{"keys":[]}`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(l.State, "keys", "cursor")); m != 0o600 {
		t.Errorf("cursor key mode %v, want 0600", m)
	}
	keys := filepath.Join(home, ".config", "sheaf", filepath.Base(l.State), "keys.json")
	if m := mode(t, keys); m != 0o600 {
		t.Errorf("keys.json mode %v, want 0600", m)
	}
	if m := mode(t, filepath.Dir(keys)); m != 0o700 {
		t.Errorf("keys folder mode %v, want 0700", m)
	}
	s, err := core.New(l.Vault)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteNote(ctx, core.WriteNoteIn{Path: "Inbox/Ideas.md", Content: "- a thought\n"}); err != nil {
		t.Fatal(err)
	}
	got := files(t, dir)
	want := append(slices.Clone(before), "Inbox", "Inbox/Ideas.md", "log.md")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after a write the vault holds %v, want %v", got, want)
	}
	info, err := s.VaultInfo(ctx, struct{ core.VaultArg }{})
	if err != nil || info.State != l.State || info.Ledger != "log.md" {
		t.Errorf("get_vault_info says state %q, ledger %q (%v); want %s, log.md", info.State, info.Ledger, err, l.State)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// A second server of the same vault on this machine finds the same state.
	l2 := openSynced(t, &config.Config{Vault: dir})
	defer l2.Close()
	if l2.State != l.State {
		t.Errorf("second open: state %s, first %s", l2.State, l.State)
	}
}

// TestReadOnlyVault: a vault nobody may write to is served and indexed.
func TestReadOnlyVault(t *testing.T) {
	freshHome(t)
	dir := newVault(t)
	before := files(t, dir)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	l := openSynced(t, &config.Config{Vault: dir})
	defer l.Close()
	if n := l.Indexer.Catalog.Len(); n != 2 {
		t.Errorf("indexed %d notes, want 2", n)
	}
	if got := files(t, dir); !slices.Equal(got, before) {
		t.Errorf("a read-only vault was written to: %v", got)
	}
}

// TestNoHome: without a usable home folder the error says what to do, and
// --state is enough to run.
func TestNoHome(t *testing.T) {
	dir := newVault(t)
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, home := range map[string]string{"unset": "", "unusable": filepath.Join(notADir, "home")} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("XDG_CONFIG_HOME", "")
			_, err := Open(t.Context(), &config.Config{Vault: dir}, quiet)
			if !errors.Is(err, ErrNoStateFolder) || !strings.Contains(err.Error(), "--state") {
				t.Errorf("Open = %v, want ErrNoStateFolder naming --state", err)
			}
			state := filepath.Join(t.TempDir(), "state")
			l := openSynced(t, &config.Config{Vault: dir, State: state})
			defer l.Close()
			if l.State != state {
				t.Errorf("state %s, want %s", l.State, state)
			}
			if _, err := os.Stat(filepath.Join(state, "index.db")); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestExistingSheafFolder: state an earlier Sheaf kept in <vault>/.sheaf
// keeps working, keys included, and `sheaf state migrate` moves it out.
func TestExistingSheafFolder(t *testing.T) {
	home := freshHome(t)
	dir := newVault(t)
	legacy := filepath.Join(dir, ".sheaf")
	// What an earlier Sheaf left: the state, keys, a trashed note.
	l := openSynced(t, &config.Config{Vault: dir, State: legacy})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for p, text := range map[string]string{"keys.json": `{"keys":[]}`, "trash/2026-01-01/old.md": "old\n", "leases/x.json": "{}"} {
		f := filepath.Join(legacy, p)
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	l, err := Open(t.Context(), &config.Config{Vault: dir}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Layout.Legacy || l.State != legacy || l.Layout.Keys != legacy {
		t.Errorf("layout %+v, want the existing .sheaf/ for state and keys", l.Layout)
	}
	if n := l.Indexer.Catalog.Len(); n != 2 {
		t.Errorf("the persisted catalog has %d notes, want 2 (loaded, not rebuilt)", n)
	}
	if data, _, err := l.Vault.Store.Get(t.Context(), ".sheaf/leases/x.json", 0); err != nil || string(data) != "{}" {
		t.Errorf("lease: %q, %v", data, err)
	}
	l.Close()
	if _, err := os.Stat(filepath.Join(home, ".cache")); err == nil {
		t.Error("the legacy layout still made a cache folder")
	}

	m, err := Migrate(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(m.Entries, "index.db") || !slices.Contains(m.Entries, "catalog") || !slices.Contains(m.Entries, "leases") {
		t.Errorf("moved %v", m.Entries)
	}
	if got := files(t, legacy); !slices.Equal(got, []string{"trash", "trash/2026-01-01", "trash/2026-01-01/old.md"}) {
		t.Errorf("after migrate .sheaf/ holds %v, want the trash only", got)
	}
	if m.Keys == "" || mode(t, m.Keys) != 0o600 {
		t.Errorf("keys moved to %q", m.Keys)
	}
	if _, err := Migrate(dir, ""); err == nil {
		t.Error("a second migrate over the moved state should refuse")
	}

	l = openSynced(t, &config.Config{Vault: dir})
	defer l.Close()
	if l.Layout.Legacy || l.State != m.State || filepath.Join(l.Layout.Keys, "keys.json") != m.Keys {
		t.Errorf("after migrate: layout %+v, moved %+v", l.Layout, m)
	}
	if data, _, err := l.Vault.Store.Get(t.Context(), auth.KeysPath, 0); err != nil || !strings.Contains(string(data), "keys") {
		t.Errorf("keys after migrate: %q, %v", data, err)
	}
	if data, _, err := l.Vault.Store.Get(t.Context(), ".sheaf/trash/2026-01-01/old.md", 0); err != nil || string(data) != "old\n" {
		t.Errorf("trash after migrate: %q, %v", data, err)
	}
}
