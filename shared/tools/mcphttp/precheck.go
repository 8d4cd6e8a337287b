package mcphttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	var env envelope
	if json.Unmarshal(msg, &env) != nil {
		return nil, false
	}
	return env.check(srv)
}

// precheckReader is precheck of a message read from r (a body bigger than
// one chunk), decoded as a stream of tokens: each top-level member is
// decoded on its own, keeping only small values and, of params, its kind
// and name. The decoder holds at most one member at a time (params: about
// the whole body, within the body limit); nothing of params is copied.
func precheckReader(r io.Reader, srv *server.MCPServer) (resp []byte, handled bool) {
	dec := json.NewDecoder(r)
	t, err := dec.Token()
	if err != nil {
		return nil, false // not JSON: mcp-go's parse error (-32700) is right
	}
	var env envelope
	switch t {
	case json.Delim('{'):
		env.first, env.members = '{', map[string]member{}
		for dec.More() {
			kt, err := dec.Token()
			key, _ := kt.(string)
			var m member
			if err != nil || dec.Decode(&m) != nil {
				return nil, false
			}
			env.members[key] = m
		}
	case json.Delim('['):
		env.first = '['
		for dec.More() {
			var m member
			if dec.Decode(&m) != nil {
				return nil, false
			}
		}
	default:
		env.first = '"' // a scalar: not an object
	}
	if env.first != '"' {
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, false
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // more after the message: not one JSON value
	}
	return env.check(srv)
}

// envelope is what precheck reads of a message: the first byte of its JSON
// value and, of an object, its members.
type envelope struct {
	first   byte
	members map[string]member
}

func (e *envelope) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("empty")
	}
	e.first = b[0]
	if e.first != '{' {
		return nil
	}
	return json.Unmarshal(b, &e.members)
}

// member is one member of the envelope: its value when small (id, method,
// ...), its first byte, and, for an object (params), its "name".
type member struct {
	raw   json.RawMessage // nil for a value over smallMember bytes
	first byte
	name  *json.RawMessage
}

// smallMember bounds the values precheck copies: an id or a method name
// is far smaller; params (a note's content) is never copied.
const smallMember = 4 << 10

func (m *member) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("empty")
	}
	m.first = b[0]
	if len(b) <= smallMember {
		m.raw = append(json.RawMessage(nil), b...)
	}
	if m.first == '{' {
		var p struct {
			Name *json.RawMessage `json:"name"`
		}
		_ = json.Unmarshal(b, &p)
		m.name = p.Name
	}
	return nil
}

// check is precheck's decision on a decoded message.
func (env *envelope) check(srv *server.MCPServer) (resp []byte, handled bool) {
	if env.first == '[' {
		return rpcError(nil, codeInvalidRequest, "Invalid Request: batches are not supported; send one JSON-RPC message at a time"), true
	}
	if env.first != '{' {
		return rpcError(nil, codeInvalidRequest, "Invalid Request: a JSON-RPC message is a JSON object"), true
	}
	var id json.RawMessage
	if m, ok := env.members["id"]; ok {
		if m.raw == nil {
			return rpcError(nil, codeInvalidRequest, "Invalid Request: id must be a string or a number"), true
		}
		id = m.raw
	}
	if !validID(id) {
		return rpcError(nil, codeInvalidRequest, "Invalid Request: id must be a string or a number"), true
	}
	rawMethod, hasMethod := env.members["method"]
	if !hasMethod {
		if _, ok := env.members["result"]; ok {
			return nil, false // a response to a server request
		}
		if _, ok := env.members["error"]; ok {
			return nil, false
		}
		return rpcError(id, codeInvalidRequest, "Invalid Request: no method"), true
	}
	var method string
	if rawMethod.raw == nil || json.Unmarshal(rawMethod.raw, &method) != nil || method == "" {
		return rpcError(id, codeInvalidRequest, "Invalid Request: method must be a non-empty string"), true
	}
	params, hasParams := env.members["params"]
	if hasParams && params.first != '{' && params.first != 'n' {
		if len(id) == 0 {
			return nil, true // a notification gets no answer, not even an error
		}
		return rpcError(id, codeInvalidParams, "Invalid params: params must be a JSON object"), true
	}
	if method != "tools/call" || len(id) == 0 {
		return nil, false
	}
	var name string
	if !hasParams || params.name == nil || json.Unmarshal(*params.name, &name) != nil || name == "" {
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

// initializes reports whether line is an initialize request, which a
// server still declaring its tools may answer.
func initializes(line []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(line, &m) == nil && m.Method == "initialize"
}

// tooLongResponse is the JSON-RPC error answering a message over the
// limit: invalid request, with the request's id when it was found.
func tooLongResponse(e *errLineTooLong, maxLine int64) []byte {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
		"code": -32600,
		"message": fmt.Sprintf("The request of %d bytes is larger than the %d bytes this server takes in one message (--max-request-bytes); nothing was done. Send a note this big in parts (write_note, then append).",
			e.n, maxLine),
	}})
	return b
}

// precheckLines passes the newline-delimited messages of in through
// precheck: answered ones are written to out and dropped, the others
// forwarded to the returned reader (mcp-go's stdio server reads it).
// Until ready is closed (nil: at once) only initialize goes through;
// any other message waits for it. A message over maxLine bytes is
// answered with tooLongResponse, unread.
func precheckLines(in io.Reader, out io.Writer, srv *server.MCPServer, ready <-chan struct{}, maxLine int64) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReaderSize(in, 64*1024)
		for {
			line, err := readLine(r, maxLine)
			var tooLong *errLineTooLong
			if errors.As(err, &tooLong) {
				if _, werr := out.Write(append(tooLongResponse(tooLong, maxLine), '\n')); werr != nil {
					pw.CloseWithError(werr)
					return
				}
				continue
			}
			if ready != nil && !initializes(line) {
				<-ready // the tools are declared
				ready = nil
			}
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
