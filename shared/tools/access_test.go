package tools

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// Two stand-in write tools until the real ones exist: test_write puts a
// file (proposable), test_move is a multi-note operation (refused to
// propose-only callers). They go through the same core as every tool.

type testWriteIn struct {
	VaultArg
	Path    string `json:"path" schema:"minLength=1"`
	Content string `json:"content"`
}

type testWriteOut struct {
	Coverage
	Path string `json:"path"`
	Hash string `json:"hash"`
}

type testMoveIn struct {
	VaultArg
	Path    string `json:"path" schema:"minLength=1"`
	NewPath string `json:"new_path" schema:"minLength=1"`
}

func testWriteTools(s *Server) []Tool {
	write := define(Spec{Name: "test_write", Title: "Test write", Description: "Writes content to path.", Access: edits(proposeQueue, note("path"))}, func(ctx context.Context, in testWriteIn) (*testWriteOut, error) {
		v, err := s.vault(ctx, in.VaultArg)
		if err != nil {
			return nil, err
		}
		p, err := targetPath(in.Path)
		if err != nil {
			return nil, err
		}
		if _, err := v.Store.Put(ctx, p, []byte(in.Content), store.PutOptions{}); err != nil {
			return nil, err
		}
		return &testWriteOut{Path: p, Hash: contentHash([]byte(in.Content))}, nil
	})
	move := define(Spec{Name: "test_move", Title: "Test move", Description: "Moves a note.", Hints: hints{destructive: true}, Access: edits(proposeRefuse, note("path"), note("new_path"))}, func(ctx context.Context, in testMoveIn) (*testWriteOut, error) {
		return &testWriteOut{Path: in.NewPath}, nil
	})
	return []Tool{write, move}
}

// gvault is a small vault: Public/ and Secret/ notes sharing a tag and
// linking to each other, an attachment in each.
func gvault(t *testing.T) (*Server, string, map[string]server.ToolHandlerFunc) {
	t.Helper()
	s, dir, hs, _ := gvaultWith(t, nil)
	return s, dir, hs
}

func gvaultWith(t *testing.T, extra map[string]string) (*Server, string, map[string]server.ToolHandlerFunc, *indexer.Indexer) {
	t.Helper()
	files := map[string]string{
		"Public/a.md":           "---\ntags: [shared]\n---\n# A\nSee [[b]] and [[Hidden Plan]]. zebra\n",
		"Public/b.md":           "#shared\nBack to [[a]]. zebra zebra\n",
		"Public/sub/c.md":       "# C\nNothing here.\n",
		"Secret/Hidden Plan.md": "---\ntags: [shared, classified]\nid: 0123456789abcdef\n---\nLinks [[a]]. zebra marmotquux\n",
		"Secret/d.md":           "#shared marmotquux zebra [[a]]\n",
		"Public/pic.png":        "png",
		"Secret/pic.png":        "png",
	}
	maps.Copy(files, extra)
	dir := indexertest.Folder(t, files)
	ix := indexFolder(t, dir)
	v := &Vault{ID: "g", Store: ix.Store, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}}
	s, err := NewServer(v)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]server.ToolHandlerFunc{}
	for _, tl := range s.serve(append(s.declared(), testWriteTools(s)...)) {
		byName[tl.Tool.Name] = tl.Handler
	}
	return s, dir, byName, ix
}

// outcome is a call's kind ("" on success) and its JSON.
type outcome struct {
	kind string
	raw  string
	res  map[string]any
}

func callAs(t *testing.T, hs map[string]server.ToolHandlerFunc, id auth.Identity, name string, args map[string]any) outcome {
	t.Helper()
	h := hs[name]
	if h == nil {
		t.Fatalf("no tool %s", name)
	}
	raw, _ := json.Marshal(args)
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := h(auth.WithIdentity(context.Background(), id), req)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, raw, err)
	}
	all, _ := json.Marshal(res)
	o := outcome{raw: string(all)}
	if res.IsError {
		f, _ := res.Meta.AdditionalFields[errorMetaKey].(map[string]any)
		o.kind, _ = f["kind"].(string)
		return o
	}
	_ = json.Unmarshal(res.StructuredContent.(json.RawMessage), &o.res)
	return o
}

