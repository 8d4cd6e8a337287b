package lambdahttp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// echo answers with what it received, as JSON, and sets some headers.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Add("X-Multi", "a")
	w.Header().Add("X-Multi", "b")
	w.Header().Add("Set-Cookie", "s=1")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"method": r.Method, "path": r.URL.Path, "query": r.URL.Query(), "host": r.Host,
		"headers": r.Header, "body": string(body), "remote": r.RemoteAddr,
	})
})

type echoed struct {
	Method  string              `json:"method"`
	Path    string              `json:"path"`
	Query   map[string][]string `json:"query"`
	Host    string              `json:"host"`
	Headers map[string][]string `json:"headers"`
	Body    string              `json:"body"`
	Remote  string              `json:"remote"`
}

func invoke(t *testing.T, h http.Handler, ev string) any {
	t.Helper()
	res, err := Handler{H: h}.Invoke(t.Context(), json.RawMessage(ev))
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	return res
}

func decodeEcho(t *testing.T, body string, b64 bool) echoed {
	t.Helper()
	if b64 {
		raw, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			t.Fatal(err)
		}
		body = string(raw)
	}
	var e echoed
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("response body %q: %v", body, err)
	}
	return e
}

const httpAPIEvent = `{
  "version": "2.0", "routeKey": "POST /mcp", "rawPath": "/mcp", "rawQueryString": "a=1&a=2&b=x%20y",
  "cookies": ["c1=v1", "c2=v2"],
  "headers": {"content-type": "application/json", "host": "abc.execute-api.eu-west-1.amazonaws.com",
              "authorization": "Bearer tok", "x-forwarded-for": "1.2.3.4, 5.6.7.8"},
  "requestContext": {"stage": "$default", "domainName": "abc.execute-api.eu-west-1.amazonaws.com",
                     "requestId": "r1", "http": {"method": "POST", "path": "/mcp", "sourceIp": "1.2.3.4"}},
  "body": "eyJqc29ucnBjIjoiMi4wIn0=", "isBase64Encoded": true
}`

func TestHTTPAPIv2(t *testing.T) {
	res, ok := invoke(t, echo, httpAPIEvent).(ResponseV2)
	if !ok {
		t.Fatalf("want ResponseV2")
	}
	if res.StatusCode != http.StatusCreated {
		t.Errorf("status %d", res.StatusCode)
	}
	if res.Headers["X-Multi"] != "a,b" {
		t.Errorf("multi-value header %q, want a,b", res.Headers["X-Multi"])
	}
	if _, ok := res.Headers["Set-Cookie"]; ok || len(res.Cookies) != 1 || res.Cookies[0] != "s=1" {
		t.Errorf("cookies %v, headers %v", res.Cookies, res.Headers)
	}
	if res.IsBase64Encoded {
		t.Errorf("a JSON body must travel as text")
	}
	e := decodeEcho(t, res.Body, false)
	if e.Method != "POST" || e.Path != "/mcp" || e.Body != `{"jsonrpc":"2.0"}` {
		t.Errorf("request %+v", e)
	}
	if got := e.Query["a"]; len(got) != 2 || got[0] != "1" || got[1] != "2" || e.Query["b"][0] != "x y" {
		t.Errorf("query %v", e.Query)
	}
	if e.Host != "abc.execute-api.eu-west-1.amazonaws.com" || e.Remote != "1.2.3.4:0" {
		t.Errorf("host %q remote %q", e.Host, e.Remote)
	}
	if e.Headers["Authorization"][0] != "Bearer tok" || e.Headers["Cookie"][0] != "c1=v1; c2=v2" {
		t.Errorf("headers %v", e.Headers)
	}
}

func TestNamedStage(t *testing.T) {
	ev := strings.Replace(httpAPIEvent, `"rawPath": "/mcp"`, `"rawPath": "/prod/mcp"`, 1)
	ev = strings.Replace(ev, `"stage": "$default"`, `"stage": "prod"`, 1)
	res := invoke(t, echo, ev).(ResponseV2)
	if e := decodeEcho(t, res.Body, res.IsBase64Encoded); e.Path != "/mcp" {
		t.Errorf("path %q, want the stage stripped", e.Path)
	}
}

func TestFunctionURL(t *testing.T) {
	ev := `{"version":"2.0","rawPath":"/mcp","rawQueryString":"","headers":{"host":"xyz.lambda-url.us-east-1.on.aws"},
	  "requestContext":{"domainName":"xyz.lambda-url.us-east-1.on.aws","http":{"method":"GET","path":"/mcp","sourceIp":"::1"}},
	  "isBase64Encoded":false}`
	res := invoke(t, echo, ev).(ResponseV2)
	e := decodeEcho(t, res.Body, res.IsBase64Encoded)
	if e.Method != "GET" || e.Host != "xyz.lambda-url.us-east-1.on.aws" || e.Remote != "[::1]:0" {
		t.Errorf("request %+v", e)
	}
}

