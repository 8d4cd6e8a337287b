// Package core is Sheaf's protocol-free core, which every door (the MCP
// tools, the shell commands) calls: the vaults a deployment serves and
// each caller's scoped view of them (view.go), note loading and paged
// reads (noteload.go, notes.go, notepage.go), compare-and-swap writes with
// the trash and the ledger (write*.go), past versions (versions.go),
// retrieval and fusion (retrieve.go, lexical.go, rerank.go, hits.go),
// cursors, the error kinds (errors.go) and what an answer must say of its
// coverage (coverage.go). It never imports an MCP library (TestNoProtocol).
//
// Its files are layered: the vault, views, calls and errors; note loading,
// writes and past versions; asking a model, retrieval and hits; then the
// tools' files. A lower file never reaches up into a tool's file: a helper
// several tools share moves down (docs/architecture.md; TestCoreStaysLayered
// in infra/devtools/filecycles).
package core

import (
	"context"
	"fmt"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Core holds the vaults a deployment serves and answers every tool: each
// call finds its vault by id, in the view of the caller in its context,
// once the vault's index pass allows, and notes in the call (see call)
// what its answer must say of its coverage. The doors (the MCP tools, the
// shell commands) decode their arguments, call it and shape its answers.
type Core struct {
	vaults map[string]*Vault
	order  []string
	// Now is the core's clock; nil: time.Now.
	Now func() time.Time
}

// New serves the given vaults; ids must be unique.
func New(vaults ...*Vault) (*Core, error) {
	s := &Core{vaults: map[string]*Vault{}}
	for _, v := range vaults {
		if _, dup := s.vaults[v.ID]; dup {
			return nil, fmt.Errorf("two vaults with id %q", v.ID)
		}
		v.state()
		s.vaults[v.ID] = v
		s.order = append(s.order, v.ID)
	}
	if len(s.order) == 0 {
		return nil, fmt.Errorf("no vault to serve")
	}
	return s, nil
}

func (s *Core) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Open is the vault a call works in, as the caller sees it, and its
// catalog, once the vault's index pass allows (as every tool waits).
func (s *Core) Open(ctx context.Context, a VaultArg) (*Vault, *vault.Catalog, error) {
	return s.open(ctx, a)
}

// VaultIDs are the ids of the vaults served, in the order given to New.
func (s *Core) VaultIDs() []string { return append([]string(nil), s.order...) }

// VaultArg is the optional `vault` argument every tool takes.
type VaultArg struct {
	Vault string `json:"vault,omitempty" jsonschema:"Vault id. May be omitted when only one vault is available." schema:"minLength=1,maxLength=64,pattern=^[a-z0-9_-]+$"`
}

// vault picks the vault a call works in, as the caller sees it: a caller
// limited to some folders gets a view in which nothing else exists (see
// view.go).
func (s *Core) vault(ctx context.Context, a VaultArg) (*Vault, error) { return s.View(ctx, a) }

// View is the vault a call works in (a.Vault, or the only one), as the
// caller in ctx sees it: a caller limited to some folders gets a view in
// which nothing else exists (see view.go).
func (s *Core) View(ctx context.Context, a VaultArg) (*Vault, error) {
	v, err := s.pick(a)
	if err != nil {
		return nil, err
	}
	if id := auth.IdentityFrom(ctx); id.Scoped() {
		return v.viewFor(id.Folders), nil
	}
	return v, nil
}

// pick finds the vault the `vault` argument names.
func (s *Core) pick(a VaultArg) (*Vault, error) {
	if a.Vault == "" {
		if len(s.order) == 1 {
			return s.vaults[s.order[0]], nil
		}
		return nil, newError(KindArgsInvalid, map[string]any{"vaults": s.order},
			"this server serves %d vaults: pass `vault` (one of %v)", len(s.order), s.order)
	}
	v, ok := s.vaults[a.Vault]
	if !ok {
		return nil, newError(KindArgsInvalid, map[string]any{"vaults": s.order},
			"unknown vault %q (known: %v)", a.Vault, s.order)
	}
	return v, nil
}

// open resolves the vault and its current catalog.
func (s *Core) open(ctx context.Context, a VaultArg) (*Vault, *vault.Catalog, error) {
	v, err := s.ready(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	c, err := s.catalogOf(ctx, v)
	if err != nil {
		return nil, nil, err
	}
	return v, c, nil
}

// ready resolves the vault a call works in, once its index pass is done or
// the wait for it is over.
func (s *Core) ready(ctx context.Context, a VaultArg) (*Vault, error) {
	v, err := s.vault(ctx, a)
	if err != nil {
		return nil, err
	}
	if err := v.awaitIndex(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// catalogOf loads v's current catalog and notes what the call's answer
// must say of it (coverage).
func (s *Core) catalogOf(ctx context.Context, v *Vault) (*vault.Catalog, error) {
	c, err := v.Catalogs.Catalog(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the catalog of vault %s: %w", v.ID, err)
	}
	s.noteCoverage(ctx, v, c.CountUnindexed())
	return c, nil
}

// noteCoverage notes in the call what its answer must say of the index:
// still indexing, notes kept out of it, this handler's writes not in the
// shared index yet.
func (s *Core) noteCoverage(ctx context.Context, v *Vault, unindexed int) {
	switch st := v.status(); {
	case st.State != "ready":
		callFrom(ctx).noteIndexing(&Indexing{State: st.State, Indexed: st.Done, Total: st.Total, Notes: st.Notes, Pending: st.Pending})
	case st.Pending > 0:
		callFrom(ctx).noteIndexing(&Indexing{State: "catching-up", Indexed: st.Done, Total: st.Total, Notes: st.Notes, Pending: st.Pending})
	}
	callFrom(ctx).noteUnindexed(unindexed)
	if v.Lagging != nil {
		callFrom(ctx).noteLagging(v.Lagging(), s.now())
	}
}

// openSummary is open for a tool that needs the catalog's Summary only:
// from the Summaries of a cold handler (cat nil), else from the catalog.
// Embeddings need the catalog (their staleness is per note).
func (s *Core) openSummary(ctx context.Context, a VaultArg) (*Vault, vault.Summary, *vault.Catalog, error) {
	v, err := s.ready(ctx, a)
	if err != nil {
		return nil, vault.Summary{}, nil, err
	}
	if sums, ok := v.Catalogs.(Summaries); ok && v.Embeddings == nil {
		sum, ok, err := sums.Summary(ctx)
		if err != nil {
			return nil, vault.Summary{}, nil, fmt.Errorf("reading the catalog summary of vault %s: %w", v.ID, err)
		}
		if ok {
			s.noteCoverage(ctx, v, sum.Unindexed)
			if p, ok := v.Catalogs.(Prefetcher); ok {
				callFrom(ctx).afterAnswer(func() { p.Prefetch(context.WithoutCancel(ctx)) })
			}
			return v, sum, nil, nil
		}
	}
	c, err := s.catalogOf(ctx, v)
	if err != nil {
		return nil, vault.Summary{}, nil, err
	}
	return v, c.Summary(), c, nil
}
