package mcphttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// TestCORS: a browser page from an allowed origin gets its preflight
// answered and can read every answer, 401s included; a refused origin gets
// neither.
func TestCORS(t *testing.T) {
	srv := server.NewMCPServer("test", "1", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("probe_tool", mcp.WithDescription("a tool")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	h := HTTPHandler(srv, HTTPOptions{Auth: &auth.Authenticator{Token: "tok-0123456789abcdef"}, AllowedOrigins: []string{"https://app.example.com"}})
	do := func(method, origin string, hdr map[string]string, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	pre := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version"}
	for _, origin := range []string{"https://app.example.com", "http://localhost:6274"} {
		w := do(http.MethodOptions, origin, pre, "")
		if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("preflight from %s: %d %v", origin, w.Code, w.Header())
		}
		for _, want := range []string{"Authorization", "Content-Type", "Mcp-Protocol-Version"} {
			if !strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), want) {
				t.Errorf("preflight from %s: %s not allowed", origin, want)
			}
		}
		if !strings.Contains(w.Header().Get("Access-Control-Allow-Methods"), "POST") || w.Header().Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("preflight from %s: %v", origin, w.Header())
		}
	}
	// The request itself: authenticated as any other, readable by the page.
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	json := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	w := do(http.MethodPost, "https://app.example.com", json, call)
	if w.Code != http.StatusUnauthorized || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(w.Header().Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Errorf("unauthenticated POST: %d %v", w.Code, w.Header())
	}
	json["Authorization"] = "Bearer tok-0123456789abcdef"
	w = do(http.MethodPost, "https://app.example.com", json, call)
	if w.Code != http.StatusOK || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(w.Body.String(), "probe_tool") {
		t.Errorf("POST: %d %v %.200s", w.Code, w.Header(), w.Body.String())
	}
	// A refused origin: no preflight, no CORS headers, the request refused.
	w = do(http.MethodOptions, "https://evil.example.net", pre, "")
	if w.Code != http.StatusForbidden || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("refused preflight: %d %v", w.Code, w.Header())
	}
	w = do(http.MethodPost, "https://evil.example.net", json, call)
	if w.Code != http.StatusForbidden || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("refused POST: %d %v", w.Code, w.Header())
	}
	// No Origin (not a browser): untouched.
	w = do(http.MethodPost, "", json, call)
	if w.Code != http.StatusOK || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("POST without Origin: %d %v", w.Code, w.Header())
	}
}
