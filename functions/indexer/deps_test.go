package main

import (
	"os/exec"
	"strings"
	"testing"
)

// goList runs go list with args and returns its words.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, out)
	}
	return strings.Fields(string(out))
}

// TestLinksNoMCP: the indexer function links neither an MCP server
// library nor the tool surface (it only runs the pipeline), and the
// pipeline itself imports no store adapter (the doors choose theirs).
func TestLinksNoMCP(t *testing.T) {
	for _, dep := range goList(t, "-deps", ".") {
		if strings.HasPrefix(dep, "github.com/mark3labs/mcp-go") || strings.HasPrefix(dep, "github.com/sheaf-dev/sheaf/shared/tools") {
			t.Errorf("functions/indexer links %s", dep)
		}
	}
	for _, imp := range goList(t, "-f", `{{join .Imports " "}}`, "github.com/sheaf-dev/sheaf/indexer") {
		if strings.HasPrefix(imp, "github.com/sheaf-dev/sheaf/shared/store/") {
			t.Errorf("indexer imports the store adapter %s", imp)
		}
	}
}
