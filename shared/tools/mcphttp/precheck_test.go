package mcphttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// envelopeCases are raw requests and what the errors page says they get:
// a JSON-RPC error code, a tool result of a kind, or (code 0, no kind)
// whatever mcp-go answers correctly.
var envelopeCases = []struct {
	name, msg string
	code      int    // the JSON-RPC error code, 0 for none
	kind      string // the tool result's kind
	nullID    bool
}{
	{"parse error", `{"jsonrpc":"2.0","id":1,"method":`, -32700, "", true},
	{"no method", `{"jsonrpc":"2.0","id":2}`, -32600, "", false},
	{"no id no method", `{"jsonrpc":"2.0"}`, -32600, "", true},
	{"method not a string", `{"jsonrpc":"2.0","id":3,"method":5}`, -32600, "", false},
	{"empty method", `{"jsonrpc":"2.0","id":4,"method":""}`, -32600, "", false},
	{"batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, -32600, "", true},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, "", true},
	{"bad version", `{"jsonrpc":"1.0","id":6,"method":"ping"}`, -32600, "", false},
	{"unknown method", `{"jsonrpc":"2.0","id":7,"method":"no/such"}`, -32601, "", false},
	{"params not an object", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"oops"}`, -32602, "", false},
	{"name not a string", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}`, -32602, "", false},
	{"no params", `{"jsonrpc":"2.0","id":10,"method":"tools/call"}`, -32602, "", false},
	{"empty name", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":""}}`, -32602, "", false},
	{"list params not an object", `{"jsonrpc":"2.0","id":12,"method":"tools/list","params":[1]}`, -32602, "", false},
	{"unknown tool", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, 0, "unsupported", false},
	{"known tool", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"size","arguments":{"text":"abc"}}}`, 0, "", false},
	{"ping", `{"jsonrpc":"2.0","id":15,"method":"ping"}`, 0, "", false},
	{"null params", `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":null}`, -32602, "", false},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"no_such_tool"}}`, 0, "unsupported", true},
	{"resource read", `{"jsonrpc":"2.0","id":16,"method":"resources/read","params":{"uri":"test://ok"}}`, 0, "", false},
	{"resource not found", `{"jsonrpc":"2.0","id":17,"method":"resources/read","params":{"uri":"test://missing"}}`, -32002, "", false},
	{"resource uri invalid", `{"jsonrpc":"2.0","id":18,"method":"resources/read","params":{"uri":"test://bad"}}`, -32602, "", false},
	{"resource handler failure", `{"jsonrpc":"2.0","id":19,"method":"resources/read","params":{"uri":"test://boom"}}`, -32603, "", false},
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool           `json:"isError"`
		Kind    string         `json:"kind"`
		Reason  string         `json:"reason"`
		Meta    map[string]any `json:"_meta"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func checkEnvelope(t *testing.T, transport, name, raw string, code int, kind string, nullID bool) {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Errorf("%s %s: not a JSON-RPC reply: %q", transport, name, raw)
		return
	}
	switch {
	case code != 0:
		if r.Error == nil || r.Error.Code != code {
			t.Errorf("%s %s: %s, want error %d", transport, name, raw, code)
		}
		if strings.Contains(raw, "json: ") || strings.Contains(raw, "unmarshal") {
			t.Errorf("%s %s: Go's error text on the wire: %s", transport, name, raw)
		}
		if strings.Contains(raw, `\u001f`) || strings.Contains(raw, "sheaf-rpc") {
			t.Errorf("%s %s: the code marker on the wire: %s", transport, name, raw)
		}
		if nullID != (string(r.ID) == "null") {
			t.Errorf("%s %s: id %s (null: %v)", transport, name, r.ID, nullID)
		}
	case kind != "":
		if r.Result == nil || !r.Result.IsError || r.Result.Kind != kind || r.Result.Meta[ErrorMetaKey] == nil {
			t.Errorf("%s %s: %s, want a tool result of kind %s", transport, name, raw, kind)
		}
	default:
		if r.Error != nil || r.Result == nil || r.Result.IsError {
			t.Errorf("%s %s: %s, want a result", transport, name, raw)
		}
	}
}

// TestEnvelopesHTTP: each JSON-RPC error code of the errors page, and the
// unknown tool as a tool result, over HTTP.
func TestEnvelopesHTTP(t *testing.T) {
	_, srv := newBlocker()
	ts := httptest.NewServer(HTTPHandler(srv, HTTPOptions{}))
	defer ts.Close()
	for _, c := range envelopeCases {
		resp, body := post(t, ts.URL+"/mcp", c.msg, "")
		if resp.StatusCode == http.StatusAccepted {
			t.Errorf("%s: 202, no answer", c.name)
			continue
		}
		checkEnvelope(t, "http", c.name, body, c.code, c.kind, c.nullID)
	}
	// A response to a server request is still accepted, not refused.
	if resp, body := post(t, ts.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"result":{}}`, ""); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a response: %d %s, want 202", resp.StatusCode, body)
	}
}

