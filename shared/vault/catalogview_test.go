package vault

import (
	"fmt"
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

// BenchmarkFilter10k is what a folder-scoped caller's first call after a
// catalog change costs (later calls reuse the filtered catalog): half of a
// 10k-note catalog kept.
func BenchmarkFilter10k(b *testing.B) {
	c := syntheticCatalog(10000)
	keep := func(p string) bool { return p < "folder 5" }
	b.ReportAllocs()
	for b.Loop() {
		if c.Filter(keep).Len() == 0 {
			b.Fatal("kept nothing")
		}
	}
}

func TestCatalogResync(t *testing.T) {
	c := NewCatalog()
	add := func(c *Catalog, p, src string) {
		n := Parse(p, []byte(src)).Note
		n.Hash = fmt.Sprintf("%x", len(src)) + src[:min(4, len(src))]
		c.Upsert(n)
	}
	add(c, "Public/a.md", "#x [[b]]")
	add(c, "Public/b.md", "#x")
	add(c, "Secret/s.md", "#x [[a]]")
	c.UpsertAttachment(Attachment{Path: "Public/p.png", Size: 1})
	keep := func(p string) bool { return strings.HasPrefix(p, "Public/") }
	f := c.Filter(keep)
	gen := f.Generation()

	// Unchanged: nothing moves.
	f.Resync(c, keep)
	if f.Generation() != gen {
		t.Error("resync of an unchanged catalog changed the generation")
	}
	// Changes in the base: an edit, a new note, a removal, a hidden edit,
	// an attachment change, a problem.
	add(c, "Public/a.md", "#y plain")
	add(c, "Public/new.md", "#x [[a]]")
	c.Remove("Public/b.md")
	add(c, "Secret/s.md", "#z")
	c.UpsertAttachment(Attachment{Path: "Public/p.png", Size: 2})
	c.SetProblem("Public/bad.md", "binary")
	c.SetProblem("Secret/bad.md", "binary")
	f.Resync(c, keep)
	want := c.Filter(keep)
	if f.Generation() == gen || f.Len() != want.Len() || !slicesEqual(pathsOf(f.Notes()), pathsOf(want.Notes())) {
		t.Fatalf("resync: %v, want %v", pathsOf(f.Notes()), pathsOf(want.Notes()))
	}
	for _, tag := range []string{"x", "y", "z"} {
		if g, w := len(f.NotesByTag(tag)), len(want.NotesByTag(tag)); g != w {
			t.Errorf("tag %s: %d notes, want %d", tag, g, w)
		}
	}
	if g, w := len(f.Backlinks("Public/a.md")), len(want.Backlinks("Public/a.md")); g != w {
		t.Errorf("backlinks %d, want %d", g, w)
	}
	if a, _ := f.Attachment("Public/p.png"); a.Size != 2 {
		t.Errorf("attachment not updated: %+v", a)
	}
	if len(f.Problems()) != 1 {
		t.Errorf("problems %v", f.Problems())
	}
	// A reloaded base (a new catalog with the same versions) changes nothing.
	re := c.Filter(func(string) bool { return true }).Base()
	gen = f.Generation()
	f.Resync(re, keep)
	if f.Generation() != gen {
		t.Error("resync against an equal catalog changed the generation")
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// BenchmarkResync10k is a folder-scoped caller's catalog after one note of
// a 10k-note vault changed (in place, or in a reloaded snapshot).
func BenchmarkResync10k(b *testing.B) {
	c := syntheticCatalog(10000)
	keep := func(p string) bool { return p < "folder 5" }
	f := c.Filter(keep)
	n, _ := c.Note("folder 3/Note number 53.md")
	b.ReportAllocs()
	for b.Loop() {
		n.Hash += "x"
		c.Upsert(n)
		f.Resync(c, keep)
	}
}
