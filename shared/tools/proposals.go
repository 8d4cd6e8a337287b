package tools

// Proposals are the writes of propose-only callers: instead of the edit, a
// deferred call of the write tool is stored as .sheaf/proposals/<id>.json,
// pinned to the content hash of every note it names (its base). A caller
// who may write directly lists them, applies one (the same call replayed
// with the applier's rights, refused as proposal-stale when a target
// drifted from its base) or rejects it. Proposals are objects in the store,
// so every server of a vault sees the same ones. Storing one is the
// guard's (propose, in proposed.go); reviewing them is here.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// Bounds of the proposal store.
const (
	maxProposalBytes = core.MaxProposalBytes // one proposal (its arguments carry the new text)
	maxProposals     = 1000                  // listed at most
)

// loadProposal reads one proposal by id; note-not-found style errors name
// the id.
func loadProposal(ctx context.Context, v *Vault, id string) (*Proposal, string, error) {
	if !proposalID(id) {
		return nil, "", newError(KindArgsInvalid, map[string]any{"id": id}, "%q is not a proposal id: list_proposals shows them.", clipQuote(id))
	}
	data, obj, err := v.Store.Get(ctx, ProposalDir+id+".json", maxProposalBytes)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, "", newError(KindArgsInvalid, map[string]any{"id": id}, "There is no pending proposal %s (applied or rejected already?): list_proposals shows the pending ones.", id)
	case err != nil:
		return nil, "", err
	}
	var p Proposal
	if err := json.Unmarshal(data, &p); err != nil || p.ID != id {
		return nil, "", fmt.Errorf("proposal %s is damaged", id)
	}
	return &p, obj.ETag, nil
}

