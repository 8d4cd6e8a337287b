package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
)

// TestServeFolderWithMeilisearch: `sheaf serve --vault DIR --search
// http://…` uses that Meilisearch, as a bucket's server does: write_note
// reaches it through the server's own indexer and search reads it back.
// Against the in-repo fake (the real server does not run here); the test
// fails if the embedded index answered instead.
func TestServeFolderWithMeilisearch(t *testing.T) {
	meili := meilifake.New(t)
	vault, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(vault, "heron.md"), []byte("# Heron\n\nA heron by the lake.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := stdioSession(t, vault, "--state", state, "--vault-id", "birds", "--search", meili.URL, "--ledger", "off")
	w := callTool(t, s, "write_note", map[string]any{"path": "kingfisher.md", "content": "# Kingfisher\n\nA kingfisher on the river.\n"})
	// A write that says the index is current is searchable at once; one
	// made while the start-up pass still runs (a loaded machine) says it
	// is behind, and the search may catch up a moment later.
	current := fmt.Sprint(w["index"].(map[string]any)["state"]) == "current"
	for q, want := range map[string]string{"heron": "heron.md", "kingfisher": "kingfisher.md"} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			out := callTool(t, s, "search", map[string]any{"query": q})
			items, _ := out["items"].([]any)
			if len(items) == 1 && items[0].(map[string]any)["path"] == want {
				break
			}
			if current || time.Now().After(deadline) {
				t.Errorf("search %q: %v, want %s (the write said the index was %v)", q, out["items"], want, w["index"])
				break
			}
		}
	}
	pushed, searched := map[string]bool{}, false
	for _, c := range meili.Calls() {
		switch c.Path {
		case "/indexes/sheaf-birds/documents":
			for _, p := range []string{"heron.md", "kingfisher.md"} {
				pushed[p] = pushed[p] || strings.Contains(string(c.Body), `"path":"`+p+`"`)
			}
		case "/multi-search":
			searched = true
		}
	}
	if !pushed["heron.md"] || !pushed["kingfisher.md"] || !searched {
		t.Errorf("Meilisearch got the notes %v, a search: %v", pushed, searched)
	}
	if _, err := os.Stat(filepath.Join(state, "index.db")); !os.IsNotExist(err) {
		t.Errorf("an embedded index was made beside Meilisearch: %v", err)
	}
}

// TestServeRefusesUnknownSchemes: a --vault, --search or --vectors URL of
// a scheme this binary cannot open stops `sheaf serve` with an error of
// kind unsupported that names the schemes it can open.
func TestServeRefusesUnknownSchemes(t *testing.T) {
	vault := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--vault", "foo://x"}, `unsupported: --vault "foo://x": this program cannot open foo vaults (it can open: file, s3)`},
		{[]string{"--vault", vault, "--state", t.TempDir(), "--search", "foo://x"}, `unsupported: --search "foo://x": this program cannot open foo: text indexes (it can open: embedded, http, https)`},
		{[]string{"--vault", vault, "--state", t.TempDir(), "--embed-base-url", "http://127.0.0.1:1/v1", "--embed-model", "m", "--vectors", "foo://x"},
			`unsupported: --vectors "foo://x": this program cannot open foo: vector indexes (it can open: embedded, qdrant, qdrants)`},
	} {
		if _, err := run(t, "", append([]string{"serve"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
