package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

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
		{"related_notes", map[string]any{"path": "Binary.md"}, "note-not-found"},
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
	var d DuplicatesOut
	structuredOf(t, res, &d)
	if res.IsError || d.Total != 0 || d.Items == nil {
		t.Errorf("empty vault duplicates: %+v %+v", res.Content, d)
	}
	res = callTool(t, empty.s, "topic_map", "u", nil)
	var tm TopicMapOut
	structuredOf(t, res, &tm)
	if res.IsError || tm.Total != 0 || tm.Clusters == nil || tm.MissingHubs == nil {
		t.Errorf("empty vault topic map: %+v %+v", res.Content, tm)
	}
	res = callTool(t, empty.s, "semantic_search", "u", map[string]any{"query": "anything"})
	var sr SemanticResult
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
	d = DuplicatesOut{}
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
	tm = TopicMapOut{}
	structuredOf(t, res, &tm)
	if res.IsError || tm.Total != 1 || tm.Clusters[0].Size != 30 {
		t.Errorf("identical notes: one cluster of 30, got %+v", tm)
	}
	res = callTool(t, all.s, "related_notes", "u", map[string]any{"path": "n00.md", "limit": 100})
	sr = SemanticResult{}
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
		Items []ReadItem `json:"items"`
	}
	if !res.IsError {
		structuredOf(t, res, &out)
		if len(out.Items) != 0 {
			t.Errorf("a blank query ranked %d notes", len(out.Items))
		}
	}
}
