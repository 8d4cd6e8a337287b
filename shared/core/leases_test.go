package core

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

func directivePaths(ds []DirectiveItem) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s:%d", d.Path, d.Line))
	}
	return out
}

func claim(t *testing.T, f *dirFixture, worker string) *awaitDirectivesOut {
	t.Helper()
	out, _ := await(t, f, awaitDirectivesIn{Worker: worker, Claim: true})
	return out
}

func leaseCount(t *testing.T, st store.Store) int {
	t.Helper()
	ls, err := loadLeases(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return len(ls)
}

func TestLeases(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	a := claim(t, f, "worker-a")
	if len(a.Directives) != 3 || len(a.Leases) != 3 {
		t.Fatalf("a: %+v", a)
	}
	wantExpiry := f.clock.Now().Add(leaseTTL).Format(time.RFC3339)
	for _, l := range a.Leases {
		if l.Worker != "worker-a" || l.Expires != wantExpiry {
			t.Errorf("lease %+v, want worker-a until %s", l, wantExpiry)
		}
	}
	if b := claim(t, f, "worker-b"); len(b.Directives) != 0 || len(b.Leases) != 0 {
		t.Errorf("b got directives leased to a: %+v", b)
	}
	if b, _ := await(t, f, awaitDirectivesIn{Worker: "worker-b"}); len(b.Directives) != 0 {
		t.Errorf("b (no claim) got directives leased to a: %+v", b)
	}
	if anon, _ := await(t, f, awaitDirectivesIn{}); len(anon.Directives) != 3 || anon.Leases != nil {
		t.Errorf("a call without worker must see everything: %+v", anon)
	}

	// a reconnects a minute later: its leases are still its own, renewed.
	f.clock.Add(time.Minute)
	if again := claim(t, f, "worker-a"); len(again.Directives) != 3 || again.Leases[0].Expires != f.clock.Now().Add(leaseTTL).Format(time.RFC3339) {
		t.Errorf("a after reconnect: %+v", again)
	}
	// a crashes; once its leases lapse b takes them over.
	f.clock.Add(leaseTTL - time.Second)
	if b := claim(t, f, "worker-b"); len(b.Directives) != 0 {
		t.Errorf("b before the leases lapse: %+v", b)
	}
	f.clock.Add(2 * time.Second)
	if b := claim(t, f, "worker-b"); len(b.Directives) != 3 {
		t.Errorf("b after the leases lapse: %+v", b)
	}
	if a := claim(t, f, "worker-a"); len(a.Directives) != 0 {
		t.Errorf("a after b took over: %+v", a)
	}

	// A completed directive frees its lease, once past the grace period.
	f.write("Inbox/b.md", "> [!ai-done] Second task\n\n> [!ai-done] Old task\n")
	claim(t, f, "worker-b")
	if n := leaseCount(t, f.st); n != 3 {
		t.Errorf("%d leases within the grace, want 3", n)
	}
	f.clock.Add(leaseGrace + time.Second)
	if b := claim(t, f, "worker-b"); len(b.Directives) != 2 || len(b.Leases) != 2 {
		t.Errorf("b after completion: %+v", b)
	}
	if n := leaseCount(t, f.st); n != 2 {
		t.Errorf("%d leases after completion, want 2", n)
	}

	// releaseLease (what complete_directive calls) frees one at once.
	d := pendingOf(f.cat).all[0]
	if err := releaseLease(context.Background(), f.st, d.Path, d.Line, d.Title); err != nil {
		t.Fatal(err)
	}
	if a := claim(t, f, "worker-a"); !slices.Equal(directivePaths(a.Directives), []string{"Inbox/a.md:3"}) {
		t.Errorf("a after release: %v", directivePaths(a.Directives))
	}
}

func TestLeaseScopeAndLimit(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	out, _ := await(t, f, awaitDirectivesIn{Worker: "w1", Claim: true, Limit: 1})
	if len(out.Directives) != 1 || len(out.Leases) != 1 || leaseCount(t, f.st) != 1 {
		t.Fatalf("limit 1 must lease only what it returns: %+v", out)
	}
	out, _ = await(t, f, awaitDirectivesIn{Worker: "w2", Claim: true, Path: "Inbox"})
	if !slices.Equal(directivePaths(out.Directives), []string{"Inbox/b.md:1"}) {
		t.Errorf("w2 in Inbox: %v", directivePaths(out.Directives))
	}
	out, _ = await(t, f, awaitDirectivesIn{Worker: "w1", Claim: true, Path: "Projects"})
	if len(out.Leases) != 1 || out.Leases[0].Path != "Projects/p.md" {
		t.Errorf("leases must be scoped like directives: %+v", out.Leases)
	}
}

func TestDamagedLeaseIsTakenOver(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	d := pendingOf(f.cat).all[0]
	p := leasePath(leaseKey(d.Path, d.Line, d.Title))
	if _, err := f.st.Put(context.Background(), p, []byte("garbage"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := claim(t, f, "w"); len(out.Directives) != 3 || len(out.Leases) != 3 {
		t.Errorf("%+v", out)
	}
}

func TestClaimLeaseConflict(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	ctx, now := context.Background(), f.clock.Now()
	d := pendingOf(f.cat).all[0]
	held, ok, err := claimLease(ctx, f.st, d, "first", nil, now)
	if err != nil || !ok || held.Worker != "first" {
		t.Fatalf("first claim: %+v %v %v", held, ok, err)
	}
	// A second worker that read no lease (it raced) loses the If-None-Match
	// and, re-reading, finds the lease live.
	got, ok, err := claimLease(ctx, f.st, d, "second", nil, now)
	if err != nil || ok || got.Worker != "first" {
		t.Errorf("racing claim: %+v %v %v", got, ok, err)
	}
	// A stale ETag after the lease lapsed: If-Match fails, re-read, take over.
	later := now.Add(leaseTTL + time.Second)
	stale := *held
	stale.etag = "stale"
	got, ok, err = claimLease(ctx, f.st, d, "second", &stale, later)
	if err != nil || !ok || got.Worker != "second" {
		t.Errorf("takeover: %+v %v %v", got, ok, err)
	}
}

// TestConcurrentClaimsAreDisjoint: many workers claiming at once never
// share a directive.
func TestConcurrentClaimsAreDisjoint(t *testing.T) {
	notes := map[string]string{}
	for i := range 20 {
		notes[fmt.Sprintf("Tasks/t%02d.md", i)] = fmt.Sprintf("> [!ai] Task %d\n", i)
	}
	f := newDirFixture(t, notes, nil)
	var mu sync.Mutex
	owner := map[string]string{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			worker := fmt.Sprintf("w%d", w)
			out, err := f.s.AwaitDirectives(context.Background(), awaitDirectivesIn{Worker: worker, Claim: true, Limit: 5, TimeoutMs: 1000})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range directivePaths(out.Directives) {
				if prev, dup := owner[p]; dup {
					t.Errorf("%s given to %s and %s", p, prev, worker)
				}
				owner[p] = worker
			}
		})
	}
	wg.Wait()
	if len(owner) != 20 {
		t.Errorf("%d of 20 directives handed out", len(owner))
	}
}

// TestWaiterWakesWhenLeaseLapses: a worker parked while another holds
// every directive gets them when those leases lapse, without a change to
// the set.
func TestWaiterWakesWhenLeaseLapses(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	a := claim(t, f, "a")
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.clock.Add(leaseTTL + time.Second)
	}()
	out, took := await(t, f, awaitDirectivesIn{Cursor: a.Cursor, Worker: "b", Claim: true, TimeoutMs: 5000})
	if out.TimedOut || out.Cursor != a.Cursor || len(out.Directives) != 3 || took > 2*time.Second {
		t.Errorf("b: %+v after %v", out, took)
	}
}
