package indexer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// scripted wraps a Fake: hook, when set, may replace the result of Embed
// call n (from 0); returning ok=false falls through to the Fake.
type scripted struct {
	*embed.Fake
	model string
	calls atomic.Int64
	hook  func(n int, texts []string, vecs [][]float32) ([][]float32, error)
}

func (s *scripted) Model() string {
	if s.model != "" {
		return s.model
	}
	return s.Fake.Model()
}

func (s *scripted) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	n := int(s.calls.Add(1)) - 1
	vecs, err := s.Fake.Embed(ctx, texts)
	if err != nil || s.hook == nil {
		return vecs, err
	}
	return s.hook(n, texts, vecs)
}

func manyNotes(n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("n%03d.md", i)] = fmt.Sprintf("# Note %d\n\nbody of note %d\n", i, i)
	}
	return files
}

// A pass that fails midway leaves whole notes (never a half-written one)
// and the next pass resumes without re-embedding what was written.
func TestRefreshFailureMidRunResumes(t *testing.T) {
	f := newEmbFixture(t, manyNotes(9))
	s := &scripted{Fake: f.fake}
	s.hook = func(n int, _ []string, v [][]float32) ([][]float32, error) {
		if n == 1 {
			return nil, errors.New("provider down")
		}
		return v, nil
	}
	f.emb.Embedder = s
	if _, _, err := f.emb.Refresh(context.Background(), f.ix.Catalog); err == nil {
		t.Fatal("Refresh succeeded though the embedder failed")
	}
	stored, _ := f.vec.Notes(context.Background())
	if len(stored) == 0 || len(stored) == 9 {
		t.Fatalf("after a failure midway %d notes are stored, want some", len(stored))
	}
	for p, h := range stored {
		if n, _ := f.ix.Catalog.Note(p); EmbeddedAs(n.Hash) != h {
			t.Errorf("%s stored at hash %s, want %s", p, h, EmbeddedAs(n.Hash))
		}
	}
	if got := f.stale(t); got != 9-len(stored) {
		t.Errorf("stale = %d, want %d", got, 9-len(stored))
	}
	before := f.fake.Texts()
	n, _ := f.refresh(t)
	if n != 9-len(stored) {
		t.Errorf("resumed pass wrote %d notes, want %d", n, 9-len(stored))
	}
	if sent := f.fake.Texts() - before; sent != 2*(9-len(stored)) { // a passage and a name each
		t.Errorf("resumed pass embedded %d texts, want %d", sent, 2*(9-len(stored)))
	}
	if f.stale(t) != 0 {
		t.Error("notes still stale")
	}
}

// Bad vectors from the embedder fail the pass cleanly: nothing of that
// batch is written, and nothing panics.
func TestRefreshRejectsBadVectors(t *testing.T) {
	cases := map[string]func(v [][]float32) [][]float32{
		"fewer":   func(v [][]float32) [][]float32 { return v[:len(v)-1] },
		"more":    func(v [][]float32) [][]float32 { return append(v, v[0]) },
		"nan":     func(v [][]float32) [][]float32 { v[0][0] = float32(math.NaN()); return v },
		"inf":     func(v [][]float32) [][]float32 { v[len(v)-1][3] = float32(math.Inf(-1)); return v },
		"ragged":  func(v [][]float32) [][]float32 { v[len(v)-1] = v[len(v)-1][:10]; return v },
		"empty":   func(v [][]float32) [][]float32 { v[0] = nil; return v },
		"allnil":  func(v [][]float32) [][]float32 { return nil },
		"zerodim": func(v [][]float32) [][]float32 { return make([][]float32, len(v)) },
	}
	for name, mangle := range cases {
		t.Run(name, func(t *testing.T) {
			f := newEmbFixture(t, manyNotes(3))
			f.emb.Embedder = &scripted{Fake: f.fake, hook: func(_ int, _ []string, v [][]float32) ([][]float32, error) {
				return mangle(v), nil
			}}
			if _, _, err := f.emb.Refresh(context.Background(), f.ix.Catalog); err == nil {
				t.Fatal("Refresh accepted bad vectors")
			}
			stored, _ := f.vec.Notes(context.Background())
			if len(stored) != 0 {
				t.Errorf("bad vectors stored for %v", stored)
			}
			f.emb.Embedder = f.fake
			f.refresh(t)
			if f.stale(t) != 0 {
				t.Error("the next pass did not recover")
			}
		})
	}
}