// TestEnvelopesStdio: the same over stdio, one line at a time.
func TestEnvelopesStdio(t *testing.T) {
	_, srv := newBlocker()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(t.Context(), srv, inR, outW) }()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	read := func(name string) string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s: stdio closed", name)
			}
			return l
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no answer on stdio", name)
		}
		return ""
	}
	for _, c := range envelopeCases {
		if _, err := io.WriteString(inW, c.msg+"\n"); err != nil {
			t.Fatal(err)
		}
		checkEnvelope(t, "stdio", c.name, read(c.name), c.code, c.kind, c.nullID)
	}
	// A notification with malformed params gets no answer: the next line's
	// answer comes first.
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/x","params":"oops"}`+"\n"+`{"jsonrpc":"2.0","id":99,"method":"ping"}`+"\n")
	if l := read("after a notification"); !strings.Contains(l, `"id":99`) {
		t.Errorf("after a malformed notification: %s", l)
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Error("stdio did not stop when its input closed")
	}
}

// TestEnvelopesHTTPBig: the same cases in 2 MiB bodies (more than the
// first chunk the router reads), the padding a member before id and
// method, so the envelope is read from the whole body.
func TestEnvelopesHTTPBig(t *testing.T) {
	_, srv := newBlocker()
	ts := httptest.NewServer(HTTPHandler(srv, HTTPOptions{}))
	defer ts.Close()
	pad := `"pad":"` + strings.Repeat("x", 2<<20) + `",`
	for _, c := range envelopeCases {
		i := strings.IndexByte(c.msg, '{')
		if i < 0 || strings.HasPrefix(c.msg, `{"jsonrpc":"2.0"}`) {
			continue
		}
		big := c.msg[:i+1] + pad + c.msg[i+1:]
		resp, body := post(t, ts.URL+"/mcp", big, "")
		if resp.StatusCode == http.StatusAccepted {
			t.Errorf("%s (2 MiB): 202, no answer", c.name)
			continue
		}
		checkEnvelope(t, "http 2 MiB", c.name, body, c.code, c.kind, c.nullID)
	}
	// The arguments of a known tool, 2 MiB: the call goes through.
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"text":"` + strings.Repeat("y", 2<<20) + `"},"name":"size"}}`
	if _, body := post(t, ts.URL+"/mcp", call, ""); !strings.Contains(body, `"text":"2097152"`) {
		t.Errorf("a 2 MiB call of a known tool: %.300s", body)
	}
}

// BenchmarkPrecheckReader is the envelope check of a 2 MiB tools/call
// read from chunks, against json.Valid of the same bytes (the check of a
// small body).
func BenchmarkPrecheckReader(b *testing.B) {
	_, srv := newBlocker()
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"size","arguments":{"text":"` + strings.Repeat("y", 2<<20) + `"}}}`)
	b.Run("precheckReader", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if _, handled := precheckReader(bytes.NewReader(msg), srv); handled {
				b.Fatal("handled")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if !json.Valid(msg) {
				b.Fatal("invalid")
			}
		}
	})
}

// TestStdioMessageLimit: a message over the limit is read through without
// being kept and answered with invalid request, with its id wherever the
// id is (the TypeScript SDK writes it last), and the session goes on.
func TestStdioMessageLimit(t *testing.T) {
	_, srv := newBlocker()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = ServeStdioLimited(t.Context(), srv, inR, outW, nil, 4096) }()
	sc := bufio.NewScanner(outR)
	next := func() string {
		t.Helper()
		if !sc.Scan() {
			t.Fatal("stdio closed")
		}
		return sc.Text()
	}
	big := strings.Repeat(`x\"y`, 100000) // 400 KB of escaped text: quotes inside strings must not end the scan
	for _, c := range []struct{ msg, id string }{
		{`{"method":"tools/call","params":{"name":"write_note","arguments":{"content":"` + big + `","id":"inner"}},"jsonrpc":"2.0","id":42}`, `"id":42`},
		{`{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"arguments":{"content":"` + big + `"}}}`, `"id":"req-7"`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"content":"` + big + `"}}`, `"id":null`},
	} {
		go io.WriteString(inW, c.msg+"\n")
		l := next()
		if !strings.Contains(l, c.id) || !strings.Contains(l, `"code":-32600`) || !strings.Contains(l, "larger than the 4096 bytes") {
			t.Errorf("oversized message: %s, want invalid request with %s", l, c.id)
		}
	}
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":99,"method":"ping"}`+"\n")
	if l := next(); !strings.Contains(l, `"id":99`) || strings.Contains(l, "error") {
		t.Errorf("after the oversized messages: %s", l)
	}
	inW.Close()
}
