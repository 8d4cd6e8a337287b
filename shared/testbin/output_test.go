package testbin

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

func TestOutputCapped(t *testing.T) {
	var o Output
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			line := fmt.Sprintf("%d%s\n", i, strings.Repeat("x", 1000))
			for range 200 {
				if n, err := o.Write([]byte(line)); n != len(line) || err != nil {
					t.Errorf("Write = %d, %v", n, err)
				}
				_ = o.String()
			}
		})
	}
	wg.Wait()
	got := o.String()
	if len(got) != MaxOutput {
		t.Fatalf("kept %d bytes, want the first %d", len(got), MaxOutput)
	}
	lines := strings.SplitAfter(got, "\n")
	for _, line := range lines[:len(lines)-1] { // the last one is cut
		if len(line) != 1002 || strings.Trim(line[1:], "x\n") != "" {
			t.Fatalf("interleaved or torn write: %q", line)
		}
	}
}

func TestOutputOfProcess(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	var o Output
	cmd := exec.Command(sh, "-c", "echo out; echo err >&2")
	cmd.Stdout, cmd.Stderr = &o, &o
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := o.String(); !strings.Contains(got, "out\n") || !strings.Contains(got, "err\n") {
		t.Errorf("output %q", got)
	}
}
