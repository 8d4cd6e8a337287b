package main

import (
	"strings"
	"testing"
)

// maxCoreCycle bounds the files of shared/core that may all reach each
// other (3 of 48 when this test was written: the ingest tool's files).
const maxCoreCycle = 5

// TestCoreStaysLayered: shared/core's files stay in layers (the framework,
// note loading, hits and retrieval, then the tools' files; see
// docs/architecture.md), so no large set of its files reach each other.
// When this fails, the components it prints say which files now do: move
// the declaration a lower file needs down to it, rather than reaching up.
func TestCoreStaysLayered(t *testing.T) {
	stayLayered(t, "github.com/sheaf-dev/sheaf/shared/core", 40, maxCoreCycle)
}

// maxToolsCycle bounds the files of shared/tools that may all reach each
// other: none when this test was written (26 files in layers).
const maxToolsCycle = 0

// TestToolsStayLayered: shared/tools' files stay in layers (the framework:
// results, access rules, Spec, Server, proposals, define, the guard; then
// one file per family; then families.go and mcpserver.go at the top; see
// docs/architecture.md), so no framework file reaches up into a family's.
// When this fails, move the declaration a lower file needs down to it.
func TestToolsStayLayered(t *testing.T) {
	stayLayered(t, "github.com/sheaf-dev/sheaf/shared/tools", 20, maxToolsCycle)
}

// stayLayered fails t when more than limit files of package pkg (which has
// at least minFiles) reach each other.
func stayLayered(t *testing.T, pkg string, minFiles, limit int) {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the package's dependencies")
	}
	ms, err := measure(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Files < minFiles {
		t.Fatalf("measured %+v, want %s and at least %d files", ms, pkg, minFiles)
	}
	if got := ms[0].Largest(); len(got) > limit {
		var b strings.Builder
		for _, c := range ms[0].Cycles {
			b.WriteString("\n  " + strings.Join(c, " "))
		}
		t.Errorf("%s: %d files reach each other, at most %d may; its cycles:%s", pkg, len(got), limit, b.String())
	}
}

// TestCycles: Tarjan's components of more than one node, largest first.
func TestCycles(t *testing.T) {
	e := map[string]map[string]bool{
		"a": {"b": true}, "b": {"c": true}, "c": {"a": true, "d": true},
		"d": {"e": true}, "e": {"d": true}, "f": {"a": true},
	}
	got := cycles([]string{"a", "b", "c", "d", "e", "f"}, e)
	if len(got) != 2 || strings.Join(got[0], " ") != "a b c" || strings.Join(got[1], " ") != "d e" {
		t.Errorf("cycles = %v, want [[a b c] [d e]]", got)
	}
}
