package embedded

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// TestNoteCacheSeesWrites: a question answers the same from notes read
// from SQLite and from the note cache, and a note changed by this process
// or by another one on the same file is read again.
func TestNoteCacheSeesWrites(t *testing.T) {
	ctx := context.Background()
	ix, other := twoOnOneFile(t)
	var docs []textindex.Doc
	for i := range 40 {
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("n%02d.md", i), Title: fmt.Sprint("note ", i),
			Body: fmt.Sprintf("The orchard keeps %d quinces. Nothing else is kept there.", i)})
	}
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	q := textindex.ParseQuestion("which note keeps the quinces of the orchard?")
	answer := func() string {
		t.Helper()
		res, err := ix.Ask(ctx, q, textindex.Options{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%+v", res.Hits)
	}
	uncached := func() string {
		t.Helper()
		ix.notes.mu.Lock()
		ix.notes.notes, ix.notes.bytes = nil, 0
		ix.notes.mu.Unlock()
		return answer()
	}
	before := uncached()
	ix.notes.mu.Lock()
	cached := len(ix.notes.notes)
	ix.notes.mu.Unlock()
	if cached == 0 {
		t.Fatal("no note cached after a question")
	}
	if warm := answer(); warm != before {
		t.Fatalf("from the cache:\n%s\nread:\n%s", warm, before)
	}
	for i, w := range []*Index{ix, other} {
		// A note of the pool gets a new title and body: its features
		// change, which only a note read again shows.
		doc := textindex.Doc{Path: "n07.md", Title: fmt.Sprint("orchard quinces ", i),
			Body: "The orchard keeps quinces, quinces and quinces."}
		if err := w.Upsert(ctx, doc); err != nil {
			t.Fatal(err)
		}
		warm := answer()
		if cold := uncached(); warm != cold {
			t.Fatalf("after write %d, from the cache:\n%s\nread:\n%s", i, warm, cold)
		}
		if warm == before {
			t.Fatalf("after write %d the answer did not change", i)
		}
		before = warm
	}
}

// The cache keeps at most its budget, dropping the least recently used
// notes first.
func TestNoteCacheBudget(t *testing.T) {
	note := func(id int64) askNote {
		return askNote{id: id, path: "p.md", best: -1, passages: []scoredPassage{{id: id << passageBits, terms: "a b c", size: 3}}}
	}
	n := note(1)
	each := noteCost(&n)
	c := noteCache{budget: 5 * each}
	for id := range int64(5) {
		c.add(note(id))
	}
	c.notes[0].used = c.clock + 1 // 0 is used again
	c.clock++
	c.add(note(5)) // over budget: down to 3/4, the least recently used first
	if _, ok := c.notes[0]; !ok {
		t.Error("the note used last was dropped")
	}
	if _, ok := c.notes[1]; ok {
		t.Error("the least recently used note was kept")
	}
	if c.bytes > c.budget {
		t.Errorf("%d bytes kept, budget %d", c.bytes, c.budget)
	}
}

// Questions asked at once, while notes are written, share the caches
// without a race (go test -race) and each answers what the index held.
func TestAskConcurrentWithWrites(t *testing.T) {
	ctx := context.Background()
	ix := memIndex(t, wordDocs(200, 3)...)
	questions := []string{"what about apples and bananas?", "kiwi or lemon?", "which notes hold plums, pears and figs?"}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 30 {
				q := textindex.ParseQuestion(questions[(g+i)%len(questions)])
				if _, err := ix.Ask(ctx, q, textindex.Options{Limit: 5}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			doc := textindex.Doc{Path: fmt.Sprintf("n%03d.md", i), Title: "kiwi lemon", Body: "apples and bananas, plums and pears"}
			if err := ix.Upsert(ctx, doc); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	// Settled: the answer from the caches is the one read afresh.
	q := textindex.ParseQuestion(questions[0])
	warm, err := ix.Ask(ctx, q, textindex.Options{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	ix.notes.mu.Lock()
	ix.notes.notes, ix.notes.bytes = nil, 0
	ix.notes.mu.Unlock()
	ix.freqs.mu.Lock()
	ix.freqs.dfs = nil
	ix.freqs.mu.Unlock()
	ix.stems.mu.Lock()
	ix.stems.entries, ix.stems.postings = nil, 0
	ix.stems.mu.Unlock()
	cold, err := ix.Ask(ctx, q, textindex.Options{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", warm.Hits) != fmt.Sprintf("%+v", cold.Hits) {
		t.Errorf("after the writes, from the cache:\n%+v\nread:\n%+v", warm.Hits, cold.Hits)
	}
}

// readAskNotes reads any number of notes in two queries and gives them in
// the order asked, each with its own passages in order; a note no longer
// in the index comes back gone, and one asked twice comes back twice.
func TestReadAskNotes(t *testing.T) {
	ctx := context.Background()
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	var docs []textindex.Doc
	for i := range 120 {
		first, second := fmt.Sprintf("# First\n\nApples number %d.", i), fmt.Sprintf("# Second\n\nPears number %d.", i)
		docs = append(docs, textindex.Doc{Path: fmt.Sprintf("n%03d.md", i), Title: fmt.Sprint("note ", i), Body: first + "\n\n" + second,
			Passages: []vault.Passage{{Ordinal: 0, HeadingPath: []string{"First"}, Text: first}, {Ordinal: 1, HeadingPath: []string{"Second"}, Text: second}}})
	}
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	rows, err := ix.r.QueryContext(ctx, `SELECT path, id FROM notes`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p string
		var id int64
		if err := rows.Scan(&p, &id); err != nil {
			t.Fatal(err)
		}
		ids[p] = id
	}
	rows.Close()
	if err := ix.Delete(ctx, "n005.md"); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for i := 119; i >= 0; i -= 3 {
		want = append(want, ids[fmt.Sprintf("n%03d.md", i)])
	}
	want = append(want, ids["n005.md"], want[0], 1<<40)
	got, err := ix.readAskNotes(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d notes for %d ids", len(got), len(want))
	}
	for i, n := range got {
		gone := want[i] == ids["n005.md"] || want[i] == 1<<40
		switch {
		case n.id != want[i]:
			t.Errorf("note %d has id %d, want %d", i, n.id, want[i])
		case n.gone != gone:
			t.Errorf("note %d (%s): gone %v, want %v", i, n.path, n.gone, gone)
		case gone:
		case len(n.passages) != 2 || n.passages[0].id >= n.passages[1].id || n.passages[0].id>>passageBits != n.id:
			t.Errorf("note %d (%s): passages %+v", i, n.path, n.passages)
		case !slices.Contains(slices.Collect(n.passages[1].terms.terms()), "pear") || n.names == "":
			t.Errorf("note %d (%s): names %q, passage terms %q", i, n.path, n.names, n.passages[1].terms)
		}
	}
	if got[len(got)-2] != got[0] {
		t.Error("a note asked twice is read twice")
	}
}
