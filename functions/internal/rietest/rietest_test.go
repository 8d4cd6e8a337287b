package rietest

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEvent(t *testing.T) {
	r := httptest.NewRequest("POST", "http://gw.example/mcp?a=1&b=%20", strings.NewReader(`{"x":1}`))
	r.Header.Add("X-Multi", "1")
	r.Header.Add("X-Multi", "2")
	r.Header.Set("Cookie", "a=1; b=2")
	r.RemoteAddr = "127.0.0.1:5555"
	raw, err := Event(r, "prod")
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Version, RawPath, RawQueryString, Body string
		IsBase64Encoded                        bool
		Headers                                map[string]string
		Cookies                                []string
		RequestContext                         struct {
			Stage string
			HTTP  struct{ Method, SourceIP string }
		}
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	body, _ := base64.StdEncoding.DecodeString(ev.Body)
	if ev.Version != "2.0" || ev.RawPath != "/prod/mcp" || ev.RawQueryString != "a=1&b=%20" || !ev.IsBase64Encoded || string(body) != `{"x":1}` {
		t.Errorf("event %s", raw)
	}
	if ev.Headers["x-multi"] != "1,2" || ev.Headers["host"] != "gw.example" || len(ev.Cookies) != 2 || ev.Cookies[1] != "b=2" {
		t.Errorf("headers %v cookies %v", ev.Headers, ev.Cookies)
	}
	if _, ok := ev.Headers["cookie"]; ok {
		t.Errorf("cookies must travel in the cookies field")
	}
	if ev.RequestContext.Stage != "prod" || ev.RequestContext.HTTP.Method != "POST" || ev.RequestContext.HTTP.SourceIP != "127.0.0.1" {
		t.Errorf("request context %+v", ev.RequestContext)
	}
}

func TestBinaryFromEnv(t *testing.T) {
	t.Setenv(EnvBinary, t.TempDir()+"/missing")
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), EnvBinary) {
		t.Errorf("Binary() with a missing %s = %v", EnvBinary, err)
	}
}
