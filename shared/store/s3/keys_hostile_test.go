package s3

import (
	"strings"
	"testing"
)

// TestPathHostileKeys maps keys written by other tools to vault paths:
// nothing outside the prefix, no aliases, NFC paths.
func TestPathHostileKeys(t *testing.T) {
	s := New(nil, "b", "vault")
	long := strings.Repeat("d", 250) + "/" + strings.Repeat("e", 250) + "/" + strings.Repeat("f", 250) + "/" + strings.Repeat("g", 240) + ".md"
	for key, want := range map[string]string{
		"vault/a.md":              "a.md",
		"vault/with space + 1.md": "with space + 1.md",
		"vault/x%2By.md":          "x%2By.md",
		"vault/100%.md":           "100%.md",
		"vault/#h?.md":            "#h?.md",
		"vault/Cafe\u0301.md":     "Caf\u00e9.md",
		"vault/\U0001F4A1.md":     "\U0001F4A1.md",
		"vault/" + long:           long,
		"vault/.sheaf/x.md":       ".sheaf/x.md", // hidden: Path maps it, walk and the indexer skip it
		"vault":                   "",
		"vault/":                  "",
		"vault-other/x.md":        "",
		"vaultx.md":               "",
		"vault/./b.md":            "",
		"vault/a/./b.md":          "",
		"vault/a//b.md":           "",
		"vault/../x.md":           "",
		"vault//x.md":             "",
		"vault/dir/":              "",
		"vault/bad\xff.md":        "",
		"vault/" + long + "/" + strings.Repeat("z", 30) + ".md": "", // over MaxPath
		"x.md": "",
	} {
		got, ok := s.Path(key)
		if got != want || ok != (want != "") {
			t.Errorf("Path(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	whole := New(nil, "b", "")
	if p, ok := whole.Path("a/b.md"); !ok || p != "a/b.md" {
		t.Errorf("whole bucket: %q %v", p, ok)
	}
	if _, ok := whole.Path("/a.md"); ok {
		t.Errorf("whole bucket: a leading slash mapped")
	}
}
