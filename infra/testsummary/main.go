// Command testsummary reads `go test -json` on stdin and writes what a
// plain `go test` run writes (each package's result, the output of every
// failed test), then a list of every skipped test with its reason, so that
// a skip is never silent. Under CI (the environment variable CI set), a
// skip that no line of the -allow file explains fails the run: a gap CI
// accepts must be named (and measured) where people read about it.
//
// Usage:
//
//	go test -json ./... | go run ./infra/testsummary -allow .ci/skips
//
// Each line of the allow file is a regular expression matched against
// "package TestName: reason" (blank lines and lines starting with '#' are
// ignored). The exit status is 1 when a test or package failed, when the
// input ended before a package's result, or (under CI) for an unexplained
// skip.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // of build-output and build-fail
	Test       string
	Output     string
}

// skip is one skipped test.
type skip struct{ pkg, test, reason string }

func (s skip) String() string { return s.pkg + " " + s.test + ": " + s.reason }

// report is what the events add up to.
type report struct {
	out     io.Writer
	output  map[string][]string // package + "\x00" + test -> its output lines
	skips   []skip
	failed  []string // failed tests and packages
	started map[string]bool
	ended   map[string]bool
	tests   map[string]int // action -> count of test events
	events  int
}

func newReport(out io.Writer) *report {
	return &report{out: out, output: map[string][]string{}, started: map[string]bool{}, ended: map[string]bool{}, tests: map[string]int{}}
}

func (r *report) add(e event) {
	r.events++
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "start":
		r.started[e.Package] = true
	case "build-fail":
		r.failed = append(r.failed, e.ImportPath+" (build)")
	case "output", "build-output":
		if e.Test == "" {
			// The package's own lines: "ok  pkg 1.2s", "FAIL", panics,
			// build errors. Test result lines are in the test's output.
			if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS") {
				fmt.Fprint(r.out, e.Output)
			}
			return
		}
		r.output[key] = append(r.output[key], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.ended[e.Package] = true
			if e.Action == "fail" {
				r.failed = append(r.failed, e.Package)
			}
			return
		}
		r.tests[e.Action]++
		switch e.Action {
		case "fail":
			r.failed = append(r.failed, e.Package+" "+e.Test)
			for _, line := range r.output[key] {
				fmt.Fprint(r.out, line)
			}
		case "skip":
			r.skips = append(r.skips, skip{e.Package, e.Test, reason(r.output[key])})
		}
		delete(r.output, key)
	}
}

// reason is the message a skipped test logged last, without the file:line
// prefix; "" when it logged none.
func reason(lines []string) string {
	var msgs []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:]
		}
		msgs = append(msgs, t)
	}
	if len(msgs) == 0 {
		return "(no reason given)"
	}
	return msgs[len(msgs)-1]
}

// summary writes the skips and returns the exit status.
func (r *report) summary(allowed []*regexp.Regexp, ci bool) int {
	status := 0
	if r.events == 0 {
		fmt.Fprintln(r.out, "FAIL: no test events on stdin (did go test start? pass -json)")
		status = 1
	}
	for p := range r.started {
		if !r.ended[p] {
			fmt.Fprintf(r.out, "FAIL %s: no result (the run was cut short)\n", p)
			status = 1
		}
	}
	if len(r.failed) > 0 {
		status = 1
	}
	slices.SortFunc(r.skips, func(a, b skip) int { return strings.Compare(a.String(), b.String()) })
	var unexplained []skip
	fmt.Fprintf(r.out, "\n%d tests passed, %d failed, %d skipped\n", r.tests["pass"], r.tests["fail"], len(r.skips))
	for _, s := range r.skips {
		mark := "  SKIP "
		if !slices.ContainsFunc(allowed, func(re *regexp.Regexp) bool { return re.MatchString(s.String()) }) {
			unexplained = append(unexplained, s)
			mark = "  SKIP (unexplained) "
		}
		fmt.Fprintln(r.out, mark+s.String())
	}
	if ci && len(unexplained) > 0 {
		fmt.Fprintf(r.out, "FAIL: %d skips under CI that the allow file does not explain: install what they need, or name the gap (and its measured rate) in the README and the allow file\n", len(unexplained))
		status = 1
	}
	for _, f := range r.failed {
		fmt.Fprintln(r.out, "FAIL "+f)
	}
	return status
}

// readAllow reads the allow file's expressions.
func readAllow(path string) ([]*regexp.Regexp, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*regexp.Regexp
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		re, err := regexp.Compile(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// run is main without the process: it returns the exit status.
func run(in io.Reader, out io.Writer, allowPath string, ci bool) int {
	allowed, err := readAllow(allowPath)
	if err != nil {
		fmt.Fprintln(out, "testsummary:", err)
		return 2
	}
	r := newReport(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, sc.Text()) // not an event: go test's own message
			continue
		}
		r.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "testsummary: reading the events:", err)
		return 2
	}
	return r.summary(allowed, ci)
}

func main() {
	allow := flag.String("allow", "", "file of regular expressions, one a line, matching \"package TestName: reason\" of the skips CI accepts")
	flag.Parse()
	os.Exit(run(os.Stdin, os.Stdout, *allow, os.Getenv("CI") != ""))
}
