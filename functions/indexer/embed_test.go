package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sheaf-dev/sheaf/functions/internal/cloudtest"
	"github.com/sheaf-dev/sheaf/functions/internal/rietest"
	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/embed/embedtest"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors/qdrant/qdrantfake"
)

// TestIndexerFunctionEmbeds runs the cloud semantic path end to end: the
// indexer function under the Lambda emulator, with an embeddings provider
// and Qdrant (the in-repo fake of the calls the adapter makes), embeds the
// whole vault on the scheduled reconcile, then each SQS batch's notes: a
// new note's vectors arrive, an edited note's are replaced, a deleted
// note's are dropped; and the MCP side's semantic_search finds the new note
// through them.
func TestIndexerFunctionEmbeds(t *testing.T) {
	bin := build(t)
	v := cloudtest.Sample(t, s3test.Options{})
	qd := qdrantfake.New()
	addr := qd.Start(t)
	emb := embedtest.Start(t)
	env := append(v.Env(), emb.Env()...)
	env = append(env, "SHEAF_VECTORS=qdrant://"+addr)
	r := rietest.Start(t, bin, env...)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	invoke := func(event []byte) []byte {
		t.Helper()
		payload, err := r.Invoke(ctx, event)
		if err != nil {
			t.Fatalf("invoke: %v\n%s", err, r.Output())
		}
		return payload
	}

	// The same wiring in process, to read what the function wrote.
	for _, kv := range append(emb.Env(), "SHEAF_VECTORS=qdrant://"+addr) {
		k, val, _ := strings.Cut(kv, "=")
		t.Setenv(k, val)
	}
	cl, err := config.OpenCloud(ctx, v.Config(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// state returns the vectors' notes (path -> note hash) and the catalog
	// the function saved, read afresh.
	state := func() (map[string]string, *vault.Catalog) {
		t.Helper()
		notes, err := cl.Vault.Vectors.Notes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cat, err := (&catalogstore.Snapshots{Store: cl.Store}).Load(ctx)
		if err != nil || cat == nil {
			t.Fatalf("no catalog snapshot: %v", err)
		}
		return notes, cat
	}

	invoke([]byte(`{"reconcile": true}`))
	notes, cat := state()
	if stale, err := cl.Embeddings.Stale(ctx, cat); err != nil || stale != 0 {
		t.Fatalf("after the reconcile %d notes are not embedded at their current content (%v)", stale, err)
	}
	if len(notes) < 30 {
		t.Fatalf("after the reconcile Qdrant holds %d notes' vectors", len(notes))
	}
	upserts := qd.Count("Points/Upsert")
	t.Logf("reconcile: %d notes in Qdrant, %d upserts, %d texts embedded", len(notes), upserts, emb.Texts())

	// A new note, an edited one and a deleted one, by SQS.
	const fresh = "Inbox/Quasar kettles.md"
	v.Put(t, fresh, []byte("# Quasar kettles\n\nA kettle that boils water with the light of a distant quasar.\n"))
	const edited = "Concepts/Crop rotation.md"
	before := notes[edited]
	if before == "" {
		t.Fatalf("%s has no vectors after the reconcile", edited)
	}
	v.Put(t, edited, []byte("# Crop rotation\n\nRewritten: rotation is now about worms and nothing else.\n"))
	var gone string
	for p := range notes {
		if p != edited && strings.HasPrefix(p, "People/") {
			gone = p
			break
		}
	}
	if _, err := v.S3.Client(t).DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &v.Bucket, Key: ptr(v.Key(gone))}); err != nil {
		t.Fatal(err)
	}
	batch, _ := json.Marshal(map[string]any{"Records": []any{
		sqsMessage("new-1", s3Record(v.Bucket, "ObjectCreated:Put", v.Key(fresh))),
		sqsMessage("edit-2", s3Record(v.Bucket, "ObjectCreated:Put", v.Key(edited))),
		sqsMessage("gone-3", s3Record(v.Bucket, "ObjectRemoved:Delete", v.Key(gone))),
	}})
	invoke(batch)
	notes, cat = state()
	n, ok := cat.Note(fresh)
	switch {
	case !ok:
		t.Fatalf("%s is not in the saved catalog", fresh)
	case notes[fresh] != indexer.EmbeddedAs(n.Hash):
		t.Errorf("%s: vectors of note hash %q, the note is %q", fresh, notes[fresh], n.Hash)
	}
	if e, _ := cat.Note(edited); notes[edited] == before || notes[edited] != indexer.EmbeddedAs(e.Hash) {
		t.Errorf("%s: vectors of %q after the edit (before %q, now %q)", edited, notes[edited], before, e.Hash)
	}
	if _, ok := notes[gone]; ok {
		t.Errorf("%s was deleted but its vectors are still in Qdrant", gone)
	}
	if stale, err := cl.Embeddings.Stale(ctx, cat); err != nil || stale != 0 {
		t.Errorf("after the batch %d notes are stale (%v)", stale, err)
	}

	// The MCP side answers from those vectors.
	srv, err := core.New(cl.Vault)
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.SemanticSearch(ctx, core.SemanticSearchIn{Query: "Quasar kettles: a kettle that boils water with the light of a distant quasar", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) == 0 || res.Items[0].Path != fresh {
		t.Errorf("semantic search for the new note: %+v, want %s first", res.Items, fresh)
	}
}

func ptr[T any](v T) *T { return &v }
