package main

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// backlog makes the first await_directives call and returns its cursor.
func backlog(t *testing.T, c *toolstest.Client) int64 {
	t.Helper()
	var first toolstest.Await
	c.MustOK("await_directives", map[string]any{"cursor": 0}, &first)
	if first.TimedOut || len(first.Directives) != 3 {
		t.Fatalf("backlog: %+v", first)
	}
	return first.Cursor
}

// awaitAsync starts an await_directives call in a goroutine; the channel
// yields its result and how long it took.
func awaitAsync(c *toolstest.Client, args map[string]any) <-chan awaited {
	ch := make(chan awaited, 1)
	go func() {
		start := time.Now()
		var out toolstest.Await
		c.MustOK("await_directives", args, &out)
		ch <- awaited{out, time.Since(start)}
	}()
	return ch
}

type awaited struct {
	out  toolstest.Await
	took time.Duration
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestAwaitWakesOnNewDirective: a directive typed into a note reaches a
// parked await_directives call, over stdio and over HTTP.
func TestAwaitWakesOnNewDirective(t *testing.T) {
	for name, open := range map[string]func(t *testing.T, vault string) *toolstest.Client{
		"stdio": func(t *testing.T, vault string) *toolstest.Client {
			return toolstest.NewClient(t, stdioSession(t, vault))
		},
		"http": func(t *testing.T, vault string) *toolstest.Client {
			return toolstest.NewClient(t, httpSession(t, httpServer(t, vault)))
		},
	} {
		t.Run(name, func(t *testing.T) {
			vault := sampleVault(t)
			c := open(t, vault)
			c.WaitIndexed()
			cursor := backlog(t, c)
			ch := awaitAsync(c, map[string]any{"cursor": cursor, "timeout_ms": 20000})
			time.Sleep(300 * time.Millisecond) // let the call park
			appendTo(t, filepath.Join(vault, "Inbox", "Random thought.md"), "\n> [!ai] New task\n> water the seedlings\n")
			r := <-ch
			if r.out.TimedOut || r.out.Cursor != cursor+1 || r.took > 5*time.Second {
				t.Fatalf("%+v after %v, want a wake with cursor %d", r.out, r.took, cursor+1)
			}
			t.Logf("woke after %v", r.took)
			var found bool
			for _, d := range r.out.Directives {
				found = found || d.Title == "New task" && d.Body == "water the seedlings" && d.Path == "Inbox/Random thought.md"
			}
			if !found || len(r.out.Directives) != 4 {
				t.Errorf("directives %+v, want the new one among 4", r.out.Directives)
			}
		})
	}
}

// TestAwaitIgnoresUnrelatedWrites: a new plain note does not wake a parked
// call, though the server indexes it.
func TestAwaitIgnoresUnrelatedWrites(t *testing.T) {
	vault := sampleVault(t)
	c := toolstest.NewClient(t, stdioSession(t, vault))
	c.WaitIndexed()
	cursor := backlog(t, c)
	ch := awaitAsync(c, map[string]any{"cursor": cursor, "timeout_ms": 3000})
	time.Sleep(300 * time.Millisecond)
	note := filepath.Join(vault, "Inbox", "Plain note.md")
	if err := os.WriteFile(note, []byte("# Plain\nzanzibarquokka, with @claude in it and a [!ai] in prose.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "zanzibarquokka", func(ps []string) bool { return slices.Contains(ps, "Inbox/Plain note.md") })
	r := <-ch
	if !r.out.TimedOut || r.out.Cursor != cursor || len(r.out.Directives) != 0 {
		t.Errorf("%+v, want a timeout with cursor %d", r.out, cursor)
	}
	if r.took < 2800*time.Millisecond || r.took > 6*time.Second {
		t.Errorf("took %v, want about 3s", r.took)
	}
}

// TestWorkersOnTwoServersAreDisjoint: two server processes over one vault
// folder share leases through .sheaf/: claiming workers never get the same
// directive, neither from the backlog nor when new ones arrive.
func TestWorkersOnTwoServersAreDisjoint(t *testing.T) {
	vault := sampleVault(t)
	a := toolstest.NewClient(t, stdioSession(t, vault))
	b := toolstest.NewClient(t, stdioSession(t, vault))
	a.WaitIndexed()
	b.WaitIndexed()

	var mu sync.Mutex
	owner := map[string]string{}
	take := func(worker string, out toolstest.Await) {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range toolstest.DirectiveKeys(out.Directives) {
			if prev, dup := owner[k]; dup && prev != worker {
				t.Errorf("%s given to %s and %s", k, prev, worker)
			}
			owner[k] = worker
		}
	}
	// The backlog, claimed at the same moment from both servers.
	var wg sync.WaitGroup
	cursors := map[string]int64{}
	for worker, c := range map[string]*toolstest.Client{"alpha": a, "beta": b} {
		wg.Go(func() {
			var out toolstest.Await
			c.MustOK("await_directives", map[string]any{"worker": worker, "claim": true}, &out)
			take(worker, out)
			mu.Lock()
			cursors[worker] = out.Cursor
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(owner) != 3 {
		t.Fatalf("%d of 3 directives handed out: %v", len(owner), owner)
	}
	if cursors["alpha"] != cursors["beta"] {
		t.Errorf("the servers disagree on the cursor: %v", cursors)
	}

	// Both park; new directives arrive; each wakes with a disjoint share.
	chA := awaitAsync(a, map[string]any{"cursor": cursors["alpha"], "worker": "alpha", "claim": true, "timeout_ms": 20000})
	chB := awaitAsync(b, map[string]any{"cursor": cursors["beta"], "worker": "beta", "claim": true, "timeout_ms": 20000})
	time.Sleep(300 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(vault, "Inbox", "Batch.md"),
		[]byte("> [!ai] One\n\n> [!ai] Two\n\n> [!ai] Three\n\n> [!ai] Four\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for worker, ch := range map[string]<-chan awaited{"alpha": chA, "beta": chB} {
		r := <-ch
		if r.out.TimedOut || r.took > 10*time.Second {
			t.Errorf("%s: %+v after %v, want a wake", worker, r.out, r.took)
		}
		take(worker, r.out)
		for _, l := range r.out.Leases {
			if l.Worker != worker {
				t.Errorf("%s sees a lease of %s", worker, l.Worker)
			}
		}
	}
	if len(owner) != 7 {
		t.Errorf("%d of 7 directives handed out: %v", len(owner), owner)
	}
}
