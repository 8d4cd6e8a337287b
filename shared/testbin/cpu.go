package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// CPUGroup is a cgroup limited to a share of one CPU, for benchmarks that
// measure a server as a small machine (a Lambda function of 1024 MB gets
// 0.58 of a CPU) would run it.
type CPUGroup struct{ dir string }

// NewCPUGroup makes a cgroup limited to quota of one CPU (cgroup v1's cpu
// controller, or v2's cpu.max) and removes it when the benchmark ends; it
// skips the benchmark when no cgroup can be made here (no writable cpu
// controller).
func NewCPUGroup(tb testing.TB, quota float64) *CPUGroup {
	tb.Helper()
	const period = 100000
	for _, root := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup"} {
		dir := filepath.Join(root, fmt.Sprintf("sheaf-bench-%d-%d", os.Getpid(), time.Now().UnixNano()))
		if os.Mkdir(dir, 0o755) != nil {
			continue
		}
		file, value := "cpu.max", fmt.Sprintf("%d %d", int(quota*period), period)
		if _, err := os.Stat(filepath.Join(dir, "cpu.cfs_quota_us")); err == nil {
			file, value = "cpu.cfs_quota_us", strconv.Itoa(int(quota*period))
			_ = os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(period)), 0o644)
		}
		if os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644) != nil {
			os.Remove(dir)
			continue
		}
		tb.Cleanup(func() {
			for range 50 { // processes leave the group as they exit
				if os.Remove(dir) == nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
		return &CPUGroup{dir: dir}
	}
	tb.Skip("no writable cgroup cpu controller here")
	return nil
}

// Join moves the process pid (and the children it starts later) into the
// group.
func (g *CPUGroup) Join(pid int) error {
	return os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// Wrap returns cmd run through a shell that joins the group and then
// becomes cmd (same pid), so that cmd runs limited from its first
// instruction.
func (g *CPUGroup) Wrap(cmd *exec.Cmd) *exec.Cmd {
	shell := exec.Command("sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, g.dir, cmd.Path}, cmd.Args[1:]...)...)
	shell.Env, shell.Dir, shell.Stdin, shell.Stdout, shell.Stderr = cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr
	return shell
}
