package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// events is a `go test -json` stream: a pass, a skip with a reason, a
// skip explained by the allow file, a failure, and a package's result.
const events = `{"Action":"start","Package":"example.com/a"}
{"Action":"run","Package":"example.com/a","Test":"TestOK"}
{"Action":"output","Package":"example.com/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"example.com/a","Test":"TestOK","Output":"    a_test.go:9: chatter\n"}
{"Action":"pass","Package":"example.com/a","Test":"TestOK"}
{"Action":"run","Package":"example.com/a","Test":"TestGrep"}
{"Action":"output","Package":"example.com/a","Test":"TestGrep","Output":"    a_test.go:12: needs GNU grep\n"}
{"Action":"output","Package":"example.com/a","Test":"TestGrep","Output":"--- SKIP: TestGrep (0.00s)\n"}
{"Action":"skip","Package":"example.com/a","Test":"TestGrep"}
{"Action":"run","Package":"example.com/a","Test":"TestQdrant"}
{"Action":"output","Package":"example.com/a","Test":"TestQdrant","Output":"    q_test.go:5: SHEAF_TEST_QDRANT_ADDR is not set\n"}
{"Action":"skip","Package":"example.com/a","Test":"TestQdrant"}
{"Action":"output","Package":"example.com/a","Output":"ok  \texample.com/a\t0.1s\n"}
{"Action":"pass","Package":"example.com/a"}
`

const failing = `{"Action":"start","Package":"example.com/b"}
{"Action":"run","Package":"example.com/b","Test":"TestBad"}
{"Action":"output","Package":"example.com/b","Test":"TestBad","Output":"    b_test.go:3: wrong answer\n"}
{"Action":"output","Package":"example.com/b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"example.com/b","Test":"TestBad"}
{"Action":"output","Package":"example.com/b","Output":"FAIL\texample.com/b\t0.1s\n"}
{"Action":"fail","Package":"example.com/b"}
`

func allowFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "skips")
	if err := os.WriteFile(p, []byte("# opt-in suites\nTestQdrant: SHEAF_TEST_QDRANT_ADDR\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSkipsListed(t *testing.T) {
	var out strings.Builder
	if code := run(strings.NewReader(events), &out, allowFile(t), false); code != 0 {
		t.Errorf("exit %d outside CI, want 0:\n%s", code, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"ok  \texample.com/a",
		"1 tests passed, 0 failed, 2 skipped",
		"SKIP (unexplained) example.com/a TestGrep: needs GNU grep",
		"SKIP example.com/a TestQdrant: SHEAF_TEST_QDRANT_ADDR is not set",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") {
		t.Errorf("a passing test's output was shown:\n%s", got)
	}
}

func TestUnexplainedSkipFailsUnderCI(t *testing.T) {
	var out strings.Builder
	if code := run(strings.NewReader(events), &out, allowFile(t), true); code != 1 {
		t.Errorf("exit %d under CI with an unexplained skip, want 1:\n%s", code, out.String())
	}
	more := allowFile(t)
	if err := os.WriteFile(more, []byte("TestQdrant: SHEAF_TEST_QDRANT_ADDR\n^example\\.com/a TestGrep: needs GNU grep$\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(strings.NewReader(events), &out, more, true); code != 0 {
		t.Errorf("exit %d under CI with explained skips only, want 0:\n%s", code, out.String())
	}
}

func TestFailuresShownAndFail(t *testing.T) {
	var out strings.Builder
	if code := run(strings.NewReader(failing), &out, "", false); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), "wrong answer") || !strings.Contains(out.String(), "FAIL example.com/b TestBad") {
		t.Errorf("the failure is not shown:\n%s", out.String())
	}
}

func TestCutShortOrEmptyFails(t *testing.T) {
	cut := `{"Action":"start","Package":"example.com/c"}` + "\n"
	var out strings.Builder
	if code := run(strings.NewReader(cut), &out, "", false); code != 1 || !strings.Contains(out.String(), "no result") {
		t.Errorf("a package without a result: exit %d\n%s", code, out.String())
	}
	out.Reset()
	if code := run(strings.NewReader(""), &out, "", false); code != 1 {
		t.Errorf("no events: exit %d, want 1", code)
	}
}
