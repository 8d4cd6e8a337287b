package s3events

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sheaf-dev/sheaf/indexer"
)

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
// (400) and, when token is not "", requests without
// "Authorization: Bearer <token>" (401).
func Webhook(ix *indexer.Indexer, token string) http.Handler {
	g := NewGated(token)
	g.Open(ix)
	return g
}

// Gated is a Webhook whose indexer comes later. Until Open, it checks and
// decodes each notification as Webhook does and answers 200 without
// applying it (Summary.Deferred): an S3 server that tests its webhook when
// it starts (versitygw exits when the test fails) can then start before
// the vault can be read. Whoever calls Open must reconcile after it: the
// reconcile lists the bucket, which covers every deferred event.
type Gated struct {
	token string
	ix    atomic.Pointer[indexer.Indexer]
}

// NewGated returns a Gated that defers every event until Open.
func NewGated(token string) *Gated { return &Gated{token: token} }

// Open makes g apply events to ix from now on.
func (g *Gated) Open(ix *indexer.Indexer) { g.ix.Store(ix) }

func (g *Gated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST an S3 event notification", http.StatusMethodNotAllowed)
		return
	}
	if g.token != "" && !bearerOK(r.Header.Get("Authorization"), g.token) {
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
	sum := Summary{Kind: kind, Hints: len(hints), Deferred: true}
	if ix := g.ix.Load(); ix != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), webhookTimeout)
		defer cancel()
		if sum, err = applyHints(ctx, ix, kind, hints); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(sum)
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
