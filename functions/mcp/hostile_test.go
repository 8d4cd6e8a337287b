package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/functions/internal/cloudtest"
)

// TestHostileEventsLambda sends malformed HTTP events through the real
// emulator: each gets a clean HTTP error, never a function error, and the
// function keeps serving.
func TestHostileEventsLambda(t *testing.T) {
	_, r, _ := serve(t)
	auth := `"authorization":"Bearer ` + cloudtest.Token + `"`
	for name, tc := range map[string]struct {
		ev   string
		want int
	}{
		"isBase64Encoded string": {`{"version":"2.0","rawPath":"/mcp","headers":{` + auth + `},"requestContext":{"http":{"method":"POST"}},"body":"e30=","isBase64Encoded":"yes"}`, 400},
		"no requestContext":      {`{"version":"2.0","rawPath":"/mcp","headers":{` + auth + `},"body":"{}"}`, 400},
		"header CRLF":            {`{"version":"2.0","rawPath":"/mcp","headers":{` + auth + `,"x-a":"1\r\nX-B: 2"},"requestContext":{"http":{"method":"POST"}}}`, 400},
		"bad base64":             {`{"version":"2.0","rawPath":"/mcp","headers":{` + auth + `},"requestContext":{"http":{"method":"POST"}},"body":"!!","isBase64Encoded":true}`, 400},
		"bad JSON-RPC":           {`{"version":"2.0","rawPath":"/mcp","headers":{` + auth + `,"content-type":"application/json","accept":"application/json, text/event-stream"},"requestContext":{"http":{"method":"POST"}},"body":"{\"jsonrpc\":"}`, 400},
		"4 MB body": {fmt.Sprintf(`{"version":"2.0","rawPath":"/mcp","headers":{%s,"content-type":"application/json","accept":"application/json, text/event-stream"},"requestContext":{"http":{"method":"POST"}},"body":%q,"isBase64Encoded":true}`,
			auth, base64.StdEncoding.EncodeToString([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("x", 4<<20)+`"}}`))), 200},
	} {
		t.Run(name, func(t *testing.T) {
			var res struct {
				StatusCode int    `json:"statusCode"`
				Body       string `json:"body"`
			}
			invokeJSON(t, r, tc.ev, &res)
			if res.StatusCode != tc.want {
				t.Errorf("status %d (%.200s), want %d", res.StatusCode, res.Body, tc.want)
			}
		})
	}
	var res struct{ StatusCode int }
	invokeJSON(t, r, `{"version":"2.0","rawPath":"/healthz","requestContext":{"http":{"method":"GET"}}}`, &res)
	if res.StatusCode != http.StatusOK {
		t.Errorf("healthz after hostile events: %d", res.StatusCode)
	}
}

// TestBodyLimitLambda: the function's door refuses a body over
// SHEAF_MAX_REQUEST_BYTES with 413, as sheaf serve does, and serves one
// under it.
func TestBodyLimitLambda(t *testing.T) {
	_, r, _ := serve(t, "SHEAF_MAX_REQUEST_BYTES=1048576")
	event := func(size int) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", size) + `"}}`
		return fmt.Sprintf(`{"version":"2.0","rawPath":"/mcp","headers":{"authorization":"Bearer %s","content-type":"application/json","accept":"application/json, text/event-stream"},"requestContext":{"http":{"method":"POST"}},"body":%q,"isBase64Encoded":true}`,
			cloudtest.Token, base64.StdEncoding.EncodeToString([]byte(body)))
	}
	for _, c := range []struct {
		size, want int
	}{{2 << 20, http.StatusRequestEntityTooLarge}, {4 << 20, http.StatusRequestEntityTooLarge}, {512 << 10, http.StatusOK}} {
		var res struct {
			StatusCode int    `json:"statusCode"`
			Body       string `json:"body"`
		}
		invokeJSON(t, r, event(c.size), &res)
		if res.StatusCode != c.want {
			t.Errorf("%d KB body: status %d (%.200s), want %d", c.size>>10, res.StatusCode, res.Body, c.want)
		}
	}
}
