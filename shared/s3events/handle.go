package s3events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sheaf-dev/sheaf/indexer"
)

// Summary is what Handle returns for events other than SQS batches, and
// what Webhook answers.
type Summary struct {
	Kind    string             `json:"kind"`
	Hints   int                `json:"hints"`             // object events decoded
	Applied int                `json:"applied"`           // distinct vault paths re-read
	Ignored int                `json:"ignored"`           // other bucket, outside the vault, hidden (.sheaf/...)
	Skipped []string           `json:"skipped,omitempty"` // unindexable notes, see Status().Problems
	Failed  []string           `json:"failed,omitempty"`  // paths to retry
	Sync    *indexer.SyncStats `json:"sync,omitempty"`    // for a reconcile
	// Deferred: received before the indexer was ready (see Gated) and
	// left to the reconcile that follows.
	Deferred bool `json:"deferred,omitempty"`
}

// Handle is the Lambda entry point. It decodes raw (see DecodeEvent) and
// hands the changed keys to ix.ApplyChanges, which maps each key to a
// vault path, applies every distinct path once, then saves the catalog
// snapshot. {"reconcile": true} and EventBridge "Scheduled Event" run
// ix.Reconcile.
//
// For an SQS batch it returns events.SQSEventResponse listing the messages
// to retry: undecodable ones, those whose paths failed for a reason a retry
// can fix, and all of them when the snapshot could not be saved; the error
// is then nil. Otherwise it returns a Summary, and an error when anything
// should be retried. Unindexable objects (binary, too large) are reported
// in Summary.Skipped and Status().Problems, never as failures.
func Handle(ctx context.Context, ix *indexer.Indexer, raw json.RawMessage) (any, error) {
	hints, kind, err := DecodeEvent(raw)
	var bad MessageErrors
	if kind == KindSQS && errors.As(err, &bad) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	switch kind {
	case KindReconcile:
		st, err := ix.Reconcile(ctx)
		return Summary{Kind: kind, Sync: &st}, err
	case KindSQS:
		return handleSQS(ctx, ix, raw, hints, bad), nil
	}
	return applyHints(ctx, ix, kind, hints)
}

// changes turns hints into the pipeline's changes, one per hint.
func changes(hints []Hint) []indexer.Change {
	out := make([]indexer.Change, len(hints))
	for i, h := range hints {
		out[i] = indexer.Change{Bucket: h.Bucket, Keys: []string{h.Key}}
		if h.AltKey != "" {
			out[i].Keys = append(out[i].Keys, h.AltKey)
		}
	}
	return out
}

func handleSQS(ctx context.Context, ix *indexer.Indexer, raw json.RawMessage, hints []Hint, bad MessageErrors) events.SQSEventResponse {
	ids := sqsMessageIDs(raw)
	log := ix.Log
	if log == nil {
		log = slog.Default()
	}
	failed := map[string]bool{}
	for id, err := range bad {
		log.Warn("undecodable SQS message", "messageId", id, "err", err)
		failed[id] = true
	}
	res, err := ix.ApplyChanges(ctx, changes(hints))
	if err != nil { // nothing is durable: every message comes back
		log.Warn("indexing an SQS batch", "err", err)
		for _, id := range ids {
			failed[id] = true
		}
	}
	for i, retry := range res.Retry {
		if retry && hints[i].MessageID != "" {
			failed[hints[i].MessageID] = true
		}
	}
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, id := range ids { // in batch order
		if failed[id] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
			delete(failed, id)
		}
	}
	return resp
}

// sqsMessageIDs lists the message ids of an SQS batch, in order.
func sqsMessageIDs(raw []byte) []string {
	var batch struct {
		Records []struct {
			MessageID string `json:"messageId"`
		} `json:"Records"`
	}
	_ = json.Unmarshal(raw, &batch) // DecodeEvent has validated it
	ids := make([]string, 0, len(batch.Records))
	for _, r := range batch.Records {
		ids = append(ids, r.MessageID)
	}
	return ids
}

// applyHints applies the hints of one event and sums up what was done.
func applyHints(ctx context.Context, ix *indexer.Indexer, kind string, hints []Hint) (Summary, error) {
	res, err := ix.ApplyChanges(ctx, changes(hints))
	sum := Summary{Kind: kind, Hints: len(hints), Applied: res.Applied, Ignored: res.Ignored, Skipped: res.Skipped, Failed: res.Failed}
	if err != nil {
		return sum, err
	}
	if len(sum.Failed) > 0 {
		return sum, fmt.Errorf("indexing %d of %d paths failed (first: %s)", len(sum.Failed), res.Applied+len(sum.Failed)+len(sum.Skipped), sum.Failed[0])
	}
	return sum, nil
}
