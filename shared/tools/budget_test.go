package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/core"
)

type bigIn struct {
	Offset int `json:"offset,omitempty"`
	Items  int `json:"items"`
	Size   int `json:"size"`
}

type bigOut struct {
	Coverage
	Items  []string `json:"items"`
	Offset int      `json:"offset"`
	Small  []int    `json:"small"`
}

func callBig(t *testing.T, budget int, in bigIn) *mcp.CallToolResult {
	t.Helper()
	tool := define(Spec{Name: "big", Title: "Big", Description: "test", Hints: readOnly}, func(_ context.Context, a bigIn) (*bigOut, error) {
		out := &bigOut{Offset: a.Offset, Small: []int{1, 2, 3}, Items: []string{}}
		for i := range a.Items {
			// Quotes and angle brackets grow when escaped: the budget
			// counts serialized bytes, both copies.
			out.Items = append(out.Items, strings.Repeat(`"<`, a.Size/2)+string(rune('a'+i%26)))
		}
		return out, nil
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "big"
	raw, _ := json.Marshal(in)
	req.Params.Arguments = json.RawMessage(raw)
	res, err := tool.Handler(withCall(context.Background(), core.NewCall(budget)), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestBudgetClipsTheLongestList(t *testing.T) {
	const budget = 64 << 10
	res := callBig(t, budget, bigIn{Offset: 10, Items: 500, Size: 1000})
	if res.IsError {
		t.Fatalf("error: %+v", res.Content)
	}
	if n := resultSize(res); n > budget {
		t.Fatalf("result is %d bytes, over the budget of %d", n, budget)
	}
	var out bigOut
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Partial || len(out.Clipped) != 1 {
		t.Fatalf("want one clipped list, got %+v", out.Coverage)
	}
	c := out.Clipped[0]
	if c.Field != "items" || c.Of != 500 || c.Kept != len(out.Items) || c.Kept < 2 || c.MaxBytes != budget {
		t.Errorf("clipped %+v with %d items", c, len(out.Items))
	}
	if c.NextOffset == nil || *c.NextOffset != 10+c.Kept {
		t.Errorf("next_offset %v, want %d", c.NextOffset, 10+c.Kept)
	}
	if len(out.Small) != 3 {
		t.Errorf("the short list was cut too: %v", out.Small)
	}
	// Nothing cut when it fits.
	res = callBig(t, budget, bigIn{Items: 3, Size: 10})
	var small bigOut
	_ = json.Unmarshal(res.StructuredContent.(json.RawMessage), &small)
	if small.Partial || small.Clipped != nil || len(small.Items) != 3 {
		t.Errorf("a small result was cut or marked partial: %+v", small)
	}
}

func TestBudgetOneItemTooLarge(t *testing.T) {
	res := callBig(t, 16<<10, bigIn{Items: 1, Size: 100 << 10})
	if !res.IsError {
		t.Fatal("an answer over budget that cannot be cut must be an error")
	}
	f := res.Meta.AdditionalFields[errorMetaKey].(map[string]any)
	if f["kind"] != string(KindUnsupported) || f["reason"] != "response-too-large" {
		t.Errorf("error fields %v", f)
	}
	if n := resultSize(res); n > 16<<10 {
		t.Errorf("error result is %d bytes", n)
	}
}

func TestBudgetError(t *testing.T) {
	long := make([]string, 20000)
	for i := range long {
		long[i] = strings.Repeat("x", 40)
	}
	res := errorResult(newError(KindArgsInvalid, map[string]any{"candidates": long}, "ambiguous %s", strings.Repeat("y", 5000)))
	res = fitError(res, 4<<10)
	if n := resultSize(res); n > 4<<10 {
		t.Fatalf("error result is %d bytes", n)
	}
	f := res.Meta.AdditionalFields[errorMetaKey].(map[string]any)
	if f["kind"] != string(KindArgsInvalid) {
		t.Errorf("kind lost: %v", f)
	}
}

// TestSizeOfIsExact checks the size formula against the bytes a transport
// really sends, for contents full of characters JSON escapes.
func TestSizeOfIsExact(t *testing.T) {
	for _, content := range []string{"", "plain", strings.Repeat(`"<>&\`+"\n\t\x01\u2028é🌱", 1000), string(pagedNote(200 << 10))} {
		out := &struct {
			Coverage
			Content string   `json:"content"`
			Tags    []string `json:"tags"`
		}{Content: content, Tags: []string{`a"b`, `c\d`}}
		res, n := render(out, DefaultMaxResponseBytes)
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if n < len(b) || n-len(b) > core.EnvelopeBytes {
			t.Errorf("content of %d bytes: sizeOf says %d, the result marshals to %d", len(content), n, len(b))
		}
	}
}
