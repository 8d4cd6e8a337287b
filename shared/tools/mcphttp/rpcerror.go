package mcphttp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// mcp-go v1.2.1 answers every error of a resources/read or prompts/get
// handler with JSON-RPC -32603 and the error's text. The errors page wants
// the code that says what went wrong (-32002 a resource not found, -32602
// invalid params), so a handler returns an RPCError: its text carries the
// code behind a marker, and the transports (LiftErrorFields, on stdio and
// HTTP alike) put the code in the envelope and drop the marker.

// JSON-RPC and MCP error codes a handler may answer.
const (
	CodeResourceNotFound = -32002 // MCP: a resource that does not exist (or the caller may not read)
	CodeInvalidParams    = codeInvalidParams
	CodeInternal         = -32603
)

// rpcMarker starts the text of an RPCError; \x1f never occurs in a message
// otherwise (JSON writes it \u001f).
const rpcMarker = "\x1fsheaf-rpc:"

// rpcMarkerJSON is rpcMarker as it appears inside a JSON string.
var rpcMarkerJSON = []byte(`\u001fsheaf-rpc:`)

// RPCError is a handler error answered as JSON-RPC error Code with
// Message and, when set, Data.
type RPCError struct {
	Code    int
	Message string
	Data    map[string]any
}

// Error is the marked text: marker, code, \x1f, data as JSON, \x1f,
// message.
func (e *RPCError) Error() string {
	data := ""
	if e.Data != nil {
		b, _ := json.Marshal(e.Data)
		data = string(b)
	}
	return rpcMarker + strconv.Itoa(e.Code) + "\x1f" + data + "\x1f" + e.Message
}

// liftRPCError rewrites an error response whose message is an RPCError's
// text: its code and message become the envelope's. Any other message is
// returned unchanged.
func liftRPCError(msg []byte) []byte {
	if !bytes.Contains(msg, rpcMarkerJSON) {
		return msg
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil || env["error"] == nil {
		return msg
	}
	var e map[string]json.RawMessage
	var text string
	if json.Unmarshal(env["error"], &e) != nil || json.Unmarshal(e["message"], &text) != nil {
		return msg
	}
	rest, ok := strings.CutPrefix(text, rpcMarker)
	if !ok {
		return msg
	}
	codeText, rest, ok1 := strings.Cut(rest, "\x1f")
	data, message, ok2 := strings.Cut(rest, "\x1f")
	code, err := strconv.Atoi(codeText)
	if !ok1 || !ok2 || err != nil || (data != "" && !json.Valid([]byte(data))) {
		return msg
	}
	e["code"], _ = json.Marshal(code)
	e["message"], _ = json.Marshal(message)
	if data != "" {
		e["data"] = json.RawMessage(data)
	}
	eb, err := json.Marshal(e)
	if err != nil {
		return msg
	}
	env["error"] = eb
	out, err := json.Marshal(env)
	if err != nil {
		return msg
	}
	return out
}
