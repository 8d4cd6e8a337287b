package toolstest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WriteTools are the tools that change the vault, with the hints each must
// declare: destructive, idempotent.
var WriteTools = map[string][2]bool{
	"write_note":         {true, false},
	"apply_edits":        {true, false},
	"patch_section":      {true, false},
	"delete_note":        {true, true},
	"move_note":          {true, true},
	"complete_directive": {false, true},
	"file_page":          {false, true},
	"restore_note":       {true, false},
	"undo_transaction":   {true, false},
}

func init() {
	for name := range WriteTools {
		writeTools[name] = true
	}
}

// The write tests run after every read test (they change the vault) and
// work in their own folder, but for the move of a sample note, which they
// move back.
const scratch = "Write tests"

type written struct {
	Path         string `json:"path"`
	ContentHash  string `json:"content_hash"`
	PreviousHash string `json:"previous_hash"`
	Created      bool   `json:"created"`
	Replayed     bool   `json:"replayed"`
	Index        struct {
		State string `json:"state"`
	} `json:"index"`
	Ledger *string `json:"ledger"`
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// readNote returns a note's content and content_hash.
func readNote(t *testing.T, c *Client, path string) (string, string) {
	t.Helper()
	var n struct {
		Content     string `json:"content"`
		ContentHash string `json:"content_hash"`
	}
	c.MustOK("read_note", map[string]any{"path": path}, &n)
	return n.Content, n.ContentHash
}

func testWriteHints(t *testing.T, c *Client) {
	res, err := c.S.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]*mcp.ToolAnnotations{}
	for _, tool := range res.Tools {
		seen[tool.Name] = tool.Annotations
	}
	for name, h := range WriteTools {
		a := seen[name]
		if a == nil {
			t.Errorf("write tool %s not listed", name)
			continue
		}
		if a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint != h[0] || a.IdempotentHint != h[1] || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: hints %+v, want destructive %v, idempotent %v, not read-only, closed world", name, a, h[0], h[1])
		}
	}
}

