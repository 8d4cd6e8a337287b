// Package tools is Sheaf's MCP tool surface over the protocol-free core
// (shared/core): one Spec per tool (name, description, annotations, who
// may call it, its profile, whether it is paid, what it needs), declared
// beside its family's others in one file per family, its input and output
// schemas derived once from the core's argument and answer structs (see
// define). What every call passes through is here too: strict argument
// decoding, the access guard and proposals, the rate limit of paid tools,
// the profiles, and the response budget. The transport is mcphttp. Its
// files are in layers: the framework, one file per family, then
// families.go and mcpserver.go; no file reaches up (docs/architecture.md;
// TestToolsStayLayered in infra/devtools/filecycles).
package tools

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
)

// PaidCallsPerMinute is the spec's limit on paid tools, per identity.
const PaidCallsPerMinute = 60

// Server holds the vaults a deployment serves and implements every tool.
type Server struct {
	core    *core.Core
	now     func() time.Time // the clock of the rate limit and of the core
	limiter *auth.Limiter    // paid AI tools: PaidCallsPerMinute per identity

	handlers atomic.Pointer[map[string]server.ToolHandlerFunc] // the served tools, for apply_proposal

	// MaxResponseBytes is the response budget of every tool result (see
	// DefaultMaxResponseBytes, the default when 0).
	MaxResponseBytes int
}

// NewServer serves the given vaults; ids must be unique.
func NewServer(vaults ...*Vault) (*Server, error) {
	c, err := core.New(vaults...)
	if err != nil {
		return nil, err
	}
	s := &Server{core: c, now: time.Now, limiter: auth.NewLimiter(PaidCallsPerMinute, time.Minute)}
	c.Now = func() time.Time { return s.now() }
	return s, nil
}

// vault is the vault a call works in, as its caller sees it.
func (s *Server) vault(ctx context.Context, a VaultArg) (*Vault, error) { return s.core.View(ctx, a) }

// Core is the protocol-free core the tools answer from.
func (s *Server) Core() *core.Core { return s.core }

// handler returns the served handler of a tool, nil when there is none.
func (s *Server) handler(name string) server.ToolHandlerFunc {
	if m := s.handlers.Load(); m != nil {
		return (*m)[name]
	}
	return nil
}

// budget is the response budget of one result.
func (s *Server) budget() int {
	if s.MaxResponseBytes > 0 {
		return min(s.MaxResponseBytes, MaxResponseBytesLimit)
	}
	return DefaultMaxResponseBytes
}
