package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// Notifications over stateless HTTP, and cancellation.
//
// A JSON-RPC notification POSTed to the endpoint is answered 202 Accepted
// here, whatever protocol revision the client negotiated: mcp-go v1.2.1
// refuses a notification from a 2026-07-28 client whose _meta lacks
// io.modelcontextprotocol/protocolVersion with 400, and the official Go SDK
// (v1.8.0), which sends notifications/cancelled without it when a call's
// context ends, then closes the session (docs/upstream-cancel.md).
//
// notifications/cancelled cancels the call it names when that call runs in
// this process: calls are registered by the caller's identity, the
// Mcp-Session-Id header (when the client sends one) and the request id,
// and a cancellation that matches more than one running call (two clients
// of one identity that chose the same id) cancels none, rather than
// another client's call. mcp-go's own stateless registry keys on the id
// alone, so the notification is not passed on to it. A client that aborts
// its POST cancels the call's context anyway.

// rpcHead is what the transport reads of a JSON-RPC message.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// inflight is the calls running in this process, by caller and id.
type inflight struct {
	mu    sync.Mutex
	calls map[string]map[*context.CancelFunc]bool
}

func inflightKey(r *http.Request, id json.RawMessage) string {
	return auth.IdentityFrom(r.Context()).Subject + "\x00" + r.Header.Get("Mcp-Session-Id") + "\x00" + string(bytes.TrimSpace(id))
}

// add registers a running call and returns its removal.
func (f *inflight) add(key string, cancel context.CancelFunc) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]map[*context.CancelFunc]bool{}
	}
	if f.calls[key] == nil {
		f.calls[key] = map[*context.CancelFunc]bool{}
	}
	p := &cancel
	f.calls[key][p] = true
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.calls[key], p)
		if len(f.calls[key]) == 0 {
			delete(f.calls, key)
		}
	}
}

// cancel cancels the one call registered under key; it reports whether
// there was exactly one.
func (f *inflight) cancel(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls[key]) != 1 {
		return false
	}
	for p := range f.calls[key] {
		(*p)()
	}
	return true
}

// rpcRouter answers notifications itself and registers calls so that a
// notifications/cancelled can stop them; it reads the body through limit.
func rpcRouter(limit *bodyLimiter, calls *inflight, srv *server.MCPServer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := limit.read(w, r)
		if !ok {
			return
		}
		defer body.release()
		var resp []byte
		var handled bool
		if body.whole() {
			resp, handled = precheck(body.head(), srv)
		} else {
			resp, handled = precheckReader(body.reader(), srv) // up to the body limit
		}
		if handled {
			answer(w, resp)
			return
		}
		head, isObject := readHead(body)
		switch {
		case isObject && body.whole() && head.Method != "" && len(head.ID) == 0:
			// A notification (never over a chunk: of a bigger body only
			// the start is read, and its id may come later).
			if head.Method == "notifications/cancelled" && len(head.Params.RequestID) > 0 {
				calls.cancel(inflightKey(r, head.Params.RequestID))
			}
			w.WriteHeader(http.StatusAccepted)
			return
		case isObject && head.Method != "" && len(head.ID) > 0 && !bytes.Equal(head.ID, []byte("null")):
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer calls.add(inflightKey(r, head.ID), cancel)()
			r = r.WithContext(ctx)
		}
		r.Body = io.NopCloser(body.reader())
		r.ContentLength = body.size
		next.ServeHTTP(w, r)
	})
}

// answer writes precheck's answer: 202 for a notification it drops, 400
// for an error it cannot tie to a request (id null, as mcp-go answers
// parse errors), else 200.
func answer(w http.ResponseWriter, resp []byte) {
	if resp == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	status := http.StatusOK
	if bytes.Contains(resp, []byte(`"id":null`)) {
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(resp)))
	w.WriteHeader(status)
	_, _ = w.Write(resp)
}

// readHead reads what the router needs of a message: the whole of a body
// of one chunk (any notification), else the "id" and "method" members
// that come before "params" in the first chunk (as clients write them): a
// big call they do not show is not registered, and stops only when its
// client aborts it. isObject is false for a batch or garbage, which mcp-go
// answers.
func readHead(b *chunks) (head rpcHead, isObject bool) {
	if b.whole() {
		return head, json.Unmarshal(b.head(), &head) == nil
	}
	dec := json.NewDecoder(bytes.NewReader(b.head()))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return head, false
	}
	for dec.More() {
		t, err := dec.Token()
		key, _ := t.(string)
		if err != nil || key == "params" {
			break
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		switch key {
		case "id":
			head.ID = v
		case "method":
			_ = json.Unmarshal(v, &head.Method)
		}
	}
	return head, true
}
