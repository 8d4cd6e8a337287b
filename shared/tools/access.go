package tools

// Who may call what is a property of the core, not of each handler: every
// tool's Spec declares the scope it needs and which of its arguments name
// paths (its access), and the guard checks both before the handler runs. A
// tool declaring no scope, or an argument it does not have, stops the
// server at start-up. What a handler then sees is the caller's view of the
// vault (view.go), so a folder-scoped caller's hidden notes cannot leak
// through a tool that takes no path at all.

import (
	"context"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sheaf-dev/sheaf/shared/auth"
)

// guard wraps a tool's handler with its access checks. Order: profile,
// scope, the caller's right to write directly, whole-vault tools, path
// arguments, then proposals.
func (s *Server) guard(t Tool) server.ToolHandlerFunc {
	a := accessOf(t)
	name, next := t.Tool.Name, t.Handler
	core := t.Spec.Core
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		id := auth.IdentityFrom(ctx)
		if e := s.check(id, name, core, a, req); e != nil {
			return errorResult(e), nil
		}
		if a.writes && id.ProposeOnly && a.propose == proposeQueue {
			ctx = withProposer(ctx, func(ctx context.Context) (*ProposalRef, error) { return s.propose(ctx, name, a, req) })
		}
		return next(ctx, req)
	}
}

// check returns the access error of a call, nil when it may go ahead.
func (s *Server) check(id auth.Identity, name string, core bool, a access, req mcp.CallToolRequest) *Error {
	switch {
	case id.Profile == auth.ProfileCore && !core:
		return newError(KindUnsupported, map[string]any{"profile": auth.ProfileCore},
			"%s is not among the tools of your key's profile (core): use one of the tools tools/list shows.", name)
	case !id.Has(a.scope):
		return newError(KindInsufficientScope, map[string]any{"required_scope": string(a.scope), "scopes": id.Granted},
			"%s needs the %s scope, which your credential does not have: ask for a key or token with %s.", name, a.scope, a.scope)
	case a.reviews && id.ProposeOnly:
		return newError(KindInsufficientScope, map[string]any{"required_scope": string(a.scope), "propose_only": true},
			"%s needs a credential that may write directly; yours is propose-only.", name)
	case id.Scoped() && (a.whole || (a.writes && len(a.paths) == 0)):
		return newError(KindForbidden, map[string]any{"folders": id.Folders.Rules()},
			"%s works on the whole vault, and your credential is limited to some folders (%s).", name, id.Folders)
	}
	if len(a.paths) > 0 {
		args := argsOf(req)
		for _, p := range a.paths {
			for _, raw := range args.strings(p.name) {
				if e := gatePath(id, p, raw, a.writes); e != nil {
					return e
				}
			}
		}
	}
	if a.writes && id.ProposeOnly && a.propose == proposeRefuse {
		return newError(KindUnsupported, map[string]any{"propose_only": true},
			"%s cannot be proposed: your credential is propose-only, and this operation changes more than one note. Ask someone with a write key.", name)
	}
	return nil
}

// guardAll wraps every tool with its guard.
func (s *Server) guardAll(ts []Tool) []Tool {
	for i := range ts {
		ts[i].Handler = s.guard(ts[i])
	}
	return ts
}

// accessOf returns t's access, panicking when it declares none or it does
// not fit the tool: a tool must never be served unguarded. Read tools see
// the caller's view; their path arguments are gated so that a hidden path
// answers folder-not-allowed.
func accessOf(t Tool) access {
	name := t.Tool.Name
	a := t.Spec.Access
	for _, p := range a.paths {
		if !slices.Contains(t.args(), p.name) {
			panic(fmt.Sprintf("tool %s: its Spec names path argument %q, which the tool does not take", name, p.name))
		}
	}
	readOnly := t.Tool.Annotations.ReadOnlyHint != nil && *t.Tool.Annotations.ReadOnlyHint
	switch {
	case a.scope == "":
		panic(fmt.Sprintf("tool %s declares no access: give its Spec an Access with a scope (reads(...), edits(...))", name))
	case readOnly && a.writes:
		panic(fmt.Sprintf("tool %s: annotated read-only but declared as writing", name))
	case !readOnly && !a.writes && !a.own:
		panic(fmt.Sprintf("tool %s: not annotated read-only, so declare what it writes in its Spec's Access", name))
	case a.writes && a.scope == auth.ScopeRead:
		panic(fmt.Sprintf("tool %s: writes with the read scope", name))
	}
	return a
}
