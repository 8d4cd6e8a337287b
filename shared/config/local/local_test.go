package local

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/embed"
)

// fakeProvider is an OpenAI-compatible /v1/embeddings of embed.NewFake.
func fakeProvider(t *testing.T) string {
	t.Helper()
	fake := embed.NewFake(16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		vecs, _ := fake.Embed(r.Context(), req.Input)
		data := []map[string]any{}
		for i, v := range vecs {
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestOpenWiresEmbeddings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nalpha beta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)

	l, err := Open(ctx, &config.Config{Vault: dir}, log)
	if err != nil {
		t.Fatal(err)
	}
	if l.Vault.Embedder != nil || l.Vault.Vectors != nil || l.Embeddings != nil {
		t.Error("no provider configured, yet embeddings are wired")
	}
	l.Close()

	l, err = Open(ctx, &config.Config{Vault: dir, EmbedBaseURL: fakeProvider(t), EmbedModel: "fake"}, log)
	if err != nil {
		t.Fatal(err)
	}
	if l.Vault.Embedder == nil || l.Vault.Vectors == nil || l.Vault.Embeddings == nil {
		t.Fatal("embeddings not wired")
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
	if _, err := os.Stat(filepath.Join(l.State, "vectors.bin")); err != nil {
		t.Errorf("Close should flush the vector index: %v", err)
	}

	for _, bad := range []config.Config{
		{Vault: dir, EmbedBaseURL: "http://127.0.0.1:1", EmbedModel: "m", Vectors: "milvus://x"},
		{Vault: dir, EmbedBaseURL: "http://127.0.0.1:1", EmbedModel: "m", Vectors: "qdrant://h/path"},
		{Vault: dir, EmbedBaseURL: "http://127.0.0.1:1"},
	} {
		if _, err := Open(ctx, &bad, log); err == nil {
			t.Errorf("%+v: want an error", bad)
		} else if !strings.Contains(err.Error(), "vectors") && !strings.Contains(err.Error(), "qdrant") && !strings.Contains(err.Error(), "embeddings") {
			t.Errorf("%+v: unclear error %v", bad, err)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for name, c := range map[string]config.Config{
		"no vault":  {},
		"cloud":     {Vault: "s3://bucket/notes?region=us-east-1"},
		"not a dir": {Vault: filepath.Join(t.TempDir(), "missing")},
	} {
		if l, err := Open(t.Context(), &c, log); err == nil {
			l.Close()
			t.Errorf("%s: Open accepted %+v", name, c)
		}
	}
}

// TestSearchURLOnAFolderIsRefused: a Meilisearch URL for a folder vault is
// an error that says what to do, never silently ignored.
func TestSearchURLOnAFolderIsRefused(t *testing.T) {
	c := &config.Config{Vault: t.TempDir(), State: t.TempDir(), Search: "http://127.0.0.1:7700"}
	_, err := Open(t.Context(), c, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "--search embedded") {
		t.Fatalf("Open with --search http://… on a folder: %v", err)
	}
}
