package audit

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
)

// backends runs fn against a folder and against S3 (versitygw).
func backends(t *testing.T, fn func(t *testing.T, newStore func(t *testing.T) store.Store)) {
	t.Run("fs", func(t *testing.T) {
		fn(t, func(t *testing.T) store.Store {
			st, err := fs.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return st
		})
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Start(t, s3test.Options{})
		n := 0
		fn(t, func(t *testing.T) store.Store {
			n++
			bucket := fmt.Sprintf("audit-%d-%d", time.Now().UnixNano()%1e9, n)
			srv.CreateBucket(t, bucket)
			return s3.New(srv.Client(t), bucket, "vault")
		})
	})
}

func newLog(t *testing.T, st store.Store, instance string, o Options) *Log {
	t.Helper()
	o.Store, o.Instance = st, instance
	if o.FlushEvery == 0 {
		o.FlushEvery = -1
	}
	l, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

func TestRecordFlushRead(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		ctx := context.Background()
		st := newStore(t)
		day1 := time.Date(2026, 12, 1, 23, 59, 58, 0, time.UTC)
		l := newLog(t, st, "i1", Options{MaxSegmentBytes: 300})
		for i := range 5 {
			l.Record(Record{Time: day1.Add(time.Duration(i) * time.Second), Caller: "key:alice", AgentID: "claude", Tool: "read_note", Path: fmt.Sprintf("n%d.md", i)})
		}
		l.Record(Record{Time: day1, Caller: "local", Tool: "search", Path: "n0.md"}) // no agent_id
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		var got []Record
		for _, d := range []time.Time{day1, day1.Add(24 * time.Hour)} {
			if err := l.Read(ctx, d, func(r Record) error { got = append(got, r); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != 6 {
			t.Fatalf("%d records: %+v", len(got), got)
		}
		unknown := 0
		for _, r := range got {
			if r.AgentID == UnknownAgent {
				unknown++
			}
		}
		if unknown != 1 {
			t.Errorf("%d records with agent_id %q", unknown, UnknownAgent)
		}
		// Rotation: by day (2 records fell on Dec 2) and by size (300 bytes a segment).
		var segs []string
		_ = st.List(ctx, DefaultPrefix+"log/", func(o store.Object) error { segs = append(segs, o.Path); return nil })
		dec1, dec2 := 0, 0
		for _, s := range segs {
			switch {
			case strings.Contains(s, "/log/2026/12/01/"):
				dec1++
			case strings.Contains(s, "/log/2026/12/02/"):
				dec2++
			}
		}
		if dec1 < 2 || dec2 < 2 || dec1+dec2 != len(segs) { // 2 days, and 300 bytes hold 2 records at most
			t.Errorf("segments %v", segs)
		}
		n, ok, err := l.Count(ctx, "n0.md")
		if n != 2 || !ok || err != nil {
			t.Errorf("count %d %v %v", n, ok, err)
		}
		// Retention.
		removed, err := l.Prune(ctx, day1.Add(24*time.Hour))
		if err != nil || removed != dec1 {
			t.Errorf("pruned %d of %d: %v", removed, dec1, err)
		}
	})
}

// TestCountsAcrossInstances: every instance's reads count, whichever
// instance asks, before and after compactions, and an instance sees its own
// reads at once.
func TestCountsAcrossInstances(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		ctx := context.Background()
		st := newStore(t)
		a := newLog(t, st, "a", Options{CompactAt: 3})
		b := newLog(t, st, "b", Options{CompactAt: 3})
		c := newLog(t, st, "c", Options{CountsTTL: time.Nanosecond})
		read := func(l *Log, path string, n int) {
			for range n {
				l.Record(Record{Caller: "k", Tool: "read_note", Path: path})
			}
		}
		read(a, "x.md", 3)
		if n, _, _ := a.Count(ctx, "x.md"); n != 3 {
			t.Fatalf("a's own unflushed reads: %d", n)
		}
		read(b, "x.md", 2)
		read(b, "y.md", 1)
		for _, l := range []*Log{a, b} {
			if err := l.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if m, err := c.Counts(ctx, []string{"x.md", "y.md", "z.md"}); err != nil || m["x.md"] != 5 || m["y.md"] != 1 || m["z.md"] != 0 {
			t.Fatalf("c sees %v, %v", m, err)
		}
		// More flushes; a compacts when its view shows 3 deltas.
		for i := range 4 {
			read(a, "x.md", 1)
			read(b, "y.md", 1)
			_ = i
			for _, l := range []*Log{a, b} {
				if err := l.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := a.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		var deltas int
		_ = st.List(ctx, DefaultPrefix+deltaDir, func(store.Object) error { deltas++; return nil })
		if deltas != 0 {
			t.Errorf("%d deltas left after compaction", deltas)
		}
		if m, err := c.Counts(ctx, []string{"x.md", "y.md"}); err != nil || m["x.md"] != 9 || m["y.md"] != 5 {
			t.Fatalf("after compaction c sees %v, %v", m, err)
		}
	})
}

// TestCountsUnderConcurrency: instances recording, flushing, compacting and
// counting at once; at the end every instance's count is exact (no record
// lost, none counted twice), and no count ever exceeded the truth.
func TestCountsUnderConcurrency(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) store.Store) {
		ctx := context.Background()
		st := newStore(t)
		const instances, rounds = 4, 25
		paths := []string{"a.md", "b.md", "c.md"}
		var truth [3]atomic.Int64
		logs := make([]*Log, instances)
		for i := range logs {
			logs[i] = newLog(t, st, fmt.Sprintf("i%d", i), Options{CompactAt: 2, CountsTTL: time.Nanosecond})
		}
		var wg sync.WaitGroup
		var over atomic.Int64
		for i, l := range logs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewSource(int64(i)))
				for range rounds {
					k := r.Intn(len(paths))
					l.Record(Record{Caller: "k", Tool: "search", Path: paths[k]})
					truth[k].Add(1)
					switch r.Intn(4) {
					case 0, 1:
						if err := l.Flush(ctx); err != nil {
							t.Error(err)
						}
					case 2:
						if err := l.Compact(ctx); err != nil && !errors.Is(err, store.ErrConflict) {
							t.Error(err)
						}
					case 3:
						// Counts read now can lag, never exceed: the truth only grows.
						m, err := l.Counts(ctx, paths)
						if err != nil {
							t.Error(err)
						}
						for j, p := range paths {
							if m[p] > truth[j].Load() {
								over.Add(1)
							}
						}
					}
				}
				if err := l.Flush(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if over.Load() > 0 {
			t.Errorf("%d counts above the truth", over.Load())
		}
		_ = logs[0].Compact(ctx)
		for _, l := range logs {
			m, err := l.Counts(ctx, paths)
			if err != nil {
				t.Fatal(err)
			}
			for j, p := range paths {
				if m[p] != truth[j].Load() {
					t.Errorf("%s: %s counted %d, truth %d", l.o.Instance, p, m[p], truth[j].Load())
				}
			}
		}
	})
}

