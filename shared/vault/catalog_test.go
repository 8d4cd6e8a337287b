package vault

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// wl builds a wikilink as the parser would, splitting "#heading" and "#^block".
func wl(target string, line int) Link {
	l := Link{Kind: KindWikilink, Line: line}
	if i := strings.IndexByte(target, '#'); i >= 0 {
		target, l.Heading = target[:i], target[i+1:]
		if strings.HasPrefix(l.Heading, "^") {
			l.Block, l.Heading = l.Heading[1:], ""
		}
	}
	l.Target, l.Key = target, LinkKey(target)
	return l
}

// md builds a Markdown link.
func md(target string, line int) Link {
	l := wl(target, line)
	l.Kind = KindMarkdown
	return l
}

// note builds a Note by hand.
func note(p string, links ...Link) Note {
	return Note{Path: p, Name: NameOf(p), Title: NameOf(p), Links: links}
}

func catalogOf(notes ...Note) *Catalog {
	c := NewCatalog()
	for _, n := range notes {
		c.Upsert(n)
	}
	return c
}

func paths(ns []Note) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, n.Path)
	}
	return out
}

func TestNoteLookup(t *testing.T) {
	c := catalogOf(note("Inbox/Café.md"), note("a/X.md"), note("a/x.md"), note("Solo.md"))
	for _, tc := range []struct {
		in, want string
	}{
		{"Inbox/Café.md", "Inbox/Café.md"},
		{"Inbox/Cafe\u0301.md", "Inbox/Café.md"}, // NFD
		{"inbox/CAFÉ.md", "Inbox/Café.md"},       // unique case-insensitive match
		{"solo.md", "Solo.md"},
		{"a/X.md", "a/X.md"},
		{"A/x.MD", ""}, // two case-insensitive matches: none picked
		{"missing.md", ""},
	} {
		n, ok := c.Note(tc.in)
		if got := n.Path; got != tc.want || ok != (tc.want != "") {
			t.Errorf("Note(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if c.Len() != 4 {
		t.Errorf("Len = %d", c.Len())
	}
	if got := paths(c.Notes()); !reflect.DeepEqual(got, []string{"Inbox/Café.md", "Solo.md", "a/X.md", "a/x.md"}) {
		t.Errorf("Notes = %q", got)
	}
}

func TestUpsertNormalizesPath(t *testing.T) {
	c := catalogOf(note("Cafe\u0301.md"))
	if _, ok := c.Note("Café.md"); !ok {
		t.Fatal("NFD path not stored as NFC")
	}
	if !c.Remove("Cafe\u0301.md") || c.Len() != 0 {
		t.Fatal("Remove by NFD path failed")
	}
	if c.Remove("Café.md") {
		t.Fatal("second Remove reported success")
	}
}

func TestGeneration(t *testing.T) {
	c := NewCatalog()
	g := c.Generation()
	c.Upsert(note("a.md"))
	c.UpsertAttachment(Attachment{Path: "x.png"})
	c.SetIndexedAt(time.Unix(5, 0))
	c.Remove("a.md")
	c.RemoveAttachment("x.png")
	if got := c.Generation() - g; got != 5 {
		t.Errorf("generation moved by %d, want 5", got)
	}
	c.Remove("a.md") // no-op
	if got := c.Generation() - g; got != 5 {
		t.Errorf("no-op Remove bumped the generation")
	}
	if !c.IndexedAt().Equal(time.Unix(5, 0)) {
		t.Errorf("IndexedAt = %v", c.IndexedAt())
	}
}

func TestProblems(t *testing.T) {
	c := NewCatalog()
	c.Upsert(note("Café.md"))
	g := c.Generation()
	if !c.SetProblem("Cafe\u0301.md", "frontmatter: bad") || !c.SetProblem("bin.md", "binary") {
		t.Fatal("SetProblem reported no change")
	}
	if c.SetProblem("bin.md", "binary") || c.SetProblem("gone.md", "") || c.SetProblem("", "why") {
		t.Error("a no-op SetProblem reported a change")
	}
	if got := c.Generation() - g; got != 2 {
		t.Errorf("generation moved by %d, want 2 (no-ops do not count)", got)
	}
	want := map[string]string{"Café.md": "frontmatter: bad", "bin.md": "binary"}
	got := c.Problems()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Problems = %q, want %q", got, want)
	}
	got["other.md"] = "mutating the copy"
	if len(c.Problems()) != 2 {
		t.Error("Problems returned the catalog's own map")
	}
	// Removing the note keeps its problem: the file is still there.
	c.Remove("Café.md")
	if _, ok := c.Problems()["Café.md"]; !ok {
		t.Error("Remove cleared the problem")
	}
	if !c.SetProblem("bin.md", "too large") || c.Problems()["bin.md"] != "too large" {
		t.Error("SetProblem did not replace the reason")
	}
	if !c.SetProblem("Café.md", "") || !c.SetProblem("bin.md", "") || len(c.Problems()) != 0 {
		t.Errorf("problems after clearing = %q", c.Problems())
	}
}

func TestByID(t *testing.T) {
	n1, n2, n3 := note("one.md"), note("two.md"), note("three.md")
	n1.ID = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
	n2.ID = "3f2504e0-aaaa-11d3-9a0c-0305e82c3301"
	n3.ID = "abc"
	c := catalogOf(n1, n2, n3, note("none.md"))
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"3f2504e0-4f89-11d3-9a0c-0305e82c3301", []string{"one.md"}}, // exact, case-insensitive
		{"3F2504E0-4F", []string{"one.md"}},                          // unique prefix
		{"3f2504", []string{"one.md", "two.md"}},                     // ambiguous prefix
		{"3f250", []string{}},                                        // prefix too short
		{"abc", []string{"three.md"}},                                // short but exact
		{"ABC", []string{"three.md"}},
		{"", []string{}},
		{"ffffff", []string{}},
	} {
		if got := paths(c.ByID(tc.q)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ByID(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	c.Remove("one.md")
	if got := paths(c.ByID("3f2504")); !reflect.DeepEqual(got, []string{"two.md"}) {
		t.Errorf("after Remove: %q", got)
	}
}

func TestAttachments(t *testing.T) {
	c := NewCatalog()
	for _, p := range []string{"b/scan.PDF", "a/pic.png", "board.canvas", "blob", "data.xyz-unknown", "note.md"} {
		c.UpsertAttachment(Attachment{Path: p, Size: 3})
	}
	want := map[string]string{
		"b/scan.PDF":       "application/pdf",
		"a/pic.png":        "image/png",
		"board.canvas":     "application/json",
		"blob":             "application/octet-stream",
		"data.xyz-unknown": "application/octet-stream",
		"note.md":          "text/markdown",
	}
	got := c.Attachments()
	if len(got) != len(want) || got[0].Path != "a/pic.png" || got[len(got)-1].Path != "note.md" {
		t.Fatalf("Attachments = %+v", got)
	}
	for _, a := range got {
		if a.MimeType != want[a.Path] {
			t.Errorf("%s: MimeType %q, want %q", a.Path, a.MimeType, want[a.Path])
		}
	}
	c.UpsertAttachment(Attachment{Path: "a/pic.png", MimeType: "image/x-custom"})
	if a, _ := c.Attachment("a/pic.png"); a.MimeType != "image/x-custom" {
		t.Errorf("explicit MimeType overwritten: %q", a.MimeType)
	}
	if !c.RemoveAttachment("a/pic.png") || c.RemoveAttachment("a/pic.png") {
		t.Error("RemoveAttachment result wrong")
	}
	if _, ok := c.Attachment("a/pic.png"); ok {
		t.Error("attachment still present")
	}
}

// Removing every note must leave every index empty: the incremental
// bookkeeping deletes exactly what it added.
func TestIndexesEmptyAfterRemove(t *testing.T) {
	c := NewCatalog()
	for i := range 50 {
		n := note(fmt.Sprintf("f%d/N%d.md", i%5, i), wl("Other", 1), md("../x.md", 2), wl("", 3))
		n.ID = fmt.Sprintf("id-%08d", i)
		n.Aliases = []string{"Alias", fmt.Sprint(i)}
		n.Tags = []string{"a/b/c", "x"}
		n.Entities = []string{"E"}
		n.Frontmatter = map[string]any{"k": []any{1, "s", true, nil, map[string]any{}}, "n": 2.5}
		c.Upsert(n)
		c.Upsert(n) // replacing must not leak either
		c.UpsertAttachment(Attachment{Path: fmt.Sprintf("f%d/img%d.png", i%5, i)})
	}
	for _, n := range c.Notes() {
		c.Remove(n.Path)
	}
	for _, a := range c.Attachments() {
		c.RemoveAttachment(a.Path)
	}
	for name, ix := range map[string]index{
		"folded": c.folded, "pathKeys": c.pathKeys, "bases": c.bases, "aliases": c.aliases,
		"ids": c.ids, "idHeads": c.idHeads, "tags": c.tags, "entities": c.entities,
		"linkSegs": c.linkSegs, "attKeys": c.attKeys, "attBases": c.attBases,
	} {
		if len(ix) != 0 {
			t.Errorf("index %s not empty: %v", name, ix)
		}
	}
	if len(c.meta) != 0 || len(c.notes) != 0 || len(c.atts) != 0 {
		t.Errorf("meta %v, notes %d, atts %d", c.meta, len(c.notes), len(c.atts))
	}
}

// Readers run while a writer adds, renames and removes notes (run with -race).
func TestConcurrentReadersAndWriter(t *testing.T) {
	c := NewCatalog()
	for i := range 20 {
		c.Upsert(note(fmt.Sprintf("n%d.md", i), wl(fmt.Sprintf("n%d", (i+1)%20), 1)))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf("n%d.md", (i+r)%20)
				c.Backlinks(p)
				c.Inbound(p)
				c.Outgoing(p)
				c.Graph(p, 3)
				c.List(ListFilter{Tags: []string{"t"}})
				c.Tags("")
				c.ResolveTarget("n0.md", "n5")
				c.Notes()
				c.Problems()
			}
		})
	}
	for i := range 500 {
		p := fmt.Sprintf("n%d.md", i%20)
		n := note(p, wl(fmt.Sprintf("n%d", (i+3)%20), 1))
		n.Tags = []string{"t"}
		c.Upsert(n)
		if i%7 == 0 {
			c.Remove(p)
			c.SetProblem(p, "removed")
		} else {
			c.SetProblem(p, "")
		}
	}
	close(stop)
	wg.Wait()
}

// Upserting into a large catalog costs the same as into a small one.
func BenchmarkUpsertInto10k(b *testing.B) {
	c := syntheticCatalog(10000)
	n, _ := c.Note("folder 3/Note number 53.md")
	b.ReportAllocs()
	for b.Loop() {
		c.Upsert(n)
	}
}

func BenchmarkBacklinks10k(b *testing.B) {
	c := syntheticCatalog(10000)
	b.ReportAllocs()
	for b.Loop() {
		if len(c.Backlinks("folder 3/Note number 53.md")) == 0 {
			b.Fatal("no backlinks")
		}
	}
}

func BenchmarkGraphDepth2In10k(b *testing.B) {
	c := syntheticCatalog(10000)
	b.ReportAllocs()
	for b.Loop() {
		c.Graph("folder 3/Note number 53.md", 2)
	}
}
