package vaultsync

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// watching runs Watch over p's local folder and collects what it sends.
type watching struct {
	mu      sync.Mutex
	reports []*Report
	errs    []error
	sent    chan struct{}
}

func (w *watching) got(rep *Report, err error) {
	w.mu.Lock()
	w.reports = append(w.reports, rep)
	w.errs = append(w.errs, err)
	w.mu.Unlock()
	select {
	case w.sent <- struct{}{}:
	default:
	}
}

// actions returns every action sent so far, by path.
func (w *watching) actions() map[string]Action {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]Action{}
	for _, r := range w.reports {
		if r == nil {
			continue
		}
		for _, a := range r.Actions {
			out[a.Path] = a
		}
	}
	return out
}

func startWatch(t *testing.T, p *pair, o WatchOptions) *watching {
	t.Helper()
	w := &watching{sent: make(chan struct{}, 1)}
	o.Sent = w.got
	s := p.syncer(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Watch(ctx, p.localDir, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watch: %v", err)
		}
	})
	time.Sleep(100 * time.Millisecond) // the watches are set up
	return w
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatchPushesAndMoves(t *testing.T) {
	p := newPair(t, map[string]string{"a.md": "alpha"})
	p.run(t, Options{})
	w := startWatch(t, p, WatchOptions{Quiet: 100 * time.Millisecond, MaxWait: time.Second})

	writeFile(t, p.localDir, "new/b.md", "bravo") // a new folder with a file
	writeFile(t, p.localDir, ".obsidian/workspace.json", "{}")
	eventually(t, "new/b.md sent", func() bool { got, _ := readFile(t, p.remoteDir, "new/b.md"); return got == "bravo" })
	if _, ok := readFile(t, p.remoteDir, ".obsidian/workspace.json"); ok {
		t.Error("a hidden file was sent")
	}

	if err := os.Rename(filepath.Join(p.localDir, "a.md"), filepath.Join(p.localDir, "new/a renamed.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rename carried", func() bool {
		if _, ok := w.actions()["new/a renamed.md"]; !ok {
			return false // reported once the batch is done
		}
		_, old := readFile(t, p.remoteDir, "a.md")
		got, _ := readFile(t, p.remoteDir, "new/a renamed.md")
		return !old && got == "alpha"
	})
	if a := w.actions()["new/a renamed.md"]; a.Kind != KindMove || a.From != "a.md" {
		for _, r := range w.reports {
			if r != nil {
				t.Logf("batch: %v", kinds(r))
			}
		}
		t.Errorf("the rename was sent as %+v, not one move", a)
	}

	// A folder renamed: its files move.
	if err := os.Rename(filepath.Join(p.localDir, "new"), filepath.Join(p.localDir, "old")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the folder's files moved", func() bool {
		_, gone := readFile(t, p.remoteDir, "new/b.md")
		got, _ := readFile(t, p.remoteDir, "old/b.md")
		return !gone && got == "bravo"
	})
}

// A constant trickle of saves, never quiet for long enough, still goes out
// within MaxWait of the first.
func TestWatchBoundedWait(t *testing.T) {
	p := newPair(t, map[string]string{"a.md": "alpha"})
	p.run(t, Options{})
	w := startWatch(t, p, WatchOptions{Quiet: 400 * time.Millisecond, MaxWait: 300 * time.Millisecond})
	stop := time.Now().Add(3 * time.Second)
	sentDuring := false
	for i := 0; time.Now().Before(stop); i++ {
		writeFile(t, p.localDir, "a.md", "alpha "+string(rune('a'+i%26)))
		select {
		case <-w.sent:
			sentDuring = true
		default:
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !sentDuring {
		t.Fatal("nothing was sent while saves kept coming")
	}
	eventually(t, "the last save sent", func() bool {
		local, _ := readFile(t, p.localDir, "a.md")
		remote, _ := readFile(t, p.remoteDir, "a.md")
		return local == remote
	})
}

// fakeCatalogs hands out a catalog the test fills in.
type fakeCatalogs struct {
	mu  sync.Mutex
	cat *vault.Catalog
}

func (f *fakeCatalogs) Catalog(context.Context) (*vault.Catalog, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cat, nil
}

func TestWait(t *testing.T) {
	cat := vault.NewCatalog()
	cat.Upsert(vault.Note{Path: "old.md", Hash: "h0"})
	cat.Upsert(vault.Note{Path: "a.md", Hash: "stale"})
	cats := &fakeCatalogs{cat: cat}
	want := []Expect{
		{Path: "a.md", Hash: "h1", Size: 2},
		{Path: "old.md", Deleted: true},
		{Path: "img/p.png", Size: 3},
		{Path: "bin.md", Hash: "h2"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := Wait(ctx, cats, want, 20*time.Millisecond, nil)
	if err == nil || len(res.Pending) != 4 {
		t.Fatalf("nothing indexed yet: %v %+v", err, res)
	}
	cat.Upsert(vault.Note{Path: "a.md", Hash: "h1"})
	cat.Remove("old.md")
	cat.UpsertAttachment(vault.Attachment{Path: "img/p.png", Size: 3})
	cat.SetProblem("bin.md", "binary content")
	res, err = Wait(context.Background(), cats, want, 20*time.Millisecond, nil)
	if err != nil || len(res.Pending) != 0 || res.Problems["bin.md"] == "" {
		t.Fatalf("all indexed: %v %+v", err, res)
	}
}
