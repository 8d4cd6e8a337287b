package fs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// The tests below run this test binary again as helper processes, selected
// by SHEAF_FS_HELPER: several processes writing one vault folder.
func TestMain(m *testing.M) {
	switch os.Getenv("SHEAF_FS_HELPER") {
	case "":
		os.Exit(m.Run())
	case "increment":
		os.Exit(helperIncrement())
	case "overwrite":
		os.Exit(helperOverwrite())
	}
	fmt.Fprintln(os.Stderr, "unknown SHEAF_FS_HELPER")
	os.Exit(2)
}

// helperIncrement adds SHEAF_FS_N to the counter in counter.md, one
// compare-and-swap at a time, and prints how many conflicts it met.
func helperIncrement() int {
	s, err := Open(os.Getenv("SHEAF_FS_VAULT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv("SHEAF_FS_N"))
	ctx := context.Background()
	conflicts := 0
	for done := 0; done < n; {
		data, obj, err := s.Get(ctx, "counter.md", 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		v, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		_, err = s.Put(ctx, "counter.md", []byte(strconv.Itoa(v+1)), store.PutOptions{IfMatch: obj.ETag})
		switch {
		case err == nil:
			done++
		case errors.Is(err, store.ErrConflict):
			conflicts++
		default:
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println(conflicts)
	return 0
}

// helperOverwrite overwrites big.md with SHEAF_FS_SIZE bytes of 'a', then
// 'b', then 'a', ... until killed, saying "writing" before the first.
func helperOverwrite() int {
	s, err := Open(os.Getenv("SHEAF_FS_VAULT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	size, _ := strconv.Atoi(os.Getenv("SHEAF_FS_SIZE"))
	bufs := [][]byte{bytes.Repeat([]byte("a"), size), bytes.Repeat([]byte("b"), size)}
	fmt.Println("writing")
	for i := 0; ; i++ {
		if _, err := s.Put(context.Background(), "big.md", bufs[i%2], store.PutOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

func helper(t *testing.T, mode, root string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"SHEAF_FS_HELPER=" + mode, "SHEAF_FS_VAULT=" + root}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestProcessesCompareAndSwap has four processes increment one counter with
// If-Match writes: none of the 200 increments may be lost, which holds only
// because the condition check and the rename happen under a lock the
// processes share.
func TestProcessesCompareAndSwap(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "counter.md"), []byte("0"), 0o644); err != nil {
		t.Fatal(err)
	}
	const procs, each = 4, 50
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range procs {
		cmd := helper(t, "increment", root, "SHEAF_FS_N="+strconv.Itoa(each))
		out := &bytes.Buffer{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	conflicts := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(outs[i].String()))
		conflicts += n
	}
	data, err := os.ReadFile(filepath.Join(root, "counter.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(data)); got != strconv.Itoa(procs*each) {
		t.Errorf("counter = %s after %d increments: updates were lost", got, procs*each)
	}
	t.Logf("%d processes x %d increments: %d conflicts retried", procs, each, conflicts)
}

// TestKillDuringOverwrite kills (SIGKILL) a process in the middle of
// overwriting a large note, again and again: the note is always exactly
// the old content or the new, never a torn mix; the temporary files the
// kills leave are hidden, and a later write tidies them once stale.
func TestKillDuringOverwrite(t *testing.T) {
	root := t.TempDir()
	size := 8 << 20
	if testing.Short() {
		size = 2 << 20
	}
	if err := os.WriteFile(filepath.Join(root, "big.md"), bytes.Repeat([]byte("a"), size), 0o644); err != nil {
		t.Fatal(err)
	}
	kills := 6
	for i := range kills {
		cmd := helper(t, "overwrite", root, "SHEAF_FS_SIZE="+strconv.Itoa(size))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "writing\n" {
			t.Fatalf("helper said %q, %v", line, err)
		}
		time.Sleep(time.Duration(50+rand.IntN(250)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		data, err := os.ReadFile(filepath.Join(root, "big.md"))
		if err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		if len(data) != size || (bytes.Count(data, []byte("a")) != size && bytes.Count(data, []byte("b")) != size) {
			t.Fatalf("kill %d: big.md is torn: %d bytes, %d a, %d b", i, len(data), bytes.Count(data, []byte("a")), bytes.Count(data, []byte("b")))
		}
	}
	s := open(t, root)
	var temps []string
	for _, e := range dirNames(t, root) {
		if strings.HasPrefix(e, tempPrefix) {
			temps = append(temps, e)
		}
	}
	n := 0
	_ = s.List(t.Context(), "", func(o store.Object) error { n++; return nil })
	if n != 1 {
		t.Errorf("List sees %d objects, want big.md only (temporary files are hidden)", n)
	}
	old := time.Now().Add(-2 * staleTemp)
	for _, name := range temps {
		_ = os.Chtimes(filepath.Join(root, name), old, old)
	}
	if _, err := s.Put(t.Context(), "other.md", []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range dirNames(t, root) {
		if strings.HasPrefix(e, tempPrefix) {
			t.Errorf("stale temporary file %s left after a write", e)
		}
	}
	t.Logf("%d kills, %d temporary files left by them, all tidied", kills, len(temps))
}
