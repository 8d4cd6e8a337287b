// Package rietest runs a Lambda function's bootstrap under the AWS Lambda
// Runtime Interface Emulator (aws-lambda-rie) on 127.0.0.1 for tests, and
// puts a small HTTP API gateway in front of it: each HTTP request becomes an
// API Gateway HTTP API (payload 2.0) event, one invocation at a time (the
// emulator fails on concurrent ones).
package rietest

import (
	"bytes"
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/testbin"
)

// EnvBinary names the variable that may point at aws-lambda-rie.
const EnvBinary = "SHEAF_RIE"

// Version is the emulator version the project pins (what @latest resolved to).
const Version = "v0.0.0-20261030222936-bef5c4ba774d"

// install is how to install the pinned emulator.
const install = "run go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@" + Version

// Binary locates aws-lambda-rie: $SHEAF_RIE, PATH, $(go env GOPATH)/bin.
func Binary() (string, error) {
	p, err := testbin.Find("aws-lambda-rie", EnvBinary)
	if err != nil {
		return "", testbin.Hint(err, install)
	}
	return p, nil
}

// Require returns the emulator's path, skipping the test when it is missing
// (failing it when $CI is set: CI installs it).
func Require(t testing.TB) string {
	t.Helper()
	return testbin.Require(t, "aws-lambda-rie", EnvBinary, install)
}

// Build compiles the function in pkg (see BuildTo) to a bootstrap in a
// temporary folder of the test and returns its path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bootstrap")
	if err := BuildTo(pkg, out); err != nil {
		t.Fatalf("building %s: %v", pkg, err)
	}
	return out
}

// BuildTo compiles the function in pkg (a package directory or import
// path) to out the way the deployment does: a static linux binary, with
// the lambda.norpc and sheaf_envcreds tags (build.mk), stripped. The error holds the compiler's output.
func BuildTo(pkg, out string) error {
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc,sheaf_envcreds", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, b)
	}
	return nil
}

// RIE is a running emulator with one function.
type RIE struct {
	URL string // the invoke URL

	mu     sync.Mutex // one invocation at a time
	cmd    *exec.Cmd
	out    *testbin.Output
	exited chan struct{}
	once   sync.Once
}

// Start runs bootstrap under the emulator with exactly env (plus PATH and
// HOME) and waits until the emulator accepts connections. The function
// itself starts on the first invocation, as on Lambda. Everything is
// stopped when the test ends.
func Start(t testing.TB, bootstrap string, env ...string) *RIE {
	t.Helper()
	bin := Require(t)
	for attempt := 1; ; attempt++ {
		r, err := start(t, bin, bootstrap, env)
		if err == nil {
			return r
		}
		if attempt == 3 {
			t.Fatalf("aws-lambda-rie did not start: %v", err)
		}
	}
}

func start(t testing.TB, bin, bootstrap string, env []string) (*RIE, error) {
	api, err := freeAddr()
	if err != nil {
		return nil, err
	}
	rie, err := freeAddr()
	if err != nil {
		return nil, err
	}
	r := &RIE{URL: "http://" + rie + "/2015-03-31/functions/function/invocations", out: new(testbin.Output)}
	r.cmd = exec.Command(bin, "--runtime-interface-emulator-address", rie, "--runtime-api-address", api, bootstrap)
	r.cmd.Dir = filepath.Dir(bootstrap)
	r.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LOG_LEVEL=warn",
		"AWS_LAMBDA_FUNCTION_TIMEOUT=60"}, env...)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the emulator and its bootstrap
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	r.exited = exited
	go func() { _ = r.cmd.Wait(); close(exited) }()
	t.Cleanup(r.Stop)
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", rie, time.Second)
		if err == nil {
			c.Close()
			return r, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("exited: %s", r.out.String())
		default:
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("not listening on %s: %s", rie, r.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop ends the emulator and its function (the process group): SIGTERM,
// then SIGKILL. The end of the test calls it too.
func (r *RIE) Stop() { r.once.Do(func() { r.stop(r.exited) }) }

func (r *RIE) stop(exited <-chan struct{}) {
	pgid := r.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // a bootstrap left behind
}

// FunctionError is an invocation whose handler returned an error (or
// crashed): the emulator's errorType and errorMessage.
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

func (e *FunctionError) Error() string { return "function error " + e.Type + ": " + e.Message }

// Invoke sends one event and returns the function's response payload. A
// handler error comes back as a *FunctionError.
func (r *RIE) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(event))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("invoking: %w\n%s", err, r.out.String())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("invoke: HTTP %d: %s\n%s", resp.StatusCode, body, r.out.String())
	}
	var fe FunctionError
	if json.Unmarshal(body, &fe) == nil && fe.Type != "" && fe.Message != "" {
		return body, &fe
	}
	return body, nil
}

// Pid is the emulator's process id; the function it starts at the first
// invocation is its child.
func (r *RIE) Pid() int { return r.cmd.Process.Pid }

// Output returns what the emulator and the function printed (first MiB).
func (r *RIE) Output() string { return r.out.String() }

// Gateway is an in-test stand-in for API Gateway's HTTP API: every request
// becomes a payload 2.0 event (body base64-encoded, as API Gateway does
// for non-text bodies), and the function's response is written back.
type Gateway struct {
	RIE *RIE
	// Stage, when set, is a named stage prefixed to rawPath, as API
	// Gateway does; "" is $default.
	Stage string
}

// Start serves the gateway on 127.0.0.1 until the test ends; it returns
// the base URL.
func (g *Gateway) Start(t testing.TB) string {
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv.URL
}

// ServeHTTP implements http.Handler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev, err := Event(r, g.Stage)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	payload, err := g.RIE.Invoke(r.Context(), ev)
	if err != nil {
		http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
		return
	}
	var res struct {
		StatusCode      int               `json:"statusCode"`
		Headers         map[string]string `json:"headers"`
		Cookies         []string          `json:"cookies"`
		Body            string            `json:"body"`
		IsBase64Encoded bool              `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(payload, &res); err != nil || res.StatusCode == 0 {
		http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
		return
	}
	body := []byte(res.Body)
	if res.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
			http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
			return
		}
	}
	for k, v := range res.Headers {
		w.Header().Set(k, v)
	}
	for _, c := range res.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(body)
}

// Event renders r as an API Gateway HTTP API payload 2.0 event: headers
// lower-cased and comma-joined, cookies split out, the body base64-encoded.
func Event(r *http.Request, stage string) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	headers := map[string]string{"host": r.Host}
	var cookies []string
	for k, vs := range r.Header {
		if strings.EqualFold(k, "Cookie") {
			for _, v := range vs {
				for c := range strings.SplitSeq(v, ";") {
					cookies = append(cookies, strings.TrimSpace(c))
				}
			}
			continue
		}
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	path, st := r.URL.EscapedPath(), "$default"
	if stage != "" {
		path, st = "/"+stage+path, stage
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	ev := map[string]any{
		"version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": r.URL.RawQuery,
		"headers": headers, "body": base64.StdEncoding.EncodeToString(body), "isBase64Encoded": true,
		"requestContext": map[string]any{
			"stage": st, "domainName": r.Host, "requestId": strconv.FormatInt(time.Now().UnixNano(), 36),
			"http": map[string]any{"method": r.Method, "path": path, "protocol": r.Proto, "sourceIp": host},
		},
	}
	if len(cookies) > 0 {
		ev["cookies"] = cookies
	}
	return json.Marshal(ev)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
