package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// waitFor polls a search until found reports true, and fails after 10s.
func waitFor(t *testing.T, c *toolstest.Client, query string, found func(paths []string) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		var r struct {
			Items []struct {
				Path string `json:"path"`
			} `json:"items"`
		}
		c.MustOK("search", map[string]any{"query": query, "limit": 100}, &r)
		var ps []string
		for _, it := range r.Items {
			ps = append(ps, it.Path)
		}
		if found(ps) {
			return time.Since(start)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("search %q never reached the expected state: %v", query, ps)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestWatcherFollowsChanges: creates, edits, renames, deletes and new
// folders show up through MCP without a restart.
func TestWatcherFollowsChanges(t *testing.T) {
	vault := sampleVault(t)
	c := toolstest.NewClient(t, stdioSession(t, vault))
	c.WaitIndexed()
	has := func(p string) func([]string) bool { return func(ps []string) bool { return slices.Contains(ps, p) } }
	none := func(ps []string) bool { return len(ps) == 0 }

	note := filepath.Join(vault, "Inbox", "Fresh idea.md")
	if err := os.WriteFile(note, []byte("# Fresh\nxylophonequartz #fresh-tag\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("create seen after %v", waitFor(t, c, "xylophonequartz", has("Inbox/Fresh idea.md")))

	if err := os.WriteFile(note, []byte("# Fresh\nnow about marimbatopaz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("edit seen after %v", waitFor(t, c, "marimbatopaz", has("Inbox/Fresh idea.md")))
	waitFor(t, c, "xylophonequartz", none)

	moved := filepath.Join(vault, "Archive", "Moved idea.md")
	if err := os.Rename(note, moved); err != nil {
		t.Fatal(err)
	}
	t.Logf("rename seen after %v", waitFor(t, c, "marimbatopaz", func(ps []string) bool {
		return slices.Equal(ps, []string{"Archive/Moved idea.md"})
	}))

	if err := os.MkdirAll(filepath.Join(vault, "New folder", "Deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vault, "New folder", "Deep", "n.md"), []byte("celestaopal"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "celestaopal", has("New folder/Deep/n.md"))

	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	t.Logf("delete seen after %v", waitFor(t, c, "marimbatopaz", none))
	if err := os.RemoveAll(filepath.Join(vault, "New folder")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "celestaopal", none)
}

// TestRestartUsesPersistedIndex: a second server over the same vault
// answers from the persisted catalog and index without re-indexing.
func TestRestartUsesPersistedIndex(t *testing.T) {
	vault := sampleVault(t)
	first := toolstest.NewClient(t, stdioSession(t, vault, "--no-watch"))
	first.WaitIndexed()
	first.S.Close()

	start := time.Now()
	c := toolstest.NewClient(t, stdioSession(t, vault, "--no-watch"))
	var info struct {
		NoteCount int `json:"noteCount"`
	}
	c.MustOK("get_vault_info", nil, &info)
	var r struct {
		Total int `json:"total"`
	}
	c.MustOK("search", map[string]any{"query": "compost"}, &r)
	t.Logf("restart to first answer: %v", time.Since(start))
	if info.NoteCount != 43 || r.Total == 0 {
		t.Errorf("after restart: noteCount %d, compost hits %d (want the persisted state at once)", info.NoteCount, r.Total)
	}
	if _, err := os.Stat(filepath.Join(stateOf(t, vault), "catalog", "manifest.json")); err != nil {
		t.Errorf("no persisted catalog: %v", err)
	}
}
