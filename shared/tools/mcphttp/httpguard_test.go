package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// blocker is an MCP server with one tool, "block", that waits until its
// context ends or release is closed, and counts how its calls ended.
type blocker struct {
	release   chan struct{}
	started   chan struct{}
	cancelled atomic.Int64
	finished  atomic.Int64
}

func newBlocker() (*blocker, *server.MCPServer) {
	b := &blocker{release: make(chan struct{}), started: make(chan struct{}, 16)}
	srv := server.NewMCPServer("guard-test", "1")
	srv.AddTool(mcpgo.NewTool("block"), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		b.started <- struct{}{}
		select {
		case <-ctx.Done():
			b.cancelled.Add(1)
			return nil, ctx.Err()
		case <-b.release:
			b.finished.Add(1)
			return mcpgo.NewToolResultText("released"), nil
		}
	})
	srv.AddTool(mcpgo.NewTool("size", mcpgo.WithString("text")), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText(fmt.Sprint(len(req.GetString("text", "")))), nil
	})
	// A resource template whose handler answers each RPCError code by name
	// (rpcerror.go), and a plain error for any other.
	srv.AddResourceTemplate(mcpgo.NewResourceTemplate("test://{name}", "test"), func(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
		switch name := strings.TrimPrefix(req.Params.URI, "test://"); name {
		case "ok":
			return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, Text: "ok"}}, nil
		case "missing":
			return nil, &RPCError{Code: CodeResourceNotFound, Message: "Resource not found: " + req.Params.URI, Data: map[string]any{"uri": req.Params.URI}}
		case "bad":
			return nil, &RPCError{Code: CodeInvalidParams, Message: "Invalid params: " + req.Params.URI}
		default:
			return nil, errors.New("plain failure")
		}
	})
	return b, srv
}

// post sends one JSON-RPC message as a 2025-06-18 client would, or with
// the 2026-07-28 header when modern.
func post(t *testing.T, url, body, version string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func callBody(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"block","arguments":{}}}`
}

// TestNotificationsAccepted: every notification is answered 202 whatever
// protocol revision the client speaks, _meta or not.
func TestNotificationsAccepted(t *testing.T) {
	_, srv := newBlocker()
	ts := httptest.NewServer(HTTPHandler(srv, HTTPOptions{}))
	defer ts.Close()
	for _, version := range []string{"2026-07-28", "2025-11-25", "2025-06-18", ""} {
		for _, n := range []string{
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"context deadline exceeded","requestId":2}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"abc"}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
			`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"_meta":{}}}`,
		} {
			if resp, body := post(t, ts.URL+"/mcp", n, version); resp.StatusCode != http.StatusAccepted {
				t.Errorf("version %q: %s: %d %s, want 202", version, n, resp.StatusCode, body)
			}
		}
	}
}

// TestCancelledNotificationCancelsCall: a notifications/cancelled naming a
// call running in this process stops it, even when the client keeps the
// call's connection open.
func TestCancelledNotificationCancelsCall(t *testing.T) {
	b, srv := newBlocker()
	ts := httptest.NewServer(HTTPHandler(srv, HTTPOptions{}))
	defer ts.Close()
	done := make(chan string, 1)
	go func() {
		_, body := post(t, ts.URL+"/mcp", callBody("7"), "")
		done <- body
	}()
	<-b.started
	if resp, body := post(t, ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, ""); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		close(b.release)
		t.Fatal("the call went on after notifications/cancelled")
	}
	if b.cancelled.Load() != 1 {
		t.Errorf("the tool saw %d cancellations, want 1", b.cancelled.Load())
	}
	// A cancellation for an id nobody runs, or of a string id, harms nothing.
	post(t, ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}`, "")
}

