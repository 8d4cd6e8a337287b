package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocs fails when docs/tools.md or docs/configuration.md no longer match
// the code: run `make docs` and commit the result.
func TestDocs(t *testing.T) {
	docs, err := generatedDocs(t.Context(), rootCmd())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range docs {
		got, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Errorf("%v: run make docs", err)
			continue
		}
		if string(got) != want {
			t.Errorf("docs/%s is out of date: run make docs (go run ./cmd/sheaf docs) and commit it", name)
		}
	}
	for _, want := range []string{"## search_and_read", "| `query` (required) |"} {
		if !strings.Contains(docs["tools.md"], want) {
			t.Errorf("tools.md lacks %q", want)
		}
	}
	for _, want := range []string{"`--http`", "`SHEAF_VAULT`", "| serve |"} {
		if !strings.Contains(docs["configuration.md"], want) {
			t.Errorf("configuration.md lacks %q", want)
		}
	}
}
