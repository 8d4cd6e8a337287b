package main

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/functions/internal/cloudtest"
	"github.com/sheaf-dev/sheaf/functions/internal/rietest"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// BenchmarkLambdaColdStart: the MCP function's cold start on a big vault,
// under the Lambda emulator, tool by tool. The catalog of a vault indexed
// by `sheaf index --state SHEAF_BENCH_STATE` (of the vault at
// SHEAF_BENCH_VAULT; skipped without both) is put in a versitygw bucket;
// for each tool a fresh emulator starts the function at its first
// invocation, as Lambda does, and the official Go MCP client times its
// initialize (the function's init included) and then the tool's first
// call; then the scheduled warm-up (KeepWarm) on a fresh instance, and the
// slowest call on it. The function runs as on a Lambda of SHEAF_BENCH_LAMBDA_MEMORY MB
// (default 1024: GOMEMLIMIT from AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
// SHEAF_BENCH_LAMBDA_CPU also limits it to that share of a CPU, as Lambda
// does (memory / 1769 MB: 0.58 at 1024 MB, 1.16 at 2048 MB; a cgroup
// quota, which needs a writable cgroup cpu controller).
func BenchmarkLambdaColdStart(b *testing.B) {
	dir, state := os.Getenv("SHEAF_BENCH_VAULT"), os.Getenv("SHEAF_BENCH_STATE")
	if dir == "" || state == "" {
		b.Skip("set SHEAF_BENCH_VAULT and SHEAF_BENCH_STATE (a `sheaf index --state` of that vault)")
	}
	bin := build(b)
	var group *testbin.CPUGroup
	if q := os.Getenv("SHEAF_BENCH_LAMBDA_CPU"); q != "" {
		quota, err := strconv.ParseFloat(q, 64)
		if err != nil {
			b.Fatal(err)
		}
		group = testbin.NewCPUGroup(b, quota)
	}
	v := &cloudtest.Vault{S3: s3test.Start(b, s3test.Options{}), Meili: meilifake.New(b), Bucket: "sheaf-vault", Prefix: "notes"}
	v.S3.CreateBucket(b, v.Bucket)
	v.S3.PutDir(b, v.Bucket, v.Key(".sheaf/catalog"), filepath.Join(state, "catalog"))
	note := vaultgen.FirstNote(dir)
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(note)))
	if err != nil {
		b.Fatal(err)
	}
	v.Put(b, note, data)
	tools := toolstest.ColdStartCalls(note)
	memory := cmp.Or(os.Getenv("SHEAF_BENCH_LAMBDA_MEMORY"), "1024")
	for i := 0; i < b.N; i++ {
		for _, tool := range tools {
			r := rietest.Start(b, bin, append(v.Env(), "AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+memory)...)
			if group != nil {
				if err := group.Join(r.Pid()); err != nil {
					b.Fatal(err)
				}
			}
			endpoint := (&rietest.Gateway{RIE: r}).Start(b) + "/mcp"
			t0 := time.Now()
			s := cloudtest.Connect(b, endpoint, cloudtest.Token)
			t1 := time.Now()
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool.Tool, Arguments: tool.Args})
			if err != nil || res.IsError {
				b.Fatalf("%s: %v %+v", tool.Tool, err, res)
			}
			t2 := time.Now()
			b.ReportMetric(ms(t1.Sub(t0)), "ms-initialize-before-"+tool.Tool)
			b.ReportMetric(ms(t2.Sub(t1)), "ms-first-"+tool.Tool)
			if rss, _ := testbin.Memory(testbin.Child(r.Pid())); rss > 0 {
				b.ReportMetric(rss/1024, "MB-RSS-after-"+tool.Tool)
			}
			s.Close()
			r.Stop() // no emulator is frozen between invocations: a stopped one takes no CPU from the next
		}
		// KeepWarm: the scheduled warm-up, then the slowest cold call on
		// the warmed instance.
		r := rietest.Start(b, bin, append(v.Env(), "AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+memory)...)
		if group != nil {
			if err := group.Join(r.Pid()); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		if out, err := r.Invoke(context.Background(), []byte(`{"warm": true}`)); err != nil {
			b.Fatalf("warm-up: %v %s", err, out)
		}
		b.ReportMetric(ms(time.Since(t0)), "ms-warm-up")
		s := cloudtest.Connect(b, (&rietest.Gateway{RIE: r}).Start(b)+"/mcp", cloudtest.Token)
		last := tools[len(tools)-1]
		t1 := time.Now()
		if res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: last.Tool, Arguments: last.Args}); err != nil || res.IsError {
			b.Fatalf("%s after the warm-up: %v %+v", last.Tool, err, res)
		}
		b.ReportMetric(ms(time.Since(t1)), "ms-"+last.Tool+"-after-warm-up")
		s.Close()
		r.Stop()
	}
}