func testWriteNote(t *testing.T, c *Client) {
	p := scratch + "/Fresh note.md"
	body := "# Fresh note\n\n## Part one\n\nThe word xylophonic appears only here.\n"
	var w written
	c.MustOK("write_note", map[string]any{"path": p, "content": body}, &w)
	if !w.Created || w.ContentHash != sha(body) || w.Index.State != "current" {
		t.Errorf("create: %+v", w)
	}
	// Read your writes: the same server's read, search, lists and outline.
	content, hash := readNote(t, c, p)
	if content != body || hash != w.ContentHash {
		t.Errorf("read_note after the write: %q %s", content, hash)
	}
	var hits struct {
		Items []struct {
			Path string `json:"path"`
		} `json:"items"`
	}
	c.MustOK("search", map[string]any{"query": "xylophonic"}, &hits)
	if len(hits.Items) != 1 || hits.Items[0].Path != p {
		t.Errorf("search right after the write: %+v", hits.Items)
	}
	var outline struct {
		Headings []struct {
			Title string `json:"title"`
		} `json:"headings"`
	}
	c.MustOK("read_outline", map[string]any{"path": p}, &outline)
	if len(outline.Headings) != 2 {
		t.Errorf("read_outline after the write: %+v", outline)
	}
	var list notesPage
	c.MustOK("list_notes", map[string]any{"path": scratch}, &list)
	if !slices.Contains(paths(list.Items), p) {
		t.Errorf("list_notes after the write: %v", paths(list.Items))
	}

	r := c.MustFail("note-exists", "write_note", map[string]any{"path": p, "content": "x"})
	if r.Fields["current_hash"] != w.ContentHash {
		t.Errorf("note-exists without the current hash: %v", r.Fields)
	}
	c.MustFail("args-invalid", "write_note", map[string]any{"path": p, "content": "x", "mode": "overwrite"})
	r = c.MustFail("proposal-stale", "write_note", map[string]any{"path": p, "content": "x", "mode": "overwrite", "expected_hash": sha("not it")})
	if r.Fields["current_hash"] != w.ContentHash {
		t.Errorf("proposal-stale without the current hash: %v", r.Fields)
	}
	var ow written
	c.MustOK("write_note", map[string]any{"path": p, "content": body + "\nMore.\n", "mode": "overwrite", "expected_hash": w.ContentHash}, &ow)
	if ow.PreviousHash != w.ContentHash || ow.ContentHash != sha(body+"\nMore.\n") {
		t.Errorf("overwrite: %+v", ow)
	}
	// A retried append with the same key lands once.
	for i := range 2 {
		var a written
		c.MustOK("write_note", map[string]any{"path": p, "content": "Appended once.", "mode": "append", "idempotency_key": "conformance-1"}, &a)
		if a.Replayed != (i == 1) {
			t.Errorf("append #%d: replayed %v", i, a.Replayed)
		}
	}
	if content, _ := readNote(t, c, p); strings.Count(content, "Appended once.") != 1 || !strings.HasSuffix(content, "More.\nAppended once.") {
		t.Errorf("after the keyed appends: %q", content)
	}
	c.MustFail("note-not-found", "write_note", map[string]any{"path": scratch + "/Missing.md", "content": "x", "mode": "append"})
	c.MustFail("not-markdown", "write_note", map[string]any{"path": scratch + "/data.csv", "content": "x"})
	// Sheaf's own and the editor's folders are never written by a tool.
	c.MustFail("path-invalid", "write_note", map[string]any{"path": ".obsidian/evil.md", "content": "x"})
	c.MustFail("path-invalid", "write_note", map[string]any{"path": "../evil.md", "content": "x"})
	c.MustFail("args-invalid", "write_note", map[string]any{"path": p, "content": "x", "mode": "sideways"})
	// sources/ is write-once.
	src := "sources/Conformance capture.md"
	var sw written
	c.MustOK("write_note", map[string]any{"path": src, "content": "raw capture\n"}, &sw)
	c.MustFail("immutable-path", "write_note", map[string]any{"path": src, "content": "x", "mode": "overwrite", "expected_hash": sw.ContentHash})
	c.MustFail("immutable-path", "write_note", map[string]any{"path": src, "content": "x", "mode": "append"})
	c.MustFail("immutable-path", "apply_edits", map[string]any{"path": src, "edits": []any{map[string]any{"find": "raw", "replace": "cooked"}}})
	c.MustFail("immutable-path", "delete_note", map[string]any{"path": src, "confirm": true})
	for _, tp := range traversals {
		c.MustFail("path-invalid", "write_note", map[string]any{"path": tp, "content": "x"})
		c.MustFail("path-invalid", "delete_note", map[string]any{"path": tp, "confirm": true})
		c.MustFail("path-invalid", "apply_edits", map[string]any{"path": tp, "edits": []any{map[string]any{"find": "a", "replace": "b"}}})
	}
}

func testApplyEdits(t *testing.T, c *Client) {
	p := scratch + "/Edits.md"
	c.MustOK("write_note", map[string]any{"path": p, "content": "alpha beta\nbeta gamma\n"}, nil)
	r := c.MustFail("edit-not-unique", "apply_edits", map[string]any{"path": p, "edits": []any{
		map[string]any{"find": "alpha", "replace": "ALPHA"}, map[string]any{"find": "beta", "replace": "x"}}})
	if m, _ := r.Fields["matches"].(float64); m != 2 {
		t.Errorf("edit-not-unique matches: %v", r.Fields)
	}
	r = c.MustFail("edit-not-unique", "apply_edits", map[string]any{"path": p, "edits": []any{map[string]any{"find": "delta", "replace": "x"}}})
	if m, ok := r.Fields["matches"].(float64); !ok || m != 0 {
		t.Errorf("edit-not-unique for no match: %v", r.Fields)
	}
	if content, _ := readNote(t, c, p); content != "alpha beta\nbeta gamma\n" {
		t.Errorf("a failed apply_edits changed the note: %q", content)
	}
	c.MustOK("apply_edits", map[string]any{"path": p, "edits": []any{
		map[string]any{"find": "alpha beta", "replace": "one"}, map[string]any{"find": "beta gamma", "replace": "two"}}}, nil)
	if content, _ := readNote(t, c, p); content != "one\ntwo\n" {
		t.Errorf("apply_edits: %q", content)
	}
	c.MustFail("proposal-stale", "apply_edits", map[string]any{"path": p, "expected_hash": sha("old"), "edits": []any{map[string]any{"find": "one", "replace": "1"}}})
	c.MustFail("note-not-found", "apply_edits", map[string]any{"path": scratch + "/Nope.md", "edits": []any{map[string]any{"find": "a", "replace": "b"}}})
	c.MustFail("args-invalid", "apply_edits", map[string]any{"path": p, "edits": []any{}})
}

