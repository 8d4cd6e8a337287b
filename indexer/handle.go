package indexer

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Summary is what Handle returns for events other than SQS batches, and
// what Webhook answers.
type Summary struct {
	Kind    string     `json:"kind"`
	Hints   int        `json:"hints"`             // object events decoded
	Applied int        `json:"applied"`           // distinct vault paths re-read
	Ignored int        `json:"ignored"`           // other bucket, outside the vault, hidden (.sheaf/...)
	Skipped []string   `json:"skipped,omitempty"` // unindexable notes, see Status().Problems
	Failed  []string   `json:"failed,omitempty"`  // paths to retry
	Sync    *SyncStats `json:"sync,omitempty"`    // for a reconcile
}

// Handle is the Lambda entry point. It decodes raw (see DecodeEvent), maps
// each key to a vault path (KeyPath; keys of other buckets, outside the
// vault or under hidden folders such as .sheaf/ are ignored), applies every
// distinct path once, then saves the catalog snapshot. {"reconcile": true}
// and EventBridge "Scheduled Event" run Reconcile.
//
// For an SQS batch it returns events.SQSEventResponse listing the messages
// to retry: undecodable ones, those whose paths failed for a reason a retry
// can fix, and all of them when the snapshot could not be saved; the error
// is then nil. Otherwise it returns a Summary, and an error when anything
// should be retried. Unindexable objects (binary, too large) are reported
// in Summary.Skipped and Status().Problems, never as failures.
func (ix *Indexer) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
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
		return ix.handleSQS(ctx, raw, hints, bad), nil
	}
	sum, err := ix.applyHints(ctx, kind, hints)
	return sum, err
}

