package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
)

// callTool calls a tool and fails on any error, returning its result.
func callTool(b testing.TB, s *mcp.ClientSession, name string, args map[string]any) map[string]any {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		b.Fatalf("%s(%v): %v", name, args, res.Meta)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// benchWrites times write_note through an MCP client: creates of new ~2 KB
// notes, overwrites of one note with its content_hash, and appends.
func benchWrites(b *testing.B, s *mcp.ClientSession) {
	body := strings.Repeat("Some text of a note, with a [[Compost]] link and a #tag.\n", 36)
	lat := map[string][]time.Duration{}
	hash := ""
	for i := 0; i < b.N; i++ {
		for j := range 100 {
			p := fmt.Sprintf("Bench/%d-%d.md", i, j)
			t0 := time.Now()
			callTool(b, s, "write_note", map[string]any{"path": p, "content": body})
			lat["create"] = append(lat["create"], time.Since(t0))

			args := map[string]any{"path": "Bench/target.md", "content": body + fmt.Sprint(i, j), "mode": "overwrite", "expected_hash": hash}
			if hash == "" {
				args = map[string]any{"path": "Bench/target.md", "content": body}
			}
			t0 = time.Now()
			out := callTool(b, s, "write_note", args)
			lat["overwrite"] = append(lat["overwrite"], time.Since(t0))
			hash, _ = out["content_hash"].(string)

			t0 = time.Now()
			callTool(b, s, "write_note", map[string]any{"path": p, "content": "one more line", "mode": "append"})
			lat["append"] = append(lat["append"], time.Since(t0))
			out = callTool(b, s, "read_note", map[string]any{"path": "Bench/target.md"})
			hash, _ = out["content_hash"].(string)
		}
	}
	var all []time.Duration
	for mode, ds := range lat {
		p50, p99 := percentiles(ds)
		b.ReportMetric(p50, "ms-p50-"+mode)
		b.ReportMetric(p99, "ms-p99-"+mode)
		all = append(all, ds...)
	}
	p50, p99 := percentiles(all)
	b.ReportMetric(p50, "ms-p50-all")
	b.ReportMetric(p99, "ms-p99-all")
}

// BenchmarkWriteNoteLocal: write_note over stdio on a folder (the sample
// vault), each write logged in log.md and indexed before it returns.
func BenchmarkWriteNoteLocal(b *testing.B) {
	s := stdioSession(b, sampleVault(b), "--no-watch")
	b.ResetTimer()
	benchWrites(b, s)
}

// BenchmarkWriteNoteLocalHistoryOff is BenchmarkWriteNoteLocal without
// note history (--history off): what recording versions costs a write.
func BenchmarkWriteNoteLocalHistoryOff(b *testing.B) {
	s := stdioSession(b, sampleVault(b), "--no-watch", "--history", "off")
	b.ResetTimer()
	benchWrites(b, s)
}

// BenchmarkWriteNoteS3: write_note over stdio on the sample vault in
// versitygw, Meilisearch (the in-repo fake) updated by the server itself.
func BenchmarkWriteNoteS3(b *testing.B) {
	v := sampleCloudVault(b)
	s := cloudStdioSession(b, v)
	b.ResetTimer()
	benchWrites(b, s)
}

// BenchmarkWriteNoteS3History is BenchmarkWriteNoteS3 on a bucket that
// keeps versions (versitygw with versioning), each write's attribution in
// its object metadata: the cost of history on S3 (BenchmarkWriteNoteS3's
// bucket keeps none).
func BenchmarkWriteNoteS3History(b *testing.B) {
	srv := s3test.Start(b, s3test.Options{Versioning: true})
	srv.CreateBucket(b, "vault")
	srv.EnableVersioning(b, "vault")
	v := &cloudVault{s3: srv, meili: meilifake.New(b)}
	v.s3.PutDir(b, "vault", "notes", "../../infra/sample-vault")
	if out, err := v.command().CombinedOutput(); err != nil {
		b.Fatalf("reconcile: %v\n%s", err, out)
	}
	s := cloudStdioSession(b, v)
	b.ResetTimer()
	benchWrites(b, s)
}

// moveVault writes a vault of filler notes plus Hub/Target.md and n notes
// linking to it, in turn by name, by path, with display text, to a heading,
// embedded, and by relative Markdown path.
func moveVault(b testing.TB, n int) string {
	dir := filepath.Join(b.TempDir(), "vault")
	write := func(p, body string) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("Hub/Target.md", "# Target\n\n## Section\n\nThe note everyone links to.\n")
	forms := []string{"[[Target]]", "[[Hub/Target]]", "[[Target|the target]]", "[[Target#Section]]", "![[Target]]", "[rel](../Hub/Target.md)"}
	for i := range n {
		f := forms[i%len(forms)]
		write(fmt.Sprintf("Notes %d/Linker %d.md", i%20, i), fmt.Sprintf("# Linker %d\n\nSee %s and [[Linker %d]].\n\n%s\n", i, f, (i+1)%n, strings.Repeat("Filler text. ", 60)))
	}
	for i := range 1500 {
		write(fmt.Sprintf("Filler/%d/Note %d.md", i%30, i), fmt.Sprintf("# Note %d\n\n%s [[Note %d]]\n", i, strings.Repeat("Words words. ", 80), (i+7)%1500))
	}
	return dir
}

// BenchmarkMoveNote500Backlinks: move_note of a note 500 others link to
// (in six spellings), in a vault of 2,000 notes, through an MCP client;
// each iteration moves it away and back.
func BenchmarkMoveNote500Backlinks(b *testing.B) {
	dir := moveVault(b, 500)
	s := stdioSession(b, dir, "--no-watch")
	callTool(b, s, "get_vault_info", nil)
	b.ResetTimer()
	var total time.Duration
	links := 0.0
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		out := callTool(b, s, "move_note", map[string]any{"path": "Hub/Target.md", "new_path": "Archive/Moved target.md"})
		total += time.Since(t0)
		links, _ = out["links_rewritten"].(float64)
		t0 = time.Now()
		callTool(b, s, "move_note", map[string]any{"path": "Archive/Moved target.md", "new_path": "Hub/Target.md"})
		total += time.Since(t0)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(2*b.N), "ms/move")
	b.ReportMetric(links, "links-rewritten")
}
