package folder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/history/historytest"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

func newVault(t testing.TB) *fs.Store {
	t.Helper()
	v, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func open(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func harness(t *testing.T, h observed, vault store.Store) historytest.Harness {
	return historytest.Harness{
		Vault: vault, History: h,
		External: func(t *testing.T, path string, data []byte) {
			obj, err := vault.Put(t.Context(), path, data, store.PutOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Seen(t.Context(), path, data, obj); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestConformance(t *testing.T) {
	historytest.Run(t, func(t *testing.T) historytest.Harness {
		return harness(t, open(t, t.TempDir(), Options{}), newVault(t))
	})
}

// TestConformanceTwoProcesses: a second Store on the same folder (another
// process: the CLI next to the server) sees every version the first
// records, and records its own.
func TestConformanceTwoProcesses(t *testing.T) {
	historytest.Run(t, func(t *testing.T) historytest.Harness {
		dir := t.TempDir()
		a, b := open(t, dir, Options{NoSync: true}), open(t, dir, Options{NoSync: true})
		return harness(t, &alternating{a: a, b: b}, newVault(t))
	})
}

type observed interface {
	history.Store
	history.Observer
}

// alternating sends each call to a or b in turn.
type alternating struct {
	mu   sync.Mutex
	n    int
	a, b *Store
}

func (s *alternating) next() *Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.n%2 == 0 {
		return s.a
	}
	return s.b
}

func (s *alternating) Record(ctx context.Context, cs ...history.Change) ([]history.Version, error) {
	return s.next().Record(ctx, cs...)
}
func (s *alternating) List(ctx context.Context, p string, o history.ListOptions) (history.Page, error) {
	return s.next().List(ctx, p, o)
}
func (s *alternating) Read(ctx context.Context, p, id string) ([]byte, history.Version, error) {
	return s.next().Read(ctx, p, id)
}
func (s *alternating) Find(ctx context.Context, p, h string) (history.Version, error) {
	return s.next().Find(ctx, p, h)
}
func (s *alternating) Transaction(ctx context.Context, id string) ([]history.Version, error) {
	return s.next().Transaction(ctx, id)
}
func (s *alternating) Seen(ctx context.Context, p string, d []byte, o store.Object) error {
	return s.next().Seen(ctx, p, d, o)
}
func (s *alternating) Gone(ctx context.Context, p string) error { return s.next().Gone(ctx, p) }

func rec(t *testing.T, s *Store, cs ...history.Change) []history.Version {
	t.Helper()
	vs, err := s.Record(t.Context(), cs...)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func listAll(t *testing.T, s *Store, path string) []history.Version {
	t.Helper()
	p, err := s.List(t.Context(), path, history.ListOptions{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return p.Versions
}

// TestTornRecord: a crash mid-append loses only the record being written.
func TestTornRecord(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	rec(t, s, history.Change{Path: "a.md", Op: history.OpWrite, Data: []byte("one")})
	rec(t, s, history.Change{Path: "a.md", Op: history.OpOverwrite, Data: []byte("two"), Prev: []byte("one")})
	log := filepath.Join(dir, "log")
	full, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	third, err := encodeRecord(&record{Seq: 3, V: &history.Version{Path: "a.md", Op: history.OpOverwrite, Hash: history.Hash([]byte("three"))}})
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 7, 8, len(third) / 2, len(third) - 1} {
		if err := os.WriteFile(log, append(slices.Clone(full), third[:cut]...), 0o644); err != nil {
			t.Fatal(err)
		}
		r := open(t, dir, Options{})
		if vs := listAll(t, r, "a.md"); len(vs) != 2 || vs[0].Op != history.OpOverwrite {
			t.Fatalf("cut %d: %d versions", cut, len(vs))
		}
		if fi, _ := os.Stat(log); fi.Size() != int64(len(full)) {
			t.Errorf("cut %d: log is %d bytes after open, want the torn record truncated (%d)", cut, fi.Size(), len(full))
		}
		// The next record lands after the good ones.
		rec(t, r, history.Change{Path: "a.md", Op: history.OpOverwrite, Data: []byte("four"), Prev: []byte("two")})
		if vs := listAll(t, open(t, dir, Options{}), "a.md"); len(vs) != 3 {
			t.Fatalf("cut %d: %d versions after a new record, want 3", cut, len(vs))
		}
		if err := os.WriteFile(log, full, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A damaged byte in the middle ends the log there.
	bad := slices.Clone(full)
	bad[len(bad)-3] ^= 0xff
	if err := os.WriteFile(log, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if vs := listAll(t, open(t, dir, Options{}), "a.md"); len(vs) != 1 {
		t.Errorf("a damaged last record: %d versions, want 1", len(vs))
	}
}

// TestDedup: equal contents share one blob; blobs are compressed.
func TestDedup(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	text := bytes.Repeat([]byte("the same paragraph again and again\n"), 300)
	rec(t, s, history.Change{Path: "a.md", Op: history.OpWrite, Data: text})
	rec(t, s, history.Change{Path: "b.md", Op: history.OpWrite, Data: text})
	rec(t, s, history.Change{Path: "a.md", Op: history.OpOverwrite, Data: []byte("x"), Prev: text})
	rec(t, s, history.Change{Path: "a.md", Op: history.OpOverwrite, Data: text, Prev: []byte("x")})
	var n int
	var size int64
	filepath.WalkDir(filepath.Join(dir, "blobs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
			info, _ := d.Info()
			size += info.Size()
		}
		return nil
	})
	if n != 2 {
		t.Errorf("%d blobs, want 2 (one per distinct content)", n)
	}
	if size > int64(len(text))/10 {
		t.Errorf("blobs take %d bytes for %d of repetitive text", size, len(text))
	}
}

// TestWatcherFirst: the indexer saw a Sheaf write before the writer
// recorded it; the write's version takes the external one's place.
func TestWatcherFirst(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	alice := history.Author{Subject: "key:a", Name: "alice"}
	rec(t, s, history.Change{Path: "n.md", Op: history.OpWrite, Data: []byte("v1"), Author: alice})
	if err := s.Seen(t.Context(), "n.md", []byte("v2"), store.Object{}); err != nil {
		t.Fatal(err)
	}
	rec(t, s, history.Change{Path: "n.md", Op: history.OpOverwrite, Data: []byte("v2"), Prev: []byte("v1"), Author: alice})
	vs := listAll(t, s, "n.md")
	if len(vs) != 2 || vs[0].Op != history.OpOverwrite || vs[0].Author != alice || vs[0].Parent != vs[1].ID {
		t.Errorf("versions %+v", vs)
	}
	// Seen again, or a second time: nothing new.
	if err := s.Seen(t.Context(), "n.md", []byte("v2"), store.Object{}); err != nil {
		t.Fatal(err)
	}
	// A deletion the watcher saw first.
	if err := s.Gone(t.Context(), "n.md"); err != nil {
		t.Fatal(err)
	}
	rec(t, s, history.Change{Path: "n.md", Op: history.OpDelete, Prev: []byte("v2"), Author: alice, Tool: "delete_note"})
	vs = listAll(t, s, "n.md")
	if len(vs) != 3 || vs[0].Op != history.OpDelete || vs[0].Author != alice {
		t.Errorf("after delete: %+v", vs)
	}
	// A note history never held is not recorded when seen.
	if err := s.Seen(t.Context(), "new.md", []byte("x"), store.Object{}); err != nil {
		t.Fatal(err)
	}
	if vs := listAll(t, s, "new.md"); len(vs) != 0 {
		t.Errorf("an unknown note seen: %d versions", len(vs))
	}
	// An external change long after is a version of its own.
	if err := s.Seen(t.Context(), "n.md", []byte("back by hand"), store.Object{}); err != nil {
		t.Fatal(err)
	}
	if vs := listAll(t, s, "n.md"); len(vs) != 4 || vs[0].Op != history.OpExternal || vs[0].Author.Subject != history.External {
		t.Errorf("an external re-creation: %+v", vs[0])
	}
}

// TestPrune: versions beyond the policy go; never the current one, never
// those an open transaction needs; blobs follow.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := open(t, dir, Options{Policy: Policy{Days: 30, Keep: 2, OpenFor: time.Hour}, PruneEvery: -1, Now: clock})
	write := func(path, text, tx string) history.Version {
		t.Helper()
		var prev []byte
		if vs := listAll(t, s, path); len(vs) > 0 && !vs[0].Deleted() {
			prev, _, _ = s.Read(t.Context(), path, vs[0].ID)
		}
		return rec(t, s, history.Change{Path: path, Op: history.OpOverwrite, Data: []byte(text), Prev: prev, Transaction: tx})[0]
	}
	// a.md: 6 versions a day apart, 40 days ago.
	now = now.Add(-40 * 24 * time.Hour)
	for i := range 6 {
		write("a.md", fmt.Sprintf("a%d", i), "")
		now = now.Add(24 * time.Hour)
	}
	// b.md: an old note whose only version is current.
	write("b.md", "b-old", "")
	now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// c.md: a transaction started 40 days ago, still open (its last
	// write was 10 minutes ago).
	now = now.Add(-50 * 24 * time.Hour)
	write("c.md", "c-base", "")
	now = now.Add(10 * 24 * time.Hour)
	for i := range 3 {
		write("c.md", fmt.Sprintf("c%d", i), "tx-open")
		now = now.Add(time.Minute)
	}
	now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-10 * time.Minute)
	write("c.md", "c3", "tx-open")
	// d.md: a transaction closed long ago, but held.
	now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-60 * 24 * time.Hour)
	write("d.md", "d-base", "")
	for i := range 4 {
		now = now.Add(time.Hour)
		write("d.md", fmt.Sprintf("d%d", i), "tx-held")
	}
	now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.Hold(t.Context(), "tx-held", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Minute)
	st, err := s.Prune(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	texts := func(path string) []string {
		var out []string
		for _, v := range listAll(t, s, path) {
			data, _, err := s.Read(t.Context(), path, v.ID)
			if err != nil {
				t.Fatalf("%s %s: %v", path, v.ID, err)
			}
			out = append(out, string(data))
		}
		return out
	}
	// a.md: a5 is current; a4, a3 are the 2 kept by count; a2 stopped being
	// current 37 days ago... all older than 30 days: only count keeps them.
	if got := texts("a.md"); !slices.Equal(got, []string{"a5", "a4", "a3"}) {
		t.Errorf("a.md keeps %q", got)
	}
	if got := texts("b.md"); !slices.Equal(got, []string{"b-old"}) {
		t.Errorf("b.md keeps %q", got)
	}
	if got := texts("c.md"); !slices.Equal(got, []string{"c3", "c2", "c1", "c0", "c-base"}) {
		t.Errorf("c.md (open transaction) keeps %q", got)
	}
	if got := texts("d.md"); !slices.Equal(got, []string{"d3", "d2", "d1", "d0", "d-base"}) {
		t.Errorf("d.md (held transaction) keeps %q", got)
	}
	if st.Versions != 3 || st.Blobs != 3 {
		t.Errorf("Prune removed %+v, want 3 versions and their 3 blobs", st)
	}
	// Once the hold expires and the transactions close, they go too.
	now = now.Add(3 * time.Hour)
	if _, err := s.Prune(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := texts("c.md"); !slices.Equal(got, []string{"c3", "c2", "c1"}) {
		t.Errorf("c.md after its transaction closed keeps %q", got)
	}
	if got := texts("d.md"); !slices.Equal(got, []string{"d3", "d2", "d1"}) {
		t.Errorf("d.md after the hold keeps %q", got)
	}
	// A fresh open reads the rewritten log; IDs are stable.
	r := open(t, dir, Options{PruneEvery: -1, Now: clock})
	if a, b := listAll(t, r, "a.md"), listAll(t, s, "a.md"); len(a) != 3 || a[0].ID != b[0].ID {
		t.Errorf("reopened: %+v vs %+v", a, b)
	}
	// Recent versions are kept by age whatever the count.
	for i := range 5 {
		now = now.Add(time.Minute)
		write("e.md", fmt.Sprintf("e%d", i), "")
	}
	if _, err := s.Prune(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := texts("e.md"); len(got) != 5 {
		t.Errorf("e.md keeps %d recent versions, want 5", len(got))
	}
}

// TestRecordErrors: bad changes are refused and nothing is written.
func TestRecordErrors(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	for _, c := range []history.Change{
		{Path: "../x.md", Op: history.OpWrite},
		{Path: "/abs.md", Op: history.OpWrite},
		{Path: "a.md"},
	} {
		if _, err := s.Record(t.Context(), c); err == nil {
			t.Errorf("Record(%+v) succeeded", c)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Record(ctx, history.Change{Path: "a.md", Op: history.OpWrite}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled Record: %v", err)
	}
	if vs := listAll(t, s, "a.md"); len(vs) != 0 {
		t.Errorf("%d versions after refused records", len(vs))
	}
}

func FuzzDecodeRecord(f *testing.F) {
	good, _ := encodeRecord(&record{Seq: 7, V: &history.Version{Path: "a.md", Op: history.OpWrite, Hash: history.Hash(nil)}})
	f.Add(good)
	f.Add(good[:9])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, n, ok := decodeRecord(b)
		if !ok {
			return
		}
		if n > len(b) || n < 8 {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		again, err := encodeRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		if r2, _, ok := decodeRecord(again); !ok || r2.Seq != rec.Seq {
			t.Fatalf("a decoded record does not round-trip")
		}
	})
}

// TestPruneSeenByAnotherProcess: a store whose log another process
// rewrote (a prune) reads the new log, and appends after it.
func TestPruneSeenByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a := open(t, dir, Options{Policy: Policy{Days: 1, Keep: 1}, PruneEvery: -1, Now: clock})
	b := open(t, dir, Options{Policy: Policy{Days: 1, Keep: 1}, PruneEvery: -1, Now: clock})
	var prev []byte
	for i := range 5 {
		data := []byte(fmt.Sprint("v", i))
		rec(t, a, history.Change{Path: "n.md", Op: history.OpOverwrite, Data: data, Prev: prev})
		prev = data
		now = now.Add(48 * time.Hour)
	}
	if got := listAll(t, b, "n.md"); len(got) != 5 {
		t.Fatalf("b sees %d versions before the prune", len(got))
	}
	if st, err := a.Prune(t.Context()); err != nil || st.Versions != 3 {
		t.Fatalf("prune: %+v, %v", st, err)
	}
	got := listAll(t, b, "n.md")
	if len(got) != 2 {
		t.Fatalf("b sees %d versions after a's prune, want 2", len(got))
	}
	rec(t, b, history.Change{Path: "n.md", Op: history.OpOverwrite, Data: []byte("v5"), Prev: prev})
	if got := listAll(t, a, "n.md"); len(got) != 3 || got[0].Parent != got[1].ID {
		t.Errorf("a after b's append: %+v", got)
	}
	if data, _, err := a.Read(t.Context(), "n.md", got[1].ID); err != nil || string(data) != "v3" {
		t.Errorf("a reads %q, %v", data, err)
	}
}
