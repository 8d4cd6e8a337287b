package core

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

func TestFuseWeighsLanes(t *testing.T) {
	lex := []laneHit{{Path: "a", Score: 10, Ordinal: 1}, {Path: "b", Score: 5, Ordinal: 2}}
	vec := []laneHit{{Path: "c", Score: 0.9, Ordinal: 3}, {Path: "b", Score: 0.8, Ordinal: 4}, {Path: "d", Score: 0.5}}
	got := fuse(lex, vec, 0.3)
	sortCandidates(got)
	score := map[string]float64{}
	for _, c := range got {
		score[c.Path] = c.Score
	}
	// a: 0.7*1; b: 0.7*0.5 + 0.3*0.75; c: 0.3*1; d: 0.3*0.
	want := map[string]float64{"a": 0.7, "b": 0.35 + 0.225, "c": 0.3, "d": 0}
	for p, w := range want {
		if math.Abs(score[p]-w) > 1e-9 {
			t.Errorf("score[%s] = %v, want %v", p, score[p], w)
		}
	}
	var order []string
	for _, c := range got {
		order = append(order, c.Path)
	}
	if !slices.Equal(order, []string{"a", "b", "c", "d"}) {
		t.Errorf("order = %v", order)
	}
	// b's best passage is the lexical one (0.35 > 0.225), listed first.
	for _, c := range got {
		if c.Path == "b" && !slices.Equal(c.Ordinals, []int{2, 4}) {
			t.Errorf("b ordinals = %v", c.Ordinals)
		}
	}
	// The vector lane alone: weight 1 keeps min-max cosines.
	only := fuse(nil, vec, 1)
	if only[0].Score != 1 || only[2].Score != 0 {
		t.Errorf("vector lane alone: %+v", only)
	}
}

// A note whose name matched best in the vector lane keeps its score but
// names no passage: it is shown from its first passage, or from the
// lexical lane's passage when it has one.
func TestFuseNameHitsNameNoPassage(t *testing.T) {
	lex := []laneHit{{Path: "a", Score: 10, Ordinal: 2}}
	vec := []laneHit{{Path: "a", Score: 0.9, Ordinal: vectors.NameOrdinal}, {Path: "b", Score: 0.8, Ordinal: vectors.NameOrdinal}, {Path: "c", Score: 0.1, Ordinal: 1}}
	got := fuse(lex, vec, 0.5)
	ords := map[string][]int{}
	for _, c := range got {
		ords[c.Path] = c.Ordinals
	}
	if !slices.Equal(ords["a"], []int{2}) || ords["b"] != nil || !slices.Equal(ords["c"], []int{1}) {
		t.Errorf("ordinals = %v, want a [2], b none, c [1]", ords)
	}
	sem := candidatesOf(vec)
	if sem[0].Ordinals != nil || sem[1].Ordinals != nil || !slices.Equal(sem[2].Ordinals, []int{1}) || sem[0].Score != 0.9 {
		t.Errorf("semantic candidates = %+v", sem)
	}
}

func TestNormalisedDegenerate(t *testing.T) {
	one := normalised([]laneHit{{Path: "a", Score: 0.2}}, true)
	if one["a"] != 1 {
		t.Errorf("a single hit normalises to 1, got %v", one["a"])
	}
	same := normalised([]laneHit{{Path: "a", Score: 3}, {Path: "b", Score: 3}}, false)
	if same["a"] != 1 || same["b"] != 1 {
		t.Errorf("equal scores: %v", same)
	}
}

func TestRecencyFactor(t *testing.T) {
	if f := recencyFactor(0); f != 1 {
		t.Errorf("today: %v", f)
	}
	if f := recencyFactor(-time.Hour); f != 1 {
		t.Errorf("a future mtime is today: %v", f)
	}
	if f := recencyFactor(recencyHalfLife); math.Abs(f-(1-recencyWeight/2)) > 1e-12 {
		t.Errorf("one half-life: %v", f)
	}
	if f := recencyFactor(100 * 365 * 24 * time.Hour); f < 1-recencyWeight || f > 1-recencyWeight+1e-3 {
		t.Errorf("a century: %v", f)
	}
}

// flaky is an embedder that fails on demand.
type flaky struct {
	*embed.Fake
	fail bool
}

func (f *flaky) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.fail {
		return nil, &embed.ProviderError{Status: 503, Err: errors.New("down")}
	}
	return f.Fake.Embed(ctx, texts)
}

