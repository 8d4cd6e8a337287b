package mcphttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/mark3labs/mcp-go/server"
)

// The JSON-RPC envelopes of the errors page (spec/lettuce-errors-and-limits.txt)
// where mcp-go v1.2.1 answers otherwise: a request without a method is
// -32600 (mcp-go: -32601 on stdio, 202 over HTTP), a batch or a method that
// is not a string -32600 (mcp-go: -32700), malformed tools/call params
// -32602 (mcp-go: -32600 with Go's unmarshal text), and a call of a tool
// the server does not serve a tool result of kind unsupported (mcp-go:
// -32602). precheck answers those messages itself, for stdio and HTTP
// alike, before mcp-go sees them; every other message passes unchanged.

// JSON-RPC error codes.
const (
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
)

// precheck returns the answer to msg when it is one mcp-go would answer
// wrongly; handled is false for any other message, which passes on.
func precheck(msg []byte, srv *server.MCPServer) (resp []byte, handled bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || !json.Valid(msg) {
		return nil, false // mcp-go's parse error (-32700) is right
	}
	if msg[0] == '[' {
		return rpcError(nil, codeInvalidRequest, "Invalid Request: batches are not supported; send one JSON-RPC message at a time"), true
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil {
		return rpcError(nil, codeInvalidRequest, "Invalid Request: a JSON-RPC message is a JSON object"), true
	}
	id := env["id"]
	if !validID(id) {
		return rpcError(nil, codeInvalidRequest, "Invalid Request: id must be a string or a number"), true
	}
	rawMethod, hasMethod := env["method"]
	if !hasMethod {
		if _, ok := env["result"]; ok {
			return nil, false // a response to a server request
		}
		if _, ok := env["error"]; ok {
			return nil, false
		}
		return rpcError(id, codeInvalidRequest, "Invalid Request: no method"), true
	}
	var method string
	if json.Unmarshal(rawMethod, &method) != nil || method == "" {
		return rpcError(id, codeInvalidRequest, "Invalid Request: method must be a non-empty string"), true
	}
	params, hasParams := env["params"]
	if hasParams && !isObjectOrNull(params) {
		if len(id) == 0 {
			return nil, true // a notification gets no answer, not even an error
		}
		return rpcError(id, codeInvalidParams, "Invalid params: params must be a JSON object"), true
	}
	if method != "tools/call" || len(id) == 0 {
		return nil, false
	}
	var p struct {
		Name      *json.RawMessage `json:"name"`
		Arguments json.RawMessage  `json:"arguments"`
	}
	_ = json.Unmarshal(params, &p)
	var name string
	if p.Name == nil || json.Unmarshal(*p.Name, &name) != nil || name == "" {
		return rpcError(id, codeInvalidParams, "Invalid params: tools/call needs params.name, the name of a tool from tools/list"), true
	}
	if srv.GetTool(name) == nil {
		return unknownTool(id, name), true
	}
	return nil, false
}

// validID reports whether a message's id is absent, null, a string or a
// number.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return true
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

func isObjectOrNull(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && (v[0] == '{' || bytes.Equal(v, []byte("null")))
}

// rpcError is a JSON-RPC error response; a nil id is null.
func rpcError(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": message},
	})
	return b
}

// unknownTool is the tool result of a call of a tool this server does not
// serve (unknown, or outside the caller's profile): kind unsupported, at
// the top level and in _meta like every tool error.
func unknownTool(id json.RawMessage, name string) []byte {
	if len(name) > 100 {
		name = name[:100] + "…"
	}
	text := "There is no tool " + jsonString(name) + " on this server (or not in your key's profile): call tools/list for the tools you can use."
	fields := map[string]any{"kind": "unsupported", "reason": "unknown-tool", "tool": name, "message": text}
	result := map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text}},
		"isError": true,
		"kind":    "unsupported",
		"reason":  "unknown-tool",
		"tool":    name,
		"_meta":   map[string]any{ErrorMetaKey: fields},
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return b
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// precheckLines passes the newline-delimited messages of in through
// precheck: answered ones are written to out and dropped, the others
// forwarded to the returned reader (mcp-go's stdio server reads it).
func precheckLines(in io.Reader, out io.Writer, srv *server.MCPServer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReaderSize(in, 64*1024)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if resp, handled := precheck(line, srv); handled {
					if resp != nil {
						if _, werr := out.Write(append(resp, '\n')); werr != nil {
							pw.CloseWithError(werr)
							return
						}
					}
				} else if _, werr := pw.Write(line); werr != nil {
					return // the server stopped reading
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}
