package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/core"
)

// How a propose-only caller's write becomes a proposal: the guard hands
// the call a proposer (access.go), and define answers with the proposal
// instead of calling the tool (def.go).

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
