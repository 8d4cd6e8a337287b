package toolstest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// historyDir is where RunHistory writes.
const historyDir = "History tests"

// Version is a version as note_history lists it.
type Version struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Hash   string `json:"hash"`
	Op     string `json:"op"`
	Author struct {
		Subject string `json:"subject"`
		Name    string `json:"name"`
	} `json:"author"`
	Tool        string `json:"tool"`
	Transaction string `json:"transaction_id"`
	From        string `json:"from"`
	To          string `json:"to"`
	Merged      string `json:"merged"`
	Restored    string `json:"restored"`
}

// History lists every version of path, newest first, following the pages.
func History(t *testing.T, c *Client, path string) []Version {
	t.Helper()
	var all []Version
	after := ""
	for range 100 {
		var page struct {
			Versions  []Version `json:"versions"`
			More      bool      `json:"more"`
			NextAfter string    `json:"next_after"`
		}
		args := map[string]any{"path": path, "limit": 2}
		if after != "" {
			args["after"] = after
		}
		c.MustOK("note_history", args, &page)
		all = append(all, page.Versions...)
		if !page.More {
			return all
		}
		after = page.NextAfter
	}
	t.Fatalf("note_history(%s) pages without end", path)
	return nil
}

// ops is the versions' ops, newest first.
func ops(vs []Version) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Op)
	}
	return strings.Join(out, " ")
}

