package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/functions/internal/cloudtest"
	"github.com/sheaf-dev/sheaf/functions/internal/rietest"
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth/oauthtest"
	"github.com/sheaf-dev/sheaf/shared/auth/oauthserver/oauthservertest"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

var (
	buildOnce sync.Once
	bootstrap string
	buildErr  error
)

// build compiles this function's bootstrap once per test binary, as the
// deployment does (see build.mk).
func build(t testing.TB) string {
	t.Helper()
	rietest.Require(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sheaf-mcp-fn-")
		if err != nil {
			buildErr = err
			return
		}
		bootstrap = filepath.Join(dir, "bootstrap")
		buildErr = rietest.BuildTo(".", bootstrap)
	})
	if buildErr != nil {
		t.Fatalf("building the bootstrap: %v", buildErr)
	}
	return bootstrap
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bootstrap != "" {
		os.RemoveAll(filepath.Dir(bootstrap))
	}
	os.Exit(code)
}

// serve indexes a fresh sample vault in S3 and runs the function over it
// under the emulator, behind an in-test HTTP API gateway. It returns the
// MCP endpoint URL and the emulator.
func serve(t testing.TB, extraEnv ...string) (string, *rietest.RIE, *cloudtest.Vault) {
	t.Helper()
	bin := build(t)
	v := cloudtest.Sample(t, s3test.Options{})
	v.Reconcile(t)
	r := rietest.Start(t, bin, append(v.Env(), extraEnv...)...)
	base := (&rietest.Gateway{RIE: r}).Start(t)
	return base + "/mcp", r, v
}

