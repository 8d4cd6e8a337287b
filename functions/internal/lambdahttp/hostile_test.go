package lambdahttp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// status invokes ev and returns the response's status, failing on an
// invocation error (a Lambda function error).
func status(t *testing.T, h http.Handler, ev string) (int, string) {
	t.Helper()
	res, err := Handler{H: h}.Invoke(t.Context(), json.RawMessage(ev))
	if err != nil {
		t.Fatalf("Invoke(%.120s): function error %v", ev, err)
	}
	switch r := res.(type) {
	case ResponseV2:
		return r.StatusCode, r.Body
	case ResponseV1:
		return r.StatusCode, r.Body
	}
	t.Fatalf("response of type %T", res)
	return 0, ""
}

func TestHostileEvents(t *testing.T) {
	big := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 7<<20)))
	for name, tc := range map[string]struct {
		ev   string
		want int
	}{
		"no requestContext v2":  {`{"version":"2.0","rawPath":"/mcp","body":"{}"}`, 400},
		"b64 non-string":        {`{"version":"2.0","rawPath":"/mcp","requestContext":{"http":{"method":"POST"}},"body":"e30=","isBase64Encoded":"true"}`, 400},
		"body number":           {`{"version":"2.0","rawPath":"/mcp","requestContext":{"http":{"method":"POST"}},"body":12}`, 400},
		"headers array":         {`{"version":"2.0","rawPath":"/mcp","requestContext":{"http":{"method":"POST"}},"headers":["a"]}`, 400},
		"header CRLF":           {`{"version":"2.0","rawPath":"/mcp","requestContext":{"http":{"method":"POST"}},"headers":{"x-a":"1\r\nX-Evil: 2"}}`, 400},
		"header name CRLF":      {`{"version":"2.0","rawPath":"/mcp","requestContext":{"http":{"method":"POST"}},"headers":{"x-a\r\nb":"1"}}`, 400},
		"v1 header CRLF":        {`{"httpMethod":"POST","path":"/mcp","multiValueHeaders":{"x-a":["1\nb"]}}`, 400},
		"dotdot":                {`{"version":"2.0","rawPath":"/a/../mcp","requestContext":{"http":{"method":"POST"}}}`, 201},
		"unicode query":         {`{"version":"2.0","rawPath":"/mcp","rawQueryString":"q=caf\u00e9&e=\ud83d\udca1","requestContext":{"http":{"method":"GET"}}}`, 201},
		"bad escape query":      {`{"version":"2.0","rawPath":"/mcp","rawQueryString":"q=%zz","requestContext":{"http":{"method":"GET"}}}`, 201},
		"requestContext string": {`{"version":"2.0","rawPath":"/mcp","requestContext":"x"}`, 400},
		"path with NUL":         {`{"version":"2.0","rawPath":"/mcp\u0000x","requestContext":{"http":{"method":"GET"}}}`, 400},
		"v1 query non-string":   {`{"httpMethod":"GET","path":"/mcp","queryStringParameters":{"a":1}}`, 400},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := status(t, echo, tc.ev)
			if code != tc.want {
				t.Errorf("status %d (%.200s), want %d", code, body, tc.want)
			}
		})
	}
	// A 7 MB body reaches the handler whole (the handler bounds it).
	size := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
	})
	code, body := status(t, size, `{"version":"2.0","rawPath":"/mcp","requestContext":{"http":{"method":"POST"}},"isBase64Encoded":true,"body":"`+big+`"}`)
	if code != 200 || body != strconv.Itoa(7<<20) {
		t.Errorf("7 MB body: %d %q", code, body)
	}
}