// RunHistory checks the history tools over an MCP session whose writes
// are attributed to a caller whose name is author (its subject starting
// with subjectPrefix): writes, an overwrite, a move and a delete, each in
// note_history with its author and transaction; every past version read
// back byte for byte; a restore; an undo, and one refused because a later
// write touched its note; a merge.
func RunHistory(t *testing.T, c *Client, subjectPrefix, author string) {
	run := fmt.Sprintf("%x", time.Now().UnixNano())
	a, moved, b := historyDir+"/A "+run+".md", historyDir+"/Moved "+run+".md", historyDir+"/B "+run+".md"
	txA, txB := "tx-a-"+run, "tx-b-"+run
	b0 := "# A\n\nbefore the transaction\n"
	b1 := "# A\r\n\r\nfirst — café ✓\r\n" // CRLF and UTF-8, kept byte for byte
	b2 := "# A\n\nsecond\nno final newline"
	var w written
	c.MustOK("write_note", map[string]any{"path": a, "content": b0}, &w)
	c.MustOK("write_note", map[string]any{"path": a, "content": b1, "mode": "overwrite", "expected_hash": w.ContentHash, "transaction_id": txA}, &w)
	c.MustOK("write_note", map[string]any{"path": a, "content": b2, "mode": "overwrite", "expected_hash": w.ContentHash, "transaction_id": txA}, &w)
	c.MustOK("move_note", map[string]any{"path": a, "new_path": moved, "transaction_id": txA}, nil)

	vs := History(t, c, moved)
	if got := ops(vs); got != "move overwrite overwrite write" {
		t.Fatalf("history of the moved note: %s", got)
	}
	for i, v := range vs {
		if !strings.HasPrefix(v.Author.Subject, subjectPrefix) || v.Author.Name != author {
			t.Errorf("version %d (%s): author %+v, want %s... %s", i, v.Op, v.Author, subjectPrefix, author)
		}
		if want := txA; (i < 3) != (v.Transaction == want) {
			t.Errorf("version %d (%s): transaction %q", i, v.Op, v.Transaction)
		}
	}
	if vs[0].From != a || vs[0].Path != moved || vs[1].Path != a || vs[0].Tool != "move_note" || vs[1].Tool != "write_note" {
		t.Errorf("the move: %+v, %+v", vs[0], vs[1])
	}
	// Every past version reads back byte for byte, by the note's path now.
	for i, want := range []string{b2, b2, b1, b0} {
		var n struct {
			Content     string `json:"content"`
			ContentHash string `json:"content_hash"`
		}
		c.MustOK("read_note", map[string]any{"path": moved, "version": vs[i].ID}, &n)
		if n.Content != want || n.ContentHash != sha(want) || vs[i].Hash != sha(want) {
			t.Errorf("version %d (%s): %q (hash %s, listed %s), want %q", i, vs[i].Op, n.Content, n.ContentHash, vs[i].Hash, want)
		}
	}
	var d struct {
		Diff    string `json:"diff"`
		Added   int    `json:"added"`
		Removed int    `json:"removed"`
	}
	c.MustOK("diff_note", map[string]any{"path": moved, "from": vs[3].ID, "to": vs[2].ID}, &d)
	if !strings.Contains(d.Diff, "-before the transaction\n") || !strings.Contains(d.Diff, "+first — café ✓\r\n") || d.Added != 3 || d.Removed != 3 {
		t.Errorf("diff_note: %+v", d)
	}

	// A delete, a restore of the deleted note by its path.
	bb := "# B\n\nto be deleted\n"
	c.MustOK("write_note", map[string]any{"path": b, "content": bb}, nil)
	c.MustOK("delete_note", map[string]any{"path": b, "confirm": true, "transaction_id": txB}, nil)
	bv := History(t, c, b)
	if ops(bv) != "delete write" || bv[0].Transaction != txB || bv[0].Author.Name != author {
		t.Fatalf("history of the deleted note: %+v", bv)
	}
	var rs struct {
		Created     bool   `json:"created"`
		ContentHash string `json:"content_hash"`
	}
	c.MustOK("restore_note", map[string]any{"path": b, "version": bv[1].ID}, &rs)
	if content, _ := readNote(t, c, b); content != bb || !rs.Created || rs.ContentHash != sha(bb) {
		t.Errorf("restored: %q %+v", content, rs)
	}
	// Undo of the delete: the restore wrote since, so it is refused.
	r := c.MustFail("proposal-stale", "undo_transaction", map[string]any{"transaction": txB})
	if paths, _ := r.Fields["paths"].([]any); len(paths) != 1 || paths[0] != b {
		t.Errorf("undo refused: conflicts %v", r.Fields)
	}

	// Undo of the transaction: the overwrites and the move reverted.
	var dry struct {
		Changes []struct {
			Path   string `json:"path"`
			Action string `json:"action"`
		} `json:"changes"`
	}
	c.MustOK("undo_transaction", map[string]any{"transaction": txA, "dry_run": true}, &dry)
	var actions []string
	for _, ch := range dry.Changes {
		actions = append(actions, ch.Action+" "+ch.Path)
	}
	slices.Sort(actions)
	if want := []string{"delete " + moved, "recreate " + a}; !slices.Equal(actions, want) {
		t.Errorf("undo dry run: %v, want %v", actions, want)
	}
	if content, _ := readNote(t, c, moved); content != b2 {
		t.Errorf("the dry run wrote: %q", content)
	}
	c.MustOK("undo_transaction", map[string]any{"transaction": txA}, nil)
	if content, _ := readNote(t, c, a); content != b0 {
		t.Errorf("after undo: %q, want %q", content, b0)
	}
	c.MustFail("note-not-found", "read_note", map[string]any{"path": moved})
	if av := History(t, c, a); len(av) == 0 || av[0].Op != "restore" || av[0].Tool != "undo_transaction" {
		t.Errorf("after undo, history of %s: %s", a, ops(av))
	}

	// Merge: a change made from an older version merges with the newer.
	m := historyDir + "/Merge " + run + ".md"
	base := "# M\n\n## One\n\nalpha\n\n## Two\n\nbeta\n"
	c.MustOK("write_note", map[string]any{"path": m, "content": base}, &w)
	baseHash := w.ContentHash
	c.MustOK("patch_section", map[string]any{"path": m, "heading_path": []string{"M", "One"}, "operation": "append", "content": "alpha two", "expected_hash": baseHash}, nil)
	c.MustFail("proposal-stale", "apply_edits", map[string]any{"path": m, "expected_hash": baseHash, "edits": []map[string]any{{"find": "beta", "replace": "gamma"}}})
	var mo struct {
		Merged  bool     `json:"merged"`
		Parents []string `json:"parents"`
	}
	c.MustOK("apply_edits", map[string]any{"path": m, "expected_hash": baseHash, "on_conflict": "merge", "edits": []map[string]any{{"find": "beta", "replace": "gamma"}}}, &mo)
	content, _ := readNote(t, c, m)
	if !mo.Merged || len(mo.Parents) != 2 || !strings.Contains(content, "alpha two") || !strings.Contains(content, "gamma") || strings.Contains(content, "beta") {
		t.Errorf("merge: %+v\n%s", mo, content)
	}
	if mv := History(t, c, m); len(mv) != 3 || mv[0].Merged != mo.Parents[1] || mv[0].Merged != mv[2].ID {
		t.Errorf("merged version: %+v", mv)
	}
}
