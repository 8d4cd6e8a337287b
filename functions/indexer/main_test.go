package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/functions/internal/cloudtest"
	"github.com/sheaf-dev/sheaf/functions/internal/rietest"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
)

// build compiles this function's bootstrap as the deployment does.
func build(t *testing.T) string {
	t.Helper()
	rietest.Require(t)
	return rietest.Build(t, ".")
}

// s3Record is an S3 notification record for key (form-encoded, as S3
// sends keys).
func s3Record(bucket, event, key string) string {
	return fmt.Sprintf(`{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1",
	  "eventTime":"2026-11-02T10:00:00.000Z","eventName":%q,
	  "s3":{"s3SchemaVersion":"1.0","bucket":{"name":%q,"arn":"arn:aws:s3:::%s"},
	        "object":{"key":%q,"size":10,"sequencer":"0A"}}}]}`, event, bucket, bucket, url.QueryEscape(key))
}

func sqsMessage(id, body string) map[string]any {
	return map[string]any{
		"messageId": id, "receiptHandle": "rh-" + id, "body": body,
		"attributes":     map[string]string{"ApproximateReceiveCount": "1"},
		"eventSource":    "aws:sqs",
		"eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:sheaf-vault-events",
		"awsRegion":      "us-east-1",
	}
}

// TestIndexerFunction runs the function under the Lambda emulator: the
// scheduled reconcile indexes the sample vault, then an SQS batch with one
// good and one poison message reports exactly the poison one for retry,
// and the good one's note is in the snapshot the MCP function reads.
func TestIndexerFunction(t *testing.T) {
	bin := build(t)
	v := cloudtest.Sample(t, s3test.Options{})
	r := rietest.Start(t, bin, v.Env()...)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	payload, err := r.Invoke(ctx, []byte(`{"reconcile": true}`))
	if err != nil {
		t.Fatalf("reconcile: %v\n%s", err, r.Output())
	}
	var sum struct {
		Kind string `json:"kind"`
		Sync struct {
			Notes, Indexed, Skipped int
		} `json:"sync"`
	}
	if err := json.Unmarshal(payload, &sum); err != nil || sum.Kind != "reconcile" || sum.Sync.Indexed < 40 || sum.Sync.Skipped == 0 {
		t.Fatalf("reconcile summary %s (%v)", payload, err)
	}

	v.Put(t, "Inbox/new note.md", []byte("# Fresh\n\nA note that arrived by SQS. #fresh\n"))
	good := s3Record(v.Bucket, "ObjectCreated:Put", v.Key("Inbox/new note.md"))
	batch, _ := json.Marshal(map[string]any{"Records": []any{
		sqsMessage("good-1", good),
		sqsMessage("poison-2", `{"this is": "not an S3 event"`),
	}})
	payload, err = r.Invoke(ctx, batch)
	if err != nil {
		t.Fatalf("SQS batch: %v\n%s", err, r.Output())
	}
	var resp struct {
		BatchItemFailures []struct {
			ItemIdentifier string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(payload, &resp); err != nil {
		t.Fatalf("SQS response %s: %v", payload, err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "poison-2" {
		t.Errorf("batchItemFailures = %s, want exactly poison-2", payload)
	}

	// The MCP side sees the new note in the saved snapshot.
	cl, err := config.OpenCloud(ctx, v.Config(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := cl.Vault.Catalogs.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Note("Inbox/new note.md"); !ok {
		t.Errorf("the note from the SQS message is not in the catalog snapshot")
	}
	if _, ok := cat.Note("index.md"); !ok {
		t.Errorf("the reconciled notes are gone from the snapshot")
	}

	// Keys under .sheaf/ (the indexer's own writes) and other prefixes are
	// ignored, not failed.
	payload, err = r.Invoke(ctx, []byte(s3Record(v.Bucket, "ObjectCreated:Put", v.Key(".sheaf/catalog.json.gz"))))
	if err != nil || !strings.Contains(string(payload), `"ignored":1`) {
		t.Errorf("own snapshot event: %s %v", payload, err)
	}
	payload, err = r.Invoke(ctx, []byte(s3Record(v.Bucket, "ObjectCreated:Put", "elsewhere/x.md")))
	if err != nil || !strings.Contains(string(payload), `"ignored":1`) {
		t.Errorf("event outside the prefix: %s %v", payload, err)
	}
}
