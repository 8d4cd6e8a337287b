package core

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoProtocol: the core knows no protocol. Its dependencies (tests
// aside) include neither an MCP library nor the MCP surface above it.
func TestNoProtocol(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/mark3labs/mcp-go") || strings.HasPrefix(dep, "github.com/modelcontextprotocol/") ||
			strings.HasPrefix(dep, "github.com/sheaf-dev/sheaf/shared/tools") {
			t.Errorf("shared/core depends on %s", dep)
		}
	}
}
