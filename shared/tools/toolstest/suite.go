package toolstest

import (
	"encoding/json"
	"strings"
	"testing"
)

// ReadTools are the tools this suite expects every server to list.
var ReadTools = []string{
	"get_vault_info", "list_notes", "read_note", "read_outline", "list_outgoing_links",
	"list_backlinks", "search", "list_tags", "notes_by_tag", "list_folders",
	"link_graph", "list_attachments", "read_attachment",
	"find_references", "suggest_links", "note_relations", "search_and_read",
	"record_retrieval_feedback", "lint", "wiki_health", "recent_activity",
	"agent_mentions", "pending_directives", "await_directives",
}

// Run runs the whole suite; connect must serve a fresh copy of the sample
// vault in which the harness also wrote assets/huge.bin (HugeAttachmentBytes
// of zeros, over the server's read_attachment cap).
func Run(t *testing.T, connect Connect) {
	c := NewClient(t, connect(t))
	c.WaitIndexed()
	t.Run("ToolsList", func(t *testing.T) { testToolsList(t, c) })
	t.Run("ArgsInvalid", func(t *testing.T) { testArgsInvalid(t, c) })
	t.Run("UnknownTool", func(t *testing.T) { testUnknownTool(t, c) })
	t.Run("PathInvalid", func(t *testing.T) { testPathInvalid(t, c) })
	t.Run("LoneSurrogate", func(t *testing.T) { testLoneSurrogate(t, c) })
	t.Run("VaultInfo", func(t *testing.T) { testVaultInfo(t, c) })
	t.Run("ListNotes", func(t *testing.T) { testListNotes(t, c) })
	t.Run("ReadNote", func(t *testing.T) { testReadNote(t, c) })
	t.Run("Outline", func(t *testing.T) { testOutline(t, c) })
	t.Run("Links", func(t *testing.T) { testLinks(t, c) })
	t.Run("Search", func(t *testing.T) { testSearch(t, c) })
	t.Run("Tags", func(t *testing.T) { testTags(t, c) })
	t.Run("Folders", func(t *testing.T) { testFolders(t, c) })
	t.Run("Attachments", func(t *testing.T) { testAttachments(t, c) })
	t.Run("Paging", func(t *testing.T) { testPaging(t, c) })
	t.Run("LLMTools", func(t *testing.T) { testLLMTools(t, c) })
	t.Run("Semantic", func(t *testing.T) { testSemantic(t, c) })
	t.Run("References", func(t *testing.T) { testReferences(t, c) })
	t.Run("SuggestLinks", func(t *testing.T) { testSuggestLinks(t, c) })
	t.Run("NoteRelations", func(t *testing.T) { testNoteRelations(t, c) })
	t.Run("Lint", func(t *testing.T) { testLint(t, c) })
	t.Run("WikiHealth", func(t *testing.T) { testWikiHealth(t, c) })
	t.Run("RecentActivity", func(t *testing.T) { testRecentActivity(t, c) })
	t.Run("SearchAndRead", func(t *testing.T) { testSearchAndRead(t, c) })
	t.Run("AgentMentions", func(t *testing.T) { testAgentMentions(t, c) })
	t.Run("PendingDirectives", func(t *testing.T) { testPendingDirectives(t, c) })
	t.Run("AwaitDirectives", func(t *testing.T) { testAwaitDirectives(t, c) })
	// The write tools last: they change the vault.
	t.Run("WriteHints", func(t *testing.T) { testWriteHints(t, c) })
	t.Run("WriteNote", func(t *testing.T) { testWriteNote(t, c) })
	t.Run("ApplyEdits", func(t *testing.T) { testApplyEdits(t, c) })
	t.Run("PatchSection", func(t *testing.T) { testPatchSection(t, c) })
	t.Run("DeleteNote", func(t *testing.T) { testDeleteNote(t, c) })
	t.Run("CompleteDirective", func(t *testing.T) { testCompleteDirective(t, c) })
	t.Run("FilePage", func(t *testing.T) { testFilePage(t, c) })
	t.Run("MoveNote", func(t *testing.T) { testMoveNote(t, c) })
	t.Run("Ledger", func(t *testing.T) { testLedger(t, c) })
}

// HugeAttachmentBytes is the size of the oversized attachment the harness writes.
const HugeAttachmentBytes = 6 << 20

// testUnknownTool: a tool the server does not have is a tool result of
// kind unsupported, not a protocol error.
func testUnknownTool(t *testing.T, c *Client) {
	r := c.MustFail("unsupported", "no_such_tool", nil)
	if r.Fields["reason"] != "unknown-tool" || !strings.Contains(r.Message, "tools/list") {
		t.Errorf("unknown tool: %v %q", r.Fields, r.Message)
	}
}

func testToolsList(t *testing.T, c *Client) {
	res, err := c.S.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]bool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = true
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations must state every hint, got %+v", tool.Name, a)
		} else if !writeTools[tool.Name] && (!a.ReadOnlyHint || *a.DestructiveHint || *a.OpenWorldHint) {
			t.Errorf("%s: a read tool must be readOnly, not destructive, closed-world: %+v", tool.Name, a)
		}
		var in map[string]any
		raw, _ := json.Marshal(tool.InputSchema)
		_ = json.Unmarshal(raw, &in)
		if in["type"] != "object" {
			t.Errorf("%s: input schema type %v", tool.Name, in["type"])
		}
		if ap, ok := in["additionalProperties"].(bool); !ok || ap {
			t.Errorf("%s: input schema must reject unknown keys (additionalProperties: false)", tool.Name)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no output schema", tool.Name)
		}
	}
	for _, name := range ReadTools {
		if !byName[name] {
			t.Errorf("tool %s not listed", name)
		}
	}
}

