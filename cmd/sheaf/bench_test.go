package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// benchVault returns a generated 10k-note vault: SHEAF_BENCH_VAULT if set
// (generated there once), else a temporary one (benchTempDir).
func benchVault(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("SHEAF_BENCH_VAULT")
	if dir == "" {
		dir = filepath.Join(benchTempDir(b, "sheaf-bench-"), "vault")
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

// benchTempDir returns a folder removed after the benchmark, in /dev/shm
// when it exists (creating 10k files on this machine's disk takes longer
// than indexing them).
func benchTempDir(b *testing.B, prefix string) string {
	b.Helper()
	base := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	tmp, err := os.MkdirTemp(base, prefix)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(tmp) })
	return tmp
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
// the same files as the baseline (reading every byte once), and the peak
// resident memory of the indexing process. SHEAF_BENCH_VAULT=DIR runs it
// (and BenchmarkServe10k) on another vault, e.g. one made by
// `sheaf gen DIR --notes 100000`.
func BenchmarkColdIndex10k(b *testing.B) {
	dir := benchVault(b)
	notes := countNotes(dir)
	state := b.TempDir()
	grepStart := time.Now()
	_ = exec.Command("grep", "-rc", "--include=*.md", "zzzzqqq", dir).Run()
	grepTime := time.Since(grepStart)
	var total time.Duration
	var peak int64
	for i := 0; i < b.N; i++ {
		os.RemoveAll(state)
		start := time.Now()
		cmd := exec.Command(bin, "index", "--vault", dir, "--state", state, "--quiet")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("sheaf index: %v\n%s", err, out)
		}
		total += time.Since(start)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss) // KiB on Linux
		}
	}
	b.ReportMetric(float64(peak)/1024, "MB-peak-RSS")
	per := total / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "s/index")
	b.ReportMetric(float64(notes)/per.Seconds(), "notes/s")
	b.ReportMetric(per.Seconds()/grepTime.Seconds(), "x-grep-time")
}

// BenchmarkServe10k: restart with a persisted index to the first answered
// search, then search latency through the official Go MCP client over
// stdio, then the server's resident memory. SHEAF_BENCH_STATE reuses a
// `sheaf index --state` of the bench vault.
func BenchmarkServe10k(b *testing.B) {
	dir := benchVault(b)
	state := os.Getenv("SHEAF_BENCH_STATE")
	if state == "" {
		state = b.TempDir()
		if out, err := exec.Command(bin, "index", "--vault", dir, "--state", state, "--quiet").CombinedOutput(); err != nil {
			b.Fatalf("sheaf index: %v\n%s", err, out)
		}
	}
	classes := wordClasses(dir)
	rng := rand.New(rand.NewSource(7))
	pick := func(class string) string { ws := classes[class]; return ws[rng.Intn(len(ws))] }
	// Each lane is one kind of call an agent makes; "common" words are in
	// over 30% of notes, "mid" in 0.5-10%, "rare" in under 0.5%.
	type lane struct {
		name string
		args func() map[string]any
	}
	lanes := []lane{
		{"rare", func() map[string]any { return map[string]any{"query": pick("rare")} }},
		{"mid", func() map[string]any { return map[string]any{"query": pick("mid")} }},
		{"two-words", func() map[string]any { return map[string]any{"query": pick("mid") + " " + pick("rare")} }},
		{"phrase", func() map[string]any { return map[string]any{"query": `"` + pick("mid") + " " + pick("mid") + `"`} }},
		{"question", func() map[string]any {
			return map[string]any{"query": "how does the " + pick("mid") + " relate to " + pick("rare"), "match": "any"}
		}},
		{"or", func() map[string]any { return map[string]any{"query": pick("mid") + " OR " + pick("mid")} }},
		{"common", func() map[string]any { return map[string]any{"query": pick("common")} }},
	}
	const perLane = 80
	type query struct {
		lane string
		args map[string]any
	}
	var queries []query
	for i := 0; i < perLane; i++ {
		for _, l := range lanes {
			queries = append(queries, query{l.name, l.args()})
		}
	}

	for i := 0; i < b.N; i++ {
		start := time.Now()
		cmd := exec.Command(bin, "serve", "--vault", dir, "--state", state, "--no-watch", "--log-level", "error")
		s := connect(b, &mcp.CommandTransport{Command: cmd})
		call(b, s, map[string]any{"query": pick("rare")})
		restart := time.Since(start)

		byLane := map[string][]time.Duration{}
		var lat []time.Duration
		for _, q := range queries {
			t0 := time.Now()
			call(b, s, q.args)
			d := time.Since(t0)
			lat = append(lat, d)
			byLane[q.lane] = append(byLane[q.lane], d)
		}
		rss, hwm := testbin.Memory(cmd.Process.Pid)
		s.Close()
		for lane, ds := range byLane {
			p50, p99 := percentiles(ds)
			b.ReportMetric(p50, "ms-p50-"+lane)
			b.ReportMetric(p99, "ms-p99-"+lane)
		}
		p50, p99 := percentiles(lat)
		b.ReportMetric(restart.Seconds()*1000, "ms-restart-to-first-search")
		b.ReportMetric(p50, "ms-p50-all")
		b.ReportMetric(p99, "ms-p99-all")
		b.ReportMetric(rss/1024, "MB-RSS")
		b.ReportMetric(hwm/1024, "MB-peak-RSS")
	}
}