// schemaCheck validates results against the served tools' output schemas,
// as the SDK clients do.
func schemaCheck(t *testing.T, s *Server) func(tool string, o outcome) {
	schemas := map[string]*jsonschema.Resolved{}
	for _, tl := range s.serve(append(s.declared(), testWriteTools(s)...)) {
		var sch jsonschema.Schema
		if err := json.Unmarshal(tl.Listed().RawOutputSchema, &sch); err != nil {
			t.Fatal(err)
		}
		rs, err := sch.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		schemas[tl.Tool.Name] = rs
	}
	return func(tool string, o outcome) {
		t.Helper()
		if o.kind != "" {
			return
		}
		var v any
		raw, _ := json.Marshal(o.res)
		_ = json.Unmarshal(raw, &v)
		if err := schemas[tool].Validate(v); err != nil {
			t.Errorf("%s: result does not match its output schema: %v\n%s", tool, err, raw)
		}
	}
}

func ident(name string, scope auth.Scope, folders ...string) auth.Identity {
	id := auth.Identity{Subject: "key:" + name, Name: name, Granted: []auth.Scope{scope}}
	if len(folders) > 0 {
		f, err := auth.ParseFolders(folders)
		if err != nil {
			panic(err)
		}
		id.Folders = f
	}
	return id
}

func TestEveryToolDeclaresAccess(t *testing.T) {
	s := testServer(t)
	for _, tl := range s.Tools() {
		if tl.Spec.Access.scope == "" {
			t.Errorf("%s has no access declaration", tl.Tool.Name)
		}
	}
	noop := func(context.Context, struct{ VaultArg }) (*rejectProposalOut, error) { return nil, nil }
	for name, bad := range map[string]func() Tool{
		"undeclared": func() Tool {
			return define(Spec{Name: "no_such_tool", Title: "x", Description: "x", Hints: readOnly}, noop)
		},
		"wrong arg": func() Tool {
			return define(Spec{Name: "read_outline", Title: "x", Description: "x", Hints: readOnly, Access: reads(note("path"))}, noop)
		},
		"undeclared write": func() Tool {
			return define(Spec{Name: "list_tags", Title: "x", Description: "x", Access: reads()}, noop)
		},
		"no description": func() Tool { return define(Spec{Name: "x", Title: "x", Hints: readOnly, Access: reads()}, noop) },
		"unpaid provider": func() Tool {
			return define(Spec{Name: "x", Title: "x", Description: "x", Hints: readOnly, Access: reads(), Needs: Needs{LLM: true}}, noop)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: served without a fitting declaration", name)
				}
			}()
			s.serve([]Tool{bad()})
		}()
	}
}