func testPatchSection(t *testing.T, c *Client) {
	p := scratch + "/Sections.md"
	body := "---\ntags: [a]\n---\n# Doc\n\n## Risks\n\nweather\n\n## Plan\n\n### Risks\n\nbudget ^b1\n\n```\n## Not a heading\n```\n"
	c.MustOK("write_note", map[string]any{"path": p, "content": body}, nil)
	r := c.MustFail("edit-not-unique", "patch_section", map[string]any{"path": p, "heading_path": []string{"Risks"}, "operation": "append", "content": "x"})
	if m, _ := r.Fields["matches"].(float64); m != 2 {
		t.Errorf("duplicate headings: %v", r.Fields)
	}
	c.MustFail("target-not-found", "patch_section", map[string]any{"path": p, "heading_path": []string{"Not a heading"}, "operation": "append", "content": "x"})
	c.MustFail("target-not-found", "patch_section", map[string]any{"path": p, "block": "nope", "operation": "replace", "content": "x"})
	c.MustFail("target-not-found", "patch_section", map[string]any{"path": p, "frontmatter_key": "status", "operation": "replace", "content": "x"})
	c.MustFail("args-invalid", "patch_section", map[string]any{"path": p, "operation": "replace", "content": "x"})
	if content, _ := readNote(t, c, p); content != body {
		t.Fatalf("a failed patch changed the note")
	}
	c.MustOK("patch_section", map[string]any{"path": p, "heading_path": []string{"Plan", "Risks"}, "operation": "replace", "content": "costs"}, nil)
	c.MustOK("patch_section", map[string]any{"path": p, "frontmatter_key": "tags", "operation": "append", "content": "b"}, nil)
	c.MustOK("patch_section", map[string]any{"path": p, "heading_path": []string{"Doc", "Risks"}, "operation": "append", "content": "floods"}, nil)
	want := "---\ntags: [a, b]\n---\n# Doc\n\n## Risks\n\nweather\nfloods\n\n## Plan\n\n### Risks\n\ncosts\n"
	if content, _ := readNote(t, c, p); content != want {
		t.Errorf("after the patches:\n got %q\nwant %q", content, want)
	}
}

func testDeleteNote(t *testing.T, c *Client) {
	p := scratch + "/Doomed.md"
	c.MustOK("write_note", map[string]any{"path": p, "content": "bye\n"}, nil)
	c.MustFail("confirmation-required", "delete_note", map[string]any{"path": p})
	c.MustFail("proposal-stale", "delete_note", map[string]any{"path": p, "confirm": true, "expected_hash": sha("other")})
	var d struct {
		TrashPath   string `json:"trash_path"`
		ContentHash string `json:"content_hash"`
	}
	c.MustOK("delete_note", map[string]any{"path": p, "confirm": true, "expected_hash": sha("bye\n")}, &d)
	if !strings.HasPrefix(d.TrashPath, ".sheaf/trash/") || d.ContentHash != sha("bye\n") {
		t.Errorf("delete: %+v", d)
	}
	c.MustFail("note-not-found", "read_note", map[string]any{"path": p})
	c.MustFail("note-not-found", "delete_note", map[string]any{"path": p, "confirm": true})
	var list notesPage
	c.MustOK("list_notes", map[string]any{"path": scratch, "limit": 100}, &list)
	if slices.Contains(paths(list.Items), p) {
		t.Error("list_notes still lists the deleted note")
	}
}