// BenchmarkSearchAndRead10k: search_and_read (k=5, whole notes) through
// the official Go MCP client over stdio, for questions in sentences about
// the generated vault (vaultgen.Questions: the question lane, no
// embeddings), and the lane's recall@5 on them. SHEAF_BENCH_BIN serves
// them with another build. SHEAF_BENCH_WRITE_EVERY=n writes a new note
// (write_note) before every n-th question, as an agent editing between
// its questions does (the writes' time is left out of the latencies), on
// a copy of the vault in the same kind of folder benchVault uses (the
// generated vault's plain files: a real vault's symlinks, sockets or
// modes are not kept); each round adds its notes to that copy.
func BenchmarkSearchAndRead10k(b *testing.B) {
	dir := benchVault(b)
	every, _ := strconv.Atoi(os.Getenv("SHEAF_BENCH_WRITE_EVERY"))
	if every > 0 {
		cp := filepath.Join(benchTempDir(b, "sheaf-bench-edited-"), "vault")
		if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
			b.Fatal(err)
		}
		dir = cp
	}
	state := b.TempDir()
	if out, err := exec.Command(bin, "index", "--vault", dir, "--state", state, "--quiet").CombinedOutput(); err != nil {
		b.Fatalf("sheaf index: %v\n%s", err, out)
	}
	qs := vaultgen.Questions(vaultgen.Options{Notes: 10000, Seed: 1}, 200)
	for i := 0; i < b.N; i++ {
		exe := bin
		if other := os.Getenv("SHEAF_BENCH_BIN"); other != "" {
			exe = other
		}
		cmd := exec.Command(exe, "serve", "--vault", dir, "--state", state, "--no-watch", "--log-level", "error")
		s := connect(b, &mcp.CommandTransport{Command: cmd})
		// The first search after a restart waits for the catalog and the
		// start-up index pass: a question of none of the 200, reported on
		// its own (ms-first-after-restart) rather than as their slowest.
		t0 := time.Now()
		if res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_and_read",
			Arguments: map[string]any{"query": "what is in this vault?", "k": 5, "response_format": "concise"}}); err != nil || res.IsError {
			b.Fatalf("first search_and_read: %v %+v", err, res)
		}
		first := time.Since(t0)
		var lat []time.Duration
		found := 0
		for qi, q := range qs {
			if every > 0 && qi%every == 0 {
				callTool(b, s, "write_note", map[string]any{"path": fmt.Sprintf("sheaf-bench-edits/run %d edit %d.md", i, qi),
					"content": fmt.Sprintf("# Edit %d\n\nA note written between questions.\n", qi)})
			}
			t0 := time.Now()
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_and_read",
				Arguments: map[string]any{"query": q.Question, "k": 5, "response_format": "concise"}})
			lat = append(lat, time.Since(t0))
			if err != nil || res.IsError {
				b.Fatalf("search_and_read %q: %v %+v", q.Question, err, res)
			}
			var out struct {
				Notes []struct{ Path string } `json:"notes"`
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if json.Unmarshal(raw, &out) == nil {
				for _, n := range out.Notes {
					if n.Path == q.Expected[0] {
						found++
						break
					}
				}
			}
		}
		s.Close()
		p50, p99 := percentiles(lat)
		b.ReportMetric(p50, "ms-p50")
		b.ReportMetric(p99, "ms-p99")
		b.ReportMetric(first.Seconds()*1000, "ms-first-after-restart")
		b.ReportMetric(float64(found)/float64(len(qs)), "recall@5")
	}
}

