package tools

// How a propose-only caller's write becomes a proposal: the guard hands
// the call a proposer (access.go) that stores it (propose), and define
// answers with the proposal instead of calling the tool (def.go). The
// tools that review proposals are in proposals.go.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

type proposerKey struct{}

// proposer, set by the guard for a propose-only caller's write, stores the
// call as a proposal; the tool then answers with it instead of writing
// (see define).
type proposer func(context.Context) (*ProposalRef, error)

func withProposer(ctx context.Context, p proposer) context.Context {
	return context.WithValue(ctx, proposerKey{}, p)
}

func proposerFrom(ctx context.Context) proposer {
	p, _ := ctx.Value(proposerKey{}).(proposer)
	return p
}

// ProposalTarget is a note a proposal writes and its base: the content hash
// it had when proposed ("" when it did not exist).
type ProposalTarget struct {
	Path     string `json:"path"`
	BaseHash string `json:"base_hash" jsonschema:"sha256:<hex> of the note when proposed; empty: the note did not exist"`
}

// ProposalRef is what a propose-only caller's write returns: the proposal
// made instead of the edit.
type ProposalRef struct {
	ID      string           `json:"id"`
	Status  string           `json:"status" jsonschema:"pending: nothing is written until someone with a write key applies it"`
	Tool    string           `json:"tool"`
	Targets []ProposalTarget `json:"targets"`
}

// proposalSchema is ProposalRef's schema, added to the output schema of
// every write tool a proposal can stand for.
var proposalSchema = func() *jsonschema.Schema {
	s, err := jsonschema.For[ProposalRef](&jsonschema.ForOptions{})
	if err != nil {
		panic(err)
	}
	s.Type, s.Types = "", []string{"null", "object"}
	s.Description = "present when your credential is propose-only: the write was queued as this proposal instead of made (the other fields are then empty)"
	return s
}()

// proposable reports whether a tool's calls become proposals for
// propose-only callers (its output schema then has "proposal").
func (a access) proposable() bool { return a.writes && a.propose == proposeQueue }

// proposedResult is a write tool's answer when the write became a
// proposal: its result fields empty, partial set, and the proposal.
func proposedResult(out any, ref *ProposalRef) *mcp.CallToolResult {
	raw, err := json.Marshal(out)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		return errorResult(core.InternalError(fmt.Errorf("encoding the proposal: %w", err)))
	}
	m["partial"], m["proposal"] = true, ref
	res, _ := structuredResult(m)
	return res
}

// ProposalDir holds the proposals of a vault.
const ProposalDir = core.ProposalDir

// Proposal is one stored proposal.
type Proposal struct {
	ID        string           `json:"id"`
	Tool      string           `json:"tool" jsonschema:"the write tool the proposal calls when applied"`
	Arguments map[string]any   `json:"arguments" jsonschema:"that call's arguments"`
	Targets   []ProposalTarget `json:"targets" jsonschema:"the notes it writes, with the content they must still have"`
	By        string           `json:"by" jsonschema:"who proposed it (the credential's subject)"`
	ByName    string           `json:"by_name,omitempty"`
	Created   string           `json:"created"`
}

// contentHash is the base hash of a note's content.
func contentHash(data []byte) string { return "sha256:" + hashOf(data) }

// currentHash reads the hash a target has now ("" when it does not exist).
func currentHash(ctx context.Context, v *Vault, p string) (string, error) {
	data, _, err := v.Store.Get(ctx, p, v.MaxNote())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", nil
	case err != nil:
		return "", err
	}
	return contentHash(data), nil
}

// targetPath is the note a write tool's path argument names: the path, or
// with ".md" added when it has no extension.
func targetPath(raw string) (string, error) {
	p, err := store.CleanPath(raw)
	if err != nil {
		return "", err
	}
	if !vault.IsNotePath(p) && path.Ext(p) == "" {
		p += ".md"
	}
	return p, nil
}

// propose stores the call req of tool as a proposal by the caller in ctx.
// The guard has checked the caller's scope and folders.
func (s *Server) propose(ctx context.Context, tool string, a access, req mcp.CallToolRequest) (*ProposalRef, error) {
	args := argsOf(req)
	vaultID, _ := args["vault"].(string)
	v, err := s.vault(ctx, VaultArg{Vault: vaultID})
	if err != nil {
		return nil, err
	}
	id := auth.IdentityFrom(ctx)
	p := Proposal{Tool: tool, Arguments: args, By: id.Subject, ByName: id.Name, Created: s.now().UTC().Format(time.RFC3339Nano), Targets: []ProposalTarget{}}
	for _, pa := range a.paths {
		for _, raw := range args.strings(pa.name) {
			t, err := targetPath(raw)
			if err != nil {
				return nil, argPathError(pa.name, err)
			}
			h, err := currentHash(ctx, v, t)
			if err != nil {
				return nil, err
			}
			p.Targets = append(p.Targets, ProposalTarget{Path: t, BaseHash: h})
		}
	}
	for attempt := 0; ; attempt++ {
		var r [6]byte
		_, _ = rand.Read(r[:])
		p.ID = s.now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(r[:])
		data, _ := json.Marshal(p)
		_, err = v.Store.Put(ctx, ProposalDir+p.ID+".json", data, store.PutOptions{IfNoneMatch: true})
		if err == nil || !errors.Is(err, store.ErrConflict) || attempt == 2 {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("storing the proposal: %w", err)
	}
	return &ProposalRef{ID: p.ID, Status: "pending", Tool: tool, Targets: p.Targets}, nil
}