func TestGuard(t *testing.T) {
	_, dir, hs := gvault(t)
	reader := ident("reader", auth.ScopeRead)
	writer := ident("writer", auth.ScopeWrite)
	scopedW := ident("scoped", auth.ScopeAdmin, "Public/**")
	proposer := ident("proposer", auth.ScopeWrite)
	proposer.ProposeOnly = true
	core := ident("core", auth.ScopeRead)
	core.Profile = auth.ProfileCore
	none := auth.Identity{Subject: "oauth:nobody"} // a token with no Sheaf scope

	for _, c := range []struct {
		who  auth.Identity
		tool string
		args map[string]any
		kind string
	}{
		{reader, "test_write", map[string]any{"path": "Public/x.md", "content": "x"}, "insufficient-scope"},
		{none, "list_notes", nil, "insufficient-scope"},
		{reader, "reindex_embeddings", nil, "insufficient-scope"},
		{reader, "list_proposals", nil, "insufficient-scope"},
		{writer, "reindex_embeddings", nil, "insufficient-scope"},
		{scopedW, "reindex_embeddings", nil, "forbidden"},
		{scopedW, "test_write", map[string]any{"path": "Secret/x.md", "content": "x"}, "folder-not-allowed"},
		{scopedW, "test_write", map[string]any{"path": "Public/../Secret/x.md", "content": "x"}, "path-invalid"},
		{writer, "test_write", map[string]any{"path": ".sheaf/keys.json", "content": "{}"}, "path-invalid"}, // no folder limits: what is wrong is the path
		{writer, "test_write", map[string]any{"path": "Public/.obsidian/app.json", "content": "{}"}, "path-invalid"},
		{scopedW, "test_write", map[string]any{"path": "Public/.obsidian/app.json", "content": "{}"}, "folder-not-allowed"},
		{scopedW, "read_note", map[string]any{"path": "Secret/d.md"}, "folder-not-allowed"},
		{scopedW, "read_note", map[string]any{"path": "Secret/d"}, "folder-not-allowed"},
		{scopedW, "read_attachment", map[string]any{"path": "Secret/pic.png"}, "folder-not-allowed"},
		{scopedW, "list_notes", map[string]any{"path": "Secret"}, "folder-not-allowed"},
		{scopedW, "list_backlinks", map[string]any{"path": "Secret/d.md"}, "folder-not-allowed"},
		{scopedW, "record_retrieval_feedback", map[string]any{"chunk_id": "Secret/d.md#p0", "useful": true}, "folder-not-allowed"},
		{scopedW, "pending_directives", map[string]any{"path": "Secret"}, "folder-not-allowed"},
		{scopedW, "read_note", map[string]any{"id": "0123456789abcdef"}, "note-not-found"}, // ids resolve in the view
		{scopedW, "read_note", map[string]any{"PATH": "Secret/d.md"}, "args-invalid"},      // no case games
		{proposer, "test_move", map[string]any{"path": "Public/a.md", "new_path": "Public/z.md"}, "unsupported"},
		{proposer, "apply_proposal", map[string]any{"id": "20260101T000000Z-000000000000"}, "insufficient-scope"},
		{proposer, "reject_proposal", map[string]any{"id": "20260101T000000Z-000000000000"}, "insufficient-scope"},
		{core, "lint", nil, "unsupported"},
		{reader, "read_note", map[string]any{"path": ".obsidian/app.json"}, "note-not-found"}, // whole-vault readers: hidden is not-found
		{writer, "apply_proposal", map[string]any{"id": "../../keys"}, "args-invalid"},
	} {
		if got := callAs(t, hs, c.who, c.tool, c.args); got.kind != c.kind {
			t.Errorf("%s %s(%v) = %q, want %q: %s", c.who.Name, c.tool, c.args, got.kind, c.kind, got.raw)
		}
	}
	// Allowed calls go through.
	for _, c := range []struct {
		who  auth.Identity
		tool string
		args map[string]any
	}{
		{writer, "test_write", map[string]any{"path": "Public/new.md", "content": "hello"}},
		{scopedW, "test_write", map[string]any{"path": "Public/new2", "content": "hi"}},
		{scopedW, "read_note", map[string]any{"path": "Public/a.md"}},
		{scopedW, "list_notes", map[string]any{"path": "Public"}},
		{core, "read_note", map[string]any{"path": "Public/a.md"}},
		{reader, "list_notes", nil},
	} {
		if got := callAs(t, hs, c.who, c.tool, c.args); got.kind != "" {
			t.Errorf("%s %s(%v): %s", c.who.Name, c.tool, c.args, got.raw)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "Public/new2.md")); err != nil {
		t.Errorf("the scoped write did not land: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sheaf/keys.json")); err == nil {
		t.Error("a write reached .sheaf/keys.json")
	}
}

