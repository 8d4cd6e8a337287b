package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// noteFreqs answers what stems_vocab says, from the cache once asked, and
// again after a write by this process or by another one on the same file.
func TestNoteFreqsFollowWrites(t *testing.T) {
	ctx := context.Background()
	ix, other := twoOnOneFile(t)
	doc := func(i int, body string) textindex.Doc {
		return textindex.Doc{Path: fmt.Sprintf("n%d.md", i), Title: fmt.Sprint("note ", i), Body: body}
	}
	if err := ix.Upsert(ctx, doc(1, "quince and medlar"), doc(2, "quince jelly"), doc(3, "plain bread")); err != nil {
		t.Fatal(err)
	}
	check := func(step string, want map[string]int64) {
		t.Helper()
		toks := []string{"quinc", "medlar", "jelli", "sloe", "quinc"} // English stems; one asked twice
		got, err := ix.noteFreqs(ctx, toks)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range toks {
			read, err := ix.docFreq(ctx, tok)
			if err != nil {
				t.Fatal(err)
			}
			if got[tok] != want[tok] || read != want[tok] {
				t.Errorf("%s: %q in %d notes (stems_vocab: %d), want %d", step, tok, got[tok], read, want[tok])
			}
		}
		ix.freqs.mu.Lock()
		defer ix.freqs.mu.Unlock()
		if len(ix.freqs.dfs) != 4 {
			t.Errorf("%s: %d terms cached, want 4", step, len(ix.freqs.dfs))
		}
	}
	check("first", map[string]int64{"quinc": 2, "medlar": 1, "jelli": 1})
	ix.freqs.mu.Lock()
	ix.freqs.dfs["medlar"] = 7 // what a stale entry would say: the next answer must come from the cache
	ix.freqs.mu.Unlock()
	if got, _ := ix.noteFreqs(ctx, []string{"medlar"}); got["medlar"] != 7 {
		t.Fatalf("an unchanged index asked again: medlar in %d notes, want the cache's 7", got["medlar"])
	}
	if err := ix.Upsert(ctx, doc(4, "sloe and quince")); err != nil {
		t.Fatal(err)
	}
	check("after own write", map[string]int64{"quinc": 3, "medlar": 1, "jelli": 1, "sloe": 1})
	if err := other.Delete(ctx, "n1.md"); err != nil {
		t.Fatal(err)
	}
	check("after another process's delete", map[string]int64{"quinc": 2, "jelli": 1, "sloe": 1})
}
