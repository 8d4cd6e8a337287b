package tools

// The tools the server serves, one function per family, and what every
// call passes through (serve). A new family's function goes in families
// (one that needs the Server, like proposalTools, in declared). Only
// MCPServer (mcpserver.go) refers to this file: the framework files below
// never reach up into the families.

import (
	"context"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sheaf-dev/sheaf/shared/core"
)

// Tools returns every tool, sorted by name, each behind the core's checks.
func (s *Server) Tools() []Tool { return s.serve(s.declared()) }

// families declare the tools over the core, one function per family.
var families = []func(*core.Core) []Tool{
	vaultTools, noteTools, linkTools, searchTools, tagTools, attachmentTools,
	llmTools, referenceTools, relationTools, searchReadTools, maintenanceTools,
	agentTools, semanticTools, writeTools, moveTools, pageTools, historyTools, ingestTools,
}

// declared is every tool as its family declares it.
func (s *Server) declared() []Tool {
	var ts []Tool
	for _, family := range families {
		ts = append(ts, family(s.core)...)
	}
	ts = append(ts, s.maintainTools()...)
	return append(ts, s.proposalTools()...)
}

// serve puts declared tools behind the core, in order: the call's state
// (response budget), the access guard (scope, folders, proposals; see
// access.go), then the rate limit of paid tools, then the tool. It records
// the result, by name, for apply_proposal.
func (s *Server) serve(ts []Tool) []Tool {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Tool.Name < ts[j].Tool.Name })
	ts = s.limitPaid(ts) // the rate limit of paid tools, over every tool registered above
	ts = s.guardAll(ts)  // before the limit: a refused call spends nothing
	byName := make(map[string]server.ToolHandlerFunc, len(ts))
	for i, t := range ts {
		next, name, paid := t.Handler, t.Tool.Name, t.Spec.Paid
		ts[i].Handler = func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := core.NewCall(s.budget())
			defer c.Answered()
			if !paid { // a paid tool was counted by limitPaid
				s.chargeWhenSpending(ctx, c, name)
			}
			return next(withCall(ctx, c), req)
		}
		byName[t.Tool.Name] = ts[i].Handler
	}
	s.handlers.Store(&byName)
	return ts
}
