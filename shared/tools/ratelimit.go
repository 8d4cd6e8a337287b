package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
)

// limitPaid wraps the handler of every paid tool (Spec.Paid: it spends on
// the user's embeddings or LLM key) with the per-identity sliding-window
// limit (spec/lettuce-errors-and-limits.txt). A refused call returns kind
// rate-limited with retry_after_ms.
func (s *Server) limitPaid(ts []Tool) []Tool {
	for i, t := range ts {
		if !t.Spec.Paid || s.limiter == nil {
			continue
		}
		next, name := t.Handler, t.Tool.Name
		ts[i].Handler = func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if e := s.allowPaid(ctx, name); e != nil {
				return errorResult(e), nil
			}
			return next(ctx, req)
		}
	}
	return ts
}

// allowPaid counts one paid call of the caller; it returns the
// rate-limited error when the caller is over the limit.
func (s *Server) allowPaid(ctx context.Context, name string) *Error {
	if s.limiter == nil {
		return nil
	}
	ok, wait := s.limiter.Allow(auth.IdentityFrom(ctx).Subject, s.now())
	if ok {
		return nil
	}
	ms := max(1, wait.Milliseconds())
	return newError(KindRateLimited, map[string]any{"retry_after_ms": ms},
		"%s: more than %d paid AI calls in a minute; retry after %d ms (if you see this twice you are in a loop: slow down)",
		name, PaidCallsPerMinute, ms)
}

// chargeWhenSpending has a tool that is not paid in itself counted as paid
// when the core spends on a provider for it: search in semantic or hybrid
// mode, search_and_read with embeddings or rerank.
func (s *Server) chargeWhenSpending(ctx context.Context, c *core.Call, name string) {
	c.OnSpend(func() error {
		if e := s.allowPaid(ctx, name); e != nil {
			return e
		}
		return nil
	})
}
