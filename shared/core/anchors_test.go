package core

import (
	"context"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/rank"
	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// TestAnchorTextAtQueryTime: the display text of links into a note ranks
// it, read from the catalog when the question is asked, so that another
// note gaining, changing or losing such a link changes the ranking at once
// without re-indexing the note linked to.
func TestAnchorTextAtQueryTime(t *testing.T) {
	files := map[string]string{
		"Export.md":   "# Export to PDF\n\nUse the command palette: Export current note.\n",
		"Printing.md": "# Printing\n\nA printable document of a page: paper size and margins.\n",
		"Index.md":    "# Index\n\nSee [[Export]].\n",
	}
	for _, n := range []string{"Garden", "Bees", "Compost", "Tools", "Roster", "Budget"} {
		files[n+".md"] = "# " + n + "\n\nNotes about " + n + ".\n"
	}
	f := newSemFixture(t, files)
	ctx := context.Background()
	p := rank.Default
	p.AnchorWeight = 1
	f.v.Ranking = &p
	ask := func() textindex.Hit {
		t.Helper()
		cat, _ := f.v.Catalogs.Catalog(ctx)
		res, err := askLexical(ctx, f.v, cat, textindex.ParseQuestion("hand someone a printable document"), textindex.Filter{}, 5, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.Path == "Export.md" {
				return h
			}
		}
		return textindex.Hit{}
	}
	if h := ask(); h.Features.Anchor != 0 {
		t.Fatalf("before any anchor: Export.md anchor share %v", h.Features.Anchor)
	}
	// Index links Export with words of the question: Export gains them.
	f.write(t, "Index.md", "# Index\n\nSee [[Export|a printable document]].\n")
	if h := ask(); h.Path != "Export.md" || h.Features.Anchor < 0.5 {
		t.Errorf("after the anchor: Export.md %+v, want an anchor share of at least 0.5", h)
	}
	// The link's display text changes: the share follows.
	f.write(t, "Index.md", "# Index\n\nSee [[Export|the export command]].\n")
	if h := ask(); h.Features.Anchor != 0 {
		t.Errorf("after the anchor changed: Export.md anchor share %v, want 0", h.Features.Anchor)
	}
}

func TestWordShare(t *testing.T) {
	q := textindex.ParseQuestion("Can a page have nicknames?")
	if got := rank.WordShare(q, []string{"Nickname of the page"}); got != 1 {
		t.Errorf("every word (by stem): %v", got)
	}
	if got := rank.WordShare(q, []string{"aliases"}); got != 0 {
		t.Errorf("no word: %v", got)
	}
	if got := rank.WordShare(q, []string{"pages"}); got != 0.5 {
		t.Errorf("one of two words: %v", got)
	}
}
