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
// maxBootstrap bounds each arm64 bootstrap: 30 MB, the goal. They were
// 35.1 MB (MCP) and 28.0 MB (indexer), then 28.0 MB and 23.9 MB, until the
// ingest tools brought the MCP function to 30.9 MB (30.7 MB after pages
// written without html/template and config.Flags as a function). Then
// google.golang.org/protobuf v1.36.12, whose descriptor formatter no longer
// calls methods by name, took the linker out of its "methods by reflection"
// mode: 23.5 MB (MCP) and 17.6 MB (indexer), with the legacy CJK charset
// tables ingest decodes still in (TestLambdaNoReflectMethods keeps the
// mode off; docs/architecture.md).
var maxBootstrap = map[string]int64{"McpFunction": 30e6, "IndexerFunction": 30e6}

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

// TestLambdaNoReflectMethods links both arm64 bootstraps through build.mk
// with the default tags and the linker's -dumpdep (its reachability graph;
// the code linked is the same) and fails if a reachable function calls
// methods by reflection: reflect.Value.Method, or MethodByName with a name
// not known at build time. One such call puts the linker in a mode that
// keeps every exported method of every type reaching an interface: 7.1 MB
// of the MCP bootstrap and 7.3 MB of the indexer's, when protobuf v1.36.11's
// descriptor formatter called MethodByName("Methods") and so kept Go 1.26's
// reflect.Value.Methods, which calls Method.
func TestLambdaNoReflectMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("links two bootstraps; skipped under -short")
	}
	tool(t, "make", "make")
	for _, fn := range []string{"McpFunction", "IndexerFunction"} {
		cmd := exec.Command("make", "-s", "-C", "..", "-f", "build.mk", "build-"+fn,
			"ARTIFACTS_DIR="+t.TempDir(), "LAMBDA_ARCH=arm64", "LAMBDA_LDFLAGS=-s -w -dumpdep")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make build-%s -dumpdep: %v\n%.2000s", fn, err, out)
		}
		if !strings.Contains(string(out), "main.main") {
			t.Fatalf("%s: -dumpdep printed no graph (%d bytes); the check would see nothing", fn, len(out))
		}
		if bad := reflectMethodCalls(string(out)); len(bad) > 0 {
			t.Errorf("%s: reachable functions call methods by reflection, so the linker keeps every exported method:\n%s", fn, strings.Join(bad, "\n"))
		}
	}
}

// TestSheafNoReflectMethods: the same for the sheaf binary as `make build`
// (and the release) links it: with the grpcnotrace tag, so that gRPC's
// x/net/trace and its html/template stay out, nothing reachable calls
// methods by reflection, and the linker drops the exported methods no one
// calls (42.7 MB with them, 33.3 MB without, on linux/amd64).
func TestSheafNoReflectMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("links the sheaf binary; skipped under -short")
	}
	tool(t, "make", "make")
	cmd := exec.Command("make", "-s", "-C", "..", "build", "BIN="+filepath.Join(t.TempDir(), "sheaf"), "LDFLAGS=-s -w -dumpdep")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make build -dumpdep: %v\n%.2000s", err, out)
	}
	if !strings.Contains(string(out), "main.main") {
		t.Fatalf("-dumpdep printed no graph (%d bytes); the check would see nothing", len(out))
	}
	if bad := reflectMethodCalls(string(out)); len(bad) > 0 {
		t.Errorf("reachable functions call methods by reflection, so the linker keeps every exported method:\n%s", strings.Join(bad, "\n"))
	}
}

// reflectMethodCalls returns the edges of a -dumpdep graph ("from -> to",
// or " -> to" under the same from) that reach a symbol the linker marks
// <ReflectMethod>.
func reflectMethodCalls(graph string) []string {
	var from string
	var hit []string
	for _, line := range strings.Split(graph, "\n") {
		a, b, ok := strings.Cut(line, " -> ")
		if !ok {
			continue
		}
		if a != "" {
			from = a
		}
		if strings.Contains(b, "<ReflectMethod>") {
			hit = append(hit, from+" -> "+b)
		}
	}
	return hit
}

// TestSheafBuildsLeaveOutTrace: every place that builds the sheaf binary
// for users (make build, the release, the container) passes grpcnotrace,
// the tag TestSheafNoReflectMethods checks through make build.
func TestSheafBuildsLeaveOutTrace(t *testing.T) {
	for _, f := range []string{"../Makefile", "../infra/release/release.sh", "../Dockerfile"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		builds := 0
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, " build ") || !strings.Contains(line, "./cmd/sheaf") {
				continue
			}
			builds++
			if !strings.Contains(line, "grpcnotrace") && !strings.Contains(line, "$(GOTAGS)") {
				t.Errorf("%s builds sheaf without -tags grpcnotrace: %s", f, strings.TrimSpace(line))
			}
		}
		if builds == 0 {
			t.Errorf("%s: no build of ./cmd/sheaf found; the check would see nothing", f)
		}
	}
	if mk, _ := os.ReadFile("../Makefile"); !strings.Contains(string(mk), "GOTAGS  := grpcnotrace") {
		t.Error("the Makefile's GOTAGS is not grpcnotrace")
	}
}