func (ix *Indexer) handleSQS(ctx context.Context, raw json.RawMessage, hints []Hint, bad MessageErrors) events.SQSEventResponse {
	ids := sqsMessageIDs(raw)
	failed := map[string]bool{}
	for id, err := range bad {
		ix.log().Warn("undecodable SQS message", "messageId", id, "err", err)
		failed[id] = true
	}
	res, err := ix.apply(ctx, hints)
	if err != nil { // nothing is durable: every message comes back
		ix.log().Warn("indexing an SQS batch", "err", err)
		for _, id := range ids {
			failed[id] = true
		}
	}
	for _, t := range res.failed {
		for _, id := range t.messages {
			failed[id] = true
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

func (ix *Indexer) applyHints(ctx context.Context, kind string, hints []Hint) (Summary, error) {
	res, err := ix.apply(ctx, hints)
	sum := Summary{Kind: kind, Hints: len(hints), Applied: res.applied, Ignored: res.ignored, Skipped: res.skipped}
	for _, t := range res.failed {
		sum.Failed = append(sum.Failed, t.path)
	}
	if err != nil {
		return sum, err
	}
	if len(sum.Failed) > 0 {
		return sum, fmt.Errorf("indexing %d of %d paths failed (first: %s)", len(sum.Failed), res.applied+len(sum.Failed)+len(sum.Skipped), sum.Failed[0])
	}
	return sum, nil
}

// target is one distinct vault path of a batch and the messages naming it.
type target struct {
	path     string
	messages []string
	err      error
}

type applyResult struct {
	applied, ignored int
	skipped          []string
	failed           []*target
}

// apply de-duplicates the hints' paths, applies them as one batch (with
// those of concurrent callers) and saves the snapshot; err is a failure of
// the save.
func (ix *Indexer) apply(ctx context.Context, hints []Hint) (res applyResult, err error) {
	byPath := map[string]*target{}
	var order []*target
	uploads := map[string]*target{}
	defer ix.fileUploads(ctx, uploads, &res) // into the named result
	for _, h := range hints {
		keys := []string{h.Key}
		if h.AltKey != "" {
			keys = append(keys, h.AltKey)
		}
		if t := ix.uploadOfKey(h, uploads); t != nil {
			uploads[t.path] = t
			continue
		}
		mapped := false
		for _, k := range keys {
			p, ok := ix.pathOfKey(h.Bucket, k)
			if !ok {
				continue
			}
			mapped = true
			t := byPath[p]
			if t == nil {
				t = &target{path: p}
				byPath[p] = t
				order = append(order, t)
			}
			if h.MessageID != "" {
				t.messages = append(t.messages, h.MessageID)
			}
		}
		if !mapped {
			res.ignored++
		}
	}
	if len(order) == 0 {
		return res, nil
	}

	paths := make([]string, len(order))
	for i, t := range order {
		paths[i] = t.path
	}
	errs, saveErr := ix.applyGrouped(ctx, paths)
	if saveErr != nil {
		return res, fmt.Errorf("saving the catalog snapshot: %w", saveErr)
	}
	for i, err := range errs {
		order[i].err = err
	}

	for _, t := range order {
		switch {
		case t.err == nil:
			res.applied++
		case IsPermanent(t.err):
			res.skipped = append(res.skipped, t.path)
		default:
			ix.log().Warn("indexing after an event", "path", t.path, "err", t.err)
			res.failed = append(res.failed, t)
		}
	}
	sort.Strings(res.skipped)
	return res, nil
}

// applyGroup batches concurrent callers of applyGrouped: a burst of
// webhook requests (versitygw posts every event on its own, all at once)
// becomes a few batches, each one text-index write and one snapshot save,
// instead of one of each per request.
type applyGroup struct {
	mu      sync.Mutex
	queue   []*groupReq
	leading bool
}

type groupReq struct {
	paths []string
	errs  []error
	save  error
	done  chan struct{} // closed when errs and save are set
	lead  chan struct{} // closed when this request is to run the next batch
}

// maxGroupPaths bounds the paths of one batch.
const maxGroupPaths = 512

// applyGrouped applies paths, together with those of concurrent callers,
// and saves the snapshot. It returns one error per path and the save's
// error. Batches run one at a time, each under the context of the caller
// that runs it (the first one queued).
func (ix *Indexer) applyGrouped(ctx context.Context, paths []string) ([]error, error) {
	g := &ix.group
	r := &groupReq{paths: paths, done: make(chan struct{}), lead: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, r)
	if !g.leading {
		g.leading = true
		close(r.lead)
	}
	g.mu.Unlock()
	select {
	case <-r.done:
	case <-r.lead:
		ix.runGroup(ctx)
		<-r.done
	}
	return r.errs, r.save
}

// runGroup runs one batch of queued requests, then hands the lead to the
// next request waiting, if any.
func (ix *Indexer) runGroup(ctx context.Context) {
	g := &ix.group
	g.mu.Lock()
	n, size := 0, 0
	for n < len(g.queue) && (n == 0 || size+len(g.queue[n].paths) <= maxGroupPaths) {
		size += len(g.queue[n].paths)
		n++
	}
	batch := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()

	at := map[string]int{}
	var all []string
	for _, r := range batch {
		for _, p := range r.paths {
			if _, ok := at[p]; !ok {
				at[p] = len(all)
				all = append(all, p)
			}
		}
	}
	errs := ix.applyMany(ctx, all)
	saveErr := ix.Save(ctx)
	for _, r := range batch {
		r.errs = make([]error, len(r.paths))
		for i, p := range r.paths {
			r.errs[i] = errs[at[p]]
		}
		r.save = saveErr
		close(r.done)
	}

	g.mu.Lock()
	if len(g.queue) > 0 {
		close(g.queue[0].lead)
	} else {
		g.leading = false
	}
	g.mu.Unlock()
}

// pathOfKey maps an event's bucket and key to a clean vault path, or false
// when the event is not the indexer's business: another bucket, a key
// outside the vault, an invalid path, or a hidden one (Sheaf's own .sheaf/
// objects above all: the indexer must never index or loop on its writes).
//
// A key with "." or empty segments ("v/a/./b.md", "v/a//b.md") is no path,
// but a file-backed server (versitygw's posix backend) stores it as the
// file of its lexically clean form, which listings then show: that form is
// used. On AWS it names an object of its own that is no note, and the clean
// path is only re-read, which is harmless.
func (ix *Indexer) pathOfKey(bucket, key string) (string, bool) {
	if ix.Bucket != "" && bucket != "" && bucket != ix.Bucket {
		return "", false
	}
	p, ok := ix.keyPath(key)
	if !ok && !strings.HasSuffix(key, "/") { // folder markers stay out
		if c := path.Clean(key); c != key {
			p, ok = ix.keyPath(c)
		}
	}
	return p, ok
}

// keyPath maps a key to a clean, visible vault path.
func (ix *Indexer) keyPath(key string) (string, bool) {
	p, ok := key, true
	if ix.KeyPath != nil {
		p, ok = ix.KeyPath(key)
	}
	if !ok {
		return "", false
	}
	clean, err := store.CleanPath(p)
	if err != nil || vault.Ignored(clean) {
		return "", false
	}
	return clean, true
}

func (ix *Indexer) parallel() int {
	if ix.Parallel > 0 {
		return ix.Parallel
	}
	return 16
}

// MaxWebhookBody bounds a webhook request body; S3-compatible servers post
// one notification (a few records) at a time.
const MaxWebhookBody = 1 << 20

// webhookTimeout bounds the work for one webhook request. The work goes on
// when the sender hangs up (versitygw waits only three seconds): it is
// idempotent and better finished.
const webhookTimeout = 30 * time.Second

// Webhook serves S3 event notifications POSTed by S3-compatible servers
// (versitygw's --event-webhook-url, MinIO's webhook target): it applies the
// hints and saves the snapshot before answering 200 with a Summary, or 500
// with the reason so the sender may retry. It refuses other methods (405),
// bodies over MaxWebhookBody (413), payloads that are not object events
// (400) and, when WebhookToken is set, requests without
// "Authorization: Bearer <token>" (401).
func (ix *Indexer) Webhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST an S3 event notification", http.StatusMethodNotAllowed)
			return
		}
		if ix.WebhookToken != "" && !bearerOK(r.Header.Get("Authorization"), ix.WebhookToken) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sheaf-indexer"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, fmt.Sprintf("body over %d bytes", MaxWebhookBody), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		hints, kind, err := DecodeEvent(body)
		if err == nil && kind != KindS3 && kind != KindWebhook && kind != KindEventBridge && kind != KindTestEvent {
			err = fmt.Errorf("%w: %s events are not taken over the webhook", ErrUnknownEvent, kind)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), webhookTimeout)
		defer cancel()
		sum, err := ix.applyHints(ctx, kind, hints)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(sum)
	})
}

