package core

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/llm/llmtest"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
	vecembedded "github.com/sheaf-dev/sheaf/shared/vectors/embedded"
)

// semFixture is an indexed vault with the fake embedder.
type semFixture struct {
	s    *Core
	v    *Vault
	ix   *indexer.Indexer
	fake *embed.Fake
	dir  string
}

func newSemFixture(t *testing.T, files map[string]string) *semFixture {
	t.Helper()
	return openSemFixture(t, indexertest.Folder(t, files))
}

func openSemFixture(t *testing.T, dir string) *semFixture {
	t.Helper()
	return openSemFixtureWith(t, dir, nil)
}

// openSemFixtureWith indexes dir and embeds with emb (nil: a fake).
func openSemFixtureWith(t *testing.T, dir string, emb embed.Embedder) *semFixture {
	t.Helper()
	ix := indexFolder(t, dir)
	vec, err := vecembedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vec.Close() })
	fake := embed.NewFake(256)
	if emb == nil {
		emb = fake
	}
	st := ix.Store
	v := &Vault{ID: "t", Store: st, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog},
		Embedder: emb, Vectors: vec,
		Embeddings: &indexer.Embeddings{Store: st, Embedder: emb, Vectors: vec, Log: slog.New(slog.DiscardHandler)}}
	s, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return &semFixture{s: s, v: v, ix: ix, fake: fake, dir: dir}
}

// indexFolder opens the folder dir as a store with an in-memory text index
// and indexes it into a fresh catalog; the indexer holds all three.
func indexFolder(t testing.TB, dir string) *indexer.Indexer {
	t.Helper()
	st, text := indexertest.OpenLocal(t, dir)
	t.Cleanup(func() { st.Close() })
	ix := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Log: slog.New(slog.DiscardHandler)}
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix
}

