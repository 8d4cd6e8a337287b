package auth

import (
	"strings"
	"testing"
)

func mustFolders(t testing.TB, rules ...string) *Folders {
	t.Helper()
	f, err := ParseFolders(rules)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFoldersAllows(t *testing.T) {
	f := mustFolders(t, "Projects/", "!Projects/secret/**", "Projects/secret/shared.md", "Journal/2026-*.md", "**/public/*")
	for p, want := range map[string]bool{
		"Projects/a.md":               true,
		"Projects/deep/er/b.md":       true,
		"Projects/secret/x.md":        false,
		"Projects/secret/shared.md":   true, // the last match wins
		"Projects":                    true, // "Projects/" is "Projects/**", which matches the folder itself
		"Journal/2026-01-01.md":       true,
		"Journal/2025-12-31.md":       false,
		"Journal/sub/2026-01-01.md":   false,
		"Inbox/public/note.md":        true,
		"Inbox/public/deeper/note.md": false,
		"Inbox/idea.md":               false,
		"projects/a.md":               false, // case matters
		"Projects/.obsidian/app.json": false, // always denied
		".sheaf/keys.json":            false,
		"Projects/.git/config":        false,
		".trash/old.md":               false,
	} {
		if got := f.Allows(p); got != want {
			t.Errorf("Allows(%q) = %v, want %v", p, got, want)
		}
	}

	// A list starting with a denial starts from the whole vault.
	g := mustFolders(t, "!Private/**")
	if !g.Allows("Inbox/a.md") || g.Allows("Private/a.md") || g.Allows(".sheaf/x") {
		t.Error("deny-first list")
	}
	// No rules: the whole vault, but never the always-denied folders.
	for _, none := range []*Folders{nil, mustFolders(t)} {
		if none.Limited() || !none.Allows("a/b.md") || none.Allows(".obsidian/x") || none.Allows("a/.git/b") {
			t.Error("empty allowlist")
		}
	}
	// NFC: a rule written in NFD matches the NFC path the store gives.
	h := mustFolders(t, "Cafe\u0301/**")
	if !h.Allows("Caf\u00e9/menu.md") {
		t.Error("NFD rule does not match the NFC path")
	}
}

func TestFoldersFolderChecks(t *testing.T) {
	f := mustFolders(t, "Work/Projects/**", "!Work/Projects/secret/**", "Notes/*.md")
	for dir, want := range map[string]bool{
		"":                     true,
		"Work":                 true, // leads to Work/Projects
		"Work/Projects":        true,
		"Work/Projects/a":      true,
		"Work/Projects/secret": false,
		"Work/Other":           false,
		"Notes":                true, // holds visible files
		"Notes/sub":            false,
		"Inbox":                false,
		".obsidian":            false,
		"Work/Projects/.trash": false,
	} {
		if got := f.ShowsFolder(dir); got != want {
			t.Errorf("ShowsFolder(%q) = %v, want %v", dir, got, want)
		}
	}
	for dir, want := range map[string]bool{
		"":                     true,
		"Work":                 true,
		"Work/Projects/x":      true,
		"Work/Other":           false,
		"Notes":                true,
		"Notes/sub":            false, // Notes/*.md reaches no deeper
		"Inbox":                false,
		".sheaf":               false,
		"Work/Projects/secret": true, // errs towards true: the view hides it
	} {
		if got := f.Reaches(dir); got != want {
			t.Errorf("Reaches(%q) = %v, want %v", dir, got, want)
		}
	}
}

func TestParseFoldersRejects(t *testing.T) {
	long := make([]string, MaxFolderRules+1)
	for i := range long {
		long[i] = "a/**"
	}
	if _, err := ParseFolders(long); err == nil {
		t.Error("too many rules accepted")
	}
	for _, bad := range []string{"", "!", "/etc/**", "../x/**", "a/../b", "a//b", "./a", "a\\b", "[", "a/{b", "x\x00y", "\xff/**", strings.Repeat("a", 600)} {
		if _, err := ParseFolders([]string{bad}); err == nil {
			t.Errorf("rule %q accepted", bad)
		}
	}
}

func FuzzFolders(f *testing.F) {
	f.Add("Projects/**", "!Projects/s/**", "Projects/s/a.md")
	f.Add("**/public/*", "Journal/2026-*.md", "x/public/y")
	f.Add("{a,b}/**", "!a/c", "a/c")
	f.Fuzz(func(t *testing.T, r1, r2, p string) {
		fs, err := ParseFolders([]string{r1, r2})
		if err != nil {
			return
		}
		// Never panics, and the always-denied folders stay denied.
		allowed := fs.Allows(p)
		_ = fs.ShowsFolder(p)
		_ = fs.Reaches(p)
		if allowed && Denied(p) {
			t.Fatalf("rules %q %q allow always-denied %q", r1, r2, p)
		}
		if fs.Allows(".sheaf/" + p) {
			t.Fatalf("rules %q %q allow .sheaf/%s", r1, r2, p)
		}
	})
}