func TestScopedCallerSeesOnlyItsFolders(t *testing.T) {
	_, _, hs := gvault(t)
	pub := ident("pub", auth.ScopeRead, "Public/**")
	full := ident("full", auth.ScopeRead)

	call := func(id auth.Identity, tool string, args map[string]any) outcome {
		o := callAs(t, hs, id, tool, args)
		if o.kind != "" {
			t.Fatalf("%s %s(%v): %s", id.Name, tool, args, o.raw)
		}
		return o
	}
	num := func(o outcome, path ...string) float64 {
		var v any = o.res
		for _, k := range path {
			v = v.(map[string]any)[k]
		}
		return v.(float64)
	}
	if n := num(call(pub, "get_vault_info", nil), "noteCount"); n != 3 {
		t.Errorf("noteCount %v, want 3", n)
	}
	if n := num(call(full, "get_vault_info", nil), "noteCount"); n != 5 {
		t.Errorf("full noteCount %v, want 5", n)
	}
	// Totals are computed over visible notes: filters before ranking.
	if n := num(call(pub, "search", map[string]any{"query": "zebra"}), "total"); n != 2 {
		t.Errorf("search total %v, want 2", n)
	}
	if n := num(call(full, "search", map[string]any{"query": "zebra"}), "total"); n != 4 {
		t.Errorf("full search total %v, want 4", n)
	}
	tags := call(pub, "list_tags", nil).raw
	if !strings.Contains(tags, `{"tag":"shared","count":2}`) || strings.Contains(tags, "classified") {
		t.Errorf("list_tags: %s", tags)
	}
	if n := num(call(pub, "list_backlinks", map[string]any{"path": "Public/a.md"}), "total"); n != 1 {
		t.Errorf("backlinks of a: %v, want 1 (b only)", n)
	}
	// find_references counts only visible lines.
	refs := call(pub, "find_references", map[string]any{"values": []string{"zebra"}})
	if !strings.Contains(refs.raw, `"lines":2`) {
		t.Errorf("find_references: %s", refs.raw)
	}
	folders := call(pub, "list_folders", nil).raw
	if strings.Contains(folders, "Secret") || !strings.Contains(folders, "Public/sub") {
		t.Errorf("list_folders: %s", folders)
	}
	// Nothing any read tool answers names, counts or quotes Secret/.
	for tool, args := range map[string]map[string]any{
		"get_vault_info": nil, "list_notes": nil, "list_tags": nil, "notes_by_tag": {"tag": "shared"},
		"list_attachments": nil, "list_folders": nil, "search": {"query": "zebra"},
		"search_and_read": {"query": "zebra plan"}, "find_references": {"values": []string{"zebra", "plan"}},
		"list_backlinks": {"path": "Public/a.md"}, "list_outgoing_links": {"path": "Public/a.md"},
		"link_graph": {"path": "Public/a.md", "depth": 3}, "note_relations": {"path": "Public/a.md"},
		"suggest_links": {"path": "Public/a.md"}, "lint": nil, "wiki_health": nil, "recent_activity": nil,
		"agent_mentions": nil, "pending_directives": nil, "read_note": {"path": "Public/a.md"},
	} {
		o := call(pub, tool, args)
		for _, leak := range []string{"Secret/", "marmotquux", "classified", "0123456789abcdef"} {
			if strings.Contains(o.raw, leak) {
				t.Errorf("%s(%v) leaks %q: %s", tool, args, leak, o.raw)
			}
		}
	}
	// Asking for the word only hidden notes hold finds nothing at all.
	if n := num(call(pub, "search", map[string]any{"query": "marmotquux"}), "total"); n != 0 {
		t.Errorf("search for a hidden word: total %v", n)
	}
	if o := call(pub, "find_references", map[string]any{"values": []string{"marmotquux"}}); !strings.Contains(o.raw, `"lines":0`) {
		t.Errorf("find_references of a hidden word: %s", o.raw)
	}
	// The whole-vault caller does see them (the fixture is not blind).
	if o := call(full, "search", map[string]any{"query": "marmotquux"}); !strings.Contains(o.raw, "Secret/") {
		t.Errorf("full search: %s", o.raw)
	}
}

