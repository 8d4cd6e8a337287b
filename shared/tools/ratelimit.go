package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// PaidCallsPerMinute is the spec's limit on paid tools, per identity.
const PaidCallsPerMinute = 60

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
			ok, wait := s.limiter.Allow(auth.IdentityFrom(ctx).Subject, s.now())
			if !ok {
				ms := max(1, wait.Milliseconds())
				return errorResult(newError(KindRateLimited, map[string]any{"retry_after_ms": ms},
					"%s: more than %d paid AI calls in a minute; retry after %d ms (if you see this twice you are in a loop: slow down)",
					name, PaidCallsPerMinute, ms)), nil
			}
			return next(ctx, req)
		}
	}
	return ts
}
