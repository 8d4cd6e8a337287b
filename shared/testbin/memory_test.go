package testbin

import (
	"os"
	"os/exec"
	"testing"
)

// Memory reads this process's resident memory, and Child finds a child.
func TestMemoryAndChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if rss, hwm := Memory(os.Getpid()); rss <= 0 || hwm < rss {
		t.Errorf("Memory = %v, %v", rss, hwm)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if got := Child(os.Getpid()); got != cmd.Process.Pid {
		t.Errorf("Child = %d, want %d", got, cmd.Process.Pid)
	}
	if rss, _ := Memory(-1); rss != 0 {
		t.Errorf("Memory of no process = %v", rss)
	}
}
