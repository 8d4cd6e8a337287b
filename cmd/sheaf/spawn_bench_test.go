package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkSpawn measures what a desktop client waits for when it starts
// `sheaf serve` over stdio: from spawning the process to the answer of
// initialize, and to the answer of a first search, on an empty vault and
// on the generated 10k-note one (restarted over a persisted index, as a
// client restarts it). It reports the median and p90 of b.N spawns, and
// the median CPU time of a whole spawn (start-up, both answers, exit: the
// number that holds on a loaded machine), beside the time `sheaf
// --version` takes to start and exit; run it with -benchtime 30x or
// more. SHEAF_BENCH_VAULT and SHEAF_BENCH_STATE
// reuse a vault and its `sheaf index --state`; SHEAF_BENCH_BIN spawns
// another build instead. SHEAF_BENCH_BASE spawns a second build (an older
// one) in the same run, alternating with this one, and reports its
// figures as base-* and the ratios of this build's to its: the numbers to
// compare on a machine that others load.
func BenchmarkSpawn(b *testing.B) {
	// The floor: `sheaf --version` runs the Go runtime's start-up and
	// every linked package's initialisation, prints a line and exits. What
	// serve adds to it is Sheaf's own start-up.
	b.Run("version", func(b *testing.B) {
		exe := bin
		if other := os.Getenv("SHEAF_BENCH_BIN"); other != "" {
			exe = other
		}
		var ds []time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if out, err := exec.Command(exe, "--version").CombinedOutput(); err != nil {
				b.Fatalf("sheaf --version: %v\n%s", err, out)
			}
			ds = append(ds, time.Since(start))
		}
		med, p90 := median(ds)
		b.ReportMetric(med, "ms-spawn-to-exit")
		b.ReportMetric(p90, "ms-p90-spawn-to-exit")
	})
	b.Run("empty", func(b *testing.B) {
		dir := b.TempDir()
		benchSpawn(b, dir, b.TempDir())
	})
	b.Run("10k", func(b *testing.B) {
		dir := benchVault(b)
		state := os.Getenv("SHEAF_BENCH_STATE")
		if state == "" {
			state = b.TempDir()
			if out, err := exec.Command(bin, "index", "--vault", dir, "--state", state, "--quiet").CombinedOutput(); err != nil {
				b.Fatalf("sheaf index: %v\n%s", err, out)
			}
		}
		benchSpawn(b, dir, state)
	})
}

func benchSpawn(b *testing.B, dir, state string) {
	exe := bin
	if other := os.Getenv("SHEAF_BENCH_BIN"); other != "" {
		exe = other
	}
	base := os.Getenv("SHEAF_BENCH_BASE")
	var this, old spawnTimes
	for i := 0; i < b.N; i++ {
		if base != "" && i%2 == 1 {
			old.add(spawnOnce(b, base, dir, state))
		}
		this.add(spawnOnce(b, exe, dir, state))
		if base != "" && i%2 == 0 {
			old.add(spawnOnce(b, base, dir, state))
		}
	}
	this.report(b, "")
	if base != "" {
		old.report(b, "base-")
		b.ReportMetric(this.med(this.cpus)/old.med(old.cpus), "ratio-cpu-per-spawn")
		b.ReportMetric(this.med(this.inits)/old.med(old.inits), "ratio-spawn-to-initialize")
	}
}

// spawnTimes are the times of spawns of one build.
type spawnTimes struct{ inits, searches, cpus []time.Duration }

func (s *spawnTimes) add(init, search, cpu time.Duration) {
	s.inits, s.searches, s.cpus = append(s.inits, init), append(s.searches, search), append(s.cpus, cpu)
}

func (s *spawnTimes) med(ds []time.Duration) float64 { m, _ := median(ds); return m }

func (s *spawnTimes) report(b *testing.B, prefix string) {
	med, p90 := median(s.inits)
	b.ReportMetric(med, prefix+"ms-spawn-to-initialize")
	b.ReportMetric(p90, prefix+"ms-p90-spawn-to-initialize")
	med, p90 = median(s.searches)
	b.ReportMetric(med, prefix+"ms-spawn-to-first-search")
	b.ReportMetric(p90, prefix+"ms-p90-spawn-to-first-search")
	b.ReportMetric(s.med(s.cpus), prefix+"ms-cpu-per-spawn")
}

// spawnOnce starts the server, sends initialize, then a search, over raw
// newline-delimited JSON-RPC (no client library in the measurement), and
// returns the process's CPU time once it has exited.
func spawnOnce(b *testing.B, exe, dir, state string) (init, search, cpu time.Duration) {
	b.Helper()
	cmd := exec.Command(exe, "serve", "--vault", dir, "--state", state, "--no-watch", "--log-level", "error")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
		if ps := cmd.ProcessState; ps != nil {
			cpu = ps.UserTime() + ps.SystemTime()
		}
	}()
	r := bufio.NewReaderSize(stdout, 1<<20)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	send(b, stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	awaitID(b, r, 1)
	init = time.Since(start)
	send(b, stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(b, stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"note"}}}`)
	res := awaitID(b, r, 2)
	search = time.Since(start)
	if strings.Contains(res, `"isError":true`) {
		b.Fatalf("search failed: %.300s", res)
	}
	return init, search, 0 // cpu is set once the process exits
}

func send(b *testing.B, w io.Writer, msg string) {
	if _, err := fmt.Fprintln(w, msg); err != nil {
		b.Fatal(err)
	}
}

// awaitID reads lines until the answer to request id.
func awaitID(b *testing.B, r *bufio.Reader, id int) string {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("reading the answer to %d: %v", id, err)
		}
		var m struct {
			ID    *int            `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil && *m.ID == id {
			if len(m.Error) > 0 {
				b.Fatalf("request %d: %s", id, m.Error)
			}
			return line
		}
	}
}

// median returns the median and the 90th percentile of ds, in milliseconds.
func median(ds []time.Duration) (float64, float64) {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(s[len(s)/2]), ms(s[min(len(s)-1, len(s)*9/10)])
}
