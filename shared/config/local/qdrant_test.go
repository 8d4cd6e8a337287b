//go:build !sheaf_noqdrant

package local

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/config"
	_ "github.com/sheaf-dev/sheaf/shared/vectors/qdrant" // as a main that ships Qdrant imports it
	"github.com/sheaf-dev/sheaf/shared/vectors/qdrant/qdrantfake"
)

// TestFolderWithQdrant: --vectors with a Qdrant URL on a folder vault keeps
// the vectors there, not in the embedded index.
func TestFolderWithQdrant(t *testing.T) {
	ctx := t.Context()
	qd := qdrantfake.New()
	addr := qd.Start(t)
	dir, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nalpha beta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &config.Config{Vault: dir, State: state, VaultID: "notes", Vectors: "qdrant://" + addr, EmbedBaseURL: fakeProvider(t), EmbedModel: "fake"}
	l, err := Open(ctx, c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Indexer.Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n, _, err := l.Embeddings.Refresh(ctx, l.Indexer.Catalog); err != nil || n != 1 {
		t.Fatalf("refresh: %d notes, %v", n, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := qd.Collections(); len(got) != 1 || got[0] != "sheaf-notes" {
		t.Errorf("Qdrant collections %v, want [sheaf-notes]", got)
	}
	if qd.Count("Points/Upsert") == 0 {
		t.Error("no vector reached Qdrant")
	}
	if _, err := os.Stat(filepath.Join(state, "vectors.bin")); !os.IsNotExist(err) {
		t.Errorf("an embedded vector index was made beside Qdrant: %v", err)
	}
}
