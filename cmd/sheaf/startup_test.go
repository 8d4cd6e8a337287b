package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// initLine is one package's line of GODEBUG=inittrace=1: its path and the
// allocations its initialisation made.
var initLine = regexp.MustCompile(`(?m)^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestStartupCompilesNoSchema: the JSON Schema library mcp-go/server links
// compiled its five drafts' metaschemas at package initialisation (21k
// allocations, 8 ms of every spawn) although Sheaf never validates with it.
// third_party/jsonschema defers that to its first compiler; this fails if
// go.work's replace that selects it goes.
func TestStartupCompilesNoSchema(t *testing.T) {
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sheaf --version: %v\n%s", err, out)
	}
	seen := false
	for _, m := range initLine.FindAllStringSubmatch(string(out), -1) {
		if m[1] != "github.com/santhosh-tekuri/jsonschema/v6" {
			continue
		}
		seen = true
		if allocs, _ := strconv.Atoi(m[3]); allocs > 1000 {
			t.Errorf("jsonschema's initialisation made %d allocations (%s bytes): it compiles its metaschemas at start-up again", allocs, m[2])
		}
	}
	if !seen {
		t.Logf("jsonschema/v6 has no init line: it is not linked or initialises nothing\n%s", out)
	}
}
