package ssmkeys

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// fakeSSM answers the one call we make, GetParameter, in the AWS JSON 1.1
// protocol (no SSM server can run here: this checks what our client sends
// and reads, not AWS itself). A parameter named /denied answers
// AccessDeniedException.
type fakeSSM struct {
	params map[string]string
	calls  atomic.Int64
	last   atomic.Value // the last request body
}

func (f *fakeSSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	f.last.Store(string(body))
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"InvalidAction","message":"unexpected call"}`)
		return
	}
	var in struct {
		Name           string
		WithDecryption bool
	}
	_ = json.Unmarshal(body, &in)
	v, ok := f.params[in.Name]
	if in.Name == "/denied" {
		w.Header().Set("X-Amzn-Errortype", "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazon.coral.service#AccessDeniedException","Message":"not allowed"}`)
		return
	}
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"ParameterNotFound","message":"not found"}`)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{
		"Name": in.Name, "Type": "SecureString", "Value": v, "Version": 1, "ARN": "arn:aws:ssm:eu-west-1:1:parameter" + in.Name,
	}})
}

func TestLoadFromSSM(t *testing.T) {
	kf := &auth.KeyFile{}
	tok, _, err := kf.Add(auth.NewKeyOptions{Name: "lambda", Scopes: []auth.Scope{auth.ScopeRead}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeSSM{params: map[string]string{"/sheaf/prod/keys": string(kf.Marshal())}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()

	u, err := ParseURL("ssm:/sheaf/prod/keys?region=eu-west-1&endpoint=" + srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if fake.calls.Load() != 0 {
		t.Fatal("Open made a call")
	}
	a := &auth.Authenticator{Keys: auth.NewKeyring(src, time.Minute)}
	id, err := a.Authenticate(ctx, tok)
	if err != nil || id.Name != "lambda" {
		t.Fatalf("key from SSM: %+v %v", id, err)
	}
	if body, _ := fake.last.Load().(string); !strings.Contains(body, `"WithDecryption":true`) {
		t.Errorf("GetParameter without decryption: %s", body)
	}
	// Cached: no second call within the interval.
	_, _ = a.Authenticate(ctx, tok)
	if n := fake.calls.Load(); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}

	missing, _ := Open(ctx, URL{Name: "/sheaf/none", Region: "eu-west-1", Endpoint: srv.URL})
	if data, found, err := missing.Load(ctx); err != nil || found || data != nil {
		t.Errorf("missing parameter: %q %v %v", data, found, err)
	}
	denied, _ := Open(ctx, URL{Name: "/denied", Region: "eu-west-1", Endpoint: srv.URL})
	if _, _, err := denied.Load(ctx); err == nil || !strings.Contains(err.Error(), "AccessDeniedException: not allowed") {
		t.Errorf("denied parameter: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	for in, want := range map[string]URL{
		"ssm:/sheaf/prod/keys":                  {Name: "/sheaf/prod/keys"},
		"ssm:sheaf-keys":                        {Name: "sheaf-keys"},
		"ssm:/a/b?region=eu-west-1":             {Name: "/a/b", Region: "eu-west-1"},
		"ssm:/a?endpoint=http://127.0.0.1:4566": {Name: "/a", Endpoint: "http://127.0.0.1:4566"},
	} {
		got, err := ParseURL(in)
		if err != nil || got != want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"s3://b/k", "ssm:", "ssm://host/a", "ssm:/a b", "ssm:/a//b", "ssm:/a?x=1", "ssm:/a?endpoint=ftp://x", "ssm:/a#f", "ssm:/" + strings.Repeat("a", 2100)} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q): no error", bad)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	f.Add("ssm:/sheaf/prod/keys?region=eu-west-1")
	f.Add("ssm:x?endpoint=http://127.0.0.1:1")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURL(s)
		if err == nil && !namePattern.MatchString(u.Name) {
			t.Fatalf("%q gave name %q", s, u.Name)
		}
	})
}
