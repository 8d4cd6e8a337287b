package config

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
)

var quiet = slog.New(slog.DiscardHandler)

func TestOpenCloudRefuses(t *testing.T) {
	for name, c := range map[string]Config{
		"folder":           {Vault: "./notes", Search: "http://127.0.0.1:7700"},
		"embedded search":  {Vault: "s3://b/p", Search: "embedded"},
		"no search":        {Vault: "s3://b/p"},
		"bad url":          {Vault: "s3://b/p?bogus=1", Search: "http://127.0.0.1:7700"},
		"bad index":        {Vault: "s3://b/p", Search: "http://127.0.0.1:7700", VaultID: "Bad Id!"},
		"embedded vectors": {Vault: "s3://b/p", Search: "http://127.0.0.1:7700", EmbedBaseURL: "http://127.0.0.1:8088/v1", Vectors: "embedded"},
		"bad vectors":      {Vault: "s3://b/p", Search: "http://127.0.0.1:7700", EmbedBaseURL: "http://127.0.0.1:8088/v1", Vectors: "http://x"},
		"llm no model":     {Vault: "s3://b/p", Search: "http://127.0.0.1:7700", LLMBaseURL: "http://127.0.0.1:1/v1"},
	} {
		t.Setenv("AWS_REGION", "us-east-1")
		if _, err := OpenCloud(t.Context(), &c, quiet); err == nil {
			t.Errorf("%s: OpenCloud accepted %+v", name, c)
		}
	}
}

// countingListener counts the connections made to it.
func countingListener(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

func TestOpenCloudWiring(t *testing.T) {
	addr, conns := countingListener(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "a")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "b")
	t.Setenv("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001")
	c := &Config{
		Vault:        "s3://my-bucket/Team Notes/Wiki?endpoint=http://" + addr + "&path_style=true&region=eu-west-1",
		Search:       "http://" + addr,
		EmbedBaseURL: "http://" + addr + "/v1", EmbedModel: "m",
		Vectors: "qdrant://" + addr, LLMBaseURL: "http://" + addr + "/v1", LLMModel: "m",
	}
	if !hasQdrant {
		if _, err := OpenCloud(t.Context(), c, quiet); !errors.Is(err, ErrNoQdrant) {
			t.Fatalf("qdrant:// in a build without Qdrant: %v", err)
		}
		c.EmbedBaseURL, c.Vectors = "", ""
	}
	cl, err := OpenCloud(t.Context(), c, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if n := conns.Load(); n != 0 {
		t.Errorf("OpenCloud made %d connections", n)
	}
	v := cl.Vault
	if v.ID != "wiki" {
		t.Errorf("vault id %q, want wiki (the prefix's last folder)", v.ID)
	}
	if !strings.HasPrefix(v.Root, "s3://my-bucket/Team%20Notes/Wiki?") || strings.Contains(v.Root, "secret") {
		t.Errorf("root %q", v.Root)
	}
	if v.MaxWait != LambdaMaxWait {
		t.Errorf("MaxWait %v on Lambda, want %v", v.MaxWait, LambdaMaxWait)
	}
	if v.LLM == nil || hasQdrant && (v.Embedder == nil || v.Vectors == nil || v.Embeddings == nil || cl.Embeddings == nil) {
		t.Errorf("semantic wiring missing: %+v", v)
	}
	if p, ok := cl.Indexer.KeyPath("Team Notes/Wiki/a/b.md"); !ok || p != "a/b.md" {
		t.Errorf("KeyPath = %q, %v", p, ok)
	}
	if _, ok := cl.Indexer.KeyPath("Other/a.md"); ok {
		t.Errorf("a key outside the prefix maps to the vault")
	}
	if cl.Indexer.Bucket != "my-bucket" || cl.Indexer.Catalog == nil || cl.Indexer.Snapshots == nil {
		t.Errorf("indexer wiring: %+v", cl.Indexer)
	}

	t.Setenv("AWS_LAMBDA_RUNTIME_API", "")
	c = &Config{Vault: "s3://whole-bucket?region=us-east-1", Search: "https://search.example"}
	cl, err = OpenCloud(t.Context(), c, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Vault.ID != "whole-bucket" || cl.Vault.MaxWait != 0 || cl.Embeddings != nil || cl.Vault.LLM != nil {
		t.Errorf("whole-bucket vault: id %q, MaxWait %v", cl.Vault.ID, cl.Vault.MaxWait)
	}
	if err := cl.RefreshEmbeddings(t.Context()); err != nil {
		t.Errorf("RefreshEmbeddings without embeddings: %v", err)
	}
}

// TestLoadCatalog: a fresh bucket gives an empty catalog; after a
// reconcile, a new Cloud's indexer starts from the saved snapshot and the
// tools' catalog reads it too.
func TestLoadCatalog(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	srv.CreateBucket(t, "vault")
	meili := meilifake.New(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	c := &Config{Vault: srv.URL("vault", "notes"), Search: meili.URL, MaxNoteBytes: 1 << 20}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cl, err := OpenCloud(ctx, c, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.LoadCatalog(ctx); err != nil {
		t.Fatalf("LoadCatalog on an empty bucket: %v", err)
	}
	if n := len(cl.Indexer.Catalog.Notes()); n != 0 {
		t.Fatalf("%d notes in a fresh catalog", n)
	}
	for p, body := range map[string]string{"a.md": "# A\n[[b]]\n", "sub/b.md": "# B\n#tag\n"} {
		if _, err := cl.Store.Put(ctx, p, []byte(body), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := cl.Indexer.Reconcile(ctx); err != nil || st.Indexed != 2 {
		t.Fatalf("reconcile: %+v %v", st, err)
	}

	again, err := OpenCloud(ctx, c, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.LoadCatalog(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := again.Indexer.Catalog.Note("sub/b.md"); !ok {
		t.Errorf("the indexer did not start from the saved snapshot")
	}
	cat, err := again.Vault.Catalogs.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Notes()) != 2 {
		t.Errorf("the tools' catalog has %d notes, want 2", len(cat.Notes()))
	}
}
