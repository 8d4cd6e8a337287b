package vault

import "testing"

func TestNameOf(t *testing.T) {
	for in, want := range map[string]string{
		"a/b/Note.md": "Note", "Note.MD": "Note", "top.md": "top", "a/b.txt": "b.txt",
		"dir.md/x": "x", "日本/メモ.md": "メモ", "a/.md": "", "": "",
	} {
		if got := NameOf(in); got != want {
			t.Errorf("NameOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsNotePath(t *testing.T) {
	for in, want := range map[string]bool{
		"note.md": true, "a/b/Note.MD": true, "a/b.markdown": false, "a/b.png": false,
		".hidden.md": false, ".obsidian/x.md": false, "a/.trash/b.md": false, "a/b.md/c": false, "": false,
	} {
		if got := IsNotePath(in); got != want {
			t.Errorf("IsNotePath(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsHidden(t *testing.T) {
	for in, want := range map[string]bool{
		".sheaf/catalog": true, "a/.git/x": true, ".x": true, "a/b.c/d": false, "a/b": false, "": false,
	} {
		if got := IsHidden(in); got != want {
			t.Errorf("IsHidden(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestLinkKey(t *testing.T) {
	for in, want := range map[string]string{
		"Note":               "note",
		"  Folder/Note.md  ": "folder/note",
		"Note.MD":            "note",
		"./a/b.md":           "a/b",
		"/abs/Path":          "abs/path",
		"././x":              "x",
		`a\b`:                `a\b`,
		"Cafe\u0301":         "caf\u00e9",
		"CAFÉ":               "café",
		"img.PNG":            "img.png",
		"":                   "",
		"notes.md.md":        "notes.md",
	} {
		if got := LinkKey(in); got != want {
			t.Errorf("LinkKey(%q) = %q, want %q", in, got, want)
		}
	}
}
