package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sheafRun runs the sheaf binary with args and env (added to a minimal
// environment: PATH and the test's XDG folders), stdin from in, and
// returns its stdout, stderr and error.
func sheafRun(t *testing.T, env []string, in string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"XDG_CACHE_HOME=" + os.Getenv("XDG_CACHE_HOME"), "XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}, env...)
	cmd.Stdin = strings.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// smallVault is a vault folder with one note.
func smallVault(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Compost.md"), []byte("# Compost\n\nKeep the heap warm.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantFail checks that a command failed with a message containing every
// one of hints (what to do), and did not ask for a bug report.
func wantFail(t *testing.T, name string, stderr string, err error, hints ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want a failure", name)
		return
	}
	for _, h := range hints {
		if !strings.Contains(stderr, h) {
			t.Errorf("%s: the message does not say %q:\n%s", name, h, stderr)
		}
	}
	if strings.Contains(stderr, "report") || strings.Contains(stderr, "panic") {
		t.Errorf("%s: answered as a bug:\n%s", name, stderr)
	}
}

// TestSetupFailures: each common set-up mistake is answered with what to do.
func TestSetupFailures(t *testing.T) {
	vault := smallVault(t)

	t.Run("no vault", func(t *testing.T) {
		_, stderr, err := sheafRun(t, nil, "", "search", "heap")
		wantFail(t, "no vault", stderr, err, "--vault", "SHEAF_VAULT")
	})
	t.Run("missing vault folder", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "Notes")
		_, stderr, err := sheafRun(t, nil, "", "search", "--vault", missing, "heap")
		wantFail(t, "missing folder", stderr, err, "does not exist", "mkdir")
	})
	t.Run("no home folder", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, nil, 0o644)
		for name, env := range map[string][]string{
			"HOME unset":    {"HOME=", "XDG_CACHE_HOME=", "XDG_CONFIG_HOME="},
			"HOME unusable": {"HOME=" + filepath.Join(file, "home"), "XDG_CACHE_HOME=", "XDG_CONFIG_HOME="},
		} {
			_, stderr, err := sheafRun(t, env, "", "search", "--vault", vault, "heap")
			wantFail(t, name, stderr, err, "--state", "SHEAF_STATE")
			out, stderr, err := sheafRun(t, env, "", "search", "--vault", vault, "--state", t.TempDir(), "heap")
			if err != nil || !strings.Contains(out, "Compost.md") {
				t.Errorf("%s with --state: %v\n%s%s", name, err, out, stderr)
			}
		}
	})
	t.Run("invalid log level", func(t *testing.T) {
		_, stderr, err := sheafRun(t, nil, "", "serve", "--vault", vault, "--log-level", "verbose")
		wantFail(t, "log level", stderr, err, "debug, info, warn or error")
		_, stderr, err = sheafRun(t, nil, "", "index", "--vault", vault, "--log-format", "xml")
		wantFail(t, "log format", stderr, err, "text or json")
	})
	t.Run("port in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		_, stderr, err := sheafRun(t, nil, "", "serve", "--vault", vault, "--http", ln.Addr().String())
		wantFail(t, "port in use", stderr, err, "is in use", "another port")
	})
	t.Run("bad --http", func(t *testing.T) {
		_, stderr, err := sheafRun(t, nil, "", "serve", "--vault", vault, "--http", "localhost")
		wantFail(t, "no port", stderr, err, "host:port")
		_, stderr, err = sheafRun(t, nil, "", "serve", "--vault", vault, "--http", "99999")
		wantFail(t, "port out of range", stderr, err, "0-65535")
	})
	t.Run("missing AWS credentials", func(t *testing.T) {
		// No credentials anywhere, and no instance metadata lookup (it
		// would leave this machine): the SDK gives up at once.
		env := []string{"AWS_EC2_METADATA_DISABLED=true", "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(t.TempDir(), "none"),
			"AWS_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none"), "AWS_REGION=us-east-1"}
		_, stderr, err := sheafRun(t, env, "- x\n", "write", "--vault", "s3://notes-bucket/v?endpoint=http://127.0.0.1:1&path_style=true",
			"--search", "http://127.0.0.1:1", "Inbox/a.md")
		wantFail(t, "no credentials", stderr, err, "forbidden", "AWS_ACCESS_KEY_ID")
	})
	t.Run("read-only vault", func(t *testing.T) {
		ro := readOnlyVault(t)
		out, stderr, err := sheafRun(t, nil, "", "search", "--vault", ro.dir, "heap")
		if ro.user != nil {
			out, stderr, err = ro.run(t, "search", "--vault", ro.dir, "heap")
		}
		if err != nil || !strings.Contains(out, "Compost.md") {
			t.Errorf("search on a read-only vault: %v\n%s%s", err, out, stderr)
		}
		_, stderr, err = ro.run(t, "write", "--vault", ro.dir, "Inbox/a.md")
		wantFail(t, "write", stderr, err, "forbidden", "read-only")
	})
}

// roVault is a vault this test's sheaf processes may read but not write:
// a folder without write permission, and when the test runs as root (who
// may write anywhere) processes run as the nobody user.
type roVault struct {
	dir  string
	user *syscall.Credential
	bin  string
	env  []string
}

