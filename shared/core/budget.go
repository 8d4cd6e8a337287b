package core

import (
	"bytes"
	"encoding/json"
)

// An answer's size is counted as the doors send it: a tool result carries
// its JSON twice, as structuredContent and as the same JSON in a text
// block, inside a JSON-RPC envelope.

// DefaultMaxResponseBytes is the response budget: the most bytes one tool
// result may take serialized, its structuredContent and its text copy
// counted. It keeps every frame far below what the official MCP clients
// accept (over stdio the TypeScript SDK buffers at most 10 MiB and the Go
// SDK refuses a frame over 16 MiB, and either ends the session) and below
// what an agent's context can use anyway.
const DefaultMaxResponseBytes = 1 << 20

// MaxResponseBytesLimit is the largest budget a server may be configured
// with: under the TypeScript SDK client's 10 MiB stdio buffer, with room
// for the JSON-RPC envelope and a notification behind it.
const MaxResponseBytesLimit = 8 << 20

// EnvelopeBytes is what the JSON-RPC envelope and the result's framing add
// to a result's serialized size, with room to spare.
const EnvelopeBytes = 512

// WireSize is the serialized size of an answer whose JSON is b: b itself as
// structuredContent (json.Marshal output is already compact and escaped:
// no control character, no <, >, &, U+2028 or U+2029 left to escape), and
// b as the text copy, a JSON string in which each quote and backslash
// takes one more byte.
func WireSize(b []byte) int {
	return 2*len(b) + bytes.Count(b, []byte{'"'}) + bytes.Count(b, []byte{'\\'}) + EnvelopeBytes
}

// render encodes out and measures it as WireSize does (the budget is the
// caller's to compare with).
func render(out any, _ int) ([]byte, int) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, 0
	}
	return b, WireSize(b)
}