func TestRESTv1(t *testing.T) {
	ev := `{"resource":"/mcp","path":"/mcp","httpMethod":"POST",
	  "headers":{"Content-Type":"application/json","X-Dup":"last"},
	  "multiValueHeaders":{"X-Dup":["one","two"]},
	  "queryStringParameters":{"q":"z"},"multiValueQueryStringParameters":{"q":["y","z"]},
	  "requestContext":{"stage":"prod","path":"/prod/mcp","domainName":"h.example","identity":{"sourceIp":"9.9.9.9"}},
	  "body":"plain body","isBase64Encoded":false}`
	res, ok := invoke(t, echo, ev).(ResponseV1)
	if !ok {
		t.Fatal("want ResponseV1")
	}
	if got := res.MultiValueHeaders["X-Multi"]; len(got) != 2 {
		t.Errorf("multi-value response header %v", got)
	}
	e := decodeEcho(t, res.Body, res.IsBase64Encoded)
	if e.Path != "/mcp" || e.Body != "plain body" || e.Remote != "9.9.9.9:0" || e.Host != "h.example" {
		t.Errorf("request %+v", e)
	}
	if got := e.Headers["X-Dup"]; len(got) != 2 || got[0] != "one" {
		t.Errorf("multi-value request header %v", got)
	}
	if got := e.Query["q"]; len(got) != 2 || got[0] != "y" {
		t.Errorf("query %v", got)
	}
}

func TestBinaryResponse(t *testing.T) {
	blob := []byte{0xff, 0x00, 0xfe, 'P', 'N', 'G'}
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(blob)
	})
	res := invoke(t, h, httpAPIEvent).(ResponseV2)
	if !res.IsBase64Encoded || res.Body != base64.StdEncoding.EncodeToString(blob) || res.StatusCode != 200 {
		t.Errorf("binary response %+v", res)
	}
	// Text that is not valid UTF-8 must be base64 too.
	h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("caf\xe9"))
	})
	if res := invoke(t, h, httpAPIEvent).(ResponseV2); !res.IsBase64Encoded {
		t.Errorf("invalid UTF-8 sent as text")
	}
}

func TestTooLarge(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range 7 {
			_, _ = w.Write(chunk)
		}
	})
	res := invoke(t, h, httpAPIEvent).(ResponseV2)
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(res.Body, "6 MB") {
		t.Errorf("oversized response: status %d body %.80q", res.StatusCode, res.Body)
	}
}

func TestBadRequests(t *testing.T) {
	for name, ev := range map[string]string{
		"base64":   `{"version":"2.0","rawPath":"/mcp","requestContext":{"http":{"method":"POST"}},"body":"%%%","isBase64Encoded":true}`,
		"method":   `{"version":"2.0","rawPath":"/mcp","requestContext":{"http":{"method":"PO ST"}}}`,
		"path":     `{"version":"2.0","rawPath":"mcp","requestContext":{"http":{"method":"POST"}}}`,
		"v1method": `{"httpMethod":"G\nET","path":"/"}`,
	} {
		res := invoke(t, echo, ev)
		var code int
		switch r := res.(type) {
		case ResponseV2:
			code = r.StatusCode
		case ResponseV1:
			code = r.StatusCode
		}
		if code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, code)
		}
	}
	for _, ev := range []string{`{"Records":[]}`, `[]`, `"x"`, `{}`} {
		if _, err := (Handler{H: echo}).Invoke(t.Context(), json.RawMessage(ev)); !errors.Is(err, ErrNotHTTP) {
			t.Errorf("%s: err %v, want ErrNotHTTP", ev, err)
		}
	}
}

func FuzzInvoke(f *testing.F) {
	f.Add([]byte(httpAPIEvent))
	f.Add([]byte(`{"httpMethod":"GET","path":"/x","multiValueQueryStringParameters":{"a":["1"]}}`))
	f.Add([]byte(`{"version":"2.0","rawPath":"/mcp","isBase64Encoded":"x","headers":{"a":"b\r\nc"},"requestContext":{"http":{"method":"GET"}}}`))
	f.Add([]byte(`{"version":"2.0","rawPath":"/%zz","rawQueryString":"%%","requestContext":{"http":{"method":"GET"}}}`))
	f.Fuzz(func(t *testing.T, ev []byte) {
		res, err := Handler{H: echo}.Invoke(t.Context(), ev)
		if err != nil {
			if res != nil {
				t.Fatalf("a response with an error")
			}
			return
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("response does not marshal: %v", err)
		}
	})
}

// TestBodyTooLarge: a body over MaxBodyBytes is answered 413 before the
// handler runs (or the body is decoded); one at the limit reaches it.
func TestBodyTooLarge(t *testing.T) {
	reached := 0
	h := Handler{MaxBodyBytes: 1000, H: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached++ })}
	event := func(body string, b64 bool) json.RawMessage {
		ev, _ := json.Marshal(map[string]any{
			"version": "2.0", "rawPath": "/mcp", "body": body, "isBase64Encoded": b64,
			"requestContext": map[string]any{"http": map[string]any{"method": "POST"}},
		})
		return ev
	}
	for _, c := range []struct {
		body string
		b64  bool
		want int
	}{
		{strings.Repeat("x", 1001), false, http.StatusRequestEntityTooLarge},
		{base64.StdEncoding.EncodeToString(make([]byte, 1003)), true, http.StatusRequestEntityTooLarge},
		{strings.Repeat("x", 1000), false, http.StatusOK},
		{base64.StdEncoding.EncodeToString(make([]byte, 999)), true, http.StatusOK},
	} {
		res, err := h.Invoke(t.Context(), event(c.body, c.b64))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.(ResponseV2).StatusCode; got != c.want {
			t.Errorf("body of %d bytes (base64 %v): %d, want %d", len(c.body), c.b64, got, c.want)
		}
	}
	if reached != 2 {
		t.Errorf("the handler ran %d times, want 2 (only the bodies within the limit)", reached)
	}
}
