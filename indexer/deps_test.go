package indexer

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOneJob: the indexer package is the pipeline only. The doors keep
// what is theirs: event decoding and the webhook (shared/s3events, which
// links aws-lambda-go), the file watcher (shared/config/local/watch, which
// links fsnotify), the catalog's store layout and its read side
// (shared/catalogstore); and it links no MCP, tool surface or core.
func TestOneJob(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	banned := []string{
		"github.com/fsnotify/fsnotify",
		"github.com/aws/aws-lambda-go",
		"github.com/mark3labs/mcp-go",
		"github.com/modelcontextprotocol/go-sdk",
		"github.com/sheaf-dev/sheaf/shared/s3events",
		"github.com/sheaf-dev/sheaf/shared/config",
		"github.com/sheaf-dev/sheaf/shared/catalogstore",
		"github.com/sheaf-dev/sheaf/shared/core",
		"github.com/sheaf-dev/sheaf/shared/tools",
	}
	for _, dep := range deps {
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("indexer links %s", dep)
			}
		}
	}
}
