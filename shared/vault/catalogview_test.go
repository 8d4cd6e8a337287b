package vault

import (
	"slices"
	"strings"
	"testing"
)

func TestCatalogFilter(t *testing.T) {
	c := NewCatalog()
	for p, src := range map[string]string{
		"Public/a.md":           "---\ntags: [shared]\naliases: [Alpha]\n---\n# A\nSee [[b]] and [[Secret Plan]] and [[Hidden Alias]].\n",
		"Public/b.md":           "#shared #public\nBack to [[a]].\n",
		"Secret/Secret Plan.md": "---\naliases: [Hidden Alias]\ntags: [shared, secret]\nid: 0123456789\n---\nLinks [[a]] #secret\n",
	} {
		c.Upsert(Parse(p, []byte(src)).Note)
	}
	c.UpsertAttachment(Attachment{Path: "Public/pic.png"})
	c.UpsertAttachment(Attachment{Path: "Secret/pic.png"})
	c.SetProblem("Secret/bad.md", "binary")
	c.SetProblem("Public/bad.md", "too large")

	keep := func(p string) bool { return strings.HasPrefix(p, "Public/") }
	f := c.Filter(keep)
	if f.Base() != c || c.Base() != nil || f.Generation() != c.Generation() {
		t.Fatalf("base/generation: %p %p %d %d", f.Base(), c.Base(), f.Generation(), c.Generation())
	}
	if f.Len() != 2 || len(f.Attachments()) != 1 || len(f.Problems()) != 1 {
		t.Errorf("filtered: %d notes, %v, %v", f.Len(), f.Attachments(), f.Problems())
	}
	if _, ok := f.Note("Secret/Secret Plan.md"); ok {
		t.Error("a hidden note is visible")
	}
	if got := f.ByID("0123456789"); len(got) != 0 {
		t.Errorf("ByID finds a hidden note: %v", got)
	}
	// Links to hidden notes read as unresolved; backlinks from them vanish.
	resolved := 0
	for _, l := range f.Outgoing("Public/a.md") {
		for _, p := range append([]string{l.Path}, l.Candidates...) {
			if p != "" && !keep(p) {
				t.Errorf("link %q points at hidden %s", l.Target, p)
			}
		}
		if l.Resolved() {
			resolved++
		}
	}
	if resolved != 1 {
		t.Errorf("%d links resolve, want 1 ([[b]])", resolved)
	}
	for _, b := range f.Backlinks("Public/a.md") {
		if !keep(b.Source) {
			t.Errorf("backlink from hidden %s", b.Source)
		}
	}
	for _, tc := range f.Tags("") {
		if tc.Tag == "secret" {
			t.Error("a tag only hidden notes carry is listed")
		}
		if tc.Tag == "shared" && tc.Count != 2 {
			t.Errorf("shared counts %d, want the 2 visible notes", tc.Count)
		}
	}
	// The full catalog is untouched.
	if c.Len() != 3 || len(c.Backlinks("Public/a.md")) != 2 {
		t.Errorf("base changed: %d notes, %v", c.Len(), c.Backlinks("Public/a.md"))
	}
	// A filter of a filter keeps the original base.
	if ff := f.Filter(func(string) bool { return true }); ff.Base() != c || ff.Len() != 2 {
		t.Error("refiltering")
	}
	if !slices.Equal(pathsOf(f.Notes()), []string{"Public/a.md", "Public/b.md"}) {
		t.Errorf("notes %v", pathsOf(f.Notes()))
	}
}

func pathsOf(ns []Note) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Path
	}
	return out
}
