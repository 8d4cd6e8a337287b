package mcphttp

import (
	"net/http"
	"slices"
)

// CORS for browser clients (the MCP Inspector, web apps): an origin that
// may call the endpoint (loopback, or one of --allowed-origins) gets the
// CORS headers on every answer, 401s included, so that the page can read
// them, and its preflight (OPTIONS) is answered here, before
// authentication, which browsers never send with one. A preflight from any
// other origin is refused with 403 and no CORS headers; its requests are
// refused by checkOrigin. Credentials are bearer tokens, never cookies, so
// Access-Control-Allow-Credentials is not sent.
func cors(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		ok := slices.Contains(allowed, origin) || loopbackOrigin(origin)
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		h := w.Header()
		h.Add("Vary", "Origin")
		if !ok {
			if preflight {
				http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
		if !preflight {
			next.ServeHTTP(w, r)
			return
		}
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	})
}
