package watch

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// watching starts Run on dir after a first Sync, and stops it at
// cleanup.
func watching(t testing.TB, ix *indexer.Indexer, dir string, o Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, ix, dir, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
}

// onDisk lists the visible notes and attachments under dir.
func onDisk(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// inCatalog lists the catalog's notes and attachments.
func inCatalog(c *vault.Catalog) []string {
	var out []string
	for _, n := range c.Notes() {
		out = append(out, n.Path)
	}
	for _, a := range c.Attachments() {
		out = append(out, a.Path)
	}
	slices.Sort(out)
	return out
}

// converged waits up to limit for the catalog to list what dir holds and
// returns how long that took; it fails with the difference otherwise.
func converged(t *testing.T, c *vault.Catalog, dir string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		disk, cat := onDisk(dir), inCatalog(c)
		if slices.Equal(disk, cat) {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("after %v the catalog still differs from the disk: %s", limit, difference(disk, cat))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func difference(disk, cat []string) string {
	var missing, extra []string
	for _, p := range disk {
		if !slices.Contains(cat, p) {
			missing = append(missing, p)
		}
	}
	for _, p := range cat {
		if !slices.Contains(disk, p) {
			extra = append(extra, p)
		}
	}
	return fmt.Sprintf("%d missing %v, %d extra %v", len(missing), clipList(missing), len(extra), clipList(extra))
}

func clipList(ps []string) []string {
	if len(ps) > 5 {
		return append(ps[:5:5], "…")
	}
	return ps
}

// TestWatchKeepsUpWithATrickle: with a file saved every 100 ms (quiet never
// comes), every note is indexed within the bounded wait while the saving
// goes on, and a note written and not indexed yet is always counted as
// pending, so that answers can say they are partial. Before the bounded
// wait nothing was indexed until the saving stopped.
func TestWatchKeepsUpWithATrickle(t *testing.T) {
	f := newFixture(t, map[string]string{"a.md": "# a\n"})
	f.o.MaxWait = 500 * time.Millisecond
	watching(t, f.ix, f.dir, f.o)
	const every = 100 * time.Millisecond
	saves := 30 // 3 s
	if testing.Short() {
		saves = 15
	}
	written := map[string]time.Time{}
	var worst time.Duration
	silent := 0
	for i := range saves {
		p := fmt.Sprintf("trickle/n%03d.md", i)
		write(t, f.dir, p, fmt.Sprintf("# note %d\nword%03d\n", i, i))
		write(t, f.dir, "busy.md", fmt.Sprintf("saved %d times\n", i)) // the same file again and again
		written[p] = time.Now()
		time.Sleep(every)
		st := f.ix.Status()
		for q, at := range written {
			age := time.Since(at)
			if _, ok := f.ix.Catalog.Note(q); ok {
				continue
			}
			if st.Pending == 0 && age > 200*time.Millisecond {
				silent++
				t.Errorf("%s written %v ago is not indexed and nothing is pending", q, age.Round(time.Millisecond))
			}
			// The bound is WatchMaxWait; the margin is for a loaded machine.
			if age > f.o.MaxWait+3*time.Second {
				t.Fatalf("%s written %v ago is still not indexed while the saving goes on", q, age.Round(time.Millisecond))
			}
			worst = max(worst, age)
		}
	}
	t.Logf("%d saves: the oldest note seen unindexed was %v old (bound %v); %d silent misses", saves, worst.Round(time.Millisecond), f.o.MaxWait, silent)
	converged(t, f.ix.Catalog, f.dir, 10*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for f.ix.Status().Pending != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still %d pending after the saving stopped", f.ix.Status().Pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchFolderRenames: folders renamed at every depth, back and forth,
// converge (notes and attachments), without a restart.
func TestWatchFolderRenames(t *testing.T) {
	files := map[string]string{}
	for d := range 6 {
		for n := range 5 {
			files[fmt.Sprintf("F%d/n%d.md", d, n)] = fmt.Sprintf("# %d %d\n[[n%d]]\n", d, n, (n+1)%5)
			files[fmt.Sprintf("F%d/Sub/s%d.md", d, n)] = "sub\n"
		}
		files[fmt.Sprintf("F%d/Sub/pic.png", d)] = "png"
	}
	f := newFixture(t, files)
	watching(t, f.ix, f.dir, f.o)
	for round := range 3 {
		for d := range 6 {
			from, to := fmt.Sprintf("F%d", d), fmt.Sprintf("G%d", d)
			if round%2 == 1 {
				from, to = to, from
			}
			// The sub-folder first, then its parent: the second rename
			// moves a folder whose watch was just replaced.
			if err := os.Rename(filepath.Join(f.dir, from, "Sub"), filepath.Join(f.dir, from, fmt.Sprintf("Sub%d", round))); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(f.dir, from, fmt.Sprintf("Sub%d", round)), filepath.Join(f.dir, from, "Sub")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(f.dir, from), filepath.Join(f.dir, to)); err != nil {
				t.Fatal(err)
			}
		}
		// A file written into a renamed folder right after must be seen.
		dir := "G0"
		if round%2 == 1 {
			dir = "F0"
		}
		write(t, f.dir, fmt.Sprintf("%s/Sub/after%d.md", dir, round), "written after the rename\n")
		t.Logf("round %d converged in %v", round, converged(t, f.ix.Catalog, f.dir, 10*time.Second).Round(time.Millisecond))
	}
}

// TestWatchReconcileHealsDrift: whatever made the catalog differ from the
// disk (a missed event, a lost watch, another process's snapshot), the
// periodic walk puts it right without any event.
func TestWatchReconcileHealsDrift(t *testing.T) {
	f := newFixture(t, map[string]string{"a.md": "# a\n", "b/c.md": "# c\n", "b/x.pdf": "pdf"})
	f.o.ReconcileEvery = 200 * time.Millisecond
	watching(t, f.ix, f.dir, f.o)
	converged(t, f.ix.Catalog, f.dir, 5*time.Second)
	f.ix.Catalog.Remove("b/c.md")
	f.ix.Catalog.RemoveAttachment("b/x.pdf")
	f.ix.Catalog.Upsert(vault.Note{Path: "ghost.md", Name: "ghost"})
	t.Logf("drift healed in %v", converged(t, f.ix.Catalog, f.dir, 5*time.Second).Round(time.Millisecond))
}

// TestWatchSkipsUnindexableOnReconcile: a file that cannot be indexed is
// read once per version, not on every reconcile walk.
func TestWatchSkipsUnindexableOnReconcile(t *testing.T) {
	f := newFixture(t, map[string]string{"a.md": "# a\n", "bin.md": "\x00\x01\x02binary"})
	f.o.ReconcileEvery = 50 * time.Millisecond
	c := &countingStore{Store: f.ix.Store}
	f.ix.Store = c
	watching(t, f.ix, f.dir, f.o)
	time.Sleep(600 * time.Millisecond)
	if gets := c.gets.Load(); gets > 3 {
		t.Errorf("%d reads in 600 ms of reconcile walks every 50 ms: the binary note is read again and again", gets)
	}
	if _, ok := f.ix.Status().Problems["bin.md"]; !ok {
		t.Errorf("bin.md is not reported as a problem: %v", f.ix.Status().Problems)
	}
}

// TestWatchTwoIndexersOneFolder: two indexers on one folder sharing one
// state folder (two servers on one vault), each saving the shared catalog
// snapshot while folders are renamed and notes written: both end equal to
// the disk.
func TestWatchTwoIndexersOneFolder(t *testing.T) {
	files := map[string]string{}
	for d := range 8 {
		for n := range 6 {
			files[fmt.Sprintf("F%d/n%d.md", d, n)] = fmt.Sprintf("# %d %d\n", d, n)
		}
	}
	dir, st, text := localVault(t, files)
	snaps := filepath.Join(t.TempDir(), "catalog.json.gz")
	a := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: fileSnaps(t, snaps)}
	watching(t, a, dir, Options{})
	st2, text2 := openLocal(t, dir)
	cat, err := fileSnaps(t, snaps).Load(context.Background())
	if err != nil || cat == nil {
		t.Fatalf("the second indexer cannot load the first's snapshot: %v", err)
	}
	b := &indexer.Indexer{Store: st2, Catalog: cat, Text: text2, Snapshots: fileSnaps(t, snaps)}
	watching(t, b, dir, Options{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 40 {
			write(t, dir, fmt.Sprintf("w/%d.md", i), "# w\n")
			time.Sleep(25 * time.Millisecond)
		}
	})
	for round := range 4 {
		for d := range 8 {
			from, to := fmt.Sprintf("F%d", d), fmt.Sprintf("G%d", d)
			if round%2 == 1 {
				from, to = to, from
			}
			if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	ta := converged(t, a.Catalog, dir, 15*time.Second)
	tb := converged(t, b.Catalog, dir, 15*time.Second)
	t.Logf("converged after the last change: a %v, b %v", ta.Round(time.Millisecond), tb.Round(time.Millisecond))
}

// TestWatchRenamedFolderStaysWatched: fsnotify drops the watch of a renamed
// folder when its new name is added before it has read the old name's
// IN_MOVE_SELF (with an unbuffered watcher, whose reader waits for each
// event to be taken, half the time in a plain loop: the cause of a second
// server losing renamed folders for good), and a file written into the
// folder later is then never seen. With reconcile walks off, events alone
// must find every file written after a rename.
func TestWatchRenamedFolderStaysWatched(t *testing.T) {
	f := newFixture(t, map[string]string{"a.md": "# a\n"})
	f.o.ReconcileEvery = -1
	watching(t, f.ix, f.dir, f.o)
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	for i := range rounds {
		from, to := fmt.Sprintf("D%d", i), fmt.Sprintf("E%d", i)
		write(t, f.dir, from+"/n.md", "# n\n")
		converged(t, f.ix.Catalog, f.dir, 5*time.Second)
		if err := os.Rename(filepath.Join(f.dir, from), filepath.Join(f.dir, to)); err != nil {
			t.Fatal(err)
		}
		converged(t, f.ix.Catalog, f.dir, 5*time.Second)
		write(t, f.dir, to+"/later.md", "# written after the rename was indexed\n")
		converged(t, f.ix.Catalog, f.dir, 5*time.Second)
	}
}

// BenchmarkReconcileWalk10k times one reconcile walk of the watcher over
// an indexed 10k-note vault where nothing changed (the vault in /dev/shm
// when possible; SHEAF_BENCH_VAULT uses another): the cost the periodic
// walk adds, once per ReconcileEvery or 20 walks' time.
func BenchmarkReconcileWalk10k(b *testing.B) {
	dir := os.Getenv("SHEAF_BENCH_VAULT")
	if dir == "" {
		base := ""
		if _, err := os.Stat("/dev/shm"); err == nil {
			base = "/dev/shm"
		}
		tmp, err := os.MkdirTemp(base, "sheaf-walk-")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "v")
		if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: 10000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	st, text := openLocal(b, dir)
	ix := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text}
	ctx := context.Background()
	if _, err := ix.Sync(ctx, nil); err != nil {
		b.Fatal(err)
	}
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		b.Fatal(err)
	}
	defer fw.Close()
	w := &watcher{ix: ix, log: logger(ix), root: dir, fw: fw, wake: make(chan struct{}, 1), bad: map[string]string{}}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start := cpu()
	for range b.N {
		if w.reconcile(ctx) {
			b.Fatal("a walk over an unchanged vault applied something")
		}
	}
	// CPU time, not wall time: on a shared machine the wall time also
	// counts other processes' turns.
	b.ReportMetric(float64((cpu()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(ix.Catalog.Len()), "notes")
}

// TestWatchStartCountsItsFirstWalkPending: a note renamed after the first
// pass and before the watches are added makes no event; the watch's first
// walk alone sees it. From ExpectWatch until that walk is applied, Status
// counts a change pending, so that whoever waits for the watcher to settle
// (a move) finds the rename in the catalog once it has.
func TestWatchStartCountsItsFirstWalkPending(t *testing.T) {
	f := newFixture(t, map[string]string{"a.md": "# a\n", "b.md": "See [[a]].\n"})
	f.o.ReconcileEvery = time.Hour // the first walk only
	ctx, cancel := context.WithCancel(context.Background())
	f.ix.ExpectWatch()
	if _, err := f.ix.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(f.dir, "b.md"), filepath.Join(f.dir, "c.md")); err != nil {
		t.Fatal(err)
	}
	if n := f.ix.Status().Pending; n == 0 {
		t.Error("between the first pass and the watch, nothing is pending: a change made then goes unseen by whoever waits for the watcher")
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, f.ix, f.dir, f.o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); f.ix.Status().Pending > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("still pending 30 s after the watch started")
		}
	}
	if _, ok := f.ix.Catalog.Note("c.md"); !ok {
		t.Errorf("settled, but the catalog lacks the renamed note: %v", inCatalog(f.ix.Catalog))
	}
	if _, ok := f.ix.Catalog.Note("b.md"); ok {
		t.Errorf("settled, but the catalog still holds the note's old name: %v", inCatalog(f.ix.Catalog))
	}
}

// countingStore counts Get calls.
type countingStore struct {
	store.Store
	gets atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, p string, max int64) ([]byte, store.Object, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, p, max)
}
