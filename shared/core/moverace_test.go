package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	s3store "github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// The concurrent-move suite: pairs of notes that link to each other, both
// notes of every pair moved at the same moment (by one core, by two cores
// on one folder, by two cores on one bucket), then every link in the vault
// must resolve or be reported in not_rewritten.

// pairCount is how many linked pairs each test moves at once.
const pairCount = 40

// pairVault writes n pairs: Pairs/Alpha i.md links to Pairs/Beta i.md and
// back, and a Hub note links to every one of them.
func pairVault(t testing.TB, st store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	var hub strings.Builder
	hub.WriteString("# Hub\n\n")
	for i := range n {
		a, b := fmt.Sprintf("Alpha %d", i), fmt.Sprintf("Beta %d", i)
		put := func(p, text string) {
			if _, err := st.Put(ctx, p, []byte(text), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		put("Pairs/"+a+".md", "# "+a+"\n\nSee [["+b+"]] and [the other](./"+strings.ReplaceAll(b, " ", "%20")+".md).\n")
		put("Pairs/"+b+".md", "# "+b+"\n\nSee [["+a+"]].\n")
		fmt.Fprintf(&hub, "- [[%s]] [[%s]]\n", a, b)
	}
	if _, err := st.Put(ctx, "Hub.md", []byte(hub.String()), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// indexStore indexes st into a new catalog (no watcher: only Reindex, as
// a write tool calls it, brings it up to date).
func indexStore(t testing.TB, st store.Store) *indexer.Indexer {
	t.Helper()
	text, err := embedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { text.Close() })
	ix := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Log: slog.New(slog.DiscardHandler)}
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix
}

// coreOn is a core over st with its own index, as one server has.
func coreOn(t testing.TB, st store.Store) *Core {
	t.Helper()
	ix := indexStore(t, st)
	s, err := New(&Vault{ID: "v", Store: st, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}, Reindex: ix, Ledger: "off"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dangling lists every link of the vault in st, read afresh, that resolves
// to nothing, as "note: link".
func dangling(t testing.TB, st store.Store) []string {
	t.Helper()
	ctx := context.Background()
	cat := vault.NewCatalog()
	err := st.List(ctx, "", func(o store.Object) error {
		if !vault.IsNotePath(o.Path) {
			return nil
		}
		data, _, err := st.Get(ctx, o.Path, 0)
		if err != nil {
			return err
		}
		cat.Upsert(vault.Parse(o.Path, data).Note)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range cat.Paths() {
		for _, l := range cat.Outgoing(p) {
			if !l.Resolved() {
				out = append(out, p+": "+l.Target)
			}
		}
	}
	return out
}

// movePairs moves, at once, Alpha i through a and Beta i through b (a
// and b may be the same core), each to a new name in another folder, and
// returns the entries of not_rewritten.
func movePairs(t *testing.T, a, b *Core, n int) []NotRewritten {
	t.Helper()
	ctx := context.Background()
	var (
		mu  sync.Mutex
		not []NotRewritten
		wg  sync.WaitGroup
	)
	for i := range n {
		for _, m := range []struct {
			s        *Core
			from, to string
		}{
			{a, fmt.Sprintf("Pairs/Alpha %d.md", i), fmt.Sprintf("Moved/A/First %d.md", i)},
			{b, fmt.Sprintf("Pairs/Beta %d.md", i), fmt.Sprintf("Moved/B/Second %d.md", i)},
		} {
			wg.Go(func() {
				out, err := m.s.MoveNote(ctx, MoveNoteIn{Path: m.from, NewPath: m.to})
				if err != nil {
					t.Errorf("move %s: %v", m.from, err)
					return
				}
				mu.Lock()
				not = append(not, out.NotRewritten...)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return not
}

// checkPairs checks the moved vault: every note at its new path, no link
// dangling, nothing reported unrewritten.
func checkPairs(t *testing.T, st store.Store, n int, not []NotRewritten) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		for _, p := range []string{fmt.Sprintf("Moved/A/First %d.md", i), fmt.Sprintf("Moved/B/Second %d.md", i)} {
			if _, err := st.Stat(ctx, p); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
	}
	d := dangling(t, st)
	if len(d) > 0 || len(not) > 0 {
		t.Errorf("%d links dangling (%v), %d notes not rewritten (%v)", len(d), clip(d), len(not), not)
	}
	t.Logf("%d pairs moved at once: %d links dangling, %d not rewritten", n, len(d), len(not))
}

func clip(s []string) []string { return s[:min(len(s), 5)] }

func TestConcurrentMovesOneCore(t *testing.T) {
	dir := t.TempDir()
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pairVault(t, st, pairCount)
	s := coreOn(t, st)
	checkPairs(t, st, pairCount, movePairs(t, s, s, pairCount))
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(moveLockPath))); err != nil {
		t.Errorf("the lock object: %v", err)
	}
}

// TestConcurrentMovesTwoCores: two servers on one folder, each with its own
// catalog that only its own writes update (as a watcher that has not
// caught up): the journal in the lock object brings each up to date.
func TestConcurrentMovesTwoCores(t *testing.T) {
	dir := t.TempDir()
	open := func() store.Store {
		st, err := fs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	st1 := open()
	pairVault(t, st1, pairCount)
	a, b := coreOn(t, st1), coreOn(t, open())
	checkPairs(t, st1, pairCount, movePairs(t, a, b, pairCount))
}

// TestConcurrentMovesS3: two servers on one bucket (versitygw), as two
// Lambda instances: the lock object under .sheaf/ is taken with
// conditional writes.
func TestConcurrentMovesS3(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	srv.CreateBucket(t, "moves")
	st1 := s3store.New(srv.Client(t), "moves", "vault")
	st2 := s3store.New(srv.Client(t), "moves", "vault")
	n := pairCount / 2
	pairVault(t, st1, n)
	a, b := coreOn(t, st1), coreOn(t, st2)
	checkPairs(t, st1, n, movePairs(t, a, b, n))
}

// TestMoveWithoutLockLeavesLinks shows what the lock prevents: the same
// moves, planned from catalogs that do not know of each other's moves and
// without the journal, leave links dangling (so the suite above can fail).
func TestMoveWithoutLockLeavesLinks(t *testing.T) {
	dir := t.TempDir()
	st1, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st1.Close() })
	pairVault(t, st1, 4)
	a, b := coreOn(t, st1), coreOn(t, st1)
	ctx := context.Background()
	for i := range 4 {
		if _, err := a.MoveNote(ctx, MoveNoteIn{Path: fmt.Sprintf("Pairs/Alpha %d.md", i), NewPath: fmt.Sprintf("Moved/A/First %d.md", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// b's catalog still holds Pairs/Alpha i.md; with the journal gone, b
	// plans from it alone.
	if err := st1.Delete(ctx, moveLockPath, ""); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := b.MoveNote(ctx, MoveNoteIn{Path: fmt.Sprintf("Pairs/Beta %d.md", i), NewPath: fmt.Sprintf("Moved/B/Second %d.md", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if d := dangling(t, st1); len(d) == 0 {
		t.Error("without the journal no link was left dangling: the suite cannot tell the lock's work")
	} else {
		t.Logf("without the journal: %d links dangling, e.g. %v", len(d), clip(d))
	}
}

// TestMoveVersusDelete races moves against deletes of the moved note and
// of notes linking to it: every answer succeeds or has a kind from the
// catalogue other than internal, and no link is left dangling to a note
// that still exists.
func TestMoveVersusDelete(t *testing.T) {
	dir := t.TempDir()
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const n = 30
	pairVault(t, st, n)
	s := coreOn(t, st)
	other := coreOn(t, st)
	ctx := context.Background()
	var wg sync.WaitGroup
	kinds := map[Kind]int{}
	var mu sync.Mutex
	note := func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			kinds["ok"]++
			return
		}
		k := toError(err).Kind
		kinds[k]++
		if k == KindInternal || toError(err).Message == "" {
			t.Errorf("%s: %s %q", what, k, toError(err).Message)
		}
	}
	for i := range n {
		a, b := fmt.Sprintf("Pairs/Alpha %d.md", i), fmt.Sprintf("Pairs/Beta %d.md", i)
		wg.Go(func() {
			_, err := s.MoveNote(ctx, MoveNoteIn{Path: a, NewPath: fmt.Sprintf("Moved/First %d.md", i)})
			note("move "+a, err)
		})
		wg.Go(func() {
			// a delete through another server (no lock shared in process),
			// and straight on the store, as a person would
			if i%2 == 0 {
				_, err := other.DeleteNote(ctx, DeleteNoteIn{Path: a, Confirm: true})
				note("delete "+a, err)
			} else {
				_ = os.Remove(filepath.Join(dir, filepath.FromSlash(a)))
			}
		})
		wg.Go(func() {
			_, err := s.MoveNote(ctx, MoveNoteIn{Path: b, NewPath: fmt.Sprintf("Moved/Second %d.md", i)})
			note("move "+b, err)
		})
	}
	wg.Wait()
	t.Logf("answers: %v", kinds)
	// The links left unresolved may only name a deleted Alpha.
	for _, d := range dangling(t, st) {
		if !strings.Contains(d, ": Alpha ") && !strings.Contains(d, ": ./Alpha%20") {
			t.Errorf("dangling link not to a deleted note: %s", d)
		}
	}
}

// TestMoveReportsImmutableLinks: a note under an immutable path keeps its
// links as written, and the answer says which note and where the note its
// links name went; every other link is rewritten.
func TestMoveReportsImmutableLinks(t *testing.T) {
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	for p, text := range map[string]string{
		"Target.md":          "# Target\n",
		"sources/Capture.md": "Captured: [[Target]]\n",
		"Daily.md":           "About [[Target]].\n",
	} {
		if _, err := st.Put(ctx, p, []byte(text), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ix := indexStore(t, st)
	s, err := New(&Vault{ID: "v", Store: st, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}, Reindex: ix, Ledger: "off", ImmutablePaths: []string{"sources/"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.MoveNote(ctx, MoveNoteIn{Path: "Target.md", NewPath: "Archive/Renamed.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NotRewritten) != 1 || out.NotRewritten[0].Path != "sources/Capture.md" || out.NotRewritten[0].MovedTo != "Archive/Renamed.md" {
		t.Errorf("not_rewritten: %+v", out.NotRewritten)
	}
	if d := dangling(t, st); len(d) != 1 || d[0] != "sources/Capture.md: Target" {
		t.Errorf("dangling: %v, want only the immutable note's", d)
	}
}

// TestMoveLockHeldAndLapsed: a lock another process holds makes a move
// wait, then answer target-is-being-edited with retry_after_ms (nothing
// moved); a lock whose holder died (lapsed) is taken over at once.
func TestMoveLockHeldAndLapsed(t *testing.T) {
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	pairVault(t, st, 1)
	ix := indexStore(t, st)
	s, err := New(&Vault{ID: "v", Store: st, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}, Reindex: ix, Ledger: "off", MaxWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hold := func(expires time.Time) {
		data, _ := json.Marshal(moveLockBody{Holder: "another", Expires: expires})
		if _, err := st.Put(ctx, moveLockPath, data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	in := MoveNoteIn{Path: "Pairs/Alpha 0.md", NewPath: "Moved/First 0.md"}
	hold(time.Now().Add(time.Minute))
	te := wantKind(t, "a move while another holds the lock", errOf(s.MoveNote(ctx, in)), KindTargetIsBeingEdited)
	if te != nil && te.Fields["retry_after_ms"] == nil {
		t.Errorf("no retry_after_ms: %+v", te.Fields)
	}
	if _, err := st.Stat(ctx, in.Path); err != nil {
		t.Errorf("the refused move moved the note: %v", err)
	}
	hold(time.Now().Add(-time.Second))
	if _, err := s.MoveNote(ctx, in); err != nil {
		t.Fatalf("a move over a lapsed lock: %v", err)
	}
	data, _, err := st.Get(ctx, moveLockPath, 0)
	if err != nil {
		t.Fatal(err)
	}
	var body moveLockBody
	if err := json.Unmarshal(data, &body); err != nil || body.Holder != "" || len(body.Journal) != 1 || body.Journal[0].To != in.NewPath {
		t.Errorf("after the move the lock object reads %s (%v)", data, err)
	}
}

// TestMoveRewritesLateLinkers: a note that comes to link to the moved note
// while the move writes (another process's create, reported by the
// watcher before the move is done) is rewritten too.
func TestMoveRewritesLateLinkers(t *testing.T) {
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	pairVault(t, st, 1)
	ix := indexStore(t, st)
	s, err := New(&Vault{ID: "v", Store: st, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}, Reindex: ix, Ledger: "off"})
	if err != nil {
		t.Fatal(err)
	}
	moveAppliedHook = func() {
		if _, err := st.Put(ctx, "Late.md", []byte("Written meanwhile: [[Alpha 0]].\n"), store.PutOptions{IfNoneMatch: true}); err != nil {
			t.Error(err)
		}
		if err := ix.Reindex(ctx, "Late.md"); err != nil { // as the watcher reports it
			t.Error(err)
		}
	}
	t.Cleanup(func() { moveAppliedHook = func() {} })
	out, err := s.MoveNote(ctx, MoveNoteIn{Path: "Pairs/Alpha 0.md", NewPath: "Moved/First 0.md"})
	if err != nil {
		t.Fatal(err)
	}
	if d := dangling(t, st); len(d) > 0 {
		t.Errorf("links dangling: %v (rewritten %+v)", d, out.Rewritten)
	}
	found := false
	for _, r := range out.Rewritten {
		found = found || r.Path == "Late.md"
	}
	if !found {
		t.Errorf("Late.md is not in rewritten: %+v", out.Rewritten)
	}
}

// cancelOnPut cancels a context when the store is first asked to write
// the path at.
type cancelOnPut struct {
	store.Store
	at     string
	cancel context.CancelFunc
}

func (c cancelOnPut) Put(ctx context.Context, p string, data []byte, o store.PutOptions) (store.Object, error) {
	if p == c.at {
		c.cancel()
	}
	return c.Store.Put(ctx, p, data, o)
}

// TestMoveCancelledCompletes: a call cancelled once the move has begun
// writing (a client timing out) still moves the note and rewrites every
// link to it: never the note in two places, or links half rewritten.
func TestMoveCancelledCompletes(t *testing.T) {
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const n = 20
	pairVault(t, st, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := coreOn(t, cancelOnPut{Store: st, at: "Moved Hub.md", cancel: cancel})
	if _, err := s.MoveNote(ctx, MoveNoteIn{Path: "Pairs/Alpha 0.md", NewPath: "Moved Hub.md"}); err != nil {
		t.Fatalf("move cancelled midway: %v", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the call was not cancelled: the test tests nothing")
	}
	if _, err := st.Stat(context.Background(), "Pairs/Alpha 0.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the note is still at its old path too (%v)", err)
	}
	if d := dangling(t, st); len(d) > 0 {
		t.Errorf("links left dangling: %v", d)
	}
}

// alwaysConflict fails every conditional write of the path at, as if
// another writer always wrote first.
type alwaysConflict struct {
	store.Store
	at string
}

func (a alwaysConflict) Put(ctx context.Context, p string, data []byte, o store.PutOptions) (store.Object, error) {
	if p == a.at {
		return store.Object{}, store.ErrConflict
	}
	return a.Store.Put(ctx, p, data, o)
}

// TestBusyWriteSaysSo: a write without expected_hash that others keep
// beating says it was busy (send again), not that a hash was stale.
func TestBusyWriteSaysSo(t *testing.T) {
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pairVault(t, st, 1)
	s := coreOn(t, alwaysConflict{Store: st, at: "Hub.md"})
	te := wantKind(t, "append under contention", errOf(s.WriteNote(context.Background(), WriteNoteIn{Path: "Hub.md", Mode: "append", Content: "x\n"})), KindProposalStale)
	if te != nil && (te.Fields["reason"] != "busy" || strings.Contains(te.Message, "content_hash")) {
		t.Errorf("busy append: %v %q", te.Fields, te.Message)
	}
}
