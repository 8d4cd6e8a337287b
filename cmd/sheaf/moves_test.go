package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// danglingOnDisk parses every note of the folder and lists the links that
// resolve to nothing, as "note: target".
func danglingOnDisk(t testing.TB, root string) []string {
	t.Helper()
	cat := vault.NewCatalog()
	for _, p := range diskNotes(root) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		cat.Upsert(vault.Parse(p, data).Note)
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

// TestConcurrentMovesTwoProcesses: a stdio server and an HTTP server on one
// folder; the first moves every Alpha while the second moves every Beta
// that links to it and back, all at once. Each server's catalog hears of
// the other's moves only through its watcher; the move lock in the shared
// state folder and its journal keep every link whole.
func TestConcurrentMovesTwoProcesses(t *testing.T) {
	const pairs = 20
	root := filepath.Join(t.TempDir(), "v")
	var hub strings.Builder
	for i := range pairs {
		a, b := fmt.Sprintf("Alpha %d", i), fmt.Sprintf("Beta %d", i)
		writeFile(t, root, "Pairs/"+a+".md", "# "+a+"\n\nSee [["+b+"]].\n")
		writeFile(t, root, "Pairs/"+b+".md", "# "+b+"\n\nSee [["+a+"]] and [it](./"+strings.ReplaceAll(a, " ", "%20")+".md).\n")
		fmt.Fprintf(&hub, "- [[%s]] [[%s]]\n", a, b)
	}
	writeFile(t, root, "Hub.md", hub.String())
	a := stdioSession(t, root)
	waitReady(t, a)
	b := httpSession(t, httpServer(t, root))
	waitReady(t, b)

	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		not int
	)
	for i := range pairs {
		for _, m := range []struct {
			s        *mcp.ClientSession
			from, to string
		}{
			{a, fmt.Sprintf("Pairs/Alpha %d.md", i), fmt.Sprintf("Moved/A/First %d.md", i)},
			{b, fmt.Sprintf("Pairs/Beta %d.md", i), fmt.Sprintf("Moved/B/Second %d.md", i)},
		} {
			wg.Go(func() {
				var out struct {
					NotRewritten []map[string]any `json:"not_rewritten"`
				}
				callJSON(t, m.s, "move_note", map[string]any{"path": m.from, "new_path": m.to}, &out)
				mu.Lock()
				not += len(out.NotRewritten)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	d := danglingOnDisk(t, root)
	if len(d) > 0 || not > 0 {
		t.Errorf("%d links dangling (%v), %d notes not rewritten", len(d), d[:min(len(d), 5)], not)
	}
	for i := range pairs {
		for _, p := range []string{fmt.Sprintf("Moved/A/First %d.md", i), fmt.Sprintf("Moved/B/Second %d.md", i)} {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				t.Error(err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".sheaf", "locks")); err == nil {
		t.Error("the move lock is in the vault folder, not the state folder")
	}
	t.Logf("two processes, %d pairs moved at once: %d links dangling, %d not rewritten", pairs, len(d), not)
}

// TestMoveFollowsRenamedLinker: a person renames a note on disk and, at
// once, a client moves the note it links to; the server's watcher may not
// have reported the rename yet. The move follows the linking note to its
// new name: no link is left dangling.
func TestMoveFollowsRenamedLinker(t *testing.T) {
	const n = 20
	root := filepath.Join(t.TempDir(), "v")
	for i := range n {
		writeFile(t, root, fmt.Sprintf("Target %d.md", i), "# Target\n")
		writeFile(t, root, fmt.Sprintf("Linker %d.md", i), fmt.Sprintf("See [[Target %d]].\n", i))
	}
	s := stdioSession(t, root)
	waitReady(t, s)
	for i := range n {
		if err := os.Rename(filepath.Join(root, fmt.Sprintf("Linker %d.md", i)), filepath.Join(root, fmt.Sprintf("Renamed linker %d.md", i))); err != nil {
			t.Fatal(err)
		}
		var out struct {
			NotRewritten []map[string]any `json:"not_rewritten"`
		}
		callJSON(t, s, "move_note", map[string]any{"path": fmt.Sprintf("Target %d.md", i), "new_path": fmt.Sprintf("Moved/Goal %d.md", i)}, &out)
		if len(out.NotRewritten) > 0 {
			t.Errorf("move %d: not rewritten %v", i, out.NotRewritten)
		}
	}
	d := danglingOnDisk(t, root)
	if len(d) > 0 {
		t.Errorf("%d links dangling: %v", len(d), d[:min(len(d), 5)])
	}
	t.Logf("%d linking notes renamed on disk right before the move of their target: %d links dangling", n, len(d))
}