// TestConformanceLambda runs the whole MCP conformance suite, unchanged,
// through API Gateway events into the function under the Lambda emulator,
// over S3 (versitygw) and Meilisearch (the fake), after a reconcile.
func TestConformanceLambda(t *testing.T) {
	endpoint, _, _ := serve(t)
	toolstest.Run(t, func(t *testing.T) *mcp.ClientSession { return cloudtest.Connect(t, endpoint, cloudtest.Token) })
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func post(t *testing.T, url, auth, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestTokenLambda checks the bearer token through the Lambda path: 401
// with WWW-Authenticate for a missing or wrong token, 200 with it, and
// /healthz without one.
func TestTokenLambda(t *testing.T) {
	endpoint, _, _ := serve(t)
	for name, auth := range map[string]string{
		"missing": "", "wrong": "Bearer not-the-token", "scheme": "Basic " + cloudtest.Token,
		"prefix": "Bearer " + cloudtest.Token[:10],
	} {
		resp := post(t, endpoint, auth, initialize)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s token: status %d, WWW-Authenticate %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	resp := post(t, endpoint, "Bearer "+cloudtest.Token, initialize)
	var out struct {
		Result struct {
			ServerInfo struct{ Name string } `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.Result.ServerInfo.Name != "sheaf" {
		t.Errorf("with the token: status %d, %+v, %v", resp.StatusCode, out, err)
	}
	hr, err := http.Get(strings.TrimSuffix(endpoint, "/mcp") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	hr.Body.Close()
	if hr.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d", hr.StatusCode)
	}
	// A browser origin that is not allowed is refused (DNS rebinding).
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initialize))
	req.Header.Set("Authorization", "Bearer "+cloudtest.Token)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Content-Type", "application/json")
	or, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	or.Body.Close()
	if or.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: %d, want 403", or.StatusCode)
	}
}

// TestEventShapes invokes the function directly with a Function URL event
// (base64 body) and a REST API (payload 1.0) event.
func TestEventShapes(t *testing.T) {
	_, r, _ := serve(t)
	body := base64.StdEncoding.EncodeToString([]byte(initialize))
	funcURL := fmt.Sprintf(`{"version":"2.0","routeKey":"$default","rawPath":"/mcp","rawQueryString":"",
	  "headers":{"host":"abc.lambda-url.eu-west-1.on.aws","content-type":"application/json",
	             "accept":"application/json, text/event-stream","authorization":"Bearer %s"},
	  "requestContext":{"domainName":"abc.lambda-url.eu-west-1.on.aws","http":{"method":"POST","path":"/mcp","sourceIp":"203.0.113.9"}},
	  "body":%q,"isBase64Encoded":true}`, cloudtest.Token, body)
	var v2 struct {
		StatusCode      int               `json:"statusCode"`
		Headers         map[string]string `json:"headers"`
		Body            string            `json:"body"`
		IsBase64Encoded bool              `json:"isBase64Encoded"`
	}
	invokeJSON(t, r, funcURL, &v2)
	if v2.StatusCode != 200 || v2.IsBase64Encoded || !strings.Contains(v2.Body, `"serverInfo"`) ||
		!strings.HasPrefix(v2.Headers["Content-Type"], "application/json") {
		t.Errorf("Function URL event: %+v", v2)
	}

	rest := fmt.Sprintf(`{"resource":"/mcp","path":"/mcp","httpMethod":"POST",
	  "multiValueHeaders":{"Content-Type":["application/json"],"Accept":["application/json, text/event-stream"],"Authorization":["Bearer %s"]},
	  "requestContext":{"stage":"prod","path":"/prod/mcp","identity":{"sourceIp":"203.0.113.9"}},
	  "body":%q,"isBase64Encoded":false}`, cloudtest.Token, initialize)
	var v1 struct {
		StatusCode        int                 `json:"statusCode"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Body              string              `json:"body"`
	}
	invokeJSON(t, r, rest, &v1)
	if v1.StatusCode != 200 || !strings.Contains(v1.Body, `"serverInfo"`) || len(v1.MultiValueHeaders["Content-Type"]) != 1 {
		t.Errorf("REST API event: %+v", v1)
	}

	noToken := strings.Replace(funcURL, `"authorization":"Bearer `+cloudtest.Token+`"`, `"x-other":"1"`, 1)
	invokeJSON(t, r, noToken, &v2)
	if v2.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(v2.Headers["Www-Authenticate"], "Bearer") {
		t.Errorf("Function URL event without a token: %+v", v2)
	}

	// Events of no HTTP shape are function errors, not crashes.
	if _, err := r.Invoke(t.Context(), []byte(`{"Records":[]}`)); err == nil {
		t.Errorf("an S3 event was served as HTTP")
	}
	invokeJSON(t, r, funcURL, &v2) // still serving
	if v2.StatusCode != 200 {
		t.Errorf("after a bad event: %d", v2.StatusCode)
	}
}

func invokeJSON(t *testing.T, r *rietest.RIE, event string, out any) {
	t.Helper()
	payload, err := r.Invoke(t.Context(), []byte(event))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	if err := json.Unmarshal(payload, out); err != nil {
		t.Fatalf("response %s: %v", payload, err)
	}
}

// TestInitRefusesNoCredentials: a deployment that turns keys off and sets
// neither SHEAF_TOKEN nor OAuth fails its init rather than serve an
// endpoint nobody can use. (Without SHEAF_KEYS=none, the bucket's keys file
// is the credential store and an empty one lets nobody in: see
// TestKeysAndOAuthLambda.)
func TestInitRefusesNoCredentials(t *testing.T) {
	bin := build(t)
	r := rietest.Start(t, bin, "SHEAF_VAULT=s3://b/p?endpoint=http://127.0.0.1:9&path_style=true",
		"SHEAF_SEARCH=http://127.0.0.1:9", "SHEAF_KEYS=none", "AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY=b")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if payload, err := r.Invoke(ctx, []byte(`{"version":"2.0","rawPath":"/healthz","requestContext":{"http":{"method":"GET"}}}`)); err == nil {
		t.Errorf("served without a token: %s", payload)
	}
	// The emulator may answer before the function's log reaches its output.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(r.Output(), "SHEAF_TOKEN") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(r.Output(), "SHEAF_TOKEN") {
		t.Errorf("the init error does not name SHEAF_TOKEN:\n%s", r.Output())
	}
}

// TestInitNoNetwork: starting the function and serving /healthz makes no
// connection to S3 or Meilisearch (both point at listeners that count).
func TestInitNoNetwork(t *testing.T) {
	bin := build(t)
	var conns atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	addr := "http://" + ln.Addr().String()
	r := rietest.Start(t, bin, "SHEAF_VAULT=s3://b/p?endpoint="+addr+"&path_style=true&region=us-east-1",
		"SHEAF_SEARCH="+addr, "SHEAF_TOKEN="+cloudtest.Token, "AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY=b",
		"SHEAF_VECTORS=qdrant://"+ln.Addr().String(), "SHEAF_EMBED_BASE_URL="+addr+"/v1", "SHEAF_EMBED_MODEL=m",
		"SHEAF_LLM_BASE_URL="+addr+"/v1", "SHEAF_LLM_MODEL=m")
	var res struct {
		StatusCode int `json:"statusCode"`
	}
	invokeJSON(t, r, `{"version":"2.0","rawPath":"/healthz","requestContext":{"http":{"method":"GET"}}}`, &res)
	if res.StatusCode != 200 {
		t.Fatalf("/healthz: %d\n%s", res.StatusCode, r.Output())
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("init and /healthz made %d connections", n)
	}
}

// BenchmarkInit measures the function's init: from starting the bootstrap
// process to its first request for work on the Lambda Runtime API (served
// here by a stand-in that never answers), the target being under 50 ms.
// It also reports the bootstrap's size (target under 20 MB).
// SHEAF_BENCH_BOOTSTRAP times another build instead (an older one, for a
// ratio measured in the same run).
func BenchmarkInit(b *testing.B) {
	bin := build(b)
	if other := os.Getenv("SHEAF_BENCH_BOOTSTRAP"); other != "" {
		bin = other
	}
	ready := make(chan struct{}, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/runtime/invocation/next") {
			select {
			case ready <- struct{}{}:
			default:
			}
			<-r.Context().Done()
		}
	}))
	defer api.Close()
	env := []string{"AWS_LAMBDA_RUNTIME_API=" + strings.TrimPrefix(api.URL, "http://"),
		"SHEAF_VAULT=s3://b/p?endpoint=http://127.0.0.1:9&path_style=true&region=us-east-1",
		"SHEAF_SEARCH=http://127.0.0.1:9", "SHEAF_TOKEN=" + cloudtest.Token, "AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY=b",
		"HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH")}
	inits := make([]time.Duration, 0, b.N)
	cpus := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin)
		cmd.Env = env
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		select {
		case <-ready:
			inits = append(inits, time.Since(start))
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			b.Fatal("the function never asked for work")
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	p50, p99 := percentiles(inits)
	b.ReportMetric(ms(p50), "init-p50-ms")
	b.ReportMetric(ms(p99), "init-p99-ms")
	// The CPU time of init (the process waits idle for work until killed):
	// the number that holds on a loaded machine.
	p50, _ = percentiles(cpus)
	b.ReportMetric(ms(p50), "init-cpu-p50-ms")
	if fi, err := os.Stat(bin); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "bootstrap-MB")
	}
}

