package tools

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// ServeStdio serves srv as newline-delimited JSON-RPC on in and out until ctx
// ends or in closes.
func ServeStdio(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer) error {
	s := server.NewStdioServer(srv)
	s.SetErrorLogger(log.New(os.Stderr, "sheaf: ", log.LstdFlags))
	return s.Listen(ctx, in, &lineLifter{w: out})
}

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	Path           string   // endpoint path; default "/mcp"
	Token          string   // bearer token required on every request; "" = none
	AllowedOrigins []string // browser origins allowed besides loopback ones
}

// HTTPHandler serves srv over stateless streamable HTTP (buffered JSON
// responses): the bearer token is checked before the MCP layer (401 with
// WWW-Authenticate), browser Origins are validated against DNS rebinding,
// and tool errors carry their kind at the top level. GET /healthz answers
// without a token.
func HTTPHandler(srv *server.MCPServer, o HTTPOptions) http.Handler {
	if o.Path == "" {
		o.Path = "/mcp"
	}
	mcpHandler := server.NewStreamableHTTPServer(srv,
		server.WithStateLess(true),
		server.WithEndpointPath(o.Path),
		server.WithDisableStreaming(true),
		server.WithHTTPContextFunc(identify),
	)
	mux := http.NewServeMux()
	mux.Handle(o.Path, checkOrigin(o.AllowedOrigins, checkToken(o.Token, liftHTTP(mcpHandler))))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	return mux
}

// identify names the caller that cursors are bound to: a hash of the bearer
// token (so callers with different tokens can never use each other's
// cursors), or "local" without one.
func identify(ctx context.Context, r *http.Request) context.Context {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return ctx
	}
	sum := sha256.Sum256([]byte(token))
	return auth.WithIdentity(ctx, auth.Identity{Subject: "token:" + hex.EncodeToString(sum[:8])})
}

// checkToken rejects requests without the bearer token, before any MCP
// processing, with the same 401 whatever the reason.
func checkToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			Unauthorized(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Unauthorized writes the spec's 401 for a missing or invalid token.
func Unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="sheaf", error="invalid_token"`)
	w.Header().Set("Content-Type", "application/json")
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
