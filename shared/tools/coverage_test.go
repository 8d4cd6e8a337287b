package tools

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// indexingServer serves maintNotes from a vault whose index pass never
// ends (or ends when done is closed).
func indexingServer(t *testing.T, done chan struct{}, wait time.Duration) *Server {
	t.Helper()
	files := map[string]string{}
	for p, src := range maintNotes {
		if p[0] != '.' {
			files[p] = src
		}
	}
	s, _ := indexedServer(t, files, nil)
	v := s.vaults["t"]
	state := "indexing"
	v.Status = func() IndexStatus {
		select {
		case <-done:
			return IndexStatus{State: "ready"}
		default:
			return IndexStatus{State: state, Done: 3, Total: 8, Notes: 8}
		}
	}
	v.Ready = func() <-chan struct{} { return done }
	v.IndexWait = wait
	return s
}

func callCovered(t *testing.T, s *Server, name string, args map[string]any) map[string]any {
	t.Helper()
	for _, tool := range s.Tools() {
		if tool.Tool.Name != name {
			continue
		}
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := tool.Handler(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("%s: %+v", name, res.Content)
		}
		var out map[string]any
		_ = json.Unmarshal(res.StructuredContent.(json.RawMessage), &out)
		return out
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// indexReaders are calls of tools that answer from the index.
var indexReaders = []struct {
	tool string
	args map[string]any
}{
	{"get_vault_info", nil},
	{"list_notes", nil},
	{"search", map[string]any{"query": "topic"}},
	{"list_backlinks", map[string]any{"path": "A.md"}},
	{"list_outgoing_links", map[string]any{"path": "index.md"}},
	{"link_graph", map[string]any{"path": "index.md"}},
	{"list_tags", nil},
	{"notes_by_tag", map[string]any{"tag": "topic"}},
	{"list_attachments", nil},
	{"lint", nil},
	{"wiki_health", nil},
	{"pending_directives", nil},
	{"find_references", map[string]any{"path": "A.md"}},
	{"read_note", map[string]any{"path": "index.md"}},
	{"search_and_read", map[string]any{"query": "topic"}},
}

// TestPartialWhileIndexing: during an index pass, every answer from the
// index says it is partial, with the pass's progress; get_vault_info
// counts notes from the listing.
func TestPartialWhileIndexing(t *testing.T) {
	s := indexingServer(t, make(chan struct{}), 10*time.Millisecond)
	for _, c := range indexReaders {
		out := callCovered(t, s, c.tool, c.args)
		ix, _ := out["indexing"].(map[string]any)
		if out["partial"] != true || ix == nil || ix["state"] != "indexing" || ix["indexed"] != 3.0 || ix["total"] != 8.0 {
			t.Errorf("%s while indexing: partial %v, indexing %v", c.tool, out["partial"], out["indexing"])
		}
	}
	if out := callCovered(t, s, "read_outline", map[string]any{"path": "A.md"}); out["partial"] != nil {
		t.Errorf("read_outline reads the note itself, not the index: partial %v", out["partial"])
	}
}

// TestWaitForTheIndex: a call during a short pass waits for it and
// answers whole.
func TestWaitForTheIndex(t *testing.T) {
	done := make(chan struct{})
	s := indexingServer(t, done, 5*time.Second)
	time.AfterFunc(30*time.Millisecond, func() { close(done) })
	start := time.Now()
	out := callCovered(t, s, "list_notes", nil)
	if out["partial"] != nil || out["total"] != 8.0 {
		t.Errorf("after waiting for the pass: partial %v, total %v", out["partial"], out["total"])
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("answered after %v, before the pass ended", waited)
	}
}
