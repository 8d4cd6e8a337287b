package indexer

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
	"github.com/sheaf-dev/sheaf/shared/vectors"
	vecembedded "github.com/sheaf-dev/sheaf/shared/vectors/embedded"
)

const threeSections = `# Watering

Intro line about the garden.

## Morning

Water the beds before nine.

## Evening

Check the drip lines at dusk.
`

var quiet = slog.New(slog.DiscardHandler)

type embFixture struct {
	*fixture
	fake    *embed.Fake
	vec     *vecembedded.Index
	vecFile string
	emb     *Embeddings
}

func newEmbFixture(t *testing.T, files map[string]string) *embFixture {
	t.Helper()
	f := newFixture(t, files)
	f.sync(t)
	file := filepath.Join(t.TempDir(), "vectors.bin")
	vec, err := vecembedded.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vec.Close() })
	fake := embed.NewFake(64)
	return &embFixture{fixture: f, fake: fake, vec: vec, vecFile: file,
		emb: &Embeddings{Store: f.ix.Store, Embedder: fake, Vectors: vec, Batch: 3, Log: quiet}}
}

func (f *fixture) sync(t *testing.T) {
	t.Helper()
	if _, err := f.ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func (f *embFixture) refresh(t *testing.T) (notes, passages int) {
	t.Helper()
	n, p, err := f.emb.Refresh(context.Background(), f.ix.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	return n, p
}

func (f *embFixture) stale(t *testing.T) int {
	t.Helper()
	n, err := f.emb.Stale(context.Background(), f.ix.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// passageHashes parses body as path would be and returns its passage hashes.
func passageHashes(path, body string) map[string]bool {
	out := map[string]bool{}
	for _, p := range vault.Parse(path, []byte(body)).Passages {
		out[p.Hash] = true
	}
	return out
}

func TestRefreshEmbedsOnceAndOnlyChangedPassages(t *testing.T) {
	f := newEmbFixture(t, map[string]string{
		"water.md":   threeSections,
		"other.md":   "# Other\n\nSomething else entirely.\n",
		"empty.md":   "",
		"fm-only.md": "---\ntitle: Only frontmatter\ntags: [x]\n---\n",
	})
	if got := f.stale(t); got != 4 {
		t.Errorf("stale before the first pass = %d, want 4", got)
	}
	wantPassages := 0
	for _, n := range f.ix.Catalog.Notes() {
		data, _ := os.ReadFile(filepath.Join(f.dir, n.Path))
		wantPassages += len(vault.Parse(n.Path, data).Passages) + 1 // and the name
	}
	notes, passages := f.refresh(t)
	if notes != 4 || passages != wantPassages || f.fake.Texts() != wantPassages {
		t.Fatalf("first pass: %d notes, %d passages (%d texts sent), want 4 and %d", notes, passages, f.fake.Texts(), wantPassages)
	}
	if got := f.stale(t); got != 0 {
		t.Errorf("stale after a pass = %d, want 0", got)
	}
	if n, p := f.refresh(t); n != 0 || p != 0 {
		t.Errorf("second pass re-embedded %d notes, %d passages", n, p)
	}
	stored, _ := f.vec.Notes(context.Background())
	if _, ok := stored["empty.md"]; !ok {
		t.Error("a note without passages must get a name point")
	}

	// A one-line edit re-embeds exactly the passages whose text changed.
	edited := strings.Replace(threeSections, "before nine", "before eight", 1)
	before, after := passageHashes("water.md", threeSections), passageHashes("water.md", edited)
	changed := 0
	for h := range after {
		if !before[h] {
			changed++
		}
	}
	if changed != 1 {
		t.Fatalf("fixture: the edit should change one passage, changes %d", changed)
	}
	indexertest.Write(t, f.dir, "water.md", edited)
	f.sync(t)
	if got := f.stale(t); got != 1 {
		t.Errorf("stale after an edit = %d, want 1", got)
	}
	sent := f.fake.Texts()
	if n, p := f.refresh(t); n != 1 || p != changed || f.fake.Texts()-sent != changed {
		t.Errorf("after a one-line edit: %d notes, %d passages, %d texts sent; want 1, %d, %d", n, p, f.fake.Texts()-sent, changed, changed)
	}
	hashes, _ := f.vec.Hashes(context.Background(), "water.md")
	if len(hashes) != len(after)+1 {
		t.Errorf("water.md has %d vectors, want %d passages and its name", len(hashes), len(after))
	}
	for h := range after {
		if hashes[h] == nil {
			t.Errorf("passage %s of the edited note has no vector", h[:8])
		}
	}
}

func TestRefreshPrunesDeletedNotes(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbravo\n"})
	f.refresh(t)
	if err := os.Remove(filepath.Join(f.dir, "b.md")); err != nil {
		t.Fatal(err)
	}
	f.sync(t)
	if n, p := f.refresh(t); n != 0 || p != 0 {
		t.Errorf("a delete re-embedded %d notes, %d passages", n, p)
	}
	stored, _ := f.vec.Notes(context.Background())
	if _, ok := stored["b.md"]; ok || len(stored) != 1 {
		t.Errorf("b.md not pruned: %v", stored)
	}
	// The prune was persisted: a reopened index agrees.
	re, err := vecembedded.Open(f.vecFile)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got, _ := re.Notes(context.Background()); len(got) != 1 {
		t.Errorf("reopened index holds %v", got)
	}
}

func TestModelChangeResets(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"a.md": threeSections, "b.md": "# B\n\nbravo\n"})
	_, first := f.refresh(t)
	other := embed.NewFake(32)
	f.emb = &Embeddings{Store: f.ix.Store, Embedder: other, Vectors: f.vec, Log: quiet}
	if got := f.stale(t); got != 2 {
		t.Errorf("stale under a new model = %d, want every note (2)", got)
	}
	n, p := f.refresh(t)
	if n != 2 || p != first || other.Texts() != first {
		t.Errorf("model change: %d notes, %d passages, want 2 and %d", n, p, first)
	}
	sp, _ := f.vec.Space(context.Background())
	if sp != (vectors.Space{Model: other.Model(), Dim: 32}) {
		t.Errorf("space after a model change = %+v", sp)
	}
}

// gate is an embedder that blocks in Embed until released.
type gate struct {
	*embed.Fake
	entered chan struct{}
	release chan struct{}
}

func (g *gate) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.entered <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Fake.Embed(ctx, texts)
}

func TestConcurrentRefreshEmbedsOnce(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"a.md": threeSections, "b.md": "# B\n\nbravo\n"})
	g := &gate{Fake: f.fake, entered: make(chan struct{}, 10), release: make(chan struct{})}
	f.emb.Embedder, f.emb.Batch = g, 1000
	const callers = 8
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			_, _, err := f.emb.Refresh(context.Background(), f.ix.Catalog)
			errs <- err
		})
	}
	<-g.entered
	time.Sleep(50 * time.Millisecond) // let the other callers queue up
	close(g.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if f.fake.Calls() != 1 {
		t.Errorf("%d concurrent Refresh calls made %d Embed calls, want 1", callers, f.fake.Calls())
	}
}

