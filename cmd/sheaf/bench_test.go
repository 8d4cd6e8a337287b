package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// benchVault returns a generated 10k-note vault: SHEAF_BENCH_VAULT if set
// (generated there once), else a temporary one (in /dev/shm when it exists:
// creating 10k files on this machine's disk takes longer than indexing them).
func benchVault(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("SHEAF_BENCH_VAULT")
	if dir == "" {
		base := ""
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			base = "/dev/shm"
		}
		tmp, err := os.MkdirTemp(base, "sheaf-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(tmp) })
		dir = filepath.Join(tmp, "vault")
	}
	if _, err := os.Stat(filepath.Join(dir, "index.md")); err != nil {
		if _, err := os.Stat(dir); err == nil {
			entries, _ := os.ReadDir(dir)
			if len(entries) > 0 {
				return dir // an existing vault without index.md
			}
		}
		if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: 10000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func countNotes(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			n++
		}
		return nil
	})
	return n
}

// BenchmarkColdIndex10k: `sheaf index` from nothing, against grep -rc over
// the same files as the baseline (reading every byte once).
func BenchmarkColdIndex10k(b *testing.B) {
	dir := benchVault(b)
	notes := countNotes(dir)
	state := b.TempDir()
	grepStart := time.Now()
	_ = exec.Command("grep", "-rc", "--include=*.md", "zzzzqqq", dir).Run()
	grepTime := time.Since(grepStart)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		os.RemoveAll(state)
		start := time.Now()
		out, err := exec.Command(bin, "index", "--vault", dir, "--state", state, "--quiet").CombinedOutput()
		if err != nil {
			b.Fatalf("sheaf index: %v\n%s", err, out)
		}
		total += time.Since(start)
	}
	per := total / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "s/index")
	b.ReportMetric(float64(notes)/per.Seconds(), "notes/s")
	b.ReportMetric(per.Seconds()/grepTime.Seconds(), "x-grep-time")
}

// BenchmarkServe10k: restart with a persisted index to the first answered
// search, then search latency through the official Go MCP client over
// stdio, then the server's resident memory.
func BenchmarkServe10k(b *testing.B) {
	dir := benchVault(b)
	state := b.TempDir()
	if out, err := exec.Command(bin, "index", "--vault", dir, "--state", state, "--quiet").CombinedOutput(); err != nil {
		b.Fatalf("sheaf index: %v\n%s", err, out)
	}
	words := sampleWords(dir, 300)
	queries := make([]map[string]any, 0, 600)
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < cap(queries); i++ {
		w1, w2 := words[rng.Intn(len(words))], words[rng.Intn(len(words))]
		switch i % 6 {
		case 0, 1:
			queries = append(queries, map[string]any{"query": w1})
		case 2:
			queries = append(queries, map[string]any{"query": w1 + " " + w2})
		case 3:
			queries = append(queries, map[string]any{"query": `"` + w1 + " " + w2 + `"`})
		case 4:
			queries = append(queries, map[string]any{"query": w1 + " OR " + w2, "limit": 10})
		default:
			queries = append(queries, map[string]any{"query": "how does the " + w1 + " relate to " + w2, "match": "any"})
		}
	}

	for i := 0; i < b.N; i++ {
		start := time.Now()
		cmd := exec.Command(bin, "serve", "--vault", dir, "--state", state, "--no-watch", "--log-level", "error")
		s := connect(b, &mcp.CommandTransport{Command: cmd})
		call(b, s, map[string]any{"query": words[0]})
		restart := time.Since(start)

		lat := make([]time.Duration, 0, len(queries))
		for _, q := range queries {
			t0 := time.Now()
			call(b, s, q)
			lat = append(lat, time.Since(t0))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		rss, hwm := memory(cmd.Process.Pid)
		s.Close()

		b.ReportMetric(restart.Seconds()*1000, "ms-restart-to-first-search")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "ms-max")
		b.ReportMetric(rss/1024, "MB-RSS")
		b.ReportMetric(hwm/1024, "MB-peak-RSS")
	}
}

func call(b *testing.B, s *mcp.ClientSession, args map[string]any) {
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("search %v: %v %+v", args, err, res)
	}
}

// memory returns VmRSS and VmHWM in KiB.
func memory(pid int) (rss, hwm float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			v, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "VmRSS:":
				rss = v
			case "VmHWM:":
				hwm = v
			}
		}
	}
	return rss, hwm
}

var wordRE = regexp.MustCompile(`\p{L}{4,}`)

// sampleWords picks distinct words from the vault's notes.
func sampleWords(dir string, n int) []string {
	seen := map[string]bool{}
	var words []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") || len(words) >= n {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, w := range wordRE.FindAllString(string(data), 20) {
			w = strings.ToLower(w)
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
		return nil
	})
	return words
}
