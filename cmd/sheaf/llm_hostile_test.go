package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/llm/llmtest"
)

// Text from the vault or the model never reaches the terminal as control
// sequences.
func TestAnswerAndEvalOutputIsInert(t *testing.T) {
	vault := sampleVault(t)
	fake := llmtest.Start(t)
	fake.Script(func(llmtest.Request) (string, int) {
		return `{"answer": "pH 6.4\u001b]0;pwned\u0007\u001b[2J\u009b31m done", "citations": []}`, 0
	})
	out, err := exec.Command(bin, "answer", vault, "--llm-base-url", fake.URL, "--llm-model", "fake", "soil pH bed 4").CombinedOutput()
	if err != nil {
		t.Fatalf("sheaf answer: %v\n%s", err, out)
	}
	if strings.ContainsAny(string(out), "\x1b\x07\u009b") || !strings.Contains(string(out), "pH 6.4") {
		t.Errorf("control characters reached the terminal: %q", out)
	}

	q := `{"question": "soil \u001b[2J\u001b]0;x\u0007", "expected_paths": ["Nowhere.md"]}` + "\n\u001b[31m junk\n"
	if err := os.WriteFile(filepath.Join(vault, "eval", "questions.jsonl"), []byte(q), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "eval", vault, "--mode", "fulltext").CombinedOutput()
	if err != nil {
		t.Fatalf("sheaf eval: %v\n%s", err, out)
	}
	if strings.ContainsAny(string(out), "\x1b\x07") || !strings.Contains(string(out), "1 questions") {
		t.Errorf("control characters reached the terminal: %q", out)
	}
}

func TestRelatedLimitChecked(t *testing.T) {
	for _, l := range []string{"0", "101", "-3"} {
		out, err := exec.Command(bin, "related", sampleVault(t), "a.md", "--limit", l,
			"--embed-base-url", "http://127.0.0.1:1/v1", "--embed-model", "m").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--limit must be 1-100") {
			t.Errorf("--limit %s: %v\n%s", l, err, out)
		}
	}
}
