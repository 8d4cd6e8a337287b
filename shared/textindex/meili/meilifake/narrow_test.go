package meilifake

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The value index finds exactly the documents a brute-force scan does,
// while documents come and go.
func TestCandidatesMatchAScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ix := &index{docs: map[string]map[string]any{}}
	put := func(id string) {
		d := map[string]any{"id": id, "kind": []string{"note", "passage"}[r.IntN(2)], "note": fmt.Sprintf("N%d", r.IntN(20)), "pidx": float64(r.IntN(5))}
		if r.IntN(4) == 0 {
			d["note"] = []any{fmt.Sprintf("n%d", r.IntN(20)), "x"}
		}
		if old := ix.docs[id]; old != nil {
			ix.indexValues(id, old, false)
		}
		ix.docs[id] = d
		ix.indexValues(id, d, true)
	}
	filters := []string{
		`note = "n3"`,
		`kind = "passage" AND ((note = "N1" AND pidx >= 2) OR (note = "n7" AND pidx >= 0))`,
		`note IN ["n2", "N4", "x"]`,
		`note = "n1" OR kind = "note"`, // pins nothing: every document
		`pidx = 3`,
	}
	for round := range 200 {
		put(fmt.Sprint(r.IntN(300)))
		if r.IntN(3) == 0 {
			id := fmt.Sprint(r.IntN(300))
			if d := ix.docs[id]; d != nil {
				ix.indexValues(id, d, false)
				delete(ix.docs, id)
			}
		}
		for _, src := range filters {
			f, err := parseFilter(src)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for id, d := range ix.docs {
				if f.eval(d) {
					want = append(want, id)
				}
			}
			for _, id := range ix.candidates(f) {
				if f.eval(ix.docs[id]) {
					got = append(got, id)
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(want, slices.Compact(got)) {
				t.Fatalf("round %d, %s: candidates find %v, a scan %v", round, src, got, want)
			}
		}
	}
}

// Of an AND, the branch that pins the fewest documents narrows: the
// adapter's stale-passage deletion pins every passage by its kind, and
// the note ids inside it are what keeps a big index fast.
func TestCandidatesOfAnAndPickTheNarrowestBranch(t *testing.T) {
	ix := &index{docs: map[string]map[string]any{}}
	for i := range 1000 {
		id := fmt.Sprint(i)
		ix.docs[id] = map[string]any{"id": id, "kind": "passage", "note": fmt.Sprintf("n%d", i/10)}
		ix.indexValues(id, ix.docs[id], true)
	}
	f, err := parseFilter(`kind = "passage" AND ((note = "n1" AND pidx >= 2) OR (note = "n7" AND pidx >= 0))`)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ix.candidates(f)); n != 20 {
		t.Fatalf("%d candidates, want the 20 passages of n1 and n7", n)
	}
}