// failing fails Puts while fail is set.
type failing struct {
	store.Store
	fail atomic.Bool
}

func (f *failing) Put(ctx context.Context, p string, b []byte, o store.PutOptions) (store.Object, error) {
	if f.fail.Load() {
		return store.Object{}, errors.New("disk full")
	}
	return f.Store.Put(ctx, p, b, o)
}

func TestFlushFailureKeepsRecords(t *testing.T) {
	ctx := context.Background()
	base, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &failing{Store: base}
	l := newLog(t, st, "i", Options{MaxPending: 5})
	st.fail.Store(true)
	for i := range 7 {
		l.Record(Record{Tool: "read_note", Path: fmt.Sprint(i)})
	}
	if err := l.Flush(ctx); err == nil {
		t.Fatal("flush succeeded on a failing store")
	}
	if s := l.Stats(); s.Pending != 5 || s.Dropped != 2 || s.LastErr == nil {
		t.Fatalf("%+v", s)
	}
	st.fail.Store(false)
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = l.Read(ctx, time.Now(), func(Record) error { n++; return nil })
	if s := l.Stats(); n != 5 || s.Pending != 0 || s.LastErr != nil {
		t.Fatalf("%d records read, %+v", n, s)
	}
}

func TestOff(t *testing.T) {
	var l *Log
	l.Record(Record{Path: "x"})
	if l.Enabled() || l.Flush(context.Background()) != nil || l.Close(context.Background()) != nil {
		t.Fatal("a nil Log is not off")
	}
	if n, ok, err := l.Count(context.Background(), "x"); n != 0 || ok || err != nil {
		t.Fatal(n, ok, err)
	}
}

func TestBackgroundFlush(t *testing.T) {
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := newLog(t, st, "bg", Options{FlushEvery: 20 * time.Millisecond})
	l.Record(Record{Tool: "read_note", Path: "x.md"})
	deadline := time.Now().Add(5 * time.Second)
	for l.Stats().Pending > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p := l.Stats().Pending; p != 0 {
		t.Fatalf("%d records still pending", p)
	}
}
