package tools

// A tool's answer as MCP sends it: its result as structured content, or
// its error with the kind. Below define (def.go), the budget (budget.go)
// and proposals (proposed.go), which all render results.

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/core"
)

// structuredResult returns out as structuredContent plus the same JSON as text.
func structuredResult(out any) (*mcp.CallToolResult, error) {
	text, err := json.Marshal(out)
	if err != nil {
		return errorResult(core.InternalError(fmt.Errorf("encoding the result: %w", err))), nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(text))},
		StructuredContent: json.RawMessage(text),
	}, nil
}

// errorMetaKey is where an error's kind and fields travel inside _meta; the
// transports lift them to the top level of the result (see lift.go).
const errorMetaKey = "sheaf/error"

// errorResult renders a tool error: isError, the message as text, and kind
// plus extra fields in _meta (lifted to the top level on the wire). It sets
// no structuredContent, which would have to match the output schema.
func errorResult(e *Error) *mcp.CallToolResult {
	fields := map[string]any{"kind": string(e.Kind), "message": e.Message}
	for k, v := range e.Fields {
		if k != "kind" && k != "message" {
			fields[k] = v
		}
	}
	return &mcp.CallToolResult{
		Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{errorMetaKey: fields}}},
		Content: []mcp.Content{mcp.NewTextContent(e.Message)},
		IsError: true,
	}
}
