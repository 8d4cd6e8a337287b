package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/config/local"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// bin is the sheaf binary built once for every test in this package.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sheaf-bin-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "sheaf")
	out, err := exec.Command("go", "build", "-tags", "grpcnotrace", "-o", bin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building sheaf: %v\n%s", err, out)
		os.Exit(1)
	}
	// The servers the tests start keep their state and keys in the user's
	// cache and config folders: here, folders of this run. Go's own build
	// cache stays where it was.
	if gocache, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		os.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	}
	for _, v := range []string{"XDG_CACHE_HOME", "XDG_CONFIG_HOME"} {
		os.Setenv(v, filepath.Join(dir, v))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// stateOf is where a server started by the tests keeps vault's state.
func stateOf(t testing.TB, vault string) string {
	t.Helper()
	dir, err := local.DefaultState(vault)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// sampleVault copies infra/sample-vault to a temporary folder (tests may
// write to it) and adds the
// oversized attachment the suite expects.
func sampleVault(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "sample-vault")
	if err := os.CopyFS(dst, os.DirFS("../../infra/sample-vault")); err != nil {
		t.Fatalf("copying the sample vault: %v", err)
	}
	huge := filepath.Join(dst, "assets", "huge.bin")
	if err := os.MkdirAll(filepath.Dir(huge), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(huge, make([]byte, toolstest.HugeAttachmentBytes), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func connect(t testing.TB, transport mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sheaf-conformance", Version: "1"}, nil)
	s, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// stdioSession starts `sheaf serve` over stdio on vault.
func stdioSession(t testing.TB, vault string, extra ...string) *mcp.ClientSession {
	args := append([]string{"serve", "--vault", vault, "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	return connect(t, &mcp.CommandTransport{Command: cmd})
}

// meteredSession starts `sheaf serve` over stdio on vault and measures the
// frames the client receives.
func meteredSession(t testing.TB, vault string, frames *toolstest.Frames, extra ...string) *mcp.ClientSession {
	t.Helper()
	args := append([]string{"serve", "--vault", vault, "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, cmd, func() { stdin.Close() }, 10*time.Second)
	return connect(t, &mcp.IOTransport{Reader: frames.Reader(stdout), Writer: stdin})
}

// runUntilCleanup starts cmd and ends it at cleanup: stop asks it to
// (nil: an interrupt), and after grace it is killed.
func runUntilCleanup(t testing.TB, cmd *exec.Cmd, stop func(), grace time.Duration) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if stop != nil {
			stop()
		} else {
			_ = cmd.Process.Signal(os.Interrupt)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
			_ = cmd.Process.Kill()
			<-done
		}
	})
}

// waitOutput waits up to 30 s for out to hold s, and fails saying what
// did not happen otherwise.
func waitOutput(t testing.TB, out *testbin.Output, s, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), s); {
		if time.Now().After(deadline) {
			t.Fatalf("%s:\n%s", what, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// meteredHTTPSession connects to endpoint, measuring response bodies.
func meteredHTTPSession(t testing.TB, endpoint string, frames *toolstest.Frames) *mcp.ClientSession {
	return connect(t, &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1, HTTPClient: frames.Client()})
}

// httpServer starts `sheaf serve --http` on a free loopback port and
// returns the endpoint URL once /healthz answers.
func httpServer(t testing.TB, vault string, extra ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return httpServerAt(t, vault, addr, extra...)
}

// httpServerAt is httpServer on a given address.
func httpServerAt(t testing.TB, vault, addr string, extra ...string) string {
	t.Helper()
	endpoint, _ := serveHTTP(t, addr, append([]string{"--vault", vault}, extra...)...)
	return endpoint
}

// serveHTTP starts `sheaf serve --http addr` with args and returns its
// endpoint and pid once /healthz answers 200.
func serveHTTP(t testing.TB, addr string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--http", addr, "--log-level", "warn"}, args...)...)
	cmd.Stderr = os.Stderr
	runUntilCleanup(t, cmd, nil, 5*time.Second)
	return waitHealthy(t, addr), cmd.Process.Pid
}

// waitHealthy waits up to 20 s for the server at addr to answer /healthz
// with 200 and returns its MCP endpoint.
func waitHealthy(t testing.TB, addr string) string {
	t.Helper()
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base + "/mcp"
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("sheaf serve --http did not come up: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func httpSession(t testing.TB, endpoint string) *mcp.ClientSession {
	return connect(t, &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1})
}

func TestConformanceStdio(t *testing.T) {
	vault := sampleVault(t)
	var frames toolstest.Frames
	toolstest.Run(t, func(t *testing.T) *mcp.ClientSession { return meteredSession(t, vault, &frames) })
	checkFrames(t, &frames)
}

func TestConformanceHTTP(t *testing.T) {
	endpoint := httpServer(t, sampleVault(t))
	var frames toolstest.Frames
	toolstest.Run(t, func(t *testing.T) *mcp.ClientSession { return meteredHTTPSession(t, endpoint, &frames) })
	checkFrames(t, &frames)
}

// checkFrames reports the largest frame a suite received and fails when it
// is over the default response budget (plus the JSON-RPC envelope).
func checkFrames(t *testing.T, frames *toolstest.Frames) {
	size, n := frames.Max()
	t.Logf("largest of %d frames: %d bytes", n, size)
	if size > core.DefaultMaxResponseBytes+1024 {
		t.Errorf("a frame of %d bytes is over the response budget of %d", size, core.DefaultMaxResponseBytes)
	}
}
