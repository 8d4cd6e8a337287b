package tools

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/tools/mcphttp"
)

// TestInitializeBeforeTheTools: over stdio a server from MCPServerFirst
// answers initialize before its tools are declared, holds every other
// message until they are, and then lists them all (run with -race: the
// declaration runs beside the serving).
func TestInitializeBeforeTheTools(t *testing.T) {
	s := testServer(t)
	srv, declare, err := s.MCPServerFirst("test", "")
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- mcphttp.ServeStdioWhenReady(t.Context(), srv, inR, outW, ready) }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<24)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no answer: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Error(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize before the tools: %v", m)
	}
	go func() { // an io.Pipe holds a write until it is read, as stdin's buffer would not
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}()
	answered := make(chan map[string]any, 1)
	go func() {
		if lines.Scan() {
			var m map[string]any
			json.Unmarshal(lines.Bytes(), &m)
			answered <- m
		}
	}()
	select {
	case m := <-answered:
		t.Fatalf("tools/list answered before the tools were declared: %v", m)
	case <-time.After(50 * time.Millisecond):
	}
	declare()
	close(ready)
	var m map[string]any
	select {
	case m = <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("tools/list not answered once the tools were declared")
	}
	listed, _ := m["result"].(map[string]any)["tools"].([]any)
	want := 0 // the test vault has no embeddings and no LLM: their tools are not listed
	for _, tool := range s.Tools() {
		if !tool.Spec.Needs.Embeddings && !tool.Spec.Needs.LLM {
			want++
		}
	}
	if len(listed) != want || want == 0 {
		t.Errorf("tools/list: %d tools, want %d", len(listed), want)
	}
	for _, tool := range listed {
		if name, _ := tool.(map[string]any)["name"].(string); strings.TrimSpace(name) == "" {
			t.Errorf("a listed tool without a name: %v", tool)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
