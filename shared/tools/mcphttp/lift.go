package mcphttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// The spec puts a tool error's kind (and extra fields such as
// retry_after_ms) at the top level of the tools/call result. mcp-go's result
// type has no room for them, so handlers put them in _meta["sheaf/error"]
// and the transports lift them here, once, for stdio and HTTP alike.

// ErrorMetaKey is where a tool error's kind and fields travel inside a
// result's _meta, for the transport to lift to the top level.
const ErrorMetaKey = "sheaf/error"

var isErrorMarker = []byte(`"isError":true`)

// LiftErrorFields rewrites one JSON-RPC message: if it is a tool result with
// isError and _meta["sheaf/error"], that object's fields are copied to the
// top level of the result (they stay in _meta too, for SDKs that drop
// unknown fields). Any other message is returned unchanged.
//
// It also gives a handler's RPCError its code (rpcerror.go).
func LiftErrorFields(msg []byte) []byte {
	if !bytes.Contains(msg, isErrorMarker) {
		return liftRPCError(msg)
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil || env["result"] == nil {
		return msg
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(env["result"], &result) != nil {
		return msg
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(result["_meta"], &meta) != nil || meta[ErrorMetaKey] == nil {
		return msg
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(meta[ErrorMetaKey], &fields) != nil {
		return msg
	}
	for k, v := range fields {
		switch k {
		case "content", "isError", "structuredContent", "_meta", "message":
		default:
			result[k] = v
		}
	}
	rb, err := json.Marshal(result)
	if err != nil {
		return msg
	}
	env["result"] = rb
	out, err := json.Marshal(env)
	if err != nil {
		return msg
	}
	return out
}

// lineLifter is an io.Writer for newline-delimited JSON-RPC (stdio) that
// lifts error fields in every complete line.
type lineLifter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *lineLifter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := LiftErrorFields(l.buf[:i])
		if _, err := l.w.Write(append(append([]byte(nil), line...), '\n')); err != nil {
			return 0, err
		}
		l.buf = l.buf[i+1:]
	}
}

// liftHTTP wraps a streamable-HTTP handler: JSON bodies are rewritten whole,
// SSE bodies event by event.
func liftHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		switch ct := rec.header.Get("Content-Type"); {
		case bytes.HasPrefix([]byte(ct), []byte("application/json")):
			body = LiftErrorFields(body)
		case bytes.HasPrefix([]byte(ct), []byte("text/event-stream")):
			body = liftSSE(body)
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.status)
		_, _ = w.Write(body)
	})
}

func liftSSE(body []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64*1024), 256<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			out.WriteString("data: ")
			out.Write(LiftErrorFields(data))
		} else {
			out.Write(line)
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// recorder buffers a response. Stateless POST responses are short-lived and
// complete, so buffering them is safe (and what Lambda needs anyway).
type recorder struct {
	header http.Header
	body   bytes.Buffer
	status int
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}
func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status = code
		r.wrote = true
	}
}
func (r *recorder) Flush() {}
