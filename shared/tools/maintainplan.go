package tools

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
)

// maintainTools declares wiki_maintain: the core plans, and with apply
// each planned edit is a call of its write tool's served handler, so that
// tool's own guard decides (write scope, folders, a proposal for a
// propose-only caller, the write-once layer).
func (s *Server) maintainTools() []Tool {
	return []Tool{define(Spec{
		Name:        "wiki_maintain",
		Title:       "Plan wiki maintenance",
		Description: "One LLM-assisted maintenance pass: the findings of lint (broken links, orphans, uncompiled sources, missing hubs, ...) and, with semantic: true, of lint_semantic, with excerpts of the notes they name, become a plan of concrete edits, each a call of apply_edits, patch_section or write_note with its arguments, a reason and the rule it fixes. Nothing is written unless apply: true, which needs the write scope and calls each edit's tool with your rights (a propose-only key gets proposals; each edit's outcome is in the result). Edits the model got wrong (an unknown tool, a missing or write-once note) are dropped and counted. budget reports the findings and notes shown, the prompt's size, the reply cap and the LLM calls. Needs an LLM provider; a folder-scoped key is refused (it works over the whole vault).",
		Hints:       hints{destructive: true},
		// The pass writes nothing itself: with apply, each edit goes
		// through its own tool's guard.
		Access: access{scope: auth.ScopeRead, whole: true, own: true},
		Paid:   true,
		Needs:  Needs{LLM: true},
	}, s.wikiMaintain)}
}

func (s *Server) wikiMaintain(ctx context.Context, in core.WikiMaintainIn) (*core.WikiMaintainOut, error) {
	id := auth.IdentityFrom(ctx)
	if in.Apply && !id.Has(auth.ScopeWrite) {
		return nil, newError(KindInsufficientScope, map[string]any{"required_scope": string(auth.ScopeWrite), "scopes": id.Granted},
			"wiki_maintain with apply: true writes, which needs the write scope: call it without apply for the plan.")
	}
	plan, err := s.core.WikiMaintain(ctx, in)
	if err != nil || !in.Apply {
		return plan, err
	}
	for i := range plan.Edits {
		e := &plan.Edits[i]
		h := s.handler(e.Tool)
		if h == nil {
			e.Outcome = string(KindUnsupported)
			continue
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = e.Tool, e.Arguments
		res, err := h(ctx, req)
		if err != nil || res == nil {
			e.Outcome = string(KindInternal)
			continue
		}
		if res.IsError {
			f, _ := res.Meta.AdditionalFields[errorMetaKey].(map[string]any)
			e.Outcome, _ = f["kind"].(string)
			e.Detail, _ = f["message"].(string)
			continue
		}
		var done struct {
			ContentHash string `json:"content_hash"`
			Proposal    *struct {
				ID string `json:"id"`
			} `json:"proposal"`
		}
		raw, _ := res.StructuredContent.(json.RawMessage)
		_ = json.Unmarshal(raw, &done)
		if done.Proposal != nil {
			e.Outcome, e.Detail = "proposed", done.Proposal.ID
		} else {
			e.Outcome, e.Detail = "applied", done.ContentHash
		}
	}
	plan.Applied = true
	return plan, nil
}