// The provider starts returning vectors of another length under the same
// model name: the index is reset and every note re-embedded at the new
// length, never mixed.
func TestRefreshDimensionChangeMidRun(t *testing.T) {
	f := newEmbFixture(t, manyNotes(9))
	small := embed.NewFake(16)
	s := &scripted{Fake: f.fake, model: "same-name"}
	s.hook = func(n int, texts []string, v [][]float32) ([][]float32, error) {
		if n >= 1 {
			return small.Embed(context.Background(), texts)
		}
		return v, nil
	}
	f.emb.Embedder = &dimless{s}
	f.refresh(t)
	sp, _ := f.vec.Space(context.Background())
	if sp.Dim != 16 || sp.Model != "same-name" {
		t.Errorf("space = %+v, want same-name/16", sp)
	}
	stored, _ := f.vec.Notes(context.Background())
	if len(stored) != 9 {
		t.Errorf("%d notes stored, want 9", len(stored))
	}
	for p := range stored {
		h, _ := f.vec.Hashes(context.Background(), p)
		for _, v := range h {
			if len(v) != 16 {
				t.Fatalf("%s has a %d-dim vector in a 16-dim index", p, len(v))
			}
		}
	}
}

// dimless hides the embedder's dimensions, as the OpenAI adapter does
// before its first response.
type dimless struct{ *scripted }

func (dimless) Dimensions() int { return 0 }

// A model that changes name between passes resets the index.
func TestRefreshModelRenameResets(t *testing.T) {
	f := newEmbFixture(t, manyNotes(3))
	s := &scripted{Fake: f.fake, model: "m1"}
	f.emb.Embedder = s
	f.refresh(t)
	s.model = "m2"
	if got := f.stale(t); got != 3 {
		t.Errorf("stale after a rename = %d, want 3", got)
	}
	n, _ := f.refresh(t)
	sp, _ := f.vec.Space(context.Background())
	if n != 3 || sp.Model != "m2" {
		t.Errorf("rename: %d notes re-embedded, space %+v", n, sp)
	}
}

// Hostile note bodies are embedded without panics: empty, frontmatter
// only, invalid UTF-8, CJK/emoji/RTL, a 2 MB paragraph (too large here).
func TestRefreshHostileNotes(t *testing.T) {
	f := newEmbFixture(t, map[string]string{
		"empty.md":   "",
		"fm.md":      "---\ntags: [a]\n---\n",
		"bad.md":     "# Bad \xff\xfe\n\nbody \xc3\x28 text\n",
		"cjk.md":     "# 日本語\n\n東京は大きい 🌸 مرحبا بالعالم\n",
		"huge.md":    "# Huge\n\n" + strings.Repeat("word ", 400_000),
		"spaces.md":  " \n\t\n",
		"nfd-é.md":   "# Café\n\ncafé\n",
		"dir/x y.md": "# X\n\nx\n",
	})
	f.emb.MaxNoteBytes = 1 << 20
	f.refresh(t)
	if got := f.stale(t); got != 0 {
		t.Errorf("stale = %d after a pass over hostile notes", got)
	}
	stored, _ := f.vec.Notes(context.Background())
	for _, p := range []string{"empty.md", "fm.md", "bad.md", "cjk.md", "spaces.md", "dir/x y.md"} {
		if _, ok := stored[p]; !ok {
			t.Errorf("%s not embedded", p)
		}
	}
	if _, ok := stored["huge.md"]; ok {
		t.Error("a note over MaxNoteBytes was embedded")
	}
	var _ vectors.Index = f.vec
}

// Notes edited or deleted while a pass embeds them: the pass stores what
// it read, and once the indexer has synced the next pass converges.
func TestRefreshRacingEdits(t *testing.T) {
	f := newEmbFixture(t, manyNotes(6))
	s := &scripted{Fake: f.fake}
	s.hook = func(n int, _ []string, v [][]float32) ([][]float32, error) {
		if n == 0 {
			indexertest.Write(t, f.dir, "n000.md", "# Note 0\n\nrewritten while embedding\n")
			indexertest.Write(t, f.dir, "n005.md", "# Note 5\n\nrewritten before it was read\n")
			if err := os.Remove(filepath.Join(f.dir, "n001.md")); err != nil {
				t.Error(err)
			}
			if err := os.Remove(filepath.Join(f.dir, "n004.md")); err != nil {
				t.Error(err)
			}
		}
		return v, nil
	}
	f.emb.Embedder = s
	f.refresh(t)
	f.sync(t)
	if got := f.stale(t); got != 1 {
		t.Errorf("stale after the sync = %d, want 1 (n000.md)", got)
	}
	f.refresh(t)
	stored, _ := f.vec.Notes(context.Background())
	if len(stored) != 4 {
		t.Errorf("stored %v, want the 4 notes left", stored)
	}
	for p, h := range stored {
		if n, ok := f.ix.Catalog.Note(p); !ok || EmbeddedAs(n.Hash) != h {
			t.Errorf("%s stored at %s, catalog has %+v", p, h, n)
		}
	}
	if f.stale(t) != 0 {
		t.Error("still stale")
	}
}
