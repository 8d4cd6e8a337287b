// Package testbin finds the external programs that tests and test
// harnesses run (versitygw, aws-lambda-rie, node, ...), and skips a test
// whose program is missing, except under CI, which installs everything:
// there a missing program fails the test. It also collects such programs'
// output (Output) and stands in for a hung service (Silent).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Find locates the program name: the file the environment variable envVar
// names when it is set (an error if there is no such file), else name on
// PATH, else name in $GOBIN, else in the bin folder of each $GOPATH entry,
// where go install puts it (GOBIN and GOPATH as go env reports them).
// envVar may be "" for none.
func Find(name, envVar string) (string, error) {
	if envVar != "" {
		if p := os.Getenv(envVar); p != "" {
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("%s: %w", envVar, err)
			}
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range goBins() {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	where := "put it on PATH or in $(go env GOPATH)/bin"
	if envVar != "" {
		where = "set " + envVar + ", or " + where
	}
	return "", fmt.Errorf("%s not found: %s", name, where)
}

// goBins lists where go install puts programs: $GOBIN when set, else
// GOPATH/bin for each GOPATH entry. It asks go env, which knows the
// defaults, and falls back to the environment when go is not on PATH.
func goBins() []string {
	gobin, gopath := os.Getenv("GOBIN"), os.Getenv("GOPATH")
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		if lines := strings.Split(string(out), "\n"); len(lines) >= 2 {
			gobin, gopath = strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1])
		}
	}
	var dirs []string
	if gobin != "" {
		dirs = append(dirs, gobin)
	}
	for dir := range strings.SplitSeq(gopath, string(os.PathListSeparator)) {
		if dir != "" {
			dirs = append(dirs, filepath.Join(dir, "bin"))
		}
	}
	return dirs
}

// Require returns the path of the program name (see Find). When it is
// missing, the test is skipped, or failed under CI, with Find's reason and
// installHint, e.g. "run go install example.com/cmd/tool@v1.2.3".
func Require(tb testing.TB, name, envVar, installHint string) string {
	tb.Helper()
	p, err := Find(name, envVar)
	if err != nil {
		Missing(tb, Hint(err, installHint))
	}
	return p
}

// Hint adds installHint (when not empty) to err, the reason a program is
// missing: "ERR; HINT".
func Hint(err error, installHint string) error {
	if installHint == "" {
		return err
	}
	return fmt.Errorf("%w; %s", err, installHint)
}

// Missing reports that something a test needs is missing: it skips the
// test with reason, or fails it when the environment variable CI is not
// empty (CI installs everything, so a gap there is a bug).
func Missing(tb testing.TB, reason error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatal(reason)
	} else {
		tb.Skip(reason)
	}
}

// RepoRoot is the folder holding go.mod, found upwards from the working
// directory.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