func TestRetrieveProviderDown(t *testing.T) {
	f := newSemFixture(t, orchard)
	fl := &flaky{Fake: f.fake}
	f.v.Embedder = fl
	ctx := context.Background()
	cat, _ := f.v.Catalogs.Catalog(ctx)
	if _, err := f.s.retrieve(ctx, f.v, cat, "orchard pruning", RetrieveOptions{Limit: 3}); err != nil {
		t.Fatal(err)
	}
	fl.fail = true
	// Implicit hybrid falls back to BM25 alone.
	got, err := f.s.retrieve(ctx, f.v, cat, "apple orchard", RetrieveOptions{Limit: 3})
	if err != nil || len(got) == 0 || got[0].Path != "Apples.md" {
		t.Errorf("implicit hybrid with the provider down: %+v %v", got, err)
	}
	// An explicit semantic or hybrid request reports the failure.
	for _, mode := range []string{"semantic", "hybrid"} {
		if _, err := f.s.retrieve(ctx, f.v, cat, "apple orchard", RetrieveOptions{Limit: 3, Mode: mode}); err == nil {
			t.Errorf("%s with the provider down: no error", mode)
		}
	}
}

func TestRetrieveModesAndFilters(t *testing.T) {
	f := newSemFixture(t, map[string]string{
		"A.md": "---\nauthor: Ann\nentities: [Orchard Co]\n---\n# A\n\nApple pruning in the orchard.\n",
		"B.md": "---\nauthor: Bob\n---\n# B\n\nApple pruning in the orchard.\n",
		"C.md": "# C\n\nHives.\n",
	})
	ctx := context.Background()
	cat, _ := f.v.Catalogs.Catalog(ctx)
	for _, mode := range []string{"fulltext", "semantic", "hybrid", ""} {
		got, err := f.s.retrieve(ctx, f.v, cat, "apple pruning", RetrieveOptions{Limit: 5, Mode: mode, Filter: textindex.Filter{Author: "ann"}})
		if err != nil || len(got) != 1 || got[0].Path != "A.md" || got[0].Title != "A" {
			t.Errorf("mode %q, author filter: %+v %v", mode, got, err)
		}
		got, err = f.s.retrieve(ctx, f.v, cat, "apple pruning", RetrieveOptions{Limit: 5, Mode: mode, Filter: textindex.Filter{Entities: []string{"Orchard Co"}}})
		if err != nil || len(got) != 1 || got[0].Path != "A.md" {
			t.Errorf("mode %q, entities filter: %+v %v", mode, got, err)
		}
		got, err = f.s.retrieve(ctx, f.v, cat, "apple pruning", RetrieveOptions{Limit: 1, Mode: mode})
		if err != nil || len(got) != 1 {
			t.Errorf("mode %q, limit 1: %+v %v", mode, got, err)
		}
	}
	// Without embeddings, "" is fulltext and semantic modes are not configured.
	s, _ := indexedServer(t, map[string]string{"A.md": "# A\n\napple\n"}, nil)
	v := s.vaults["t"]
	c2, _ := v.Catalogs.Catalog(ctx)
	if got, err := s.retrieve(ctx, v, c2, "apple", RetrieveOptions{}); err != nil || len(got) != 1 {
		t.Errorf("fulltext default: %+v %v", got, err)
	}
	if _, err := s.retrieve(ctx, v, c2, "apple", RetrieveOptions{Mode: "hybrid"}); kindOfErr(err) != KindUnsupported {
		t.Errorf("hybrid without embeddings: %v", err)
	}
}

func TestVectorFilterResolvesAuthor(t *testing.T) {
	cat := vault.NewCatalog()
	cat.Upsert(vault.Note{Path: "a.md", Author: "Ann"})
	cat.Upsert(vault.Note{Path: "b.md", Author: "Bob"})
	vf, err := vectorFilter(cat, textindex.Filter{Author: "ann", PathPrefix: "a"})
	if err != nil || !slices.Equal(vf.Paths, []string{"a.md"}) || vf.PathPrefix != "a" {
		t.Errorf("vectorFilter: %+v %v", vf, err)
	}
	vf, _ = vectorFilter(cat, textindex.Filter{Author: "nobody"})
	if vf.Paths == nil || len(vf.Paths) != 0 {
		t.Errorf("no author match must filter everything out, not nothing: %+v", vf)
	}
}

// FuzzFuse: any lanes (scores finite, paths repeated or not) fuse without
// panicking into one candidate per path with a score in [0, 1].
func FuzzFuse(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6}, []byte{6, 5, 4}, uint8(70))
	f.Add([]byte{}, []byte{0, 0, 0}, uint8(0))
	f.Fuzz(func(t *testing.T, lexB, vecB []byte, wb uint8) {
		lanes := func(b []byte, signed bool) []laneHit {
			var out []laneHit
			for i, x := range b {
				s := float64(x) / 16
				if signed {
					s = float64(int8(x)) / 128
				}
				out = append(out, laneHit{Path: string(rune('a' + x%7)), Score: s, Ordinal: i})
			}
			return out
		}
		w := float64(wb%101) / 100
		got := fuse(lanes(lexB, false), lanes(vecB, true), w)
		seen := map[string]bool{}
		for _, c := range got {
			if seen[c.Path] {
				t.Fatalf("%s twice", c.Path)
			}
			seen[c.Path] = true
			if math.IsNaN(c.Score) || c.Score < -1e-9 || c.Score > 1+1e-9 {
				t.Fatalf("score %v out of [0, 1]", c.Score)
			}
		}
	})
}
