package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const probe = "sheaf-testbin-probe"

// program writes an executable named probe into dir, creating dir.
func program(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, probe)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// isolate clears every place Find looks; withGo keeps the go command on
// PATH so that Find asks go env.
func isolate(t *testing.T, withGo bool) {
	path := t.TempDir()
	if withGo {
		gobin, err := exec.LookPath("go")
		if err != nil {
			t.Skip("go is not on PATH")
		}
		path += string(os.PathListSeparator) + filepath.Dir(gobin)
	}
	t.Setenv("PATH", path)
	t.Setenv("GOBIN", "")
	t.Setenv("GOPATH", t.TempDir())
	t.Setenv("SHEAF_TESTBIN_PROBE", "")
}

func TestFindEnvVar(t *testing.T) {
	isolate(t, false)
	want := program(t, t.TempDir())
	t.Setenv("SHEAF_TESTBIN_PROBE", want)
	if got, err := Find(probe, "SHEAF_TESTBIN_PROBE"); err != nil || got != want {
		t.Errorf("Find = %q, %v; want %q", got, err, want)
	}
	program(t, os.Getenv("PATH"))
	t.Setenv("SHEAF_TESTBIN_PROBE", filepath.Join(t.TempDir(), "missing"))
	if got, err := Find(probe, "SHEAF_TESTBIN_PROBE"); err == nil || !strings.HasPrefix(err.Error(), "SHEAF_TESTBIN_PROBE: ") {
		t.Errorf("Find with the variable naming a missing file = %q, %v; want an error naming it, not a fallback", got, err)
	}
}

func TestFindPath(t *testing.T) {
	isolate(t, false)
	want := program(t, os.Getenv("PATH"))
	program(t, os.Getenv("GOPATH")+"/bin")
	if got, err := Find(probe, "SHEAF_TESTBIN_PROBE"); err != nil || got != want {
		t.Errorf("Find = %q, %v; want %q from PATH first", got, err, want)
	}
}

func TestFindGoBins(t *testing.T) {
	for _, withGo := range []bool{true, false} {
		t.Run(fmt.Sprintf("go on PATH %v", withGo), func(t *testing.T) {
			isolate(t, withGo)
			first, second := t.TempDir(), t.TempDir()
			t.Setenv("GOPATH", first+string(os.PathListSeparator)+second)
			want := program(t, filepath.Join(second, "bin"))
			if got, err := Find(probe, ""); err != nil || got != want {
				t.Errorf("Find = %q, %v; want %q from the second GOPATH entry", got, err, want)
			}
			gobin := t.TempDir()
			t.Setenv("GOBIN", gobin)
			want = program(t, gobin)
			if got, err := Find(probe, ""); err != nil || got != want {
				t.Errorf("Find = %q, %v; want %q from GOBIN first", got, err, want)
			}
		})
	}
}

func TestFindMissing(t *testing.T) {
	isolate(t, true)
	if err := os.Mkdir(filepath.Join(os.Getenv("GOPATH"), "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(os.Getenv("GOPATH"), "bin", probe), 0o755); err != nil {
		t.Fatal(err) // a folder of that name is not the program
	}
	_, err := Find(probe, "SHEAF_TESTBIN_PROBE")
	if err == nil || err.Error() != probe+" not found: set SHEAF_TESTBIN_PROBE, or put it on PATH or in $(go env GOPATH)/bin" {
		t.Errorf("Find = %v", err)
	}
	if _, err := Find(probe, ""); err == nil || strings.Contains(err.Error(), "set ") {
		t.Errorf("Find without a variable = %v", err)
	}
}

// recorder is a testing.TB that records Skip and Fatal instead of ending
// the test.
type recorder struct {
	testing.TB
	skipped, failed []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = append(r.skipped, fmt.Sprint(args...)) }
func (r *recorder) Fatal(args ...any) { r.failed = append(r.failed, fmt.Sprint(args...)) }

func TestRequire(t *testing.T) {
	isolate(t, false)
	const hint = "run go install example.com/probe@v1.0.0"
	want := probe + " not found: set SHEAF_TESTBIN_PROBE, or put it on PATH or in $(go env GOPATH)/bin; " + hint

	t.Setenv("CI", "")
	r := &recorder{}
	if got := Require(r, probe, "SHEAF_TESTBIN_PROBE", hint); got != "" || len(r.skipped) != 1 || r.skipped[0] != want || r.failed != nil {
		t.Errorf("missing, not under CI: %q, skipped %q, failed %q", got, r.skipped, r.failed)
	}

	t.Setenv("CI", "true")
	r = &recorder{}
	if got := Require(r, probe, "SHEAF_TESTBIN_PROBE", hint); got != "" || len(r.failed) != 1 || r.failed[0] != want || r.skipped != nil {
		t.Errorf("missing under CI: %q, skipped %q, failed %q", got, r.skipped, r.failed)
	}

	p := program(t, os.Getenv("PATH"))
	r = &recorder{}
	if got := Require(r, probe, "SHEAF_TESTBIN_PROBE", hint); got != p || r.skipped != nil || r.failed != nil {
		t.Errorf("present: %q, skipped %q, failed %q", got, r.skipped, r.failed)
	}
}

func TestHint(t *testing.T) {
	err := fmt.Errorf("x not found")
	if got := Hint(err, ""); got != err {
		t.Errorf("Hint with no hint = %v", got)
	}
	if got := Hint(err, "install x"); got.Error() != "x not found; install x" {
		t.Errorf("Hint = %v", got)
	}
}