func call(b *testing.B, s *mcp.ClientSession, args map[string]any) {
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("search %v: %v %+v", args, err, res)
	}
}

var wordRE = regexp.MustCompile(`\p{Ll}{4,}`)

// wordClasses sorts the vault's body words by document frequency.
func wordClasses(dir string) map[string][]string {
	df := map[string]int{}
	notes := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		notes++
		data, _ := os.ReadFile(p)
		seen := map[string]bool{}
		for _, w := range wordRE.FindAllString(string(data), -1) {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
		return nil
	})
	classes := map[string][]string{}
	for w, n := range df {
		switch f := float64(n) / float64(notes); {
		case f > 0.3:
			classes["common"] = append(classes["common"], w)
		case f >= 0.005 && f <= 0.1:
			classes["mid"] = append(classes["mid"], w)
		case f < 0.005 && n >= 2:
			classes["rare"] = append(classes["rare"], w)
		}
	}
	for _, ws := range classes {
		sort.Strings(ws)
	}
	return classes
}

// percentiles returns p50 and p99 in milliseconds.
func percentiles(ds []time.Duration) (p50, p99 float64) {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(s[len(s)/2]), ms(s[min(len(s)-1, len(s)*99/100)])
}

// BenchmarkCloudColdStart: a stateless handler's cold start on a big
// vault, tool by tool. The catalog of the bench vault (SHEAF_BENCH_VAULT,
// else a generated 10k-note one), as `sheaf index` saves it (the same
// segmented layout as the cloud's), is put in a versitygw bucket under
// .sheaf/catalog/; then for each tool `sheaf serve --vault s3://...` (what
// the MCP function runs: config.OpenCloud, catalogstore.Catalogs) starts cold,
// and the official Go MCP client times process start to that tool's first
// answer, and reads the server's resident memory then. get_vault_info is
// answered from the catalog manifest's summary; search and read_note need
// the catalog loaded, read_note its name indexes too, list_tags its tag
// index, list_backlinks its name and link indexes. After the last tool the
// same process answers list_tags too: the whole catalog and every index in
// memory.
//
// SHEAF_BENCH_LAMBDA_CPU=0.58 runs each server under that share of one
// CPU (a cgroup quota, as a Lambda function of 1024 MB gets) with the
// functions' memory limit (GOMEMLIMIT=870MiB); it needs a writable cgroup
// cpu controller.
func BenchmarkCloudColdStart(b *testing.B) {
	dir := benchVault(b)
	notes := countNotes(dir)
	state := os.Getenv("SHEAF_BENCH_STATE") // a `sheaf index --state` of that vault, to reuse
	if state == "" {
		state = b.TempDir()
		if out, err := exec.Command(bin, "index", "--vault", dir, "--state", state, "--quiet").CombinedOutput(); err != nil {
			b.Fatalf("sheaf index: %v\n%s", err, out)
		}
	}
	wrap := func(cmd *exec.Cmd) *exec.Cmd { return cmd }
	if q := os.Getenv("SHEAF_BENCH_LAMBDA_CPU"); q != "" {
		quota, err := strconv.ParseFloat(q, 64)
		if err != nil {
			b.Fatal(err)
		}
		wrap = testbin.NewCPUGroup(b, quota).Wrap
	}
	srv := s3test.Start(b, s3test.Options{})
	srv.CreateBucket(b, "vault")
	srv.PutDir(b, "vault", "notes/.sheaf/catalog", filepath.Join(state, "catalog"))
	meili := meilifake.New(b)
	start := func() (*exec.Cmd, time.Time) {
		cmd := exec.Command(bin, "serve", "--vault", srv.URL("vault", "notes"), "--search", meili.URL, "--log-level", "error")
		cmd.Env = append(os.Environ(), srv.Env()...)
		if os.Getenv("SHEAF_BENCH_LAMBDA_CPU") != "" {
			cmd.Env = append(cmd.Env, "GOMEMLIMIT=870MiB")
		}
		return wrap(cmd), time.Now()
	}
	call := func(s *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", tool, err, res)
		}
		return res
	}
	note := vaultgen.FirstNote(dir)
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(note)))
	if err != nil {
		b.Fatal(err)
	}
	srv.Put(b, "vault", "notes/"+note, data) // the note read_note reads
	tools := toolstest.ColdStartCalls(note)
	for i := 0; i < b.N; i++ {
		for k, tool := range tools {
			cmd, t0 := start()
			s := connect(b, &mcp.CommandTransport{Command: cmd})
			res := call(s, tool.Tool, tool.Args)
			first := time.Since(t0)
			pid := cmd.Process.Pid // the server's, also under cpuLimited's shell (exec)
			if tool.Tool == "get_vault_info" {
				var info struct {
					NoteCount int `json:"noteCount"`
				}
				raw, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(raw, &info); err != nil || info.NoteCount != notes {
					b.Fatalf("get_vault_info: %d notes, want %d (%v)", info.NoteCount, notes, err)
				}
			}
			rss, _ := testbin.Memory(pid)
			b.ReportMetric(first.Seconds()*1000, "ms-cold-"+tool.Tool)
			b.ReportMetric(rss/1024, "MB-RSS-after-"+tool.Tool)
			if k == len(tools)-1 {
				t1 := time.Now()
				call(s, "list_tags", map[string]any{})
				rss, hwm := testbin.Memory(pid)
				b.ReportMetric(time.Since(t1).Seconds()*1000, "ms-then-list_tags")
				b.ReportMetric(rss/1024, "MB-RSS-everything")
				b.ReportMetric(hwm/1024, "MB-peak-RSS")
			}
			s.Close()
		}
	}
	b.ReportMetric(float64(notes), "notes")
}

