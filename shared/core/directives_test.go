package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

func TestPendingDirectives(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	ctx := context.Background()
	all, err := f.s.PendingDirectives(ctx, pendingDirectivesIn{Page: Page{Limit: 50}})
	if err != nil {
		t.Fatal(err)
	}
	want := []DirectiveItem{
		{Path: "Inbox/a.md", Line: 3, Title: "First task", Body: "do it well"},
		{Path: "Inbox/b.md", Line: 1, Title: "Second task"},
		{Path: "Projects/p.md", Line: 7, Title: "Third"},
	}
	if len(all.Items) != len(want) {
		t.Fatalf("got %+v, want %+v", all.Items, want)
	}
	for i := range want {
		if all.Items[i] != want[i] {
			t.Errorf("directive %d: %+v, want %+v", i, all.Items[i], want[i])
		}
	}
	for path, n := range map[string]int{"Inbox": 2, "Inbox/": 2, "Inbox/b.md": 1, "inbox/B.md": 1, "Projects/p.md": 1, "Projects/p": 1, "Nowhere": 0, "Inbo": 0} {
		got, err := f.s.PendingDirectives(ctx, pendingDirectivesIn{Path: path, Page: Page{Limit: 50}})
		if err != nil || got.Total != n {
			t.Errorf("path %q: %+v %v, want %d", path, got, err, n)
		}
	}
	if _, err := f.s.PendingDirectives(ctx, pendingDirectivesIn{Path: "Inbox/missing.md", Page: Page{Limit: 50}}); kindOfErr(err) != KindNoteNotFound {
		t.Errorf("missing note: %v, want note-not-found", err)
	}
	if _, err := f.s.PendingDirectives(ctx, pendingDirectivesIn{Path: "../x.md", Page: Page{Limit: 50}}); kindOfErr(toError(err)) != KindPathInvalid {
		t.Errorf("traversal: %v, want path-invalid", err)
	}
}

func TestAwaitTimeoutClamp(t *testing.T) {
	for _, c := range []struct {
		req     int64
		limit   time.Duration
		wait    time.Duration
		clamped int64
	}{
		{25000, 0, 25 * time.Second, 0},
		{0, 0, time.Second, 1000},
		{-5, 0, time.Second, 1000},
		{999999, 0, 55 * time.Second, 55000},
		{55000, 25 * time.Second, 25 * time.Second, 25000},
		{20000, 25 * time.Second, 20 * time.Second, 0},
	} {
		wait, clamped := awaitTimeout(c.req, c.limit)
		if wait != c.wait || clamped != c.clamped {
			t.Errorf("awaitTimeout(%d, %v) = %v, %d; want %v, %d", c.req, c.limit, wait, clamped, c.wait, c.clamped)
		}
	}
}

// await calls AwaitDirectives and reports how long it took.
func await(t *testing.T, f *dirFixture, in awaitDirectivesIn) (*awaitDirectivesOut, time.Duration) {
	t.Helper()
	if in.Limit == 0 {
		in.Limit = 25
	}
	if in.TimeoutMs == 0 {
		in.TimeoutMs = 5000
	}
	start := time.Now()
	out, err := f.s.AwaitDirectives(context.Background(), in)
	if err != nil {
		t.Fatalf("await_directives(%+v): %v", in, err)
	}
	return out, time.Since(start)
}