// bearerOK checks an Authorization header against token in constant time.
func bearerOK(header, token string) bool {
	scheme, cred, ok := strings.Cut(header, " ")
	switch {
	case !ok:
		return false
	case strings.EqualFold(scheme, "Basic"):
		// The token as a Basic password: what an S3 server sends for a
		// webhook URL with userinfo (http://sheaf:TOKEN@indexer:8790/) when
		// it cannot add headers.
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		if err != nil {
			return false
		}
		_, pass, _ := strings.Cut(string(raw), ":")
		return subtle.ConstantTimeCompare([]byte(pass), []byte(token)) == 1
	case !strings.EqualFold(scheme, "Bearer"):
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(token)) == 1
}

// UploadsDir holds the files staged by ingest_file's presigned upload,
// <id>.bin beside its manifest.
const UploadsDir = ".sheaf/ingest/uploads/"

// uploadOfKey is the upload an event's key stages (nil for any other key),
// merged with one already seen in the batch.
func (ix *Indexer) uploadOfKey(h Hint, seen map[string]*target) *target {
	if ix.Uploads == nil || (ix.Bucket != "" && h.Bucket != "" && h.Bucket != ix.Bucket) {
		return nil
	}
	p, ok := h.Key, true
	if ix.KeyPath != nil {
		p, ok = ix.KeyPath(h.Key)
	}
	if !ok || !strings.HasPrefix(p, UploadsDir) || !strings.HasSuffix(p, ".bin") || strings.Contains(p[len(UploadsDir):], "/") {
		return nil
	}
	t := seen[p]
	if t == nil {
		t = &target{path: p}
	}
	if h.MessageID != "" {
		t.messages = append(t.messages, h.MessageID)
	}
	return t
}

// fileUploads files the batch's staged uploads (after its notes): each
// is applied, or failed to be retried.
func (ix *Indexer) fileUploads(ctx context.Context, uploads map[string]*target, res *applyResult) {
	for _, t := range uploads {
		if t.err = ix.Uploads(ctx, t.path); t.err != nil {
			ix.log().Warn("filing an upload", "path", t.path, "err", t.err)
			res.failed = append(res.failed, t)
		} else {
			res.applied++
		}
	}
}
