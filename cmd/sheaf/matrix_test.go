package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth/oauth/oauthtest"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// The access matrix: every tool, called by every kind of credential,
// through `sheaf serve --http` and the official Go SDK client, on a folder
// vault and on S3 (versitygw). Notes under Secret/ carry words and names
// found nowhere else (the marker, a tag, an id), so that the folder-scoped
// key's every answer can be searched for them.
const (
	marker     = "quokkamarker"
	hiddenTag  = "classifiedtag"
	hiddenID   = "feedfacecafe0001"
	hiddenPath = "Secret/Covert.md"
)

var matrixNotes = map[string]string{
	"Public/Alpha.md":      "---\ntags: [shared]\n---\n# Alpha\n\nSee [[Beta]] and [[Covert]]. zebra notes.\n\n> [!ai] Tidy the public notes\n> Keep it short.\n",
	"Public/Beta.md":       "#shared\n\n# Beta\n\nBack to [[Alpha]]. zebra zebra. Ask @helper.\n",
	"Public/sub/Gamma.md":  "# Gamma\n\nA quiet note about zebra crossings.\n",
	"Public/pic.png":       "\x89PNG public",
	hiddenPath:             "---\ntags: [shared, " + hiddenTag + "]\nid: " + hiddenID + "\naliases: [Spy]\n---\n# Covert\n\nThe " + marker + " plan: [[Alpha]]. zebra.\n\n> [!ai] Burn the " + marker + " papers\n",
	"Secret/Other.md":      "#shared\n\n" + marker + " zebra [[Covert]] @helper\n",
	"Secret/diagram.png":   "\x89PNG " + marker,
	"Secret/blob.md":       "\x00\x01\x02 binary " + marker, // a problem the index records
	"AGENTS.md":            "# Brief\n\nThe " + marker + " brief for agents.\n",
	"log.md":               "# Log\n\n## [2026-05-01] ingest | " + marker + " source\n",
	"eval/questions.jsonl": `{"question":"where is the ` + marker + ` plan?","expected_paths":["` + hiddenPath + `"]}` + "\n",
}

// visibleNotes are the notes the Public/** key sees.
var visibleNotes = 3

// matrixArgs are arguments every tool accepts that name visible notes only.
var matrixArgs = map[string]map[string]any{
	"get_vault_info":            {},
	"list_notes":                {},
	"read_note":                 {"path": "Public/Alpha.md"},
	"read_outline":              {"path": "Public/Alpha.md"},
	"list_folders":              {},
	"list_tags":                 {},
	"notes_by_tag":              {"tag": "shared"},
	"list_attachments":          {},
	"read_attachment":           {"path": "Public/pic.png"},
	"list_backlinks":            {"path": "Public/Alpha.md"},
	"list_outgoing_links":       {"path": "Public/Alpha.md"},
	"link_graph":                {"path": "Public/Alpha.md", "depth": 3},
	"note_relations":            {"path": "Public/Alpha.md"},
	"suggest_links":             {"path": "Public/Alpha.md"},
	"find_references":           {"values": []string{"zebra", "plan", "helper"}},
	"search":                    {"query": "zebra"},
	"search_and_read":           {"query": "zebra plan notes"},
	"semantic_search":           {"query": "zebra"},
	"related_notes":             {"path": "Public/Alpha.md"},
	"find_duplicates":           {},
	"topic_map":                 {},
	"answer":                    {"query": "what is the plan?"},
	"eval":                      {},
	"lint":                      {},
	"lint_semantic":             {},
	"wiki_health":               {},
	"suggest_tags":              {},
	"recent_activity":           {},
	"agent_mentions":            {},
	"pending_directives":        {},
	"await_directives":          {"timeout_ms": 1000},
	"record_retrieval_feedback": {"chunk_id": "Public/Alpha.md#p0", "useful": true},
	"reindex_embeddings":        {},
	"list_proposals":            {},
	"apply_proposal":            {"id": "20260101T000000Z-000000000000"},
	"reject_proposal":           {"id": "20260101T000000Z-000000000000"},
	// The write tools, with arguments that fail the same way whoever calls
	// them and whatever the order (nothing is written): a stale
	// expected_hash, finds and targets that match nothing, no confirm, a
	// taken path. A propose-only key's calls become proposals instead.
	"write_note":         {"path": "Public/Alpha.md", "content": "x", "mode": "overwrite", "expected_hash": strings.Repeat("0", 64)},
	"apply_edits":        {"path": "Public/Alpha.md", "edits": []map[string]any{{"find": "no such text", "replace": "y"}}},
	"patch_section":      {"path": "Public/Alpha.md", "heading_path": []string{"No such heading"}, "operation": "append", "content": "x"},
	"delete_note":        {"path": "Public/Alpha.md"},
	"complete_directive": {"path": "Public/Alpha.md", "line": 999},
	"file_page":          {"path": "Public/Beta.md", "content": "x", "question": "q"},
	"move_note":          {"path": "Public/Alpha.md", "new_path": "Public/Beta.md"},
	// The history tools: a listing, and versions that do not exist.
	"note_history":     {"path": "Public/Alpha.md"},
	"diff_note":        {"path": "Public/Alpha.md", "from": "999999"},
	"restore_note":     {"path": "Public/Alpha.md", "version": "999999"},
	"undo_transaction": {"transaction": "no-such-transaction"},
	// Ingest: a file sent by the caller (written under sources/), and a
	// URL this server may not fetch (loopback, no --ingest-allow).
	"ingest_file": {"name": "matrix.md", "content_base64": "IyBJbmdlc3RlZAoKaGVsbG8K", "media_type": "text/markdown"},
	"ingest_url":  {"url": "http://127.0.0.1:1/page"},
}