func (f *semFixture) write(t *testing.T, p, text string) {
	t.Helper()
	indexertest.WriteAt(t, f.dir, p, text, time.Time{})
	if err := f.ix.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func hitPaths(items []SearchHit) []string {
	out := []string{}
	for _, h := range items {
		out = append(out, h.Path)
	}
	return out
}

var orchard = map[string]string{
	"Apples.md":      "---\ntags: [fruit, garden/orchard]\n---\n# Apples\n\nApple trees in the orchard need pruning in winter.\n",
	"Pears.md":       "---\ntags: [fruit]\n---\n# Pears\n\nPear trees in the orchard need pruning too.\n",
	"Bees.md":        "# Bees\n\nThree hives of bees by the hedge. See [[Apples]].\n",
	"Deep/Nested.md": "---\ntags: [fruit]\n---\n# Plums\n\nPlum trees need pruning in summer.\n",
}

func TestSemanticToolsNotConfigured(t *testing.T) {
	s, _ := indexedServer(t, orchard, nil)
	ctx := context.Background()
	check := func(name string, err error) {
		t.Helper()
		var te *Error
		if !errors.As(err, &te) || te.Kind != KindUnsupported || te.Fields["reason"] != "not-configured" {
			t.Errorf("%s without embeddings: %v, want unsupported/not-configured", name, err)
		}
	}
	_, err := s.SemanticSearch(ctx, SemanticSearchIn{Query: "x", Limit: 5})
	check("semantic_search", err)
	_, err = s.RelatedNotes(ctx, RelatedIn{Path: "Apples.md", Limit: 5})
	check("related_notes", err)
	_, err = s.FindDuplicates(ctx, DuplicatesIn{Threshold: 0.9, Limit: 5})
	check("find_duplicates", err)
	_, err = s.TopicMap(ctx, TopicMapIn{Threshold: 0.85, MinSize: 2, Limit: 5})
	check("topic_map", err)
	_, err = s.ReindexEmbeddings(ctx, ReindexIn{})
	check("reindex_embeddings", err)
	for _, mode := range []string{"semantic", "hybrid"} {
		_, err = s.Search(ctx, SearchArgs{Query: "x", Mode: mode, Limit: 5, Match: "all"})
		check("search mode "+mode, err)
	}
	info, err := s.VaultInfo(ctx, vaultInfoIn{})
	if err != nil || info.Capabilities.Embeddings || info.Liveness.EmbeddingIndexStale {
		t.Errorf("vault info without embeddings: %+v %v", info, err)
	}
	// search_and_read keeps working on BM25 alone.
	out, err := s.SearchAndRead(ctx, sarArgs("pruning apple trees", 2))
	if err != nil || len(out.Notes) == 0 || out.Notes[0].Path != "Apples.md" {
		t.Errorf("search_and_read without embeddings: %+v %v", out, err)
	}
}

func TestSemanticSearchRefreshesAndRanks(t *testing.T) {
	f := newSemFixture(t, orchard)
	ctx := context.Background()
	info, err := f.s.VaultInfo(ctx, vaultInfoIn{})
	if err != nil || !info.Capabilities.Embeddings || !info.Liveness.EmbeddingIndexStale {
		t.Fatalf("before the first semantic call: %+v %v", info.Capabilities, err)
	}
	out, err := f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "apple trees orchard", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if out.Mode != "semantic" || len(out.Items) != 3 || out.Items[0].Path != "Apples.md" {
		t.Fatalf("semantic_search: %+v", out)
	}
	for i, h := range out.Items {
		if h.Score < -1 || h.Score > 1 || (i > 0 && h.Score > out.Items[i-1].Score) {
			t.Errorf("scores must be cosines, best first: %+v", out.Items)
		}
	}
	if !strings.Contains(out.Items[0].Snippet, "pruning") || out.Items[0].Title != "Apples" {
		t.Errorf("hit should carry the title and a snippet of its best passage: %+v", out.Items[0])
	}
	if info, _ := f.s.VaultInfo(ctx, vaultInfoIn{}); info.Liveness.EmbeddingIndexStale {
		t.Error("the semantic call should have embedded every note")
	}

	// A note written after the first call is found by the next one.
	f.write(t, "Cider.md", "# Cider\n\nPressing apples into cider in the autumn.\n")
	if info, _ := f.s.VaultInfo(ctx, vaultInfoIn{}); !info.Liveness.EmbeddingIndexStale {
		t.Error("a new note should make the index stale")
	}
	out, err = f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "cider pressing autumn", Limit: 1})
	if err != nil || len(out.Items) != 1 || out.Items[0].Path != "Cider.md" {
		t.Fatalf("a fresh note is not found: %+v %v", out, err)
	}

	// Filters scope the ranking: the best orchard match outside is not
	// returned, the best one inside is.
	out, err = f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "apple trees orchard", Limit: 5, PathPrefix: "Deep/"})
	if err != nil || !slices.Equal(hitPaths(out.Items), []string{"Deep/Nested.md"}) {
		t.Errorf("path_prefix: %v %v", hitPaths(out.Items), err)
	}
	out, err = f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "orchard", Limit: 5, Tags: []string{"garden"}})
	if err != nil || !slices.Equal(hitPaths(out.Items), []string{"Apples.md"}) {
		t.Errorf("tags (nested garden/orchard matches garden): %v %v", hitPaths(out.Items), err)
	}

	// Hybrid: fused scores in [0, 1], best first.
	out, err = f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "pear pruning", Limit: 5, Hybrid: true})
	if err != nil || out.Mode != "hybrid" || out.Items[0].Path != "Pears.md" {
		t.Fatalf("hybrid: %+v %v", out, err)
	}
	for i, h := range out.Items {
		if h.Score < 0 || h.Score > 1 || (i > 0 && h.Score > out.Items[i-1].Score) {
			t.Errorf("hybrid scores must be in [0, 1], best first: %+v", out.Items)
		}
	}
}

func TestSemanticSearchPreferRecent(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	same := "# Watering\n\nWater the beds at dawn.\n"
	indexertest.WriteAt(t, dir, "Old.md", same, now.Add(-2*365*24*time.Hour))
	indexertest.WriteAt(t, dir, "New.md", same, now.Add(-time.Hour))
	f := openSemFixture(t, dir)
	ctx := context.Background()
	for _, hybrid := range []bool{false, true} {
		out, err := f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "water beds dawn", Limit: 2, Hybrid: hybrid})
		if err != nil || len(out.Items) != 2 || out.Items[0].Score != out.Items[1].Score {
			t.Fatalf("identical notes should tie: %+v %v", out, err)
		}
		out, err = f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "water beds dawn", Limit: 2, Hybrid: hybrid, PreferRecent: true})
		if err != nil || out.Items[0].Path != "New.md" || out.Items[1].Score >= out.Items[0].Score {
			t.Errorf("prefer_recent (hybrid %v) should rank the fresh note first: %+v %v", hybrid, out, err)
		}
	}
}