func TestWaiterHonoursItsContext(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"a.md": threeSections})
	g := &gate{Fake: f.fake, entered: make(chan struct{}, 10), release: make(chan struct{})}
	f.emb.Embedder = g
	done := make(chan error, 1)
	go func() {
		_, _, err := f.emb.Refresh(context.Background(), f.ix.Catalog)
		done <- err
	}()
	<-g.entered
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := f.emb.Refresh(ctx, f.ix.Catalog); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting caller: err = %v, want its deadline", err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestLeaderCancelledWaiterTakesOver(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"a.md": threeSections})
	g := &gate{Fake: f.fake, entered: make(chan struct{}, 10), release: make(chan struct{})}
	f.emb.Embedder = g
	ctx, cancel := context.WithCancel(context.Background())
	leader := make(chan error, 1)
	go func() {
		_, _, err := f.emb.Refresh(ctx, f.ix.Catalog)
		leader <- err
	}()
	<-g.entered
	waiter := make(chan error, 1)
	go func() {
		_, _, err := f.emb.Refresh(context.Background(), f.ix.Catalog)
		waiter <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-leader; !errors.Is(err, context.Canceled) {
		t.Errorf("leader: %v", err)
	}
	<-g.entered // the waiter runs its own pass
	close(g.release)
	if err := <-waiter; err != nil {
		t.Fatal(err)
	}
	if f.stale(t) != 0 {
		t.Error("the waiter's pass left notes stale")
	}
}

func TestUnembeddableNotesAreSkippedNotStale(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbravo\n"})
	// b.md turns binary after indexing; the catalog still lists it.
	indexertest.Write(t, f.dir, "b.md", "\x00\x01\x02 binary now")
	f.emb.MaxNoteBytes = 1 << 20
	n, _ := f.refresh(t)
	if n != 1 {
		t.Errorf("embedded %d notes, want 1 (b.md is binary)", n)
	}
	if got := f.stale(t); got != 0 {
		t.Errorf("stale = %d: an unembeddable note must not count as stale forever", got)
	}
	sent := f.fake.Texts()
	f.refresh(t)
	if f.fake.Texts() != sent {
		t.Error("an unembeddable note was retried without changing")
	}
}