func testCompleteDirective(t *testing.T, c *Client) {
	p := scratch + "/Tasks.md"
	c.MustOK("write_note", map[string]any{"path": p, "content": "# Tasks\n\n> [!ai] Water the seedlings\n> before noon\n"}, nil)
	var pend struct {
		Items []struct {
			Path  string `json:"path"`
			Line  int    `json:"line"`
			Title string `json:"title"`
		} `json:"items"`
	}
	c.MustOK("pending_directives", map[string]any{"path": p}, &pend)
	if len(pend.Items) != 1 || pend.Items[0].Line != 3 {
		t.Fatalf("pending after the write: %+v", pend.Items)
	}
	c.MustFail("target-not-found", "complete_directive", map[string]any{"path": p, "line": 4})
	c.MustFail("target-not-found", "complete_directive", map[string]any{"path": p, "line": 3, "title": "Something else"})
	var done struct {
		AlreadyDone bool   `json:"already_done"`
		Title       string `json:"title"`
	}
	c.MustOK("complete_directive", map[string]any{"path": p, "line": 3, "title": "Water the seedlings"}, &done)
	if done.AlreadyDone || done.Title != "Water the seedlings" {
		t.Errorf("complete: %+v", done)
	}
	if content, _ := readNote(t, c, p); content != "# Tasks\n\n> [!ai-done] Water the seedlings\n> before noon\n" {
		t.Errorf("after complete: %q", content)
	}
	c.MustOK("pending_directives", map[string]any{"path": p}, &pend)
	if len(pend.Items) != 0 {
		t.Errorf("still pending: %+v", pend.Items)
	}
	c.MustOK("complete_directive", map[string]any{"path": p, "line": 3}, &done)
	if !done.AlreadyDone {
		t.Error("completing again is not reported as already done")
	}
}

func testFilePage(t *testing.T, c *Client) {
	p := scratch + "/Answer.md"
	args := map[string]any{"path": p, "title": "Lime", "content": "Beds 3 and 7.", "question": "Which beds need lime?",
		"citations": []any{map[string]any{"path": "Projects/Garden/2026/Soil test results.md", "quote": "pH"}}}
	c.MustOK("file_page", args, nil)
	var links struct {
		Items []struct {
			SourcePath string `json:"sourcePath"`
		} `json:"items"`
	}
	c.MustOK("list_backlinks", map[string]any{"path": "Projects/Garden/2026/Soil test results.md", "limit": 200}, &links)
	found := false
	for _, l := range links.Items {
		found = found || l.SourcePath == p
	}
	if !found {
		t.Errorf("the filed page's citation is not a backlink: %+v", links.Items)
	}
	var rn struct {
		Frontmatter map[string]any `json:"frontmatter"`
	}
	c.MustOK("read_note", map[string]any{"path": p}, &rn)
	if rn.Frontmatter["question"] != "Which beds need lime?" || rn.Frontmatter["derived_from"] == nil {
		t.Errorf("provenance: %v", rn.Frontmatter)
	}
	c.MustFail("note-exists", "file_page", args)
	args["path"], args["citations"] = scratch+"/Answer 2.md", []any{map[string]any{"path": "No such note.md"}}
	c.MustFail("note-not-found", "file_page", args)
}

// moveTarget is a sample note linked in every spelling: by name, with
// display text, to a block, through an alias, embedded? (Link zoo), by
// relative Markdown path (Spring planting).
const moveTarget = "Projects/Garden/Compost.md"