func TestSemanticSearchExpand(t *testing.T) {
	f := newSemFixture(t, map[string]string{
		"Yuki.md":  "# Yuki\n\nYuki keeps the apiary healthy.\n",
		"Other.md": "# Other\n\nTomatoes and basil.\n",
	})
	ctx := context.Background()
	_, err := f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "who looks after the bees?", Limit: 1, Expand: true})
	var te *Error
	if !errors.As(err, &te) || te.Kind != KindUnsupported {
		t.Fatalf("expand without an LLM: %v, want not configured", err)
	}
	f.expandsTo(t, "The apiary keeper Yuki checks the hives.")
	out, err := f.s.SemanticSearch(ctx, SemanticSearchIn{Query: "who looks after the bees?", Limit: 1, Expand: true})
	if err != nil || len(out.Items) != 1 || out.Items[0].Path != "Yuki.md" {
		t.Errorf("the expansion's words should find Yuki.md: %+v %v", out, err)
	}
}

// expandsTo gives the fixture a scripted LLM whose next reply, the
// hypothetical passage of an expansion, is passage.
func (f *semFixture) expandsTo(t *testing.T, passage string) {
	t.Helper()
	fake := llmtest.Start(t)
	chat, err := llm.New(llm.Config{BaseURL: fake.URL, Model: "fake", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.v.LLM = chat
	fake.Queue(passage)
}

// With an expansion, the question is embedded as a query and the
// hypothetical passage as a document, as the model's prefixes expect.
func TestExpansionEmbeddedAsDocument(t *testing.T) {
	rec := &queryRecorder{Embedder: embed.NewFake(256)}
	f := openSemFixtureWith(t, indexertest.Folder(t, map[string]string{"Yuki.md": "# Yuki\n\nYuki keeps the apiary healthy.\n"}), rec)
	f.expandsTo(t, "The apiary keeper Yuki checks the hives.")
	const q = "who looks after the bees?"
	if _, err := f.s.SemanticSearch(context.Background(), SemanticSearchIn{Query: q, Limit: 1, Expand: true}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.queries, []string{q}) {
		t.Errorf("embedded as queries: %q, want the question alone", rec.queries)
	}
	if !slices.ContainsFunc(rec.documents, func(d string) bool { return strings.Contains(d, "apiary keeper Yuki") }) {
		t.Errorf("the hypothetical passage was not embedded as a document: %q", rec.documents)
	}
}

func TestRelatedNotesExcludesSelfAndLinked(t *testing.T) {
	f := newSemFixture(t, map[string]string{
		"Apples.md":   "# Apples\n\nApple trees in the orchard need pruning. See [[Pears]].\n",
		"Pears.md":    "# Pears\n\nPear trees in the orchard need pruning.\n",
		"Plums.md":    "# Plums\n\nPlum trees in the orchard need pruning.\n",
		"Cherries.md": "# Cherries\n\nCherry trees in the orchard need pruning. Like [[Apples]].\n",
		"Bees.md":     "# Bees\n\nHives by the hedge.\n",
	})
	out, err := f.s.RelatedNotes(context.Background(), RelatedIn{Path: "Apples.md", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := hitPaths(out.Items)
	if len(got) != 2 || got[0] != "Plums.md" || slices.Contains(got, "Apples.md") || slices.Contains(got, "Pears.md") || slices.Contains(got, "Cherries.md") {
		t.Errorf("related_notes(Apples) = %v: want Plums first, never itself, Pears (linked to) or Cherries (links in)", got)
	}
	if _, err := f.s.RelatedNotes(context.Background(), RelatedIn{Path: "Nope.md", Limit: 2}); kindOfErr(err) != KindNoteNotFound {
		t.Errorf("missing note: %v", err)
	}
	if _, err := f.s.RelatedNotes(context.Background(), RelatedIn{Path: "../x.md", Limit: 2}); kindOfErr(toError(err)) != KindPathInvalid {
		t.Errorf("traversal: %v", err)
	}
}

func TestFindDuplicates(t *testing.T) {
	body := "Water the beds at dawn, every day in summer, twice in a heatwave.\n"
	f := newSemFixture(t, map[string]string{
		"A.md":     "# Watering\n\n" + body,
		"Copy.md":  "# Watering\n\n" + body,
		"Near.md":  "# Watering\n\n" + strings.Replace(body, "twice", "three times", 1),
		"Other.md": "# Bees\n\nHives by the hedge need a check in spring.\n",
	})
	ctx := context.Background()
	out, err := f.s.FindDuplicates(ctx, DuplicatesIn{Threshold: 0.9, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if out.Total != 3 || len(out.Items) != 3 {
		t.Fatalf("want the 3 pairs among A, Copy and Near: %+v", out)
	}
	first := out.Items[0]
	if first.PathA != "A.md" || first.PathB != "Copy.md" || first.Similarity < 0.999 {
		t.Errorf("the exact copy should come first with similarity 1: %+v", first)
	}
	for i := 1; i < len(out.Items); i++ {
		if out.Items[i].Similarity > out.Items[i-1].Similarity || out.Items[i].Similarity < 0.9 {
			t.Errorf("pairs must be at or above the threshold, best first: %+v", out.Items)
		}
	}
	page2, err := f.s.FindDuplicates(ctx, DuplicatesIn{Threshold: 0.9, Limit: 1, Offset: 1})
	if err != nil || page2.Total != 3 || len(page2.Items) != 1 || page2.Items[0] != out.Items[1] {
		t.Errorf("paging: %+v %v", page2, err)
	}
	none, err := f.s.FindDuplicates(ctx, DuplicatesIn{Threshold: 1, Limit: 10})
	if err != nil || none.Total != 1 {
		t.Errorf("threshold 1 keeps only the exact copy: %+v %v", none, err)
	}
}

// A note's mean vector is its passages': its name says nothing of whether
// two notes say the same. A note without passages is its name.
func TestMeanVectorLeavesNamesOut(t *testing.T) {
	name := vectors.NameHash("Watering")
	got := meanVector(map[string][]float32{"p0": {1, 0}, "p1": {0, 1}, name: {-1, 0}})
	if len(got) != 2 || math.Abs(float64(got[0]-got[1])) > 1e-6 || got[0] <= 0 {
		t.Errorf("mean of two passages and a name = %v, want the passages' (0.707, 0.707)", got)
	}
	if only := meanVector(map[string][]float32{name: {0, 2}}); len(only) != 2 || only[1] != 1 {
		t.Errorf("a note of only a name = %v, want its name (0, 1)", only)
	}
}

func TestTopicMapHubs(t *testing.T) {
	f := newSemFixture(t, map[string]string{
		// Fruit: a cluster whose hub (Fruit trees) two members link to.
		"Fruit trees.md": "---\ntags: [fruit]\n---\n# Orchard\n\nOrchard trees pruning winter frost ladders saws mulch grafting rootstock.\n",
		"Apples.md":      "---\ntags: [fruit]\n---\n# Orchard\n\nOrchard trees pruning winter frost ladders saws mulch grafting rootstock. [[Fruit trees]]\n",
		"Pears.md":       "---\ntags: [fruit, pear]\n---\n# Orchard\n\nOrchard trees pruning winter frost ladders saws mulch grafting rootstock. [[Fruit trees]]\n",
		// Bees: a cluster without a hub.
		"Hive 1.md": "---\ntags: [bees]\n---\n# Hives\n\nBees swarm hives honey spring.\n",
		"Hive 2.md": "---\ntags: [bees]\n---\n# Hives\n\nBees swarm hives honey spring. [[Hive 1]]\n",
		"Alone.md":  "# Alone\n\nNothing like the others at all whatsoever.\n",
	})
	out, err := f.s.TopicMap(context.Background(), TopicMapIn{Threshold: 0.85, MinSize: 2, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Clusters) != 2 || out.Total != 2 {
		t.Fatalf("want two clusters: %+v", out)
	}
	fruit, bees := out.Clusters[0], out.Clusters[1]
	if !slices.Equal(fruit.Notes, []string{"Apples.md", "Fruit trees.md", "Pears.md"}) || fruit.Size != 3 || !fruit.HasHub {
		t.Errorf("fruit cluster: %+v", fruit)
	}
	if !slices.Equal(fruit.SharedTags, []string{"fruit"}) {
		t.Errorf("fruit shared tags: %v (pear is on one note only)", fruit.SharedTags)
	}
	if !slices.Equal(bees.Notes, []string{"Hive 1.md", "Hive 2.md"}) || bees.HasHub || !slices.Equal(bees.SharedTags, []string{"bees"}) {
		t.Errorf("bees cluster (one inbound link is not a hub): %+v", bees)
	}
	if len(out.MissingHubs) != 1 || !slices.Equal(out.MissingHubs[0].Notes, bees.Notes) {
		t.Errorf("missingHubs: %+v", out.MissingHubs)
	}
	big, err := f.s.TopicMap(context.Background(), TopicMapIn{Threshold: 0.85, MinSize: 3, Limit: 10})
	if err != nil || len(big.Clusters) != 1 {
		t.Errorf("min_size 3: %+v %v", big, err)
	}
}

func TestReindexEmbeddings(t *testing.T) {
	f := newSemFixture(t, orchard)
	ctx := context.Background()
	out, err := f.s.ReindexEmbeddings(ctx, ReindexIn{})
	if err != nil || out.Notes != len(orchard) || out.Passages != f.fake.Texts() {
		t.Fatalf("first reindex: %+v %v (fake embedded %d)", out, err, f.fake.Texts())
	}
	if out, _ := f.s.ReindexEmbeddings(ctx, ReindexIn{}); out.Notes != 0 || out.Passages != 0 {
		t.Errorf("nothing changed, yet: %+v", out)
	}
	if err := os.Remove(filepath.Join(f.dir, "Bees.md")); err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Apply(ctx, "Bees.md"); err != nil {
		t.Fatal(err)
	}
	f.s.ReindexEmbeddings(ctx, ReindexIn{})
	if got, _ := f.v.Vectors.Notes(ctx); len(got) != len(orchard)-1 {
		t.Errorf("the deleted note was not pruned: %v", got)
	}
}

func TestSearchSemanticAndHybridModes(t *testing.T) {
	f := newSemFixture(t, orchard)
	ctx := context.Background()
	for _, mode := range []string{"semantic", "hybrid"} {
		out, err := f.s.Search(ctx, SearchArgs{Query: "orchard pruning", Mode: mode, Limit: 2, Match: "all"})
		if err != nil || out.Mode != mode || len(out.Items) != 2 || out.Total < 2 {
			t.Fatalf("%s: %+v %v", mode, out, err)
		}
		// Offset continues the same ranking.
		all, _ := f.s.Search(ctx, SearchArgs{Query: "orchard pruning", Mode: mode, Limit: 4, Match: "all"})
		next, _ := f.s.Search(ctx, SearchArgs{Query: "orchard pruning", Mode: mode, Limit: 2, Offset: 2, Match: "all"})
		if !slices.Equal(hitPaths(next.Items), hitPaths(all.Items)[2:]) {
			t.Errorf("%s paging: %v then %v", mode, hitPaths(all.Items), hitPaths(next.Items))
		}
		// Threshold drops notes scoring below it.
		th := all.Items[1].Score
		cut, _ := f.s.Search(ctx, SearchArgs{Query: "orchard pruning", Mode: mode, Limit: 10, Match: "all", Threshold: &th})
		for _, h := range cut.Items {
			if h.Score < th {
				t.Errorf("%s threshold %v kept %+v", mode, th, h)
			}
		}
		if len(cut.Items) < 2 || cut.Total != len(cut.Items) {
			t.Errorf("%s threshold: %+v", mode, cut)
		}
		// Filters apply before ranking in both lanes.
		tagged, _ := f.s.Search(ctx, SearchArgs{Query: "orchard pruning", Mode: mode, Limit: 10, Match: "all", Tags: []string{"fruit"}, PathPrefix: "Deep/"})
		if !slices.Equal(hitPaths(tagged.Items), []string{"Deep/Nested.md"}) {
			t.Errorf("%s filters: %v", mode, hitPaths(tagged.Items))
		}
	}
}

func TestSearchAndReadHybrid(t *testing.T) {
	f := newSemFixture(t, map[string]string{
		"Watering.md": "# Watering\n\nIntro.\n\n## Drip lines\n\nFlush the drip lines every two weeks.\n",
		"Bees.md":     "# Bees\n\nHives by the hedge.\n",
	})
	out, err := f.s.searchAndRead(context.Background(), searchAndReadIn{Query: "how often to flush drip lines", K: 2, Mode: "section"}, DefaultResponseBudget)
	if err != nil || len(out.Notes) == 0 {
		t.Fatalf("%+v %v", out, err)
	}
	first := out.Notes[0]
	if first.Path != "Watering.md" || first.Score <= 0 || first.Score > 1 {
		t.Errorf("hybrid search_and_read: %+v", first)
	}
	if first.SectionResolved == nil || !*first.SectionResolved || !strings.Contains(first.Body, "every two weeks") {
		t.Errorf("section mode should return the matched section: %+v", first)
	}
	// Operators keep their lexical meaning: NOT excludes, vectors do not add it back.
	out, err = f.s.searchAndRead(context.Background(), searchAndReadIn{Query: "hedge OR drip NOT flush", K: 5, Mode: "note"}, DefaultResponseBudget)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range out.Notes {
		if n.Path == "Watering.md" {
			t.Errorf("NOT flush must exclude Watering.md: %+v", out.Notes)
		}
	}
}

// A note the vector lane found by its name names no passage: it is read,
// and shown, from its first passage, never as passage -1.
func TestNameHitReadsFromTheFirstPassage(t *testing.T) {
	f := newSemFixture(t, map[string]string{
		"Kettle.md": "---\naliases: [boiler]\n---\n# Kettle\n\nIt boils water.\n\n## Descaling\n\nVinegar, monthly.\n",
		"Empty.md":  "",
	})
	ctx := context.Background()
	cat, err := f.v.Catalogs.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hit := textindex.Hit{Path: "Kettle.md", Passage: vectors.NameOrdinal}
	it, ie, err := f.s.readRanked(ctx, f.v, cat, hit, 1, "section", "detailed", 1<<20)
	if err != nil || ie != nil {
		t.Fatal(err, ie)
	}
	if it.ChunkID != "Kettle.md#p0" || it.SectionResolved == nil || !*it.SectionResolved ||
		it.Heading == nil || *it.Heading == nil || **it.Heading != "Kettle" || !strings.HasPrefix(it.Body, "# Kettle") {
		t.Errorf("a name hit in section mode: %+v", it)
	}
	empty, ie, err := f.s.readRanked(ctx, f.v, cat, textindex.Hit{Path: "Empty.md", Passage: vectors.NameOrdinal}, 2, "section", "detailed", 1<<20)
	if err != nil || ie != nil || empty.ChunkID != "Empty.md#p0" {
		t.Errorf("a name hit on a note without passages: %+v %v %v", empty, ie, err)
	}
	hits := hitsOf(ctx, f.v, cat, []Candidate{{Path: "Kettle.md", Title: "Kettle"}})
	if hits[0].Heading != "Kettle" || !strings.Contains(hits[0].Snippet, "It boils water.") {
		t.Errorf("a name hit's snippet and heading: %+v", hits[0])
	}
}

// queryRecorder is the fake embedder with EmbedQuery: it records the texts
// embedded as queries and as documents.
type queryRecorder struct {
	embed.Embedder
	mu                 sync.Mutex
	queries, documents []string
}

func (r *queryRecorder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.documents = append(r.documents, texts...)
	r.mu.Unlock()
	return r.Embedder.Embed(ctx, texts)
}

func (r *queryRecorder) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.queries = append(r.queries, texts...)
	r.mu.Unlock()
	return r.Embedder.Embed(ctx, texts)
}

// Questions are embedded as queries (a model's query prefix), passages
// and names as documents, by every semantic path.
func TestQuestionsEmbeddedAsQueries(t *testing.T) {
	rec := &queryRecorder{Embedder: embed.NewFake(256)}
	f := openSemFixtureWith(t, indexertest.Folder(t, orchard), rec)
	ctx := context.Background()
	asked := []string{"apple trees orchard", "pear pruning", "which trees need pruning in winter?"}
	if _, err := f.s.SemanticSearch(ctx, SemanticSearchIn{Query: asked[0], Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SemanticSearch(ctx, SemanticSearchIn{Query: asked[1], Limit: 3, Hybrid: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.searchAndRead(ctx, searchAndReadIn{Query: asked[2], K: 2, Mode: "note"}, DefaultResponseBudget); err != nil {
		t.Fatal(err)
	}
	for _, q := range asked {
		if !slices.Contains(rec.queries, q) {
			t.Errorf("%q not embedded as a query: %q", q, rec.queries)
		}
		if slices.Contains(rec.documents, q) {
			t.Errorf("%q embedded as a document", q)
		}
	}
	if len(rec.documents) == 0 || slices.ContainsFunc(rec.documents, func(d string) bool { return slices.Contains(rec.queries, d) }) {
		t.Errorf("documents %q, queries %q", rec.documents, rec.queries)
	}
}