func testArgsInvalid(t *testing.T, c *Client) {
	for _, tc := range []struct {
		tool string
		args map[string]any
		arg  string
	}{
		{"read_note", map[string]any{"path": "index.md", "bogus": 1}, "bogus"},
		{"search", map[string]any{"query": "x", "limit": 0}, "limit"},
		{"search", map[string]any{"query": "x", "mode": "psychic"}, "mode"},
		{"search", map[string]any{}, "query"},
		{"read_note", map[string]any{"path": 42}, "path"},
	} {
		r := c.MustFail("args-invalid", tc.tool, tc.args)
		if !strings.Contains(r.Message, `"`+tc.arg+`"`) || strings.Contains(r.Message, "validating") {
			t.Errorf("%s(%v): the message should name %q for a person: %s", tc.tool, tc.args, tc.arg, r.Message)
		}
	}
	c.MustFail("args-invalid", "read_note", map[string]any{"path": "index.md", "bogus": 1})
	c.MustFail("args-invalid", "read_note", map[string]any{"path": 42})
	c.MustFail("args-invalid", "read_note", map[string]any{})
	c.MustFail("args-invalid", "read_note", map[string]any{"path": "index.md", "id": "abcdef"})
	c.MustFail("args-invalid", "search", map[string]any{})
	c.MustFail("args-invalid", "search", map[string]any{"query": "x", "limit": 0})
	c.MustFail("args-invalid", "search", map[string]any{"query": "x", "mode": "psychic"})
	c.MustFail("args-invalid", "list_notes", map[string]any{"since": "last tuesday"})
	c.MustFail("args-invalid", "list_notes", map[string]any{"metadata_match": map[string]any{"status": []any{"a"}}})
	c.MustFail("args-invalid", "list_notes", map[string]any{"limit": -1})
	c.MustFail("args-invalid", "notes_by_tag", map[string]any{})
	c.MustFail("args-invalid", "get_vault_info", map[string]any{"vault": "no-such-vault"})
	c.MustFail("args-invalid", "read_attachment", map[string]any{"path": "index.md"})
}

// humanMessage checks an error is written for a person: it names the
// argument (and says so in its fields) and leaks no Go error chain.
func humanMessage(t *testing.T, tool string, r Result, arg string) {
	t.Helper()
	for _, leak := range []string{"store:", "fs:", "s3:", "%!", "<nil>", "rpc error"} {
		if strings.Contains(r.Message, leak) {
			t.Errorf("%s: message leaks %q: %s", tool, leak, r.Message)
		}
	}
	if !strings.Contains(r.Message, arg) || r.Fields["argument"] != arg {
		t.Errorf("%s: message or fields do not name the argument %q: %s %v", tool, arg, r.Message, r.Fields)
	}
}

// traversals are paths every tool must refuse with path-invalid.
var traversals = []string{
	"../outside.md", "/etc/passwd", "a/../../b.md", `a\..\b.md`, "a\x00b.md",
	"C:/Windows/win.ini", "//server/share.md", "Projects/../../x.md",
	"Home\uFFFD.md", // a lost character: what a lone surrogate escape decodes to
}

// testLoneSurrogate: a path argument sent with a lone surrogate escape
// (raw JSON "Home\ud83d.md", which JSON decoders turn into U+FFFD) is not
// the path the client meant: refused, and no note of the mangled name is
// made.
func testLoneSurrogate(t *testing.T, c *Client) {
	for _, raw := range []string{
		`{"path": "Surrogate\ud83d probe.md", "content": "x"}`,
		`{"path": "Surrogate\udc00 probe.md", "content": "x"}`,
		`{"path": "Surrogate\ud83d\ud83d probe.md", "content": "x"}`,
	} {
		r := c.CallRaw("write_note", raw)
		if !r.IsError || r.Kind != "path-invalid" {
			t.Errorf("write_note(%s): %v %q (%s), want path-invalid", raw, r.IsError, r.Kind, r.Message)
		}
	}
	if r := c.CallRaw("read_note", `{"path": "Surrogate\ud83d probe.md"}`); r.Kind != "path-invalid" {
		t.Errorf("read_note of a lone surrogate: %q (%s), want path-invalid", r.Kind, r.Message)
	}
	var list struct {
		Total int `json:"total"`
	}
	c.MustOK("list_notes", map[string]any{"path_prefix": "Surrogate"}, &list)
	if list.Total != 0 {
		t.Errorf("%d notes named Surrogate… exist after refused writes", list.Total)
	}
	// A surrogate pair is a character like any other.
	r := c.CallRaw("read_note", `{"path": "Surrogate\ud83c\udf31 pair.md"}`)
	if r.Kind != "note-not-found" {
		t.Errorf("read_note of a valid surrogate pair: %q (%s), want note-not-found", r.Kind, r.Message)
	}
}

func testPathInvalid(t *testing.T, c *Client) {
	for _, p := range traversals {
		for _, tool := range []string{"read_note", "read_outline", "list_outgoing_links", "list_backlinks", "link_graph", "read_attachment"} {
			r := c.MustFail("path-invalid", tool, map[string]any{"path": p})
			humanMessage(t, tool, r, "path")
		}
		c.MustFail("path-invalid", "list_notes", map[string]any{"path": p})
		c.MustFail("path-invalid", "list_attachments", map[string]any{"path": p})
		c.MustFail("path-invalid", "list_folders", map[string]any{"path": p})
	}
}
