package vault

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	people := note("People/Ada Lovelace.md")
	people.Aliases = []string{"Ada", "The Countess"}
	dup1 := note("Tags/Dup.md")
	dup1.Aliases = []string{"Shared"}
	dup2 := note("Other/Dup.md")
	dup2.Aliases = []string{"Shared"}
	alias := note("Dup overview.md")
	alias.Aliases = []string{"dup"}
	c := catalogOf(
		note("a/Note.md"), note("b/Note.md"),
		note("x/sub/Deep.md"), note("x/y/src.md"), note("x/y/Other.md"), note("x/Other.md"),
		note("Café.md"), note("README.md"), note("readme.md"),
		note("Top.md"), note("p/q/Top.md"), people,
		note("Meeting.2024.md"), dup1, dup2, alias,
	)
	c.UpsertAttachment(Attachment{Path: "assets/diagram.png"})
	c.UpsertAttachment(Attachment{Path: "a/logo.png"})
	c.UpsertAttachment(Attachment{Path: "b/logo.png"})

	type res = Resolution
	amb := func(ps ...string) res { return res{Candidates: ps} }
	for _, tc := range []struct {
		name string
		from string
		link Link
		want res
	}{
		{"same-note heading", "x/y/src.md", wl("#Intro", 1), res{Path: "x/y/src.md"}},
		{"ambiguous basename", "Top.md", wl("Note", 1), amb("a/Note.md", "b/Note.md")},
		{"exact path", "Top.md", wl("a/Note", 1), res{Path: "a/Note.md"}},
		{"exact path with .md and case", "Top.md", wl("A/NOTE.md", 1), res{Path: "a/Note.md"}},
		{"leading slash", "Top.md", wl("/a/Note", 1), res{Path: "a/Note.md"}},
		{"path suffix", "Top.md", wl("sub/Deep", 1), res{Path: "x/sub/Deep.md"}},
		{"path suffix needs a whole segment", "Top.md", wl("ub/Deep", 1), res{}},
		{"basename", "Top.md", wl("deep", 1), res{Path: "x/sub/Deep.md"}},
		{"root exact beats basename", "a/Note.md", wl("Top", 1), res{Path: "Top.md"}},
		{"basename with dots", "Top.md", wl("Meeting.2024", 1), res{Path: "Meeting.2024.md"}},
		{"NFD target", "Top.md", wl("Cafe\u0301", 1), res{Path: "Café.md"}},
		{"upper-case NFD target", "Top.md", wl("CAFE\u0301", 1), res{Path: "Café.md"}},
		{"exact case among case variants", "Top.md", wl("README", 1), res{Path: "README.md"}},
		{"exact case among case variants 2", "Top.md", wl("readme.md", 1), res{Path: "readme.md"}},
		{"case variants otherwise ambiguous", "Top.md", wl("Readme", 1), amb("README.md", "readme.md")},
		{"alias", "Top.md", wl("ada", 1), res{Path: "People/Ada Lovelace.md"}},
		{"alias with spaces and case", "Top.md", wl("the countess", 1), res{Path: "People/Ada Lovelace.md"}},
		{"ambiguous alias", "Top.md", wl("Shared", 1), amb("Other/Dup.md", "Tags/Dup.md")},
		{"unique alias settles ambiguous basename", "Top.md", wl("Dup", 1), res{Path: "Dup overview.md"}},
		{"markdown relative", "x/y/src.md", md("Other.md", 1), res{Path: "x/y/Other.md"}},
		{"markdown parent", "x/y/src.md", md("../Other.md", 1), res{Path: "x/Other.md"}},
		{"markdown parent twice", "x/y/src.md", md("../../Top.md", 1), res{Path: "Top.md"}},
		{"markdown leaving the vault", "x/y/src.md", md("../../../Top.md", 1), res{}},
		{"markdown falls back to vault path", "x/y/src.md", md("a/Note.md", 1), res{Path: "a/Note.md"}},
		{"markdown absolute", "x/y/src.md", md("/Top.md", 1), res{Path: "Top.md"}},
		{"wikilink ./ is relative", "x/y/src.md", wl("./Other", 1), res{Path: "x/y/Other.md"}},
		{"wikilink ../ is relative", "x/y/src.md", wl("../Other", 1), res{Path: "x/Other.md"}},
		{"wikilink basename ambiguous", "Top.md", wl("Other", 1), amb("x/Other.md", "x/y/Other.md")},
		{"attachment by basename", "Top.md", wl("diagram.png", 1), res{Path: "assets/diagram.png", Attachment: true}},
		{"attachment by path", "Top.md", wl("assets/Diagram.PNG", 1), res{Path: "assets/diagram.png", Attachment: true}},
		{"attachment relative markdown", "a/Note.md", md("logo.png", 1), res{Path: "a/logo.png", Attachment: true}},
		{"attachment ambiguous", "Top.md", wl("logo.png", 1), amb("a/logo.png", "b/logo.png")},
		{"attachment needs its extension", "Top.md", wl("diagram", 1), res{}},
		{"unresolved", "Top.md", wl("Nowhere", 1), res{}},
		{"blank", "Top.md", wl("   ", 1), res{Path: "Top.md"}},
		{"key left empty by caller", "Top.md", Link{Kind: KindWikilink, Target: "a/Note"}, res{Path: "a/Note.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Resolve(tc.from, tc.link); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Resolve(%q, %q) = %+v, want %+v", tc.from, tc.link.Target, got, tc.want)
			}
		})
	}
	if got := c.ResolveTarget("Top.md", "Ada"); got.Path != "People/Ada Lovelace.md" || !got.Resolved() || got.Ambiguous() {
		t.Errorf("ResolveTarget = %+v", got)
	}
	if got := c.ResolveTarget("Top.md", "Note"); !got.Ambiguous() {
		t.Errorf("ResolveTarget ambiguous = %+v", got)
	}
}

