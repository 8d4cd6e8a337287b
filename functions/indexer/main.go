// Command indexer is the indexer Lambda function: S3 notifications (direct,
// through SQS or EventBridge) and the scheduled {"reconcile": true} keep the
// cloud vault's Meilisearch index, catalog snapshot and (when configured)
// Qdrant vectors in step with the bucket. See s3events.Handle for
// what each event returns; SQS batches report partial failures.
package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sheaf-dev/sheaf/functions/internal/fnenv"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/s3events"
)

func main() {
	_, cl, log, err := fnenv.OpenCloud(context.Background())
	if err != nil {
		log.Error("sheaf indexer function: init", "err", err)
		os.Exit(1)
	}
	lambda.Start(handler{cl: cl, log: log}.handle)
}

type handler struct {
	cl  *config.Cloud
	log *slog.Logger
}

// handle loads the catalog snapshot on the first event, hands the event to
// the indexer, then re-embeds what changed: the batch's notes, or for a
// reconcile every stale note. An embeddings failure is only logged (the
// batch's notes are retried with the next batch): the semantic tools
// re-embed stale notes before they answer.
func (h handler) handle(ctx context.Context, raw json.RawMessage) (any, error) {
	if err := h.cl.LoadCatalog(ctx); err != nil {
		return nil, err
	}
	res, err := s3events.Handle(ctx, h.cl.Indexer, raw)
	if err != nil {
		return res, err
	}
	refresh := h.cl.RefreshEmbeddings // the batch's notes
	if sum, ok := res.(s3events.Summary); ok && sum.Kind == s3events.KindReconcile {
		refresh = h.cl.ReconcileEmbeddings // the whole vault
	}
	if eerr := refresh(ctx); eerr != nil {
		h.log.Warn("embedding changed notes", "err", eerr)
	}
	return res, nil
}