// natural is what a tool answers a caller allowed to call it, on this
// server (no embeddings provider, no LLM): "" for success.
var natural = map[string]string{
	"semantic_search": "unsupported", "related_notes": "unsupported", "find_duplicates": "unsupported",
	"topic_map": "unsupported", "answer": "unsupported", "lint_semantic": "unsupported",
	"suggest_tags": "unsupported", "reindex_embeddings": "unsupported",
	"apply_proposal": "args-invalid", "reject_proposal": "args-invalid",
	"write_note": "proposal-stale", "apply_edits": "edit-not-unique", "patch_section": "target-not-found",
	"delete_note": "confirmation-required", "complete_directive": "target-not-found", "file_page": "note-exists",
	"move_note": "note-exists", "diff_note": "note-not-found", "restore_note": "note-not-found", "undo_transaction": "note-not-found",
	"ingest_url": "args-invalid",
}

// needs is the scope each tool needs.
var needs = map[string]string{
	"reindex_embeddings": "admin", "list_proposals": "write", "apply_proposal": "write", "reject_proposal": "write",
	"write_note": "write", "apply_edits": "write", "patch_section": "write", "delete_note": "write",
	"complete_directive": "write", "file_page": "write", "move_note": "write", "restore_note": "write", "undo_transaction": "write",
	"ingest_file": "write", "ingest_url": "write",
}

// hiddenArgs name a hidden note or folder, per path-taking tool.
var hiddenArgs = map[string]map[string]any{
	"list_notes":                {"path": "Secret"},
	"read_note":                 {"path": hiddenPath},
	"read_outline":              {"path": hiddenPath},
	"list_folders":              {"path": "Secret"},
	"list_attachments":          {"path": "Secret"},
	"read_attachment":           {"path": "Secret/diagram.png"},
	"list_backlinks":            {"path": hiddenPath},
	"list_outgoing_links":       {"path": hiddenPath},
	"link_graph":                {"path": hiddenPath},
	"note_relations":            {"path": hiddenPath},
	"suggest_links":             {"path": hiddenPath},
	"find_references":           {"path": hiddenPath},
	"related_notes":             {"path": hiddenPath},
	"pending_directives":        {"path": "Secret"},
	"await_directives":          {"path": "Secret", "timeout_ms": 1000},
	"record_retrieval_feedback": {"chunk_id": hiddenPath + "#p0", "useful": true},
	"write_note":                {"path": "Secret/New.md", "content": "x"},
	"apply_edits":               {"path": hiddenPath, "edits": []map[string]any{{"find": "plan", "replace": "x"}}},
	"patch_section":             {"path": hiddenPath, "heading_path": []string{"Covert"}, "operation": "append", "content": "x"},
	"delete_note":               {"path": hiddenPath, "confirm": true},
	"complete_directive":        {"path": hiddenPath, "line": 9},
	"file_page":                 {"path": "Secret/Filed.md", "content": "x"},
	"move_note":                 {"path": "Public/Beta.md", "new_path": "Secret/Beta.md"},
	"note_history":              {"path": hiddenPath},
	"diff_note":                 {"path": hiddenPath, "from": "1"},
	"restore_note":              {"path": hiddenPath, "version": "1"},
}

// matrixServer is a vault with keys, served over HTTP with OAuth.
type matrixServer struct {
	url   string
	as    *oauthtest.Server
	keys  map[string]string // name -> key
	vault string            // --vault
}