func storedState(t *testing.T, st store.Store) directiveState {
	t.Helper()
	data, _, err := st.Get(context.Background(), directiveStatePath, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ds directiveState
	if err := json.Unmarshal(data, &ds); err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestDirectiveRevision(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	first, took := await(t, f, awaitDirectivesIn{})
	if first.TimedOut || first.Cursor != 1 || len(first.Directives) != 3 || took > time.Second {
		t.Fatalf("first call: %+v after %v", first, took)
	}
	if ds := storedState(t, f.st); ds.Revision != 1 || ds.Digest != pendingOf(f.cat).digest {
		t.Errorf("stored state %+v", ds)
	}
	scoped, _ := await(t, f, awaitDirectivesIn{Path: "Inbox", Limit: 1})
	if len(scoped.Directives) != 1 || scoped.Directives[0].Path != "Inbox/a.md" {
		t.Errorf("path+limit: %+v", scoped)
	}

	// Writes that leave the pending set alone do not advance the revision.
	before := pendingOf(f.cat)
	f.write("plain.md", "# Plain\nedited, @claude mentioned\n")
	f.write("New.md", "> [!ai-done] already done\n")
	if pendingOf(f.cat).digest != before.digest {
		t.Fatal("unrelated writes changed the digest")
	}
	out, took := await(t, f, awaitDirectivesIn{Cursor: 1, TimeoutMs: 1000})
	if !out.TimedOut || out.Cursor != 1 || len(out.Directives) != 0 || took < 900*time.Millisecond {
		t.Errorf("unrelated writes: %+v after %v, want a timeout after 1s", out, took)
	}

	// Each change of the set advances it by one and wakes a waiter.
	changes := []struct{ why, path, src string }{
		{"added", "Inbox/c.md", "> [!ai] Fourth\n"},
		{"body edited", "Inbox/c.md", "> [!ai] Fourth\n> with a body\n"},
		{"moved down a line", "Inbox/c.md", "\n> [!ai] Fourth\n> with a body\n"},
		{"completed", "Inbox/c.md", "\n> [!ai-done] Fourth\n> with a body\n"},
	}
	cursor := int64(1)
	for _, c := range changes {
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(300 * time.Millisecond)
			f.write(c.path, c.src)
		}()
		out, took := await(t, f, awaitDirectivesIn{Cursor: cursor})
		<-done
		if out.TimedOut || out.Cursor != cursor+1 || took > 2*time.Second {
			t.Fatalf("%s: %+v after %v, want cursor %d at once", c.why, out, took, cursor+1)
		}
		cursor = out.Cursor
	}
	if got, _ := await(t, f, awaitDirectivesIn{Cursor: cursor - 2}); got.Cursor != cursor || len(got.Directives) != 3 {
		t.Errorf("an old cursor: %+v, want the current set at once", got)
	}
	if got, took := await(t, f, awaitDirectivesIn{Cursor: cursor + 100}); got.Cursor != cursor || took > time.Second {
		t.Errorf("a cursor from the future: %+v after %v, want the current set at once", got, took)
	}
}

// TestRevisionSharedByServers: two servers over one store keep one
// revision, whoever sees a change first.
func TestRevisionSharedByServers(t *testing.T) {
	a := newDirFixture(t, agentVault, nil)
	b := newDirFixture(t, agentVault, a.st)
	ra, _ := await(t, a, awaitDirectivesIn{})
	rb, _ := await(t, b, awaitDirectivesIn{})
	if ra.Cursor != 1 || rb.Cursor != 1 {
		t.Fatalf("cursors %d and %d, want 1 and 1", ra.Cursor, rb.Cursor)
	}
	// b waits; a sees a new directive (and so, later, does b's catalog).
	done := make(chan *awaitDirectivesOut)
	go func() {
		out, _ := await(t, b, awaitDirectivesIn{Cursor: 1, TimeoutMs: 10000})
		done <- out
	}()
	time.Sleep(200 * time.Millisecond)
	a.write("Inbox/new.md", "> [!ai] From a\n")
	if out, _ := await(t, a, awaitDirectivesIn{}); out.Cursor != 2 {
		t.Fatalf("a: cursor %d, want 2", out.Cursor)
	}
	time.Sleep(300 * time.Millisecond)
	b.write("Inbox/new.md", "> [!ai] From a\n")
	start := time.Now()
	out := <-done
	if out.TimedOut || out.Cursor != 2 || len(out.Directives) != 4 {
		t.Errorf("b: %+v, want cursor 2 and 4 directives", out)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("b woke %v after its catalog caught up", d)
	}
	if ds := storedState(t, a.st); ds.Revision != 2 {
		t.Errorf("revision %d after one change seen by two servers, want 2", ds.Revision)
	}
}

// TestLaggingServerWaitsForItsCatalog: a revision another server advanced
// for a set this server's catalog lacks does not wake its waiters with a
// stale set; the first call after the catalog catches up answers at once.
func TestLaggingServerWaitsForItsCatalog(t *testing.T) {
	a := newDirFixture(t, agentVault, nil)
	b := newDirFixture(t, agentVault, a.st)
	await(t, a, awaitDirectivesIn{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		a.write("Inbox/new.md", "> [!ai] From a\n")
		await(t, a, awaitDirectivesIn{})
	}()
	out, took := await(t, b, awaitDirectivesIn{Cursor: 1, TimeoutMs: 1500})
	if !out.TimedOut || out.Cursor != 1 || took < 1400*time.Millisecond {
		t.Errorf("b without the change: %+v after %v, want a timeout at cursor 1", out, took)
	}
	b.write("Inbox/new.md", "> [!ai] From a\n")
	out, took = await(t, b, awaitDirectivesIn{Cursor: 1, TimeoutMs: 5000})
	if out.TimedOut || out.Cursor != 2 || len(out.Directives) != 4 || took > time.Second {
		t.Errorf("b caught up: %+v after %v, want cursor 2 at once", out, took)
	}
}

// TestScopedAwaitIgnoresOtherFolders: a change outside path does not wake
// a scoped call; its timeout carries the newer cursor, which then blocks.
func TestScopedAwaitIgnoresOtherFolders(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	await(t, f, awaitDirectivesIn{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		f.write("Inbox/new.md", "> [!ai] Elsewhere\n")
	}()
	out, took := await(t, f, awaitDirectivesIn{Cursor: 1, Path: "Projects", TimeoutMs: 1200})
	if !out.TimedOut || out.Cursor != 2 || took < 1100*time.Millisecond {
		t.Errorf("scoped: %+v after %v, want a timeout carrying cursor 2", out, took)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		f.write("Projects/q.md", "> [!ai] Here\n")
	}()
	out, took = await(t, f, awaitDirectivesIn{Cursor: 2, Path: "Projects", TimeoutMs: 5000})
	if out.TimedOut || out.Cursor != 3 || len(out.Directives) != 2 || took > 2*time.Second {
		t.Errorf("scoped change: %+v after %v, want cursor 3 with 2 directives", out, took)
	}
}

func TestAwaitCancelled(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	await(t, f, awaitDirectivesIn{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.s.AwaitDirectives(ctx, awaitDirectivesIn{Cursor: 1, TimeoutMs: 20000, Limit: 25})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("cancelled wait: %v after %v", err, time.Since(start))
	}
}

func TestAwaitMaxWait(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	f.v.MaxWait = 1500 * time.Millisecond
	await(t, f, awaitDirectivesIn{})
	out, took := await(t, f, awaitDirectivesIn{Cursor: 1, TimeoutMs: 30000})
	if !out.TimedOut || out.ClampedTimeoutMs != 1500 || took > 3*time.Second {
		t.Errorf("%+v after %v, want a timeout clamped to 1500 ms", out, took)
	}
}

func TestDamagedStateRestarts(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	if _, err := f.st.Put(context.Background(), directiveStatePath, []byte("{not json"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, _ := await(t, f, awaitDirectivesIn{}); out.Cursor != 1 || len(out.Directives) != 3 {
		t.Errorf("damaged state: %+v", out)
	}
}

func TestPendingSetCache(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	one := pendingOf(f.cat)
	if pendingOf(f.cat) != one {
		t.Error("same generation recomputed")
	}
	f.write("plain.md", "# changed\n")
	two := pendingOf(f.cat)
	if two == one || two.digest != one.digest {
		t.Error("a new generation must recompute the same digest")
	}
	other := newDirFixture(t, map[string]string{"x.md": "> [!ai] X\n"}, nil)
	if pendingOf(other.cat).digest == two.digest {
		t.Error("different catalogs share a set")
	}
}

// BenchmarkPendingSet measures recomputing the directive set of a
// 10,000-note vault after a write (one new generation per iteration).
func BenchmarkPendingSet(b *testing.B) {
	cat := vault.NewCatalog()
	for i := range 10000 {
		src := fmt.Sprintf("# Note %d\nsome text @claude\n", i)
		if i%100 == 0 {
			src += "\n> [!ai] Task\n> body\n"
		}
		cat.Upsert(vault.Parse(fmt.Sprintf("f%02d/n%05d.md", i%50, i), []byte(src)).Note)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		cat.Upsert(vault.Note{Path: "plain.md", Name: "plain", Title: fmt.Sprint(i)})
		if len(pendingOf(cat).all) != 100 {
			b.Fatal("wrong set")
		}
	}
}
