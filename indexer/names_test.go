package indexer

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

const kettle = "---\ntitle: Quasar kettle\naliases: [boiler, tea maker]\n---\n# Quasar kettle\n\nIt boils water in ninety seconds.\n\n## Descaling\n\nVinegar, once a month.\n"

// Every note gets a name point: its title and aliases, embedded alone, so a
// question that matches what the note is called finds it by that point.
func TestNamePointEmbedsTitleAndAliases(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"kettle.md": kettle, "other.md": "# Other\n\nSomething else.\n"})
	f.refresh(t)
	ctx := context.Background()
	name := NameText("Quasar kettle", []string{"boiler", "tea maker"})
	if name != "Quasar kettle\nboiler\ntea maker" {
		t.Fatalf("NameText = %q", name)
	}
	hs, err := f.vec.Hashes(ctx, "kettle.md")
	if err != nil {
		t.Fatal(err)
	}
	if hs[vectors.NameHash(name)] == nil {
		t.Fatalf("kettle.md has no vector for its name among %d", len(hs))
	}
	q, err := f.fake.Embed(ctx, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := f.vec.SearchNotes(ctx, q[0], 2, vectors.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Path != "kettle.md" || hits[0].Ordinal != vectors.NameOrdinal || hits[0].Heading != "" {
		t.Errorf("searching the name's own vector: %+v, want kettle.md at the name ordinal", hits)
	}
}

// Notes embedded by an earlier Sheaf (passages only, the bare note hash)
// are stale once, and catching up sends only their names to the embedder.
func TestEarlierLayoutGetsNamesOnly(t *testing.T) {
	f := newEmbFixture(t, map[string]string{"kettle.md": kettle, "a.md": "# A\n\nalpha\n", "empty.md": ""})
	f.refresh(t)
	ctx := context.Background()
	for _, n := range f.ix.Catalog.Notes() {
		if n.Path == "empty.md" { // a note without passages had one point of its title
			title := vectors.Point{Path: n.Path, Hash: "title-hash", NoteHash: n.Hash, Vector: make([]float32, 64)}
			title.Vector[0] = 1
			if err := f.vec.Upsert(ctx, title); err != nil {
				t.Fatal(err)
			}
			continue
		}
		hs, err := f.vec.Hashes(ctx, n.Path)
		if err != nil {
			t.Fatal(err)
		}
		var old []vectors.Point
		for i, p := range passageHashesInOrder(t, f, n.Path) {
			old = append(old, vectors.Point{Path: n.Path, Ordinal: i, Hash: p, NoteHash: n.Hash, Vector: hs[p]})
		}
		if len(old) == len(hs) || hs[vectors.NameHash(NameText(n.Title, n.Aliases))] == nil {
			t.Fatalf("%s: fixture: %d vectors, %d passages", n.Path, len(hs), len(old))
		}
		if err := f.vec.Upsert(ctx, old...); err != nil {
			t.Fatal(err)
		}
	}
	f.emb = &Embeddings{Store: f.ix.Store, Embedder: f.fake, Vectors: f.vec, Log: quiet} // a new process
	if got := f.stale(t); got != 3 {
		t.Errorf("stale after an upgrade = %d, want 3", got)
	}
	sent := f.fake.Texts()
	if n, p := f.refresh(t); n != 3 || p != 3 || f.fake.Texts()-sent != 3 {
		t.Errorf("catching up: %d notes, %d texts (%d sent), want 3 notes and their 3 names", n, p, f.fake.Texts()-sent)
	}
	if got := f.stale(t); got != 0 {
		t.Errorf("stale after catching up = %d", got)
	}
	if hs, _ := f.vec.Hashes(ctx, "empty.md"); len(hs) != 1 || hs["title-hash"] != nil {
		t.Errorf("empty.md after catching up holds %v, want only its name", slices.Collect(maps.Keys(hs)))
	}
}

// passageHashesInOrder is the passage hashes of the note at path, in order.
func passageHashesInOrder(t *testing.T, f *embFixture, path string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, path))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range vault.Parse(path, data).Passages {
		out = append(out, p.Hash)
	}
	return out
}
