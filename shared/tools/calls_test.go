package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/llm/llmtest"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
	vecembedded "github.com/sheaf-dev/sheaf/shared/vectors/embedded"
)

// Calls through the MCP surface over the core's fixtures: coverage said on
// every answer, arguments refused by the schema, the rate limit of paid
// tools. The fixtures are copies of the core's test fixtures.

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
	v, _ := s.core.View(context.Background(), VaultArg{Vault: "t"})
	state := "indexing"
	v.Status = func() core.IndexStatus {
		select {
		case <-done:
			return core.IndexStatus{State: "ready"}
		default:
			return core.IndexStatus{State: state, Done: 3, Total: 8, Notes: 8}
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

// structuredOf decodes a successful result's structured content into out.
func structuredOf(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}

// Hostile arguments to the semantic tools: refused as args-invalid or
// not-found, or answered; never an internal error.
func TestSemanticToolsHostileArgs(t *testing.T) {
	files := map[string]string{}
	for k, v := range orchard {
		files[k] = v
	}
	files["Binary.md"] = "\x00\x01\x02\x03 binary"
	files["img.png"] = "\x89PNG"
	files["Empty.md"] = ""
	f := newSemFixture(t, files)
	cases := []struct {
		tool string
		args map[string]any
		kind string // "" for success
	}{
		{"semantic_search", map[string]any{"query": ""}, "args-invalid"},
		{"semantic_search", map[string]any{"query": "   \t\n"}, "args-invalid"},
		{"semantic_search", map[string]any{"query": strings.Repeat("é", 1000)}, ""},
		{"semantic_search", map[string]any{"query": strings.Repeat("a", 2001)}, "args-invalid"},
		{"semantic_search", map[string]any{"query": "orchard", "limit": 0}, "args-invalid"},
		{"semantic_search", map[string]any{"query": "orchard", "limit": 1}, ""},
		{"semantic_search", map[string]any{"query": "orchard", "limit": 100}, ""},
		{"semantic_search", map[string]any{"query": "orchard", "limit": 101}, "args-invalid"},
		{"semantic_search", map[string]any{"query": "orchard", "limit": -1}, "args-invalid"},
		{"semantic_search", map[string]any{"query": "orchard", "limit": 2.5}, "args-invalid"},
		{"semantic_search", map[string]any{"query": "\xff\xfe"}, ""},
		{"related_notes", map[string]any{"path": "Missing.md"}, "note-not-found"},
		{"related_notes", map[string]any{"path": "img.png"}, "not-markdown"},
		{"related_notes", map[string]any{"path": "Binary.md"}, "unsupported"}, // in the vault, not indexed
		{"related_notes", map[string]any{"path": "Empty.md"}, ""},
		{"related_notes", map[string]any{"path": "../etc/passwd"}, "path-invalid"},
		{"search", map[string]any{"query": " \u3000 ", "mode": "hybrid"}, "args-invalid"},
		{"search", map[string]any{"query": " ", "mode": "semantic"}, "args-invalid"},
		{"related_notes", map[string]any{"path": "Apples.md", "limit": 101}, "args-invalid"},
		{"find_duplicates", map[string]any{"threshold": 1.5}, "args-invalid"},
		{"find_duplicates", map[string]any{"threshold": -0.1}, "args-invalid"},
		{"find_duplicates", map[string]any{"threshold": 0}, ""},
		{"topic_map", map[string]any{"min_size": 1000}, ""},
		{"topic_map", map[string]any{"min_size": 1}, "args-invalid"},
		{"topic_map", map[string]any{"threshold": 2}, "args-invalid"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s", i, c.tool), func(t *testing.T) {
			res := callTool(t, f.s, c.tool, fmt.Sprint("user", i), c.args)
			got := ""
			if res.IsError {
				got = kindOf(res)
				if got == "" {
					got = "untyped"
				}
			}
			if c.kind == "" && res.IsError {
				t.Fatalf("%v: %s error: %+v", c.args, got, res.Content)
			}
			if c.kind != "" && got != c.kind {
				t.Errorf("%v: kind %q, want %q (%+v)", c.args, got, c.kind, res.Content)
			}
			if got == "internal" {
				t.Errorf("%v: internal error %+v", c.args, res.Content)
			}
		})
	}
}

// Degenerate vaults: no notes, one note, all notes identical.
func TestSemanticDegenerateVaults(t *testing.T) {
	empty := newSemFixture(t, map[string]string{})
	res := callTool(t, empty.s, "find_duplicates", "u", nil)
	var d core.DuplicatesOut
	structuredOf(t, res, &d)
	if res.IsError || d.Total != 0 || d.Items == nil {
		t.Errorf("empty vault duplicates: %+v %+v", res.Content, d)
	}
	res = callTool(t, empty.s, "topic_map", "u", nil)
	var tm core.TopicMapOut
	structuredOf(t, res, &tm)
	if res.IsError || tm.Total != 0 || tm.Clusters == nil || tm.MissingHubs == nil {
		t.Errorf("empty vault topic map: %+v %+v", res.Content, tm)
	}
	res = callTool(t, empty.s, "semantic_search", "u", map[string]any{"query": "anything"})
	var sr core.SemanticResult
	structuredOf(t, res, &sr)
	if res.IsError || sr.Items == nil || len(sr.Items) != 0 {
		t.Errorf("empty vault search: %+v %+v", res.Content, sr)
	}

	one := newSemFixture(t, map[string]string{"A.md": "# A\n\nalpha\n"})
	res = callTool(t, one.s, "find_duplicates", "u", nil)
	structuredOf(t, res, &d)
	if res.IsError || d.Total != 0 {
		t.Errorf("one-note duplicates: %+v", d)
	}
	res = callTool(t, one.s, "related_notes", "u", map[string]any{"path": "A.md"})
	structuredOf(t, res, &sr)
	if res.IsError || len(sr.Items) != 0 {
		t.Errorf("one-note related: %+v %+v", res.Content, sr)
	}

	same := map[string]string{}
	for i := range 30 {
		same[fmt.Sprintf("n%02d.md", i)] = "# Same\n\nexactly the same text\n"
	}
	all := newSemFixture(t, same)
	res = callTool(t, all.s, "find_duplicates", "u", map[string]any{"limit": 500})
	d = core.DuplicatesOut{}
	structuredOf(t, res, &d)
	if res.IsError || d.Total != 30*29/2 || len(d.Items) != 30*29/2 {
		t.Errorf("identical notes: total %d, %d items", d.Total, len(d.Items))
	}
	for _, p := range d.Items {
		if p.Similarity > 1 || p.Similarity < 0.999 || p.PathA >= p.PathB {
			t.Fatalf("pair %+v", p)
		}
	}
	res = callTool(t, all.s, "topic_map", "u", nil)
	tm = core.TopicMapOut{}
	structuredOf(t, res, &tm)
	if res.IsError || tm.Total != 1 || tm.Clusters[0].Size != 30 {
		t.Errorf("identical notes: one cluster of 30, got %+v", tm)
	}
	res = callTool(t, all.s, "related_notes", "u", map[string]any{"path": "n00.md", "limit": 100})
	sr = core.SemanticResult{}
	structuredOf(t, res, &sr)
	if res.IsError || len(sr.Items) != 29 {
		t.Errorf("identical notes: related %d, want 29", len(sr.Items))
	}
}

// search_and_read with a blank query does not embed it (nor rank noise).
func TestSearchAndReadBlankQuerySkipsVectors(t *testing.T) {
	f := newSemFixture(t, orchard)
	callTool(t, f.s, "reindex_embeddings", "u", nil)
	before := f.fake.Calls()
	res := callTool(t, f.s, "search_and_read", "u", map[string]any{"query": " \t "})
	if kindOf(res) == "internal" {
		t.Fatalf("%+v", res.Content)
	}
	if f.fake.Calls() != before {
		t.Error("a blank query was embedded")
	}
	var out struct {
		Items []core.ReadItem `json:"items"`
	}
	if !res.IsError {
		structuredOf(t, res, &out)
		if len(out.Items) != 0 {
			t.Errorf("a blank query ranked %d notes", len(out.Items))
		}
	}
}

// callTool calls a registered tool's MCP handler as identity.
func callTool(t *testing.T, s *Server, name, identity string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	for _, tool := range s.Tools() {
		if tool.Tool.Name != name {
			continue
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		ctx := auth.WithIdentity(context.Background(), auth.Identity{Subject: identity, Granted: []auth.Scope{auth.ScopeAdmin}})
		res, err := tool.Handler(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func TestPaidToolsRateLimited(t *testing.T) {
	f := newSemFixture(t, orchard)
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.s.now = func() time.Time { return clock }
	args := map[string]any{"query": "orchard"}
	for i := range PaidCallsPerMinute {
		if res := callTool(t, f.s, "semantic_search", "alice", args); res.IsError {
			t.Fatalf("call %d refused: %+v", i+1, res.Content)
		}
	}
	// Paid tools share one budget.
	res := callTool(t, f.s, "reindex_embeddings", "alice", nil)
	if !res.IsError || kindOf(res) != "rate-limited" {
		t.Fatalf("call %d: want rate-limited, got isError=%v kind=%q", PaidCallsPerMinute+1, res.IsError, kindOf(res))
	}
	fields := res.Meta.AdditionalFields[errorMetaKey].(map[string]any)
	if ms, _ := fields["retry_after_ms"].(int64); ms != 60_000 {
		t.Errorf("retry_after_ms = %v, want 60000 (all calls at one instant)", fields["retry_after_ms"])
	}
	if res := callTool(t, f.s, "semantic_search", "bob", args); res.IsError {
		t.Error("another identity has its own budget")
	}
	if res := callTool(t, f.s, "search", "alice", map[string]any{"query": "orchard"}); res.IsError {
		t.Error("free tools are not limited")
	}
	clock = clock.Add(time.Minute)
	if res := callTool(t, f.s, "semantic_search", "alice", args); res.IsError {
		t.Error("the window slides: a minute later calls are allowed again")
	}
}

// TestPaidPathsCounted: search in semantic or hybrid mode and
// search_and_read with embeddings spend the embeddings key, so their calls
// count toward the paid limit; search in fulltext mode does not.
func TestPaidPathsCounted(t *testing.T) {
	f := newSemFixture(t, orchard)
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.s.now = func() time.Time { return clock }
	for i := range PaidCallsPerMinute {
		name, args := "search", map[string]any{"query": "orchard", "mode": []string{"semantic", "hybrid"}[i%2]}
		if i%3 == 2 {
			name, args = "search_and_read", map[string]any{"query": "what grows in the orchard"}
		}
		if res := callTool(t, f.s, name, "alice", args); res.IsError {
			t.Fatalf("call %d (%s) refused: %+v", i+1, name, res.Content)
		}
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"search", map[string]any{"query": "orchard", "mode": "hybrid"}},
		{"search", map[string]any{"query": "orchard", "mode": "semantic"}},
		{"search_and_read", map[string]any{"query": "what grows in the orchard"}},
		{"semantic_search", map[string]any{"query": "orchard"}},
	} {
		if res := callTool(t, f.s, c.name, "alice", c.args); kindOf(res) != "rate-limited" {
			t.Errorf("%s %v after %d paid calls: kind %q, want rate-limited", c.name, c.args, PaidCallsPerMinute, kindOf(res))
		}
	}
	if res := callTool(t, f.s, "search", "alice", map[string]any{"query": "orchard"}); res.IsError {
		t.Errorf("fulltext search spends nothing and is not limited: %+v", res.Content)
	}
}

// Once get_vault_info has answered from the summary, the core asks the
// Catalogs to load the catalog in the background; a call that loaded it
// does not.
func TestPrefetchAfterASummaryAnswer(t *testing.T) {
	ctx := context.Background()
	loads, prefetches := 0, 0
	cat := vault.NewCatalog()
	cat.Upsert(vault.Note{Path: "a.md"})
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(&Vault{ID: "v", Store: st, Catalogs: summaryOnly{cat: cat, loads: &loads, prefetches: &prefetches}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string) {
		t.Helper()
		for _, tool := range s.Tools() {
			if tool.Tool.Name == name {
				req := mcp.CallToolRequest{}
				req.Params.Name = name
				req.Params.Arguments = map[string]any{}
				if res, err := tool.Handler(ctx, req); err != nil || res.IsError {
					t.Fatalf("%s: %v %+v", name, err, res)
				}
				return
			}
		}
		t.Fatalf("no tool %s", name)
	}
	call("get_vault_info")
	if loads != 0 || prefetches != 1 {
		t.Errorf("after get_vault_info: %d loads, %d prefetches; want 0, 1", loads, prefetches)
	}
	call("list_tags")
	if loads != 1 || prefetches != 1 {
		t.Errorf("after list_tags: %d loads, %d prefetches; want 1, 1", loads, prefetches)
	}
}

// TestLaggingCoverage: a server whose writes the shared index has not
// caught up with says so on every answer.
func TestLaggingCoverage(t *testing.T) {
	s, v, _ := writeServer(t)
	now := time.Now()
	s.now = func() time.Time { return now }
	v.Lagging = func() []Lag {
		return []Lag{{Path: "a.md", Since: now.Add(-1500 * time.Millisecond)}, {Path: "b.md", Since: now}}
	}
	tool := s.Tools()
	for _, tl := range tool {
		if tl.Tool.Name != "list_notes" {
			continue
		}
		req := mcp.CallToolRequest{}
		req.Params.Name = "list_notes"
		req.Params.Arguments = json.RawMessage(`{"limit": 1}`)
		r, err := tl.Handler(context.Background(), req)
		if err != nil || r.IsError {
			t.Fatalf("%v %+v", err, r)
		}
		var out struct {
			Lagging *core.Lagging `json:"lagging"`
		}
		if err := json.Unmarshal(r.StructuredContent.(json.RawMessage), &out); err != nil {
			t.Fatal(err)
		}
		if out.Lagging == nil || out.Lagging.Count != 2 || out.Lagging.OldestMs != 1500 || out.Lagging.Notes[0] != "a.md" {
			t.Errorf("lagging: %+v", out.Lagging)
		}
	}
}

// semFixture is an indexed vault with the fake embedder.
type semFixture struct {
	s    *Server
	v    *Vault
	ix   *indexer.Indexer
	fake *embed.Fake
	dir  string
}

func newSemFixture(t *testing.T, files map[string]string) *semFixture {
	t.Helper()
	return openSemFixture(t, indexertest.Folder(t, files))
}

func openSemFixture(t *testing.T, dir string) *semFixture {
	t.Helper()
	return openSemFixtureWith(t, dir, nil)
}

// openSemFixtureWith indexes dir and embeds with emb (nil: a fake).
func openSemFixtureWith(t *testing.T, dir string, emb embed.Embedder) *semFixture {
	t.Helper()
	ix := indexFolder(t, dir)
	vec, err := vecembedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vec.Close() })
	fake := embed.NewFake(256)
	if emb == nil {
		emb = fake
	}
	st := ix.Store
	v := &Vault{ID: "t", Store: st, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog},
		Embedder: emb, Vectors: vec,
		Embeddings: &indexer.Embeddings{Store: st, Embedder: emb, Vectors: vec, Log: slog.New(slog.DiscardHandler)}}
	s, err := NewServer(v)
	if err != nil {
		t.Fatal(err)
	}
	return &semFixture{s: s, v: v, ix: ix, fake: fake, dir: dir}
}

// indexFolder opens the folder dir as a store with an in-memory text index
// and indexes it into a fresh catalog; the indexer holds all three.
func indexFolder(t *testing.T, dir string) *indexer.Indexer {
	t.Helper()
	st, text := indexertest.OpenLocal(t, dir)
	t.Cleanup(func() { st.Close() })
	ix := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Log: slog.New(slog.DiscardHandler)}
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix
}

var orchard = map[string]string{
	"Apples.md":      "---\ntags: [fruit, garden/orchard]\n---\n# Apples\n\nApple trees in the orchard need pruning in winter.\n",
	"Pears.md":       "---\ntags: [fruit]\n---\n# Pears\n\nPear trees in the orchard need pruning too.\n",
	"Bees.md":        "# Bees\n\nThree hives of bees by the hedge. See [[Apples]].\n",
	"Deep/Nested.md": "---\ntags: [fruit]\n---\n# Plums\n\nPlum trees need pruning in summer.\n",
}

var maintNotes = map[string]string{
	"index.md":            "---\ntags: [hub]\n---\n[[A]] [[Missing]] [[sources/S1]]\n",
	"A.md":                "#topic [[index]]\n",
	"B.md":                "#topic\n",
	"C.md":                "no tags, no links\n",
	"sources/S1.md":       "---\nid: s-1\n---\ncaptured\n",
	"sources/S2.md":       "captured too\n",
	"clips/K.md":          "clipped\n",
	"log.md":              "# Log\n\n- 2026-01-02 ingest: S1\n- 2026-01-02 compile: A\n## [2026-03-01] Query | What now\nnot an entry\n- [2026-02-01] ingest: S2\n",
	".obsidian/hidden.md": "[[Nowhere]]\n",
}

// indexedServer writes files into a temporary vault, indexes it and serves
// it; the vault's folder is returned for tests that change it afterwards.
func indexedServer(t *testing.T, files map[string]string, wrap func(store.Store) store.Store) (*Server, string) {
	t.Helper()
	dir := indexertest.Folder(t, files)
	ix := indexFolder(t, dir)
	st := ix.Store
	if wrap != nil {
		st = wrap(st)
	}
	s, err := NewServer(&Vault{ID: "t", Store: st, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}})
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// writeServer serves a copy of the sample vault with read-your-writes.
func writeServer(t *testing.T) (*Server, *Vault, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../infra/sample-vault")); err != nil {
		t.Fatal(err)
	}
	ix := indexFolder(t, dir)
	v := &Vault{ID: "sample", Store: ix.Store, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}, Reindex: ix,
		ImmutablePaths: []string{"sources/"}}
	s, err := NewServer(v)
	if err != nil {
		t.Fatal(err)
	}
	return s, v, dir
}