func TestAccessMatrixFolder(t *testing.T) {
	dir := t.TempDir()
	for p, body := range matrixNotes {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runMatrix(t, startMatrix(t, dir))
}

func TestAccessMatrixS3(t *testing.T) {
	// A bucket that keeps versions, as the template makes it: the history
	// tools answer as on a folder.
	v := &cloudVault{s3: s3test.Start(t, s3test.Options{Versioning: true}), meili: meilifake.New(t)}
	v.s3.CreateBucket(t, "vault")
	v.s3.EnableVersioning(t, "vault")
	for p, body := range matrixNotes {
		v.put(t, p, body)
	}
	if out, err := v.command().CombinedOutput(); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	for _, kv := range v.s3.Env() {
		k, val, _ := strings.Cut(kv, "=")
		t.Setenv(k, val)
	}
	runMatrix(t, startMatrix(t, v.s3.URL("vault", "notes"), "--search", v.meili.URL))
}

// startMatrix makes the keys with `sheaf keys` (in the vault: the folder's
// .sheaf/keys.json or the bucket's) and starts `sheaf serve --http`.
func startMatrix(t *testing.T, vault string, extra ...string) *matrixServer {
	m := &matrixServer{as: oauthtest.New(t), keys: map[string]string{}, vault: vault}
	for name, args := range map[string][]string{
		"read":    {"--scopes", "read"},
		"write":   {"--scopes", "write"},
		"propose": {"--scopes", "write", "--propose-only"},
		"folder":  {"--scopes", "admin", "--folder", "Public/**"},
		"revoked": {"--scopes", "admin"},
	} {
		m.keys[name] = strings.TrimSpace(sheafCmd(t, append([]string{"keys", "add", name, "--vault", vault}, args...)...))
	}
	sheafCmd(t, "keys", "revoke", "revoked", "--vault", vault)
	addr := freeAddr(t)
	m.url = "http://" + addr + "/mcp"
	httpServerAt(t, vault, addr, append([]string{"--oauth-issuer", m.as.URL, "--oauth-audience", m.url}, extra...)...)
	return m
}

func runMatrix(t *testing.T, m *matrixServer) {
	claims := func(extra jwt.MapClaims) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "agent", "aud": m.url, "scope": "sheaf:admin"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	rejected := map[string]string{
		"no key":              "",
		"revoked key":         m.keys["revoked"],
		"expired JWT":         m.as.Issue(claims(jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix(), "iat": time.Now().Add(-2 * time.Hour).Unix()})),
		"JWT for another aud": m.as.Issue(claims(jwt.MapClaims{"aud": "http://127.0.0.1:1/mcp"})),
		"JWT by unknown key":  m.as.IssueForeign(claims(nil), false),
	}
	session := func(tok string) *toolstest.Client {
		return toolstest.NewClient(t, connect(t, &mcp.StreamableClientTransport{Endpoint: m.url, DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearer{tok}, Timeout: 60 * time.Second}}))
	}
	control := session(m.as.Issue(claims(nil))) // a valid admin JWT: the whole vault, every scope
	control.WaitIndexed()
	res, err := control.S.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tl := range res.Tools {
		tools = append(tools, tl.Name)
		if _, ok := matrixArgs[tl.Name]; !ok {
			t.Errorf("tool %s has no row in the matrix: add its arguments to matrixArgs", tl.Name)
		}
	}
	slices.Sort(tools)

	// The refused credentials: a 401 for every tool, before MCP.
	for name, tok := range rejected {
		for i, tool := range tools {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, i+1, tool)
			resp, text := post(t, m.url, tok, "", body)
			wa := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(wa, `resource_metadata="`) || strings.Contains(text, tool) {
				t.Errorf("%s, %s: %d %q %s", name, tool, resp.StatusCode, wa, text)
			}
		}
	}

	// The accepted ones: each tool's expected result or kind.
	want := func(who, tool string) string {
		scope := needs[tool]
		switch {
		case who == "read" && scope != "":
			return "insufficient-scope"
		case who == "write" && scope == "admin", who == "propose" && scope == "admin":
			return "insufficient-scope"
		case who == "propose" && (tool == "apply_proposal" || tool == "reject_proposal"):
			return "insufficient-scope"
		case who == "folder" && tool == "reindex_embeddings":
			return "forbidden"
		case who == "folder" && tool == "eval":
			return "note-not-found" // its question set lies outside the key's folders
		case who == "propose" && (tool == "move_note" || tool == "undo_transaction"):
			return "unsupported" // a multi-note operation cannot be a proposal
		case who == "folder" && (tool == "undo_transaction" || tool == "ingest_file" || tool == "ingest_url"):
			return "forbidden" // it may write anywhere in the vault
		case who == "propose" && scope == "write" && !strings.Contains(tool, "proposal"):
			return "" // queued as a proposal, nothing written
		}
		return natural[tool]
	}
	clients := map[string]*toolstest.Client{"control": control}
	for _, who := range []string{"read", "write", "propose", "folder"} {
		clients[who] = session(m.keys[who])
	}
	for _, who := range []string{"control", "read", "write", "propose", "folder"} {
		c := clients[who]
		for _, tool := range tools {
			args := matrixArgs[tool]
			r := c.Call(tool, args, nil)
			w := want(who, tool)
			if who == "control" {
				w = natural[tool]
			}
			if r.Kind != w {
				t.Errorf("%s key, %s(%v): kind %q (%s), want %q", who, tool, args, r.Kind, r.Message, w)
			}
			if who == "folder" {
				scanLeaks(t, tool, args, r)
			}
		}
	}

	// The folder-scoped key: hidden paths are folder-not-allowed, the same
	// for a hidden note that exists and one that does not.
	f := clients["folder"]
	for tool, args := range hiddenArgs {
		r := f.MustFail("folder-not-allowed", tool, args)
		scanLeaks(t, tool, args, r) // echoing the caller's own argument is no leak
	}
	f.MustFail("folder-not-allowed", "read_note", map[string]any{"path": "Secret/Nothing.md"})
	f.MustFail("note-not-found", "read_note", map[string]any{"id": hiddenID})
	// Counts are the visible notes' counts.
	var info struct {
		NoteCount       int `json:"noteCount"`
		AttachmentCount int `json:"attachmentCount"`
		AgentsFile      *string
		Capabilities    struct{ ProposeOnly bool }
	}
	f.MustOK("get_vault_info", nil, &info)
	if info.NoteCount != visibleNotes || info.AttachmentCount != 1 || info.AgentsFile != nil {
		t.Errorf("folder key's vault info: %+v", info)
	}
	var search struct{ Total int }
	f.MustOK("search", map[string]any{"query": "zebra"}, &search)
	if search.Total != 3 {
		t.Errorf("folder key's search total %d, want 3", search.Total)
	}
	f.MustOK("search", map[string]any{"query": marker}, &search)
	if search.Total != 0 {
		t.Errorf("folder key finds the hidden word: total %d", search.Total)
	}
	var tags struct {
		Items []struct {
			Tag   string
			Count int
		}
	}
	f.MustOK("list_tags", nil, &tags)
	for _, tg := range tags.Items {
		if tg.Tag == "shared" && tg.Count != 2 {
			t.Errorf("shared tag counts %d for the folder key, want 2", tg.Count)
		}
	}
	// The control sees everything (the fixture is not blind).
	control.MustOK("get_vault_info", nil, &info)
	// Seven notes, and the two ingest_file wrote under sources/ (for the
	// control and the write key; the propose key's is a proposal).
	if info.NoteCount != 7+2 || info.AgentsFile == nil {
		t.Errorf("control vault info: %+v", info)
	}
	var probs struct{ Problems []struct{ Path string } }
	control.MustOK("get_vault_info", nil, &probs)
	if !slices.ContainsFunc(probs.Problems, func(p struct{ Path string }) bool { return p.Path == "Secret/blob.md" }) {
		t.Errorf("control: the hidden binary note is not among the problems %v: the scan proves nothing", probs.Problems)
	}
	var cs struct{ Total int }
	control.MustOK("search", map[string]any{"query": marker}, &cs)
	if cs.Total == 0 {
		t.Error("the control does not find the marker: the scan proves nothing")
	}
	// Propose-only tells the truth.
	clients["propose"].MustOK("get_vault_info", nil, &info)
	if !info.Capabilities.ProposeOnly {
		t.Error("the propose-only key's capabilities.proposeOnly is false")
	}
	clients["write"].MustOK("get_vault_info", nil, &info)
	if info.Capabilities.ProposeOnly {
		t.Error("the write key's capabilities.proposeOnly is true")
	}
}

// scanLeaks fails when a folder-scoped answer names, counts or quotes the
// hidden notes. The caller's own arguments may come back (an error naming
// the path it was sent is no leak), so they are cut out first.
func scanLeaks(t *testing.T, tool string, args map[string]any, r toolstest.Result) {
	t.Helper()
	text := string(r.Raw) + r.Message + fmt.Sprint(r.Fields)
	for _, v := range args {
		if s, ok := v.(string); ok && s != "" {
			text = strings.ReplaceAll(text, s, "<arg>")
			if p, _, ok := strings.Cut(s, "#p"); ok { // a chunk id's path
				text = strings.ReplaceAll(text, p, "<arg>")
			}
		}
	}
	for _, leak := range []string{"Secret/", marker, hiddenTag, hiddenID, "diagram.png", "Spy"} {
		if strings.Contains(text, leak) {
			t.Errorf("folder key, %s(%v) leaks %q: %s", tool, args, leak, clipText(text))
		}
	}
}

func clipText(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}