func TestPassageText(t *testing.T) {
	got := PassageText("Title", vault.Passage{HeadingPath: []string{"A", "B"}, Text: "  body\n"})
	if got != "Title\nA > B\nbody" {
		t.Errorf("PassageText = %q", got)
	}
	if got := PassageText("T", vault.Passage{Text: "x"}); got != "T\nx" {
		t.Errorf("PassageText without headings = %q", got)
	}
}

// BenchmarkOneLineEdit1k measures what a one-line edit costs in a generated
// 1k-note vault once it is embedded: passages sent to the embedder (and the
// time of the Refresh, with the fake embedder).
func BenchmarkOneLineEdit1k(b *testing.B) {
	f, e, fake := benchEmbedded(b, 1000, 256)
	ctx := context.Background()
	full := fake.Texts()
	notes := f.ix.Catalog.Notes()
	target := notes[len(notes)/2].Path
	data, err := os.ReadFile(filepath.Join(f.dir, target))
	if err != nil {
		b.Fatal(err)
	}
	sent := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		data = append(data, []byte("\nOne more line "+strings.Repeat("x", i%7)+".\n")...)
		if err := os.WriteFile(filepath.Join(f.dir, target), data, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := f.ix.Apply(ctx, target); err != nil {
			b.Fatal(err)
		}
		before := fake.Texts()
		b.StartTimer()
		if _, _, err := e.Refresh(ctx, f.ix.Catalog); err != nil {
			b.Fatal(err)
		}
		sent += fake.Texts() - before
	}
	b.ReportMetric(float64(sent)/float64(b.N), "passages/edit")
	b.ReportMetric(float64(full), "passages/vault")
}

// BenchmarkRefreshUnchanged10k is the price every semantic call pays when
// nothing changed: comparing a 10k-note catalog with the vector index.
func BenchmarkRefreshUnchanged10k(b *testing.B) {
	f, e, _ := benchEmbedded(b, 10000, 64)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if n, _, err := e.Refresh(ctx, f.ix.Catalog); err != nil || n != 0 {
			b.Fatal(n, err)
		}
	}
}

// benchEmbedded generates a vault of the given size, indexes it and embeds
// it with a fake embedder of dim dimensions.
func benchEmbedded(b *testing.B, notes, dim int) (*fixture, *Embeddings, *embed.Fake) {
	b.Helper()
	dir := b.TempDir()
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: notes, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	st, text := indexertest.OpenLocal(b, dir)
	f := &fixture{dir: dir, ix: &Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text}}
	ctx := context.Background()
	if _, err := f.ix.Sync(ctx, nil); err != nil {
		b.Fatal(err)
	}
	vec, err := vecembedded.Open("")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { vec.Close() })
	fake := embed.NewFake(dim)
	e := &Embeddings{Store: st, Embedder: fake, Vectors: vec, Log: quiet}
	if _, _, err := e.Refresh(ctx, f.ix.Catalog); err != nil {
		b.Fatal(err)
	}
	return f, e, fake
}

// notesCounter counts full reads of a vector index.
type notesCounter struct {
	vectors.Index
	calls int
}

func (n *notesCounter) Notes(ctx context.Context) (map[string]string, error) {
	n.calls++
	return n.Index.Notes(ctx)
}

// RefreshPaths embeds the changed passages of the notes named, drops the
// vectors of those gone, and never reads the whole vector index.
func TestRefreshPathsCostsThePaths(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"water.md": threeSections, "a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbravo\n"})
	f.refresh(t)
	count := &notesCounter{Index: f.vec}
	f.emb.Vectors = count
	indexertest.Write(t, f.dir, "water.md", strings.Replace(threeSections, "before nine", "before eight", 1))
	indexertest.Write(t, f.dir, "c.md", "# C\n\ncharlie\n")
	os.Remove(filepath.Join(f.dir, "b.md"))
	f.sync(t)
	sent := f.fake.Texts()
	notes, passages, err := f.emb.RefreshPaths(context.Background(), f.ix.Catalog, []string{"water.md", "c.md", "b.md"})
	if err != nil {
		t.Fatal(err)
	}
	if notes != 2 || passages != 3 || f.fake.Texts()-sent != 3 {
		t.Errorf("%d notes, %d passages, %d texts sent; want 2 notes (water, c), 3 texts (one edited passage, a new note's passage and name)", notes, passages, f.fake.Texts()-sent)
	}
	if count.calls != 0 {
		t.Errorf("RefreshPaths read the whole vector index %d times", count.calls)
	}
	f.emb.Vectors = f.vec
	stored, _ := f.vec.Notes(context.Background())
	if _, ok := stored["b.md"]; ok || len(stored) != 3 {
		t.Errorf("after RefreshPaths the index holds %v", stored)
	}
	if got := f.stale(t); got != 0 {
		t.Errorf("%d notes stale after RefreshPaths", got)
	}
}
