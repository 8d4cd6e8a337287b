// Package indexertest holds the fixtures the tests of the indexer and of
// its doors (s3events, the folder watcher) share: a folder vault with an
// in-memory text index, a store that fails on demand, and the check that
// a catalog and text index match what the store holds. Imported only by
// tests; it does not import the indexer, so the indexer's own tests can
// use it.
package indexertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// LocalVault writes files into a new folder and opens it (see OpenLocal).
func LocalVault(tb testing.TB, files map[string]string) (string, *fs.Store, *embedded.Index) {
	tb.Helper()
	dir := Folder(tb, files)
	st, text := OpenLocal(tb, dir)
	return dir, st, text
}

// Folder writes files (vault path to body) into a new folder and returns
// its path.
func Folder(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	for p, body := range files {
		Write(tb, dir, p, body)
	}
	return dir
}

// OpenLocal opens dir as an fs store, next to an in-memory text index
// closed at cleanup.
func OpenLocal(tb testing.TB, dir string) (*fs.Store, *embedded.Index) {
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

// Write writes body at vault path p under dir, making its folders.
func Write(tb testing.TB, dir, p, body string) {
	tb.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// WriteAt is Write with the file's modification time set to mtime, unless
// mtime is zero.
func WriteAt(tb testing.TB, dir, p, body string, mtime time.Time) {
	tb.Helper()
	Write(tb, dir, p, body)
	if mtime.IsZero() {
		return
	}
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.Chtimes(full, mtime, mtime); err != nil {
		tb.Fatal(err)
	}
}

// FileSnaps keeps the catalog in a folder beside path, as the local door
// does (local.FileSnapshots).
func FileSnaps(tb testing.TB, path string) *catalogstore.Snapshots {
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

// Saved loads the snapshot kept in st, as a fresh instance would.
func Saved(tb testing.TB, st store.Store) *vault.Catalog {
	tb.Helper()
	c, err := (&catalogstore.Snapshots{Store: st}).Load(context.Background())
	if err != nil || c == nil {
		tb.Fatalf("loading the snapshot: %v", err)
	}
	return c
}

// Search returns the paths text finds for q.
func Search(tb testing.TB, text textindex.Index, q string) []string {
	tb.Helper()
	res, err := text.Search(context.Background(), textindex.ParseQuery(q), textindex.Options{Limit: 100})
	if err != nil {
		tb.Fatal(err)
	}
	var ps []string
	for _, h := range res.Hits {
		ps = append(ps, h.Path)
	}
	return ps
}

// NotePaths lists the paths of c's notes.
func NotePaths(c *vault.Catalog) []string {
	var ps []string
	for _, n := range c.Notes() {
		ps = append(ps, n.Path)
	}
	return ps
}

// BenchVault is the folder of a generated 10k-note vault: SHEAF_BENCH_VAULT
// when set, else one made under /dev/shm when possible (to time Sheaf
// rather than this machine's slow file creation), removed at cleanup.
func BenchVault(b *testing.B, prefix string) string {
	b.Helper()
	if dir := os.Getenv("SHEAF_BENCH_VAULT"); dir != "" {
		return dir
	}
	base := ""
	if _, err := os.Stat("/dev/shm"); err == nil {
		base = "/dev/shm"
	}
	tmp, err := os.MkdirTemp(base, prefix)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(tmp) })
	dir := filepath.Join(tmp, "v")
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: 10000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// FlakyStore fails Stat and Get for chosen paths, loses Put answers on
// demand and counts Stat calls.
type FlakyStore struct {
	store.Store
	mu    sync.Mutex
	fail  map[string]error
	lost  map[string]int
	Stats atomic.Int64
}

func (s *FlakyStore) Stat(ctx context.Context, p string) (store.Object, error) {
	s.Stats.Add(1)
	s.mu.Lock()
	err := s.fail[p]
	s.mu.Unlock()
	if err != nil {
		return store.Object{}, err
	}
	return s.Store.Stat(ctx, p)
}

func (s *FlakyStore) Get(ctx context.Context, p string, max int64) ([]byte, store.Object, error) {
	s.mu.Lock()
	err := s.fail[p]
	s.mu.Unlock()
	if err != nil {
		return nil, store.Object{}, err
	}
	return s.Store.Get(ctx, p, max)
}

// Put writes, then, for a path LoseOn named, fails as a timeout would:
// the store made the write but the caller never heard.
func (s *FlakyStore) Put(ctx context.Context, p string, data []byte, opts store.PutOptions) (store.Object, error) {
	s.mu.Lock()
	lost := s.lost[p] > 0
	if lost {
		s.lost[p]--
	}
	s.mu.Unlock()
	obj, err := s.Store.Put(ctx, p, data, opts)
	if err == nil && lost {
		return store.Object{}, fmt.Errorf("put %s: %w", p, context.DeadlineExceeded)
	}
	return obj, err
}

// LoseOn makes the next n Puts of p lose their answer.
func (s *FlakyStore) LoseOn(p string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		s.lost = map[string]int{}
	}
	s.lost[p] = n
}

// FailOn makes Stat and Get of p fail with err.
func (s *FlakyStore) FailOn(p string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail == nil {
		s.fail = map[string]error{}
	}
	s.fail[p] = err
}

// StoreState is what the catalog and the text index must hold for st:
// every indexable note, path -> content hash.
func StoreState(tb testing.TB, st store.Store, maxBytes int64) map[string]string {
	tb.Helper()
	want := map[string]string{}
	err := st.List(context.Background(), "", func(o store.Object) error {
		if !vault.IsNotePath(o.Path) {
			return nil
		}
		data, _, err := st.Get(context.Background(), o.Path, maxBytes)
		if errors.Is(err, store.ErrTooLarge) {
			return nil
		}
		if err != nil {
			return err
		}
		if errors.Is(vault.Check(data), vault.ErrBinary) {
			return nil
		}
		sum := sha256.Sum256(data)
		want[o.Path] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return want
}

// AssertMatchesStore checks catalog paths+hashes and text-index paths
// against a fresh listing of st (notes read up to maxBytes).
func AssertMatchesStore(tb testing.TB, st store.Store, maxBytes int64, text textindex.Index, c *vault.Catalog) {
	tb.Helper()
	want := StoreState(tb, st, maxBytes)
	got := map[string]string{}
	for _, n := range c.Notes() {
		got[n.Path] = n.Hash
	}
	for p, h := range want {
		if got[p] != h {
			tb.Errorf("catalog: %q has hash %q, store %q", p, got[p], h)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			tb.Errorf("catalog: %q is not in the store", p)
		}
	}
	paths, err := text.Paths(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	for p := range want {
		if _, ok := paths[p]; !ok {
			tb.Errorf("text index lacks %q", p)
		}
	}
	for p := range paths {
		if _, ok := want[p]; !ok {
			tb.Errorf("text index has %q, not in the store", p)
		}
	}
}
