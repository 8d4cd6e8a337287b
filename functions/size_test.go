package functions_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lambdaDeps lists the packages the two functions link for linux/arch with
// the given build tags.
func lambdaDeps(t *testing.T, tags, arch string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", strings.ReplaceAll(tags, " ", ",")+",sheaf_envcreds,grpcnotrace", "./mcp", "./indexer")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -tags %s: %v", tags, err)
	}
	return strings.Fields(string(out))
}

// linked returns the packages of deps that contain any of the fragments.
func linked(deps []string, fragments ...string) []string {
	var hit []string
	for _, p := range deps {
		for _, f := range fragments {
			if strings.Contains(p, f) {
				hit = append(hit, p)
				break
			}
		}
	}
	return hit
}

// TestLambdaSize builds both bootstraps through build.mk, as `sam build`
// does, for arm64 and x86_64, with the default LAMBDA_TAGS and with
// sheaf_noqdrant added, and logs their sizes (run with -v to see them;
// sizes are reported). It asserts that each arm64 bootstrap (the
// template's default architecture) is under maxBootstrap, and what each
// build links: no SQLite, local wiring or CLI packages in either, nor the
// AWS SDK's config package and its STS/SSO clients (sheaf_envcreds), nor
// the SDK's SSM client; no Qdrant or gRPC in the tagged one.
// maxBootstrap bounds each arm64 bootstrap. The goal is 30 MB for both;
// they were 35.1 MB (MCP) and 28.0 MB (indexer), then 28.0 MB and
// 23.9 MB, until the ingest tools brought the MCP function to 30.9 MB;
// pages written without html/template (0.46 MB) and config.Flags as a
// function (0.26 MB) brought it to 30.5 MB. The last 0.5 MB are the
// legacy CJK charset tables, which ingest needs for Shift_JIS, GBK, Big5
// and EUC-KR pages and which go-readability's DOM package links by
// importing x/net/html/charset: leaving them out takes a patched copy of
// that package and a replace directive, and a module with one cannot be
// installed with go install (docs/architecture.md).
var maxBootstrap = map[string]int64{"McpFunction": 31e6, "IndexerFunction": 30e6}

func TestLambdaSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds eight bootstraps; skipped under -short")
	}
	tool(t, "make", "make")
	never := []string{"modernc.org/", "/shared/config/local", "/shared/textindex/embedded", "/shared/vectors/embedded",
		"github.com/spf13/cobra", "github.com/schollz/progressbar",
		"github.com/aws/aws-sdk-go-v2/config", "github.com/aws/aws-sdk-go-v2/service/sts", "github.com/aws/aws-sdk-go-v2/service/ssm"}
	qdrant := []string{"github.com/qdrant/", "google.golang.org/grpc", "/shared/vectors/qdrant"}
	for _, tags := range []string{"lambda.norpc", "lambda.norpc sheaf_noqdrant"} { // the README's space-separated form
		deps := lambdaDeps(t, tags, "arm64")
		if bad := linked(deps, never...); len(bad) > 0 {
			t.Errorf("-tags %s links packages a Lambda does not need: %v", tags, bad)
		}
		q := linked(deps, qdrant...)
		if noq := strings.Contains(tags, "sheaf_noqdrant"); noq && len(q) > 0 {
			t.Errorf("-tags %s still links Qdrant: %v", tags, q)
		} else if !noq && len(q) == 0 {
			t.Errorf("-tags %s links no Qdrant client; the default build must support qdrant://", tags)
		}
		for _, arch := range []string{"arm64", "x86_64"} {
			sizes := make([]string, 0, 2)
			for _, fn := range []string{"McpFunction", "IndexerFunction"} {
				dir := t.TempDir()
				cmd := exec.Command("make", "-s", "-C", "..", "-f", "build.mk", "build-"+fn,
					"ARTIFACTS_DIR="+dir, "LAMBDA_ARCH="+arch, "LAMBDA_TAGS="+tags)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("make build-%s LAMBDA_ARCH=%s LAMBDA_TAGS=%s: %v\n%s", fn, arch, tags, err, out)
				}
				fi, err := os.Stat(filepath.Join(dir, "bootstrap"))
				if err != nil {
					t.Fatal(err)
				}
				if arch == "arm64" && fi.Size() >= maxBootstrap[fn] {
					t.Errorf("%s arm64 LAMBDA_TAGS=%q: %.1f MB, want under %.0f MB", fn, tags, float64(fi.Size())/1e6, float64(maxBootstrap[fn])/1e6)
				}
				sizes = append(sizes, fmt.Sprintf("%s %.1f MB", strings.TrimSuffix(fn, "Function"), float64(fi.Size())/1e6))
			}
			t.Logf("%-7s LAMBDA_TAGS=%-31q %s", arch, tags, strings.Join(sizes, ", "))
		}
	}
}