func TestProposals(t *testing.T) {
	srv, dir, hs := gvault(t)
	check := schemaCheck(t, srv)
	proposer := ident("proposer", auth.ScopeWrite)
	proposer.ProposeOnly = true
	reviewer := ident("reviewer", auth.ScopeWrite)
	publicReviewer := ident("pubrev", auth.ScopeWrite, "Public/**")
	ctxInfo := callAs(t, hs, proposer, "get_vault_info", nil)
	if caps := ctxInfo.res["capabilities"].(map[string]any); caps["proposeOnly"] != true {
		t.Errorf("capabilities.proposeOnly = %v for a propose-only key", caps["proposeOnly"])
	}
	if caps := callAs(t, hs, reviewer, "get_vault_info", nil).res["capabilities"].(map[string]any); caps["proposeOnly"] != false {
		t.Errorf("capabilities.proposeOnly = %v for a write key", caps["proposeOnly"])
	}
	read := func(p string) string {
		b, _ := os.ReadFile(filepath.Join(dir, p))
		return string(b)
	}
	before := read("Public/a.md")

	// A propose-only write changes nothing and returns the proposal.
	o := callAs(t, hs, proposer, "test_write", map[string]any{"path": "Public/a.md", "content": "proposed A"})
	if o.kind != "" {
		t.Fatal(o.raw)
	}
	check("test_write", o)
	prop, _ := o.res["proposal"].(map[string]any)
	if prop == nil || prop["status"] != "pending" || o.res["partial"] != true {
		t.Fatalf("no proposal in %s", o.raw)
	}
	id1 := prop["id"].(string)
	if read("Public/a.md") != before {
		t.Fatal("a propose-only write changed the note")
	}
	o2 := callAs(t, hs, proposer, "test_write", map[string]any{"path": "Public/new", "content": "new note"})
	id2 := o2.res["proposal"].(map[string]any)["id"].(string)
	o3 := callAs(t, hs, proposer, "test_write", map[string]any{"path": "Secret/d.md", "content": "overwrite secret"})
	id3 := o3.res["proposal"].(map[string]any)["id"].(string)
	if got := o3.res["proposal"].(map[string]any)["targets"].([]any)[0].(map[string]any); got["path"] != "Secret/d.md" || !strings.HasPrefix(got["base_hash"].(string), "sha256:") {
		t.Errorf("targets %v", got)
	}

	// Listed for reviewers; a folder-scoped reviewer sees only its own.
	list := callAs(t, hs, reviewer, "list_proposals", nil)
	check("list_proposals", list)
	if list.res["total"] != float64(3) {
		t.Fatalf("list: %s", list.raw)
	}
	pl := callAs(t, hs, publicReviewer, "list_proposals", nil)
	if pl.res["total"] != float64(2) || strings.Contains(pl.raw, "Secret/") {
		t.Errorf("scoped list: %s", pl.raw)
	}
	// A proposal about a hidden note does not exist for a scoped reviewer.
	for _, tool := range []string{"apply_proposal", "reject_proposal"} {
		if got := callAs(t, hs, publicReviewer, tool, map[string]any{"id": id3}); got.kind != "args-invalid" || strings.Contains(got.raw, "Secret/") {
			t.Errorf("scoped %s of a hidden target: %s", tool, got.raw)
		}
	}

	// Apply: the write happens with the reviewer's rights; the proposal goes.
	applied := callAs(t, hs, reviewer, "apply_proposal", map[string]any{"id": id1})
	if applied.kind != "" || applied.res["applied"] != true {
		t.Fatalf("apply: %s", applied.raw)
	}
	check("apply_proposal", applied)
	if read("Public/a.md") != "proposed A" {
		t.Errorf("applied content: %q", read("Public/a.md"))
	}
	if got := callAs(t, hs, reviewer, "apply_proposal", map[string]any{"id": id1}); got.kind != "args-invalid" {
		t.Errorf("applying twice: %s", got.raw)
	}

	// Stale: the target appeared since (another writer created it).
	if got := callAs(t, hs, reviewer, "test_write", map[string]any{"path": "Public/new.md", "content": "someone else"}); got.kind != "" {
		t.Fatal(got.raw)
	}
	stale := callAs(t, hs, reviewer, "list_proposals", nil)
	if !strings.Contains(stale.raw, `"stale":true`) {
		t.Errorf("list does not flag the stale proposal: %s", stale.raw)
	}
	if got := callAs(t, hs, reviewer, "apply_proposal", map[string]any{"id": id2}); got.kind != "proposal-stale" {
		t.Errorf("apply after the target appeared: %s", got.raw)
	}
	if read("Public/new.md") != "someone else" {
		t.Error("a stale proposal wrote")
	}
	// Stale: the target's content changed since.
	o4 := callAs(t, hs, proposer, "test_write", map[string]any{"path": "Public/b.md", "content": "proposed B"})
	id4 := o4.res["proposal"].(map[string]any)["id"].(string)
	if err := os.WriteFile(filepath.Join(dir, "Public/b.md"), []byte("edited by the user"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := callAs(t, hs, reviewer, "apply_proposal", map[string]any{"id": id4}); got.kind != "proposal-stale" || !strings.Contains(got.raw, "Public/b.md") {
		t.Errorf("apply after a concurrent edit: %s", got.raw)
	}
	if read("Public/b.md") != "edited by the user" {
		t.Error("a stale proposal clobbered the edit")
	}

	// Reject: gone, nothing written.
	for _, id := range []string{id2, id3, id4} {
		if got := callAs(t, hs, reviewer, "reject_proposal", map[string]any{"id": id}); got.kind != "" || got.res["rejected"] != true {
			t.Errorf("reject %s: %s", id, got.raw)
		}
	}
	if got := callAs(t, hs, reviewer, "list_proposals", nil); got.res["total"] != float64(0) {
		t.Errorf("after rejecting all: %s", got.raw)
	}
	if strings.Contains(read("Secret/d.md"), "overwrite secret") {
		t.Error("a rejected proposal wrote")
	}
	// The proposals lived in .sheaf/proposals, which no tool argument reaches.
	entries, _ := os.ReadDir(filepath.Join(dir, ".sheaf", "proposals"))
	if len(entries) != 0 {
		t.Errorf("%d proposal files left", len(entries))
	}
	if got := callAs(t, hs, reviewer, "read_attachment", map[string]any{"path": ".sheaf/proposals/x.json"}); got.kind == "" {
		t.Error("read_attachment reads .sheaf/")
	}
}

// TestScopedDirectivesAndLeases: a scoped worker sees and leases only its
// folders' directives, never touches other workers' leases on hidden ones,
// and its await cursor does not move when only hidden directives change.
func TestScopedDirectivesAndLeases(t *testing.T) {
	_, dir, hs, ix := gvaultWith(t, map[string]string{
		"Public/todo.md": "# Todo\n\n> [!ai] Summarise the public notes\n> Keep it short.\n",
		"Secret/todo.md": "# Todo\n\n> [!ai] Summarise marmotquux\n",
	})
	full := ident("full", auth.ScopeRead)
	pub := ident("pub", auth.ScopeRead, "Public/**")
	leaseFiles := func() int {
		es, _ := os.ReadDir(filepath.Join(dir, ".sheaf", "leases"))
		return len(es)
	}
	if o := callAs(t, hs, full, "await_directives", map[string]any{"worker": "other", "claim": true, "timeout_ms": 1000}); o.kind != "" || !strings.Contains(o.raw, "Secret/todo.md") {
		t.Fatalf("full claim: %s", o.raw)
	}
	if n := leaseFiles(); n != 2 {
		t.Fatalf("%d leases after the full worker's claim, want 2", n)
	}
	// The scoped caller, as the same worker name: only its directive and
	// lease; the hidden lease stays.
	po := callAs(t, hs, pub, "await_directives", map[string]any{"worker": "other", "claim": true, "timeout_ms": 1000})
	if po.kind != "" || strings.Contains(po.raw, "Secret/") || strings.Contains(po.raw, "marmotquux") || !strings.Contains(po.raw, "Public/todo.md") {
		t.Fatalf("scoped await: %s", po.raw)
	}
	pend := callAs(t, hs, pub, "pending_directives", nil)
	if pend.res["total"] != float64(1) || strings.Contains(pend.raw, "Secret/") {
		t.Errorf("scoped pending: %s", pend.raw)
	}
	if n := leaseFiles(); n != 2 {
		t.Errorf("%d leases after the scoped worker's call, want still 2", n)
	}
	cursor := po.res["cursor"].(float64)
	// Only the hidden directive changes: the scoped cursor stays.
	if err := os.WriteFile(filepath.Join(dir, "Secret/todo.md"), []byte("# Todo\n\n> [!ai] Another hidden task\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(context.Background(), "Secret/todo.md"); err != nil {
		t.Fatal(err)
	}
	again := callAs(t, hs, pub, "await_directives", map[string]any{"cursor": cursor, "timeout_ms": 1000})
	if again.kind != "" || again.res["timedOut"] != true || again.res["cursor"].(float64) != cursor {
		t.Errorf("a hidden change moved the scoped cursor: %s", again.raw)
	}
	if f := callAs(t, hs, full, "pending_directives", nil); !strings.Contains(f.raw, "Another hidden task") {
		t.Errorf("the whole-vault caller does not see the change: %s", f.raw)
	}
}

// TestScopedSemanticTools: vector retrieval sees visible notes only, and a
// scoped caller's refresh keeps the hidden notes' vectors.
func TestScopedSemanticTools(t *testing.T) {
	f := newSemFixture(t, map[string]string{
		"Public/apples.md":  "# Apples\nApples are red fruit grown in orchards.\n",
		"Public/pears.md":   "# Pears\nPears are green fruit grown in orchards.\n",
		"Secret/apples2.md": "# Apples again\nApples are red fruit grown in orchards. marmotquux\n",
		"Secret/plums.md":   "# Plums\nPlums are purple fruit grown in orchards. marmotquux\n",
	})
	hs := map[string]server.ToolHandlerFunc{}
	for _, tl := range f.s.Tools() {
		hs[tl.Tool.Name] = tl.Handler
	}
	pub := ident("pub", auth.ScopeRead, "Public/**")
	full := ident("full", auth.ScopeRead)
	for tool, args := range map[string]map[string]any{
		"semantic_search": {"query": "red fruit orchards"},
		"search":          {"query": "red fruit orchards", "mode": "hybrid"},
		"related_notes":   {"path": "Public/apples.md"},
		"find_duplicates": {"threshold": 0.1},
		"topic_map":       {"threshold": 0.1, "min_size": 2},
	} {
		o := callAs(t, hs, pub, tool, args)
		if o.kind != "" {
			t.Fatalf("%s: %s", tool, o.raw)
		}
		if strings.Contains(o.raw, "Secret/") || strings.Contains(o.raw, "marmotquux") {
			t.Errorf("%s leaks: %s", tool, o.raw)
		}
		if fo := callAs(t, hs, full, tool, args); tool != "related_notes" && !strings.Contains(fo.raw, "Secret/") {
			t.Errorf("%s: the whole-vault caller sees no Secret/ note, so the check proves nothing: %s", tool, fo.raw)
		}
	}
	notes, err := f.v.Vectors.Notes(context.Background())
	if err != nil || len(notes) != 4 {
		t.Errorf("the vector index holds %d notes after scoped calls, want all 4 (%v)", len(notes), err)
	}
	if o := callAs(t, hs, pub, "get_vault_info", nil); strings.Contains(o.raw, `"embeddingIndexStale":true`) {
		t.Errorf("stale after refresh: %s", o.raw)
	}
}

// TestScopedAnswer: what the model is shown for a scoped caller comes from
// visible notes only.
func TestScopedAnswer(t *testing.T) {
	files := map[string]string{
		"Public/Compost.md": "# Compost\n\nKitchen scraps go in the left bay. The shed is green.\n",
		"Public/Beds.md":    "# Beds\n\nRaised beds by the fence.\n",
		"Public/Bees.md":    "# Bees\n\nThree hives.\n",
		"Secret/Shed.md":    "# Shed\n\nThe shed code is 4321. marmotquux\n",
	}
	s, _, fake := llmServer(t, files)
	fake.Queue(`{"answer":"The shed is green [1].","citations":[1]}`)
	hs := map[string]server.ToolHandlerFunc{}
	for _, tl := range s.Tools() {
		hs[tl.Tool.Name] = tl.Handler
	}
	o := callAs(t, hs, ident("pub", auth.ScopeRead, "Public/**"), "answer", map[string]any{"query": "what is the shed code?"})
	if strings.Contains(o.raw, "Secret/") || strings.Contains(o.raw, "4321") {
		t.Errorf("answer leaks: %s", o.raw)
	}
	for _, r := range fake.Requests() {
		if strings.Contains(r.User(), "4321") || strings.Contains(r.User(), "marmotquux") || strings.Contains(r.User(), "Secret/") {
			t.Errorf("the model was shown a hidden note: %s", r.User())
		}
	}
	seen := len(fake.Requests())
	if seen == 0 {
		t.Fatalf("no model call (%s): the check proves nothing", o.raw)
	}
	// The control: the whole vault's caller's question reaches the note.
	fake.Queue(`{"answer":"4321 [1].","citations":[1]}`)
	callAs(t, hs, ident("full", auth.ScopeRead), "answer", map[string]any{"query": "what is the shed code?"})
	shown := false
	for _, r := range fake.Requests()[seen:] {
		shown = shown || strings.Contains(r.User(), "4321")
	}
	if !shown {
		t.Error("the whole-vault caller's model call did not see the shed note either: the check proves nothing")
	}
}

// TestScopedMove: a folder-scoped writer may move a note only when no note
// outside its folders links to it; the move is planned on the whole vault,
// so links it cannot see never break.
func TestScopedMove(t *testing.T) {
	_, dir, hs, _ := gvaultWith(t, map[string]string{"Public/e.md": "# E\n[[c]]\n"})
	w := ident("scoped", auth.ScopeWrite, "Public/**")
	if o := callAs(t, hs, w, "move_note", map[string]any{"path": "Public/a.md", "new_path": "Public/a2.md"}); o.kind != "forbidden" {
		t.Errorf("moving a note linked from Secret/: %q %s", o.kind, o.raw)
	}
	if _, err := os.Stat(filepath.Join(dir, "Public", "a.md")); err != nil {
		t.Errorf("a refused move moved the note: %v", err)
	}
	if strings.Contains(callAs(t, hs, w, "move_note", map[string]any{"path": "Public/a.md", "new_path": "Public/a2.md"}).raw, "Secret") {
		t.Error("the refusal names a hidden note")
	}
	o := callAs(t, hs, w, "move_note", map[string]any{"path": "Public/sub/c.md", "new_path": "Public/c2.md"})
	if o.kind != "" {
		t.Fatalf("moving a note linked only inside Public/: %q %s", o.kind, o.raw)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "Public", "e.md")); !strings.Contains(string(data), "[[c2]]") {
		t.Errorf("Public/e.md after the move: %q", data)
	}
}