// TestCancelAmbiguousCancelsNone: two clients of one identity that chose
// the same request id; a cancellation naming it cannot tell which is
// meant, so it stops neither (each client's aborted POST still would).
func TestCancelAmbiguousCancelsNone(t *testing.T) {
	b, srv := newBlocker()
	ts := httptest.NewServer(HTTPHandler(srv, HTTPOptions{}))
	defer ts.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { post(t, ts.URL+"/mcp", callBody("9"), "") })
	}
	<-b.started
	<-b.started
	post(t, ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`, "")
	time.Sleep(100 * time.Millisecond)
	close(b.release)
	wg.Wait()
	if b.cancelled.Load() != 0 || b.finished.Load() != 2 {
		t.Errorf("cancelled %d, finished %d; want 0 and 2", b.cancelled.Load(), b.finished.Load())
	}
}

// countingBody counts what the server read of a body.
type countingBody struct {
	r    io.Reader
	read atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// TestBodyTooLarge: a body over the limit is answered 413 before it is
// read when its Content-Length says so, and as soon as it passes the limit
// when it comes chunked; a body at the limit passes.
func TestBodyTooLarge(t *testing.T) {
	_, srv := newBlocker()
	const limit = 1 << 20
	ts := httptest.NewServer(HTTPHandler(srv, HTTPOptions{MaxRequestBytes: limit}))
	defer ts.Close()
	send := func(size int64, chunked bool) (int, int64) {
		t.Helper()
		body := &countingBody{r: io.LimitReader(zeros{}, size)}
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", body)
		if !chunked {
			req.ContentLength = size
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			// The server may close the connection before the client has
			// sent everything: that is the point.
			return 0, body.read.Load()
		}
		resp.Body.Close()
		return resp.StatusCode, body.read.Load()
	}
	if code, read := send(100<<20, false); code != http.StatusRequestEntityTooLarge || read > 4<<20 {
		t.Errorf("100 MB with Content-Length: %d after sending %d bytes, want 413 before the body", code, read)
	}
	if code, read := send(100<<20, true); (code != http.StatusRequestEntityTooLarge && code != 0) || read > 8<<20 {
		t.Errorf("100 MB chunked: %d after sending %d bytes, want 413 near the limit", code, read)
	}
	// At the limit: read whole and handed on (mcp-go then finds no JSON).
	if code, _ := send(limit, false); code == http.StatusRequestEntityTooLarge {
		t.Errorf("a body at the limit was refused")
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestBodyTimeout: a body trickling in a few bytes at a time is cut off
// with 408 once it falls behind the minimum rate.
func TestBodyTimeout(t *testing.T) {
	_, srv := newBlocker()
	ts := httptest.NewServer(HTTPHandler(srv, HTTPOptions{BodyTimeout: 300 * time.Millisecond}))
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
	answered := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(conn)
		answered <- string(data)
	}()
	for range 50 {
		select {
		case got := <-answered:
			if !strings.Contains(got, " 408 ") {
				t.Errorf("a trickled body was answered %q, want 408", strings.SplitN(got, "\r\n", 2)[0])
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("cut off after %v", took)
			}
			return
		case <-time.After(200 * time.Millisecond):
			if _, err := conn.Write([]byte(" ")); err != nil {
				continue
			}
		}
	}
	t.Fatal("a body trickling one byte every 200 ms was never cut off")
}

// TestBodyBudget: bodies beyond their first MiB share a budget; a body that
// cannot get its share in time is answered 503, and what others release
// lets the next one in.
func TestBodyBudget(t *testing.T) {
	b := newByteBudget(10)
	ctx := context.Background()
	if err := b.acquire(ctx, 8, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.acquire(ctx, 5, 50*time.Millisecond); err != errBodyBudget {
		t.Errorf("over the budget: %v, want errBodyBudget", err)
	}
	go func() { time.Sleep(50 * time.Millisecond); b.release(8) }()
	if err := b.acquire(ctx, 5, 2*time.Second); err != nil {
		t.Errorf("after a release: %v", err)
	}
	if err := b.acquire(ctx, 100, 50*time.Millisecond); err != errBodyBudget {
		t.Errorf("more than the whole budget while some is held: %v", err)
	}
	b.release(5)
	if err := b.acquire(ctx, 100, time.Second); err != nil {
		t.Errorf("more than the whole budget, all free: %v (it waits for all of it)", err)
	}

	// Through the handler: with the budget taken, a big body waits, then 503.
	_, srv := newBlocker()
	l := newBodyLimiter(4<<20, time.Second)
	l.budget = newByteBudget(1)
	_ = l.budget.acquire(ctx, 1, time.Second)
	h := rpcRouter(l, &inflight{}, srv, server.NewStreamableHTTPServer(srv, server.WithStateLess(true)))
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(make([]byte, 2<<20)))
	ctx2, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r.WithContext(ctx2))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("a big body with no budget left: %d, want 503", w.Code)
	}
}

// TestBigCallsPass: calls bigger than one chunk reach the server whole,
// whatever the order of their members ("params" first included).
func TestBigCallsPass(t *testing.T) {
	_, srv := newBlocker()
	ts := httptest.NewServer(HTTPHandler(srv, HTTPOptions{}))
	defer ts.Close()
	text := strings.Repeat("a", 3<<20+17)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"size","arguments":{"text":"` + text + `"}}}`,
		`{"params":{"name":"size","arguments":{"text":"` + text + `"}},"jsonrpc":"2.0","method":"tools/call","id":6}`,
	} {
		resp, got := post(t, ts.URL+"/mcp", body, "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(got, fmt.Sprint(len(text))) {
			t.Errorf("a %d-byte call: %d %.200s", len(body), resp.StatusCode, got)
		}
	}
}