func testMoveNote(t *testing.T, c *Client) {
	unresolvedBefore := findingSet(lintAll(t, c).of("unresolved-link"))
	hashes := map[string]string{}
	var list notesPage
	c.MustOK("list_notes", map[string]any{"limit": 500}, &list)
	for _, n := range list.Items {
		if n.Path != "log.md" { // the ledger grows with every write
			_, hashes[n.Path] = readNote(t, c, n.Path)
		}
	}
	to := scratch + "/Humus heap.md"
	var mv struct {
		From         string `json:"from"`
		To           string `json:"to"`
		LinksChanged int    `json:"links_rewritten"`
		Rewritten    []struct {
			Path    string `json:"path"`
			Changes []struct {
				Old string `json:"old"`
				New string `json:"new"`
			} `json:"changes"`
		} `json:"rewritten"`
		NotRewritten []struct {
			Path string `json:"path"`
		} `json:"not_rewritten"`
	}
	c.MustOK("move_note", map[string]any{"path": moveTarget, "new_path": to, "dry_run": true}, &mv)
	c.MustOK("read_note", map[string]any{"path": moveTarget}, nil) // a dry run moves nothing
	dryLinks := mv.LinksChanged
	c.MustOK("move_note", map[string]any{"path": moveTarget, "new_path": to}, &mv)
	// binary.md, which no index holds, names Compost: it is said.
	if mv.LinksChanged < 5 || mv.LinksChanged != dryLinks || len(mv.NotRewritten) != 1 || mv.NotRewritten[0].Path != "binary.md" {
		t.Errorf("move: %d links rewritten (dry run %d), not rewritten %v", mv.LinksChanged, dryLinks, mv.NotRewritten)
	}
	got := map[string]string{}
	for _, r := range mv.Rewritten {
		for _, ch := range r.Changes {
			got[ch.Old] = ch.New
		}
	}
	for old, want := range map[string]string{
		"[[Compost]]":                       "[[Humus heap]]",
		"[[Compost#^abc123]]":               "[[Humus heap#^abc123]]",
		"[the compost bays](../Compost.md)": "[the compost bays](../../../Write%20tests/Humus%20heap.md)",
	} {
		if got[old] != want {
			t.Errorf("%s was rewritten to %q, want %q (all: %v)", old, got[old], want, got)
		}
	}
	if u := findingSet(lintAll(t, c).of("unresolved-link")); !slices.Equal(u, unresolvedBefore) {
		t.Errorf("unresolved links after the move:\n%s\nbefore:\n%s", strings.Join(u, "\n"), strings.Join(unresolvedBefore, "\n"))
	}
	var back struct {
		Total int `json:"total"`
	}
	c.MustOK("list_backlinks", map[string]any{"path": to}, &back)
	if back.Total < mv.LinksChanged-1 {
		t.Errorf("%d backlinks to the moved note, %d links rewritten", back.Total, mv.LinksChanged)
	}
	c.MustFail("note-not-found", "read_note", map[string]any{"path": moveTarget})
	c.MustFail("note-exists", "move_note", map[string]any{"path": to, "new_path": "Glossary.md"})
	c.MustFail("immutable-path", "move_note", map[string]any{"path": "sources/Pollinator survey 2025.md", "new_path": scratch + "/x.md"})
	c.MustFail("not-markdown", "move_note", map[string]any{"path": to, "new_path": scratch + "/x.txt"})
	// And back: every note is what it was, byte for byte.
	c.MustOK("move_note", map[string]any{"path": to, "new_path": moveTarget}, nil)
	for p, h := range hashes {
		if _, now := readNote(t, c, p); now != h {
			t.Errorf("%s differs after moving %s away and back", p, moveTarget)
		}
	}
}

func findingSet(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Message))
	}
	slices.Sort(out)
	return out
}

func testLedger(t *testing.T, c *Client) {
	var ra struct {
		Entries []struct {
			Op    string `json:"op"`
			Title string `json:"title"`
		} `json:"entries"`
	}
	c.MustOK("recent_activity", map[string]any{"limit": 100}, &ra)
	ops := map[string]int{}
	for _, e := range ra.Entries {
		ops[e.Op]++
	}
	for _, op := range []string{"write", "edit", "patch", "delete", "move", "complete", "file"} {
		if ops[op] == 0 {
			t.Errorf("no %s entry in the ledger: %v", op, ops)
		}
	}
}
