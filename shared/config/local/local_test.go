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
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
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

// TestFolderWithMeilisearch: --search with a Meilisearch URL on a folder
// vault is used, as on S3: the in-process indexer pushes the notes there
// and search reads them back from it, and no embedded index is made.
func TestFolderWithMeilisearch(t *testing.T) {
	ctx := t.Context()
	meili := meilifake.New(t)
	dir, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old.md"), []byte("# Old\n\nheron by the lake\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &config.Config{Vault: dir, State: state, VaultID: "notes", Search: meili.URL, Ledger: "off", NoAudit: true}
	l, err := Open(ctx, c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Start(ctx, true)
	<-l.Vault.Ready()
	s, err := core.New(l.Vault)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteNote(ctx, core.WriteNoteIn{Path: "new.md", Content: "# New\n\nkingfisher on the river\n"}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"heron": "old.md", "kingfisher": "new.md"} {
		res, err := s.Search(ctx, core.SearchArgs{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Items) != 1 || res.Items[0].Path != want {
			t.Errorf("search %q: %+v, want %s", q, res.Items, want)
		}
	}
	pushed, searched := map[string]bool{}, 0
	for _, call := range meili.Calls() {
		switch call.Path {
		case "/indexes/sheaf-notes/documents":
			for _, p := range []string{"old.md", "new.md"} {
				pushed[p] = pushed[p] || strings.Contains(string(call.Body), `"path":"`+p+`"`)
			}
		case "/multi-search":
			searched++
		}
	}
	if !pushed["old.md"] || !pushed["new.md"] || meili.DocumentCount("sheaf-notes") == 0 {
		t.Errorf("notes pushed to Meilisearch: %v (%d documents)", pushed, meili.DocumentCount("sheaf-notes"))
	}
	if searched == 0 {
		t.Error("no search reached Meilisearch")
	}
	if _, err := os.Stat(filepath.Join(state, "index.db")); !os.IsNotExist(err) {
		t.Errorf("an embedded index was made beside Meilisearch: %v", err)
	}
}
