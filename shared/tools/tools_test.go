package tools

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/tools/mcphttp"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.golden.json")

func testServer(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer(&Vault{ID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSchemasGolden keeps what a model sees of every tool under review: any
// change to a name, description, schema or annotation shows in the diff.
func TestSchemasGolden(t *testing.T) {
	var tools []mcp.Tool
	for _, tool := range testServer(t).Tools() {
		tools = append(tools, tool.Listed())
	}
	got, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/tools.golden.json"
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./shared/tools -run Golden -update)", err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(string(got)) {
		t.Errorf("tool schemas changed; review and run: go test ./shared/tools -run Golden -update")
	}
}

func TestEveryToolHasHonestAnnotations(t *testing.T) {
	for _, tool := range testServer(t).Tools() {
		a := tool.Tool.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: every hint must be set", tool.Tool.Name)
		}
	}
}

type probeIn struct {
	Path  string   `json:"path" schema:"minLength=1"`
	Limit int      `json:"limit,omitempty" schema:"minimum=1,maximum=70,default=50"`
	Mode  string   `json:"mode,omitempty" schema:"enum=a|b,default=a"`
	Tags  []string `json:"tags,omitempty" schema:"maxItems=2,minLength=1"`
}

type probeOut struct {
	Coverage
	Got probeIn `json:"got"`
}

func callProbe(t *testing.T, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	tool := define(Spec{Name: "probe", Title: "Probe", Description: "test", Hints: readOnly}, func(_ context.Context, a probeIn) (*probeOut, error) {
		if a.Path == "panic" {
			panic("kaboom")
		}
		if a.Path == "boom" {
			return nil, newError(KindNoteNotFound, map[string]any{"candidates": []string{"x"}}, "no %s", a.Path)
		}
		return &probeOut{Got: a}, nil
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "probe"
	req.Params.Arguments = args
	res, err := tool.Handler(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDecodeArgs(t *testing.T) {
	res := callProbe(t, map[string]any{"path": "a.md"})
	if res.IsError {
		t.Fatalf("valid call failed: %+v", res.Content)
	}
	var got probeOut
	_ = json.Unmarshal(res.StructuredContent.(json.RawMessage), &got)
	if got.Got.Limit != 50 || got.Got.Mode != "a" {
		t.Errorf("defaults not applied: %+v", got.Got)
	}
	if text := res.Content[0].(mcp.TextContent).Text; !strings.Contains(text, `"limit":50`) {
		t.Errorf("text content is not the JSON result: %s", text)
	}
	for name, args := range map[string]map[string]any{
		"missing required": {},
		"unknown key":      {"path": "a", "pth": "b"},
		"wrong type":       {"path": 3},
		"below minimum":    {"path": "a", "limit": 0},
		"above maximum":    {"path": "a", "limit": 71},
		"not in enum":      {"path": "a", "mode": "c"},
		"too many items":   {"path": "a", "tags": []any{"x", "y", "z"}},
		"empty item":       {"path": "a", "tags": []any{""}},
		"empty string":     {"path": ""},
	} {
		res := callProbe(t, args)
		if !res.IsError || kindOf(res) != "args-invalid" {
			t.Errorf("%s: want args-invalid, got isError=%v kind=%q", name, res.IsError, kindOf(res))
		}
	}
}

func kindOf(res *mcp.CallToolResult) string {
	if res.Meta == nil {
		return ""
	}
	m, _ := res.Meta.AdditionalFields[errorMetaKey].(map[string]any)
	k, _ := m["kind"].(string)
	return k
}

func TestPanicIsInternal(t *testing.T) {
	res := callProbe(t, map[string]any{"path": "panic"})
	if !res.IsError || kindOf(res) != "internal" {
		t.Errorf("a panicking tool: isError=%v kind=%q", res.IsError, kindOf(res))
	}
}

func TestErrorEnvelopeLifted(t *testing.T) {
	res := callProbe(t, map[string]any{"path": "boom"})
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": res})
	var env struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(mcphttp.LiftErrorFields(msg), &env); err != nil {
		t.Fatal(err)
	}
	if env.Result["kind"] != "note-not-found" || env.Result["isError"] != true {
		t.Errorf("kind not lifted to the top level: %v", env.Result)
	}
	if c, ok := env.Result["candidates"].([]any); !ok || len(c) != 1 {
		t.Errorf("extra fields not lifted: %v", env.Result)
	}
	if _, ok := env.Result["structuredContent"]; ok {
		t.Errorf("an error result must not carry structuredContent (it would fail output-schema validation)")
	}
	ok := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
	if string(mcphttp.LiftErrorFields(ok)) != string(ok) {
		t.Errorf("a success message was rewritten")
	}
}