func TestOutgoing(t *testing.T) {
	c := catalogOf(note("src.md", wl("B", 3), wl("Missing", 1), wl("#Top", 7)), note("B.md"))
	got := c.Outgoing("src.md")
	if len(got) != 3 {
		t.Fatalf("Outgoing = %+v", got)
	}
	if got[0].Target != "B" || got[0].Path != "B.md" || got[1].Path != "" || got[2].Path != "src.md" {
		t.Errorf("Outgoing = %+v", got)
	}
	if c.Outgoing("nope.md") != nil {
		t.Error("Outgoing of a missing note")
	}
}

type bl struct {
	src  string
	line int
}

func backlinkSet(bs []Backlink) []bl {
	out := []bl{}
	for _, b := range bs {
		out = append(out, bl{b.Source, b.Link.Line})
	}
	return out
}

func TestBacklinksEverySpelling(t *testing.T) {
	target := note("Projects/Lettuce.md", wl("#Intro", 9), wl("Lettuce", 10), wl("Elsewhere", 11))
	target.Aliases = []string{"Salad", "Green/Leaf"}
	c := catalogOf(
		target,
		note("a.md",
			wl("Lettuce", 1),
			wl("Projects/Lettuce#Intro", 2),
			wl("lettuce.md", 3),
			wl("LETTUCE#^blk", 4),
			wl("Lettuce salad", 5), // another note
			wl("Archive/Lettuce", 6),
		),
		note("Projects/b.md", md("Lettuce.md", 5), md("./Lettuce.md#Intro", 6), wl("./Lettuce", 7)),
		note("Other/c.md", md("../Projects/Lettuce.md", 2), wl("salad", 3), wl("green/leaf", 4), md("../Lettuce.md", 8)),
		note("Lettuce salad.md"),
		note("Unrelated.md", wl("Something", 1)),
	)
	want := []bl{
		{"Other/c.md", 2}, {"Other/c.md", 3}, {"Other/c.md", 4},
		{"Projects/Lettuce.md", 9}, {"Projects/Lettuce.md", 10},
		{"Projects/b.md", 5}, {"Projects/b.md", 6}, {"Projects/b.md", 7},
		{"a.md", 1}, {"a.md", 2}, {"a.md", 3}, {"a.md", 4},
	}
	if got := backlinkSet(c.Backlinks("Projects/Lettuce.md")); !reflect.DeepEqual(got, want) {
		t.Errorf("Backlinks =\n%v\nwant\n%v", got, want)
	}
	// A second note of the same name makes bare [[Lettuce]] ambiguous: it
	// stops counting, while path-qualified and relative links still do.
	c.Upsert(note("Archive/Lettuce.md"))
	want = []bl{
		{"Other/c.md", 2}, {"Other/c.md", 3}, {"Other/c.md", 4},
		{"Projects/Lettuce.md", 9},
		{"Projects/b.md", 5}, {"Projects/b.md", 6}, {"Projects/b.md", 7},
		{"a.md", 2},
	}
	if got := backlinkSet(c.Backlinks("Projects/Lettuce.md")); !reflect.DeepEqual(got, want) {
		t.Errorf("after adding Archive/Lettuce.md Backlinks =\n%v\nwant\n%v", got, want)
	}
	if got := backlinkSet(c.Backlinks("Archive/Lettuce.md")); !reflect.DeepEqual(got, []bl{{"a.md", 6}}) {
		t.Errorf("Archive backlinks = %v", got)
	}
	if c.Backlinks("missing.md") != nil {
		t.Error("backlinks of a missing note")
	}
}