// summaryOnly is the Catalogs of a cold stateless handler: it gives the
// catalog's Summary, and counts the loads of the catalog itself.
type summaryOnly struct {
	cat        *vault.Catalog
	loads      *int
	prefetches *int
}

func (s summaryOnly) Prefetch(context.Context) {
	if s.prefetches != nil {
		*s.prefetches++
	}
}

func (s summaryOnly) Catalog(context.Context) (*vault.Catalog, error) {
	*s.loads++
	return s.cat, nil
}

func (s summaryOnly) Summary(context.Context) (vault.Summary, bool, error) {
	return s.cat.Summary(), true, nil
}

// llmServer serves files with a chat model on a scripted fake.
func llmServer(t *testing.T, files map[string]string) (*Server, *Vault, *llmtest.Server) {
	t.Helper()
	s, _ := indexedServer(t, files, nil)
	fake := llmtest.Start(t)
	chat, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.core.View(context.Background(), VaultArg{Vault: "t"})
	v.LLM = chat
	return s, v, fake
}

// pagedNote is a note that is hard to page: multi-byte text, characters
// JSON escapes, CRLF lines and many links.
func pagedNote(size int) []byte {
	var b bytes.Buffer
	b.WriteString("---\ntitle: Paged\n---\n# Paged\n\n")
	for i := 0; b.Len() < size; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "Line %d: words and [[Note %d]] and [[Other|alias %d]].\n", i, i%97, i)
		case 1:
			fmt.Fprintf(&b, "行 %d: 庭の記録 🌱🌻 — [[Café]] [[Note %d#Heading]]\r\n", i, i%89)
		case 2:
			fmt.Fprintf(&b, "Quotes \"%d\" back\\slash <tag attr=\"x\">&amp; \x01\x1f \u2028 [[A]] [[B]]\t\n", i)
		default:
			fmt.Fprintf(&b, "## Section %d\n\n", i)
		}
	}
	return b.Bytes()
}
