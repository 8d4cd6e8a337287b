// Package mcphttp is Sheaf's MCP transport: stdio and stateless streamable
// HTTP around an mcp-go server, with what every request passes through
// before the MCP layer (the Origin check against DNS rebinding, bearer
// authentication into an auth.Identity) and the lifting of tool errors'
// kind to the top level of their result (lift.go). It knows no tool.
package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// ServeStdio serves srv as newline-delimited JSON-RPC on in and out until ctx
// ends or in closes.
func ServeStdio(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer) error {
	return ServeStdioWhenReady(ctx, srv, in, out, nil)
}

// ServeStdioWhenReady is ServeStdio for a server still declaring its
// tools (tools.Server.MCPServerFirst): initialize is answered at once,
// and every other message waits until ready is closed (nil: ready).
func ServeStdioWhenReady(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer, ready <-chan struct{}) error {
	return ServeStdioLimited(ctx, srv, in, out, ready, DefaultMaxRequestBytes)
}

// ServeStdioLimited is ServeStdioWhenReady with a limit on one message, as
// HTTPOptions.MaxRequestBytes limits a request body: a longer message is
// read through without being kept and answered with an invalid-request
// error (with its id when one is found), and the session goes on.
func ServeStdioLimited(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer, ready <-chan struct{}, maxLine int64) error {
	if maxLine <= 0 {
		maxLine = DefaultMaxRequestBytes
	}
	s := server.NewStdioServer(srv)
	s.SetErrorLogger(slog.NewLogLogger(slog.Default().Handler(), slog.LevelError)) // the process's one logger
	lw := &lineLifter{w: out}
	return s.Listen(ctx, precheckLines(in, lw, srv, ready, maxLine), lw)
}

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	Path string // endpoint path; default "/mcp"
	// Auth turns each request's bearer credential into the caller's
	// identity (API keys, OAuth access tokens, the shared token). nil: the
	// shared Token below, or nobody checked.
	Auth *auth.Authenticator
	// Token is the single shared bearer token of old; used only when Auth
	// is nil ("" = none).
	Token string
	// Resource, when set, makes the endpoint an OAuth protected resource:
	// its metadata is served (no credential needed) and named in every
	// 401's WWW-Authenticate.
	Resource       ProtectedResource
	AllowedOrigins []string // browser origins allowed besides loopback ones
	// MaxRequestBytes bounds a request body (0: DefaultMaxRequestBytes);
	// BodyTimeout is how long one may take to start arriving (0:
	// DefaultBodyTimeout). See bodyLimiter.
	MaxRequestBytes int64
	BodyTimeout     time.Duration
	// Routes are handlers served beside the endpoint, by http.ServeMux
	// pattern, with no credential asked (the built-in OAuth authorization
	// server's endpoints).
	Routes map[string]http.Handler
}

// ProtectedResource is what the transport needs of an OAuth resource
// server (oauth.Verifier): RFC 9728 metadata, the paths serving it and its
// absolute URL.
type ProtectedResource interface {
	Metadata() *oauthex.ProtectedResourceMetadata
	MetadataPaths() []string
	MetadataURL() string
}

// HTTPHandler serves srv over stateless streamable HTTP (buffered JSON
// responses): the caller is authenticated before the MCP layer (a 401 with
// WWW-Authenticate and no reason for any credential not accepted), browser
// Origins are validated against DNS rebinding, request bodies are bounded
// (see bodyLimiter), notifications are accepted and notifications/cancelled
// honoured (see rpcRouter), and tool errors carry their kind at the top
// level. GET /healthz and the protected resource metadata
// answer without a credential.
func HTTPHandler(srv *server.MCPServer, o HTTPOptions) http.Handler {
	if o.Path == "" {
		o.Path = "/mcp"
	}
	a := o.Auth
	if a == nil {
		a = &auth.Authenticator{Token: o.Token}
	}
	mcpHandler := server.NewStreamableHTTPServer(srv,
		server.WithStateLess(true),
		server.WithEndpointPath(o.Path),
		server.WithDisableStreaming(true),
		// mcp-go logs each client's GET for an event stream, which a
		// stateless server without streaming refuses by design, at info:
		// a normal connect read as a failure. Its warnings still show.
		server.WithStreamableHTTPLogger(slog.New(warnAndUp{slog.Default().Handler()})),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return auth.WithIdentity(ctx, auth.IdentityFrom(r.Context()))
		}),
	)
	mux := http.NewServeMux()
	calls := rpcRouter(newBodyLimiter(o.MaxRequestBytes, o.BodyTimeout), &inflight{}, srv, liftHTTP(mcpHandler))
	mux.Handle(o.Path, checkOrigin(o.AllowedOrigins, authenticate(a, o.Resource, calls)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	for p, h := range o.Routes {
		mux.Handle(p, h)
	}
	if o.Resource != nil {
		meta := sdkauth.ProtectedResourceMetadataHandler(o.Resource.Metadata())
		for _, p := range o.Resource.MetadataPaths() {
			mux.Handle(p, meta)
		}
	}
	return cors(o.AllowedOrigins, mux)
}

// authenticate establishes the caller before any MCP processing: the same
// 401 whatever was wrong with the credential, 503 when the keys cannot be
// read at all.
func authenticate(a *auth.Authenticator, res ProtectedResource, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer, sent := bearerToken(r)
		id, err := a.Authenticate(r.Context(), bearer)
		switch {
		case errors.Is(err, auth.ErrUnauthenticated):
			unauthorized(w, res, sent)
			return
		case err != nil:
			slog.Error("authenticating a request", "err", err)
			w.Header().Set("Retry-After", "5")
			http.Error(w, "Service unavailable: credentials cannot be checked right now", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.WithIdentity(r.Context(), id)))
	})
}

// bearerToken returns the request's bearer credential and whether it sent
// an Authorization header at all.
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", true
	}
	return tok, true
}

// Unauthorized writes the spec's 401 for a missing or invalid token.
func Unauthorized(w http.ResponseWriter) { unauthorized(w, nil, true) }

// unauthorized writes the 401: WWW-Authenticate names the resource
// metadata when there is some (RFC 9728 §5.1) and says invalid_token when
// a credential was sent (RFC 6750 §3.1), never why it was refused.
func unauthorized(w http.ResponseWriter, res ProtectedResource, sent bool) {
	params := []string{`realm="sheaf"`}
	if res != nil {
		params = append(params, fmt.Sprintf("resource_metadata=%q", res.MetadataURL()))
	}
	if sent {
		params = append(params, `error="invalid_token"`)
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "Missing or invalid API key"})
}

// checkOrigin refuses browser requests from origins other than loopback
// ones and those allowed, as the MCP transport spec requires.
func checkOrigin(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && !slices.Contains(allowed, origin) && !loopbackOrigin(origin) {
			http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// warnAndUp is a slog.Handler that drops records below warning.
type warnAndUp struct{ slog.Handler }

func (h warnAndUp) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnAndUp) WithAttrs(as []slog.Attr) slog.Handler { return warnAndUp{h.Handler.WithAttrs(as)} }
func (h warnAndUp) WithGroup(n string) slog.Handler       { return warnAndUp{h.Handler.WithGroup(n)} }