// BenchmarkWarmCall measures tools/call latency through the whole path
// (MCP client -> gateway -> emulator -> function -> S3/Meilisearch) on a
// warm function, for search and read_note; run with -benchtime=200x.
func BenchmarkWarmCall(b *testing.B) {
	endpoint, _, _ := serve(b)
	s := cloudtest.Connect(b, endpoint, cloudtest.Token)
	calls := map[string]map[string]any{
		"search":    {"query": "project plan", "limit": 10},
		"read_note": {"path": "index.md"},
	}
	names := []string{"read_note", "search"}
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			warm := func() {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: calls[name]})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %+v", name, err, res)
				}
			}
			warm()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				warm()
				lat = append(lat, time.Since(start))
			}
			p50, p99 := percentiles(lat)
			b.ReportMetric(ms(p50), "p50-ms")
			b.ReportMetric(ms(p99), "p99-ms")
		})
	}
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestKeysAndOAuthLambda: the function under the Lambda emulator, behind
// the in-test gateway, accepts API keys from the bucket's .sheaf/keys.json
// and OAuth access tokens for its own URL; the official TypeScript SDK
// discovers the metadata from the 401 and calls tools with its token.
func TestKeysAndOAuthLambda(t *testing.T) {
	bin := build(t)
	as := oauthtest.New(t)
	v := cloudtest.Sample(t, s3test.Options{})
	v.Reconcile(t)
	kf := &auth.KeyFile{}
	reader, _, err := kf.Add(auth.NewKeyOptions{Name: "reader", Scopes: []auth.Scope{auth.ScopeRead}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	v.Put(t, auth.KeysPath, kf.Marshal())

	// The gateway listens first: the function must know its URL (the
	// audience) when it starts.
	gw := &rietest.Gateway{}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	endpoint := srv.URL + "/mcp"
	env := slices.DeleteFunc(v.Env(), func(kv string) bool { return strings.HasPrefix(kv, "SHEAF_TOKEN=") })
	gw.RIE = rietest.Start(t, bin, append(env, "SHEAF_OAUTH_ISSUER="+as.URL, "SHEAF_OAUTH_AUDIENCE="+endpoint)...)

	resp := post(t, endpoint, "", initialize)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	md, err := http.Get(srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Resource string }
	_ = json.NewDecoder(md.Body).Decode(&meta)
	md.Body.Close()
	if md.StatusCode != http.StatusOK || meta.Resource != endpoint {
		t.Errorf("metadata: %d %+v", md.StatusCode, meta)
	}
	if resp := post(t, endpoint, "Bearer "+cloudtest.Token, initialize); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("SHEAF_TOKEN unset, yet the old token got %d", resp.StatusCode)
	}
	c := toolstest.NewClient(t, cloudtest.Connect(t, endpoint, reader))
	var info struct{ NoteCount int }
	c.MustOK("get_vault_info", map[string]any{}, &info)
	if info.NoteCount == 0 {
		t.Error("no notes with a key from the bucket")
	}
	as.RunTypeScriptClient(t, endpoint)
}

// The scheduled {"warm": true} loads the catalog and builds its indexes on
// the instance it reaches, and says how many notes; the instance then
// serves MCP as before, from the same catalog.
func TestWarmUpLambda(t *testing.T) {
	endpoint, r, _ := serve(t)
	ctx := context.Background()
	var w warmed
	for range 2 { // cold, then already warm
		out, err := r.Invoke(ctx, []byte(`{"warm": true}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &w); err != nil || !w.Warm || w.Notes < 40 {
			t.Fatalf("warm-up answered %s (%v)", out, err)
		}
	}
	s := cloudtest.Connect(t, endpoint, cloudtest.Token)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_vault_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_vault_info after a warm-up: %v %+v", err, res)
	}
	var info struct {
		NoteCount int `json:"noteCount"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &info); err != nil || info.NoteCount != w.Notes {
		t.Errorf("get_vault_info: %d notes, the warm-up %d (%v)", info.NoteCount, w.Notes, err)
	}
}

// TestOAuthBuiltinLambda: with SHEAF_OAUTH_BUILTIN the function is its own
// authorization server, its state in the bucket, one invocation at a time
// under the Lambda emulator behind the in-test API gateway: the official
// TypeScript SDK registers (and uses a client ID metadata document), the
// consent form is submitted with an owner key from the bucket's keys file,
// and the session sees the approved folder only; refresh, revocation and
// the 401 after it.
func TestOAuthBuiltinLambda(t *testing.T) {
	bin := build(t)
	v := cloudtest.Sample(t, s3test.Options{})
	v.Reconcile(t)
	keys, owner := oauthservertest.OwnerKeyFile(t)
	v.Put(t, auth.KeysPath, keys)
	doc, ca := oauthservertest.MetadataDocument(t)
	gw := &rietest.Gateway{}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	endpoint := srv.URL + "/mcp"
	// The template gives the function its own URL in an SSM parameter
	// (CloudFormation writes the API's URL there): read at the first
	// request, here from a stand-in of the one SSM call.
	ssm := httptest.NewServer(fakeSSM{"/sheaf/test/mcp-url": endpoint})
	t.Cleanup(ssm.Close)
	env := slices.DeleteFunc(v.Env(), func(kv string) bool { return strings.HasPrefix(kv, "SHEAF_TOKEN=") })
	gw.RIE = rietest.Start(t, bin, append(env, "SHEAF_OAUTH_BUILTIN=true", "SHEAF_OAUTH_AUDIENCE=ssm:/sheaf/test/mcp-url?endpoint="+ssm.URL,
		"SHEAF_OAUTH_PRIVATE_CLIENT_HOSTS=127.0.0.1", "SSL_CERT_FILE="+ca)...)
	resp := post(t, endpoint, "", initialize)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	oauthservertest.RunTypeScriptClient(t, oauthservertest.Run{MCPURL: endpoint, OwnerKey: owner, Folder: "Projects", CIMDURL: doc})
	// The state is in the bucket, under .sheaf/oauth/.
	if !v.S3.Has(t, v.Bucket, v.Key(".sheaf/oauth/signing.json")) {
		t.Error("no signing keys in the bucket")
	}
}

// fakeSSM answers GetParameter in the AWS JSON 1.1 protocol the SDK speaks
// (no SSM server runs here: this checks what the function sends and reads).
type fakeSSM map[string]string

func (f fakeSSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ Name string }
	_ = json.NewDecoder(r.Body).Decode(&in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	v, ok := f[in.Name]
	if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"ParameterNotFound","message":"not found"}`)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{"Name": in.Name, "Type": "String", "Value": v, "Version": 1}})
}