func readOnlyVault(t *testing.T) *roVault {
	t.Helper()
	base, err := os.MkdirTemp("", "sheaf-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "notes"), 0o755); os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	ro := &roVault{dir: filepath.Join(base, "notes"), bin: bin}
	os.MkdirAll(ro.dir, 0o755)
	if err := os.WriteFile(filepath.Join(ro.dir, "Compost.md"), []byte("# Compost\n\nKeep the heap warm.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro.dir, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// A copy of the binary and folders the nobody user can use.
		ro.user = &syscall.Credential{Uid: 65534, Gid: 65534}
		ro.bin = filepath.Join(base, "sheaf")
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ro.bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		home := filepath.Join(base, "home")
		os.MkdirAll(home, 0o777)
		os.Chmod(home, 0o777)
		ro.env = []string{"HOME=" + home, "XDG_CACHE_HOME=", "XDG_CONFIG_HOME="}
	}
	return ro
}

// run runs sheaf as the vault's reader.
func (ro *roVault) run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(ro.bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"XDG_CACHE_HOME=" + os.Getenv("XDG_CACHE_HOME"), "XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}, ro.env...)
	if ro.user != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: ro.user}
	}
	cmd.Stdin = strings.NewReader("- x\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestBarePortAndJSONLogs: --http 8787 means 127.0.0.1:8787, and with
// --log-format json every log line is a JSON object.
func TestBarePortAndJSONLogs(t *testing.T) {
	vault := smallVault(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "serve", "--vault", vault, "--http", strconv.Itoa(port), "--log-format", "json")
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(errb.String(), "serving MCP"); {
		if time.Now().After(deadline) {
			t.Fatalf("no start-up line:\n%s", errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, line := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not a JSON log line: %q", line)
		} else if rec["msg"] == "serving MCP over streamable HTTP" && !strings.HasPrefix(rec["url"].(string), "http://127.0.0.1:"+strconv.Itoa(port)+"/") {
			t.Errorf("bare port served on %v, want 127.0.0.1:%d", rec["url"], port)
		}
	}
}

// TestCommandHelp: each command's help lists its own flags only.
func TestCommandHelp(t *testing.T) {
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"serve", "--help"}, []string{"--http", "--allowed-origins", "--embed-base-url", "--vault"}, nil},
		{[]string{"search", "--help"}, []string{"--vault", "--state", "--limit"}, []string{"--http", "--oauth-issuer", "--llm-model", "--token", "--ledger"}},
		{[]string{"write", "--help"}, []string{"--vault", "--mode", "--ledger"}, []string{"--http", "--oauth-issuer", "--embed-model"}},
		{[]string{"index", "--help"}, []string{"--vault", "--quiet"}, []string{"--http", "--search-key", "--profile"}},
	} {
		out, stderr, err := sheafRun(t, nil, "", c.args...)
		if err != nil {
			t.Fatalf("%v: %v %s", c.args, err, stderr)
		}
		for _, f := range c.want {
			if !strings.Contains(out, f) {
				t.Errorf("sheaf %v does not list %s", c.args, f)
			}
		}
		for _, f := range c.not {
			if strings.Contains(out, f+" ") {
				t.Errorf("sheaf %v lists %s, a flag of another command", c.args, f)
			}
		}
		if n := strings.Count(out, "\n      --"); len(c.not) > 0 && n > 20 {
			t.Errorf("sheaf %v lists %d flags", c.args, n)
		}
	}
	if _, stderr, err := sheafRun(t, nil, "", "search", "--vault", t.TempDir(), "--http", "127.0.0.1:1", "x"); err == nil || !strings.Contains(stderr, "unknown flag: --http") {
		t.Errorf("search --http: %v %s", err, stderr)
	}
}

// TestVaultNamedAlike: --vault works for every command, SHEAF_VAULT too, the
// old first-argument form still works with a deprecation note, and an
// append to a note that does not exist starts it.
func TestVaultNamedAlike(t *testing.T) {
	vault := smallVault(t)
	out, stderr, err := sheafRun(t, nil, "- a thought\n", "write", "--vault", vault, "Inbox/Ideas.md", "--mode", "append")
	if err != nil || !strings.Contains(out, "created Inbox/Ideas.md") {
		t.Fatalf("append to a missing note: %v\n%s%s", err, out, stderr)
	}
	out, stderr, err = sheafRun(t, []string{"SHEAF_VAULT=" + vault}, "- another\n", "write", "Inbox/Ideas.md", "--mode", "append")
	if err != nil || !strings.Contains(out, "appended to Inbox/Ideas.md") {
		t.Fatalf("SHEAF_VAULT append: %v\n%s%s", err, out, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(vault, "Inbox", "Ideas.md")); string(data) != "- a thought\n- another\n" {
		t.Errorf("Inbox/Ideas.md = %q", data)
	}
	out, stderr, err = sheafRun(t, nil, "", "mv", vault, "Inbox/Ideas.md", "Inbox/Thoughts.md")
	if err != nil || !strings.Contains(out, "moved") || !strings.Contains(stderr, "deprecated: use --vault") {
		t.Errorf("mv VAULT PATH NEW: %v\n%s%s", err, out, stderr)
	}
	for _, args := range [][]string{{"search", "--vault", vault, "thoughts"}, {"health", "--vault", vault}, {"state", "where", "--vault", vault}} {
		if out, stderr, err := sheafRun(t, nil, "", args...); err != nil || stderr != "" {
			t.Errorf("sheaf %v: %v\n%s%s", args, err, out, stderr)
		}
	}
	if entries, _ := os.ReadDir(vault); len(entries) != 3 { // Compost.md, Inbox, log.md
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the vault holds %v, want notes and log.md only", names)
	}
}
