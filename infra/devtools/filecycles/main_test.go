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
	if testing.Short() {
		t.Skip("compiles shared/core's dependencies")
	}
	ms, err := measure("github.com/sheaf-dev/sheaf/shared/core")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Files < 40 {
		t.Fatalf("measured %+v, want shared/core and its 40-odd files", ms)
	}
	if got := ms[0].Largest(); len(got) > maxCoreCycle {
		var b strings.Builder
		for _, c := range ms[0].Cycles {
			b.WriteString("\n  " + strings.Join(c, " "))
		}
		t.Errorf("shared/core: %d files reach each other, at most %d may; its cycles:%s", len(got), maxCoreCycle, b.String())
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