func TestBacklinksToAttachment(t *testing.T) {
	c := catalogOf(note("n.md", wl("diagram.png", 1), md("assets/diagram.png", 2), wl("diagram", 3)))
	c.UpsertAttachment(Attachment{Path: "assets/diagram.png"})
	if got := backlinkSet(c.Backlinks("assets/diagram.png")); !reflect.DeepEqual(got, []bl{{"n.md", 1}, {"n.md", 2}}) {
		t.Errorf("attachment backlinks = %v", got)
	}
}

// Links are keys: renaming a note (Remove + Upsert) changes what other
// notes' links resolve to without re-indexing those notes.
func TestRenameUpdatesBacklinks(t *testing.T) {
	old := note("Old.md")
	old.Aliases = []string{"Nickname"}
	src := note("src.md", wl("Old", 1), wl("New", 2), wl("Nickname", 3))
	other := note("other.md", wl("folder/New", 1))
	c := catalogOf(old, src, other)
	if got := backlinkSet(c.Backlinks("Old.md")); !reflect.DeepEqual(got, []bl{{"src.md", 1}, {"src.md", 3}}) {
		t.Fatalf("before: %v", got)
	}
	before, _ := c.Note("src.md")
	gen := c.Generation()

	renamed := old
	renamed.Path, renamed.Name = "folder/New.md", "New"
	c.Remove("Old.md")
	c.Upsert(renamed)

	if g := c.Generation() - gen; g != 2 {
		t.Errorf("rename took %d mutations, want 2", g)
	}
	if after, _ := c.Note("src.md"); !reflect.DeepEqual(before, after) {
		t.Error("the linking note changed")
	}
	if got := c.Backlinks("Old.md"); got != nil {
		t.Errorf("old path still has backlinks: %v", got)
	}
	want := []bl{{"other.md", 1}, {"src.md", 2}, {"src.md", 3}}
	if got := backlinkSet(c.Backlinks("folder/New.md")); !reflect.DeepEqual(got, want) {
		t.Errorf("new path backlinks = %v, want %v", got, want)
	}
	out := c.Outgoing("src.md")
	if out[0].Path != "" || out[1].Path != "folder/New.md" || out[2].Path != "folder/New.md" {
		t.Errorf("Outgoing after rename = %+v", out)
	}
}