// BenchmarkFirstTrueAnswer: spawn `sheaf serve` on a vault with no state
// and ask search at once and again until the answer is no longer partial:
// the time to the first answer (partial or not) and to the first true one;
// then the same after a restart with the index persisted. The vault has
// SHEAF_BENCH_FIRST_NOTES notes (default 10,000: the vault of
// SHEAF_BENCH_VAULT; others are generated in a temporary folder).
func BenchmarkFirstTrueAnswer(b *testing.B) {
	n := 10000
	if v := os.Getenv("SHEAF_BENCH_FIRST_NOTES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	var dir string
	if n == 10000 {
		dir = benchVault(b)
	} else {
		dir = filepath.Join(b.TempDir(), "vault")
		if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: n, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	state := b.TempDir()
	query := map[string]any{"query": "compost"}
	ask := func(s *mcp.ClientSession) bool {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: query})
		if err != nil || res.IsError {
			b.Fatalf("search: %v %+v", err, res)
		}
		m, _ := res.StructuredContent.(map[string]any)
		return m["partial"] != true
	}
	run := func(fresh bool) (first, whole time.Duration) {
		if fresh {
			os.RemoveAll(state)
		}
		start := time.Now()
		cmd := exec.Command(bin, "serve", "--vault", dir, "--state", state, "--no-watch", "--index-wait", "0", "--log-level", "error")
		s := connect(b, &mcp.CommandTransport{Command: cmd})
		defer s.Close()
		done := ask(s)
		first = time.Since(start)
		for !done {
			time.Sleep(10 * time.Millisecond)
			done = ask(s)
		}
		return first, time.Since(start)
	}
	for i := 0; i < b.N; i++ {
		first, whole := run(true)
		b.ReportMetric(first.Seconds()*1000, "ms-cold-first-answer")
		b.ReportMetric(whole.Seconds()*1000, "ms-cold-first-true-answer")
		first, whole = run(false)
		b.ReportMetric(first.Seconds()*1000, "ms-restart-first-answer")
		b.ReportMetric(whole.Seconds()*1000, "ms-restart-first-true-answer")
	}
	b.ReportMetric(float64(countNotes(dir)), "notes")
}