// proposalID reports whether s has the shape of a proposal id, so that no
// id can name another object.
func proposalID(s string) bool {
	if len(s) != 29 || s[8] != 'T' || s[15] != 'Z' || s[16] != '-' {
		return false
	}
	for i, r := range s {
		if i == 8 || i == 15 || i == 16 {
			continue
		}
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// visibleTo reports whether every target of p is inside the caller's
// folders.
func visibleTo(id auth.Identity, p *Proposal) bool {
	for _, t := range p.Targets {
		if !id.Folders.Allows(t.Path) {
			return false
		}
	}
	return true
}

type listProposalsIn struct {
	VaultArg
	Page
}

// ProposalInfo is a pending proposal as listed.
type ProposalInfo struct {
	Proposal
	Stale bool `json:"stale" jsonschema:"a target changed since the proposal was made: applying it would fail with proposal-stale"`
}

type proposalIDIn struct {
	VaultArg
	ID string `json:"id" jsonschema:"The proposal's id, from list_proposals." schema:"minLength=1,maxLength=64"`
}

type applyProposalOut struct {
	Coverage
	ID      string         `json:"id"`
	Tool    string         `json:"tool"`
	Applied bool           `json:"applied"`
	Result  map[string]any `json:"result" jsonschema:"what the write tool returned"`
}

type rejectProposalOut struct {
	Coverage
	ID       string `json:"id"`
	Rejected bool   `json:"rejected"`
}

// proposalTools: reviewing proposals needs the right to write directly.
func (s *Server) proposalTools() []Tool {
	list := define(Spec{
		Name:        "list_proposals",
		Title:       "List proposals",
		Description: "The pending proposals: writes made by propose-only callers, queued until someone who may write applies or rejects them. Each names the write tool, its arguments and the notes it writes; stale ones no longer apply (a target changed). Paginated.",
		Hints:       readOnly,
		Access:      access{scope: auth.ScopeWrite},
	}, s.ListProposals)
	apply := define(Spec{
		Name:        "apply_proposal",
		Title:       "Apply a proposal",
		Description: "Make the write a proposal stands for: its tool is called with its arguments and your rights, and the proposal is removed. Fails with proposal-stale, changing nothing, when a note it writes changed since it was proposed.",
		Hints:       hints{destructive: true},
		Access:      access{scope: auth.ScopeWrite, reviews: true, own: true},
	}, s.ApplyProposal)
	reject := define(Spec{
		Name:        "reject_proposal",
		Title:       "Reject a proposal",
		Description: "Discard a pending proposal without writing anything.",
		Hints:       hints{destructive: true, idempotent: true},
		Access:      access{scope: auth.ScopeWrite, reviews: true, own: true},
	}, s.RejectProposal)
	return []Tool{list, apply, reject}
}

// ListProposals implements list_proposals.
func (s *Server) ListProposals(ctx context.Context, in listProposalsIn) (*Paged[ProposalInfo], error) {
	v, err := s.vault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	id := auth.IdentityFrom(ctx)
	var ids []string
	err = v.Store.List(ctx, ProposalDir, func(o store.Object) error {
		name := strings.TrimSuffix(strings.TrimPrefix(o.Path, ProposalDir), ".json")
		if proposalID(name) && len(ids) < maxProposals {
			ids = append(ids, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	all := []ProposalInfo{}
	for _, pid := range ids {
		p, _, err := loadProposal(ctx, v, pid)
		if err != nil {
			var te *Error
			if errors.As(err, &te) {
				continue // applied or rejected meanwhile
			}
			return nil, err
		}
		if !visibleTo(id, p) {
			continue
		}
		info := ProposalInfo{Proposal: *p}
		if info.Stale, err = drifted(ctx, v, p); err != nil {
			return nil, err
		}
		all = append(all, info)
	}
	items, total := core.Paginate(all, in.Page)
	return &Paged[ProposalInfo]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}

// drifted reports whether a target of p no longer has its base content.
func drifted(ctx context.Context, v *Vault, p *Proposal) (bool, error) {
	_, err := staleTarget(ctx, v, p)
	var te *Error
	if errors.As(err, &te) && te.Kind == KindProposalStale {
		return true, nil
	}
	return false, err
}

// staleTarget fails with proposal-stale when a target drifted.
func staleTarget(ctx context.Context, v *Vault, p *Proposal) (string, error) {
	for _, t := range p.Targets {
		h, err := currentHash(ctx, v, t.Path)
		if err != nil {
			return "", err
		}
		if h != t.BaseHash {
			why := "it changed"
			switch {
			case t.BaseHash == "":
				why = "it exists now"
			case h == "":
				why = "it was deleted"
			}
			return t.Path, newError(KindProposalStale, map[string]any{"id": p.ID, "path": t.Path, "base_hash": t.BaseHash, "current_hash": h},
				"Proposal %s no longer applies: %s %s since it was proposed. Reject it, and re-read the note before proposing again.", p.ID, t.Path, why)
		}
	}
	return "", nil
}

// reviewable loads a proposal the caller may see.
func (s *Server) reviewable(ctx context.Context, in proposalIDIn) (*Vault, *Proposal, string, error) {
	v, err := s.vault(ctx, in.VaultArg)
	if err != nil {
		return nil, nil, "", err
	}
	p, etag, err := loadProposal(ctx, v, in.ID)
	if err != nil {
		return nil, nil, "", err
	}
	id := auth.IdentityFrom(ctx)
	for _, t := range p.Targets {
		if !id.Folders.Allows(t.Path) {
			return nil, nil, "", core.FolderNotAllowed(t.Path)
		}
	}
	return v, p, etag, nil
}

// ApplyProposal implements apply_proposal.
func (s *Server) ApplyProposal(ctx context.Context, in proposalIDIn) (*applyProposalOut, error) {
	v, p, etag, err := s.reviewable(ctx, in)
	if err != nil {
		return nil, err
	}
	if _, err := staleTarget(ctx, v, p); err != nil {
		return nil, err
	}
	h := s.handler(p.Tool)
	if h == nil {
		return nil, newError(KindUnsupported, map[string]any{"tool": p.Tool}, "Proposal %s calls %s, which this server does not have.", p.ID, p.Tool)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = p.Tool, p.Arguments
	res, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		if f, ok := res.Meta.AdditionalFields[errorMetaKey].(map[string]any); ok {
			kind, _ := f["kind"].(string)
			msg, _ := f["message"].(string)
			return nil, newError(Kind(kind), map[string]any{"id": p.ID, "tool": p.Tool}, "Applying proposal %s: %s", p.ID, msg)
		}
		return nil, fmt.Errorf("applying proposal %s: %s failed", p.ID, p.Tool)
	}
	out := &applyProposalOut{ID: p.ID, Tool: p.Tool, Applied: true, Result: map[string]any{}}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		_ = json.Unmarshal(raw, &out.Result)
	}
	if err := v.Store.Delete(ctx, ProposalDir+p.ID+".json", etag); err != nil && !errors.Is(err, store.ErrConflict) {
		return nil, fmt.Errorf("proposal %s was applied but could not be removed: %w", p.ID, err)
	}
	return out, nil
}

// RejectProposal implements reject_proposal.
func (s *Server) RejectProposal(ctx context.Context, in proposalIDIn) (*rejectProposalOut, error) {
	v, p, etag, err := s.reviewable(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := v.Store.Delete(ctx, ProposalDir+p.ID+".json", etag); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, newError(KindArgsInvalid, map[string]any{"id": p.ID}, "Proposal %s changed while being rejected: list_proposals and try again.", p.ID)
		}
		return nil, err
	}
	return &rejectProposalOut{ID: p.ID, Rejected: true}, nil
}
