// Package toolstest is the MCP conformance suite: it drives a running Sheaf
// server through the official Go MCP SDK client and checks every tool
// against the sample vault (infra/sample-vault). Any wiring of adapters
// (local embedded, cloud) runs the same suite by supplying a Connect.
package toolstest

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect opens a new client session to a server that serves the sample
// vault (as its only vault). The suite closes the session.
type Connect func(t *testing.T) *mcp.ClientSession

// Client wraps a session with the suite's helpers.
type Client struct {
	t       *testing.T
	S       *mcp.ClientSession
	schemas map[string]*jsonschema.Resolved // output schemas by tool
}

// NewClient lists the tools once and keeps their output schemas.
func NewClient(t *testing.T, s *mcp.ClientSession) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	c := &Client{t: t, S: s, schemas: map[string]*jsonschema.Resolved{}}
	for _, tool := range res.Tools {
		raw, _ := json.Marshal(tool.OutputSchema)
		var sch jsonschema.Schema
		if err := json.Unmarshal(raw, &sch); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		rs, err := sch.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema does not resolve: %v", tool.Name, err)
		}
		c.schemas[tool.Name] = rs
	}
	return c
}

// Result is one tools/call outcome.
type Result struct {
	IsError bool
	Kind    string         // the error kind (from the result's _meta["sheaf/error"])
	Fields  map[string]any // the error's extra fields
	Message string         // the error's text
	Raw     json.RawMessage
}

// Call calls a tool. A successful result's structuredContent must validate
// against the tool's output schema and equal its text content; it is
// decoded into out when out is non-nil.
func (c *Client) Call(name string, args map[string]any, out any) Result {
	c.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return c.call(name, args, out)
}

// call is Call with arguments of any JSON form.
func (c *Client) call(name string, args any, out any) Result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.S.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	var r Result
	r.IsError = res.IsError
	if res.IsError {
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				r.Message = tc.Text
			}
		}
		if m, ok := res.Meta["sheaf/error"].(map[string]any); ok {
			r.Fields = m
			r.Kind, _ = m["kind"].(string)
		}
		if r.Kind == "" {
			c.t.Fatalf("%s(%v): error result without a kind: %s", name, args, r.Message)
		}
		if leak := Leak(r.Message, args); leak != "" {
			c.t.Errorf("%s(%v): the error text shows %s: %s", name, args, leak, r.Message)
		}
		return r
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		c.t.Fatalf("%s(%v): no structuredContent", name, args)
	}
	r.Raw = raw
	var generic any
	_ = json.Unmarshal(raw, &generic)
	if rs := c.schemas[name]; rs != nil {
		if err := rs.Validate(generic); err != nil {
			c.t.Errorf("%s(%v): structuredContent does not match the output schema: %v\n%s", name, args, err, clip(raw))
		}
	}
	if len(res.Content) == 0 {
		c.t.Errorf("%s: no text content", name)
	} else if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !sameJSON(tc.Text, raw) {
		c.t.Errorf("%s: text content is not the same JSON as structuredContent", name)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s: decoding result: %v", name, err)
		}
	}
	return r
}

// CallRaw calls a tool with arguments given as raw JSON, sent as they
// are (escapes included), and returns its outcome like Call.
func (c *Client) CallRaw(name, args string) Result {
	c.t.Helper()
	if !json.Valid([]byte(args)) {
		c.t.Fatalf("CallRaw(%s): not JSON: %s", name, args)
	}
	return c.call(name, json.RawMessage(args), nil)
}

// leaks are what an error text must not show a caller: a URL (a
// provider's), an absolute path outside the vault, a Go error chain.
var leaks = regexp.MustCompile(`https?://|(^|[\s"'(])(/tmp/|/home/|/var/|/root/|/etc/|[A-Z]:\\)|dial tcp|context deadline exceeded|json: cannot|%!|goroutine |: EOF|panic:`)

// Leak returns what an error text shows that it must not (see leaks), ""
// when nothing. The caller's own arguments (strings of args, any JSON
// form) may be quoted back: they are not scanned.
func Leak(text string, args any) string {
	raw, _ := json.Marshal(args)
	var generic any
	_ = json.Unmarshal(raw, &generic)
	var strs []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			strs = append(strs, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(generic)
	sort.Slice(strs, func(i, j int) bool { return len(strs[i]) > len(strs[j]) })
	for _, s := range strs {
		if len(s) > 0 {
			text = strings.ReplaceAll(text, s, "…")
		}
	}
	return leaks.FindString(text)
}

// MustOK calls a tool and fails the test on a tool error.
func (c *Client) MustOK(name string, args map[string]any, out any) {
	c.t.Helper()
	if r := c.Call(name, args, out); r.IsError {
		c.t.Fatalf("%s(%v): unexpected error %s: %s", name, args, r.Kind, r.Message)
	}
}

// MustFail calls a tool and checks it fails with kind.
func (c *Client) MustFail(kind, name string, args map[string]any) Result {
	c.t.Helper()
	r := c.Call(name, args, nil)
	if !r.IsError {
		c.t.Errorf("%s(%v): succeeded, want error %s", name, args, kind)
	} else if r.Kind != kind {
		c.t.Errorf("%s(%v): kind %q (%s), want %q", name, args, r.Kind, r.Message, kind)
	}
	return r
}

// WaitIndexed polls get_vault_info until indexing is done.
func (c *Client) WaitIndexed() {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var info struct {
			Liveness struct {
				Indexing string `json:"indexing"`
			} `json:"liveness"`
		}
		c.MustOK("get_vault_info", nil, &info)
		if info.Liveness.Indexing == "ready" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("vault not indexed after 60s (state %q)", info.Liveness.Indexing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sameJSON(text string, raw []byte) bool {
	var a, b any
	if json.Unmarshal([]byte(text), &a) != nil || json.Unmarshal(raw, &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
