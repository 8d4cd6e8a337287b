package vault

import (
	"maps"
	"testing"
)

func TestReplaceCatalogCopiesProblems(t *testing.T) {
	dst, src := NewCatalog(), NewCatalog()
	dst.SetProblem("mine.md", "binary")
	dst.SetProblem("both.md", "old reason")
	src.SetProblem("both.md", "new reason")
	src.SetProblem("theirs.md", "too large")
	dst.ReplaceWith(src)
	want := map[string]string{"both.md": "new reason", "theirs.md": "too large"}
	if got := dst.Problems(); !maps.Equal(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}