// Whatever a link resolves to, Backlinks of that file must list the link:
// the inverted index may never miss a spelling that Resolve accepts.
func FuzzResolveBacklinks(f *testing.F) {
	for _, s := range [][3]string{
		{"x/y/src.md", "../Other.md", "markdown"},
		{"src.md", "sub/Deep", "wikilink"},
		{"src.md", "CAFE\u0301", "wikilink"},
		{"a/src.md", "./diagram.png", "wikilink"},
		{"src.md", "the countess", "wikilink"},
		{"src.md", "", "wikilink"},
		{"dir/src.md", "/x/sub/deep.md", "markdown"},
	} {
		f.Add(s[0], s[1], s[2] == "markdown")
	}
	f.Fuzz(func(t *testing.T, from, target string, markdown bool) {
		if !strings.HasSuffix(from, ".md") {
			from += ".md"
		}
		ada := note("People/Ada Lovelace.md")
		ada.Aliases = []string{"The Countess", "sub/alias"}
		l := wl(target, 7)
		l.Target = target // keep any '#' as written
		l.Key = LinkKey(target)
		if markdown {
			l.Kind = KindMarkdown
		}
		c := catalogOf(
			note("x/sub/Deep.md"), note("x/Other.md"), note("x/y/Other.md"), note("Café.md"),
			note("README.md"), note("readme.md"), ada, note(from, l),
		)
		c.UpsertAttachment(Attachment{Path: "a/diagram.png"})
		r := c.Resolve(from, l)
		src, _ := c.Note(from)
		switch {
		case r.Path != "":
			if _, ok := c.Note(r.Path); !ok && !r.Attachment {
				t.Fatalf("resolved to a missing note %q", r.Path)
			}
			if _, ok := c.Attachment(r.Path); r.Attachment && !ok {
				t.Fatalf("resolved to a missing attachment %q", r.Path)
			}
			found := false
			for _, b := range c.Backlinks(r.Path) {
				found = found || (b.Source == src.Path && b.Link.Line == 7)
			}
			if !found {
				t.Fatalf("Resolve(%q, %q) = %q but Backlinks(%q) misses it", from, target, r.Path, r.Path)
			}
		case len(r.Candidates) == 1:
			t.Fatalf("one candidate but unresolved: %+v", r)
		case !slices.IsSorted(r.Candidates):
			t.Fatalf("candidates not sorted: %q", r.Candidates)
		}
	})
}

// inboundOf is Inbound as Backlinks says it should be.
func inboundOf(c *Catalog, p string) Inbound {
	var in Inbound
	seen := map[string]bool{}
	for _, b := range c.Backlinks(p) {
		if b.Source == p {
			continue
		}
		seen[b.Source] = true
		if b.Link.Display != "" {
			in.Anchors = append(in.Anchors, b.Link.Display)
		}
	}
	in.Sources = len(seen)
	return in
}

// Inbound is kept between calls, and follows every change of the catalog
// that changes what links resolve to: a new linking note, a second note of
// the same name, an attachment taking a link, a rename.
func TestInboundFollowsTheCatalog(t *testing.T) {
	shown := wl("Lettuce", 2)
	shown.Display = "green leaves"
	c := catalogOf(note("Notes/Lettuce.md"), note("a.md", wl("Lettuce", 1), shown), note("b.md", wl("lettuce.png", 1)))
	check := func(step string, p string, sources int) {
		t.Helper()
		got, want := c.Inbound(p), inboundOf(c, p)
		if got.Sources != want.Sources || !reflect.DeepEqual(got.Anchors, want.Anchors) {
			t.Errorf("%s: Inbound(%s) = %+v, Backlinks say %+v", step, p, got, want)
		}
		if got.Sources != sources {
			t.Errorf("%s: Inbound(%s) has %d sources, want %d", step, p, got.Sources, sources)
		}
		if again := c.Inbound(p); again.Sources != got.Sources || !reflect.DeepEqual(again.Anchors, got.Anchors) {
			t.Errorf("%s: asked again, Inbound(%s) = %+v, then %+v", step, p, got, again)
		}
	}
	check("start", "Notes/Lettuce.md", 1)
	if got := c.Inbound("Notes/Lettuce.md").Anchors; !reflect.DeepEqual(got, []string{"green leaves"}) {
		t.Errorf("anchors = %q", got)
	}
	c.Upsert(note("c.md", wl("lettuce", 4)))
	check("a new linking note", "Notes/Lettuce.md", 2)
	c.Upsert(note("Archive/Lettuce.md"))
	check("a second note of the name", "Notes/Lettuce.md", 0)
	c.Remove("Archive/Lettuce.md")
	check("that note removed", "Notes/Lettuce.md", 2)
	c.UpsertAttachment(Attachment{Path: "lettuce.png"})
	check("an attachment", "lettuce.png", 1)
	c.Remove("Notes/Lettuce.md")
	check("the note renamed away", "Notes/Lettuce.md", 0)
	renamed := note("Salad.md")
	renamed.Aliases = []string{"Lettuce"}
	c.Upsert(renamed)
	check("its new name's alias", "Salad.md", 2)
}
