package core

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sort"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

type vaultInfoIn struct {
	VaultArg
}

// Capabilities say which tools will work.
type Capabilities struct {
	Embeddings      bool `json:"embeddings" jsonschema:"semantic_search, answer, related_notes work"`
	LLM             bool `json:"llm" jsonschema:"answer, lint_semantic, suggest_tags and wiki_maintain work"`
	HasIndexCatalog bool `json:"hasIndexCatalog" jsonschema:"the vault has an index.md hub"`
	ProposeOnly     bool `json:"proposeOnly" jsonschema:"your writes queue as proposals (list_proposals) instead of changing notes"`
	// EmbeddingsOff and LLMOff say why a capability is off and how to
	// turn it on; the tools that need it are left out of tools/list.
	EmbeddingsOff string `json:"embeddingsOff,omitempty" jsonschema:"why embeddings are off and how to turn them on (the tools that need them are not listed)"`
	LLMOff        string `json:"llmOff,omitempty" jsonschema:"why the LLM tools are off and how to turn them on (they are not listed)"`
}

// Reasons a provider capability is off, as get_vault_info says them.
const (
	embeddingsOffReason = "no embeddings provider configured: the server's operator starts it with --embed-base-url and --embed-model (any OpenAI-compatible endpoint)"
	llmOffReason        = "no LLM configured: the server's operator starts it with --llm-base-url and --llm-model (any OpenAI-compatible chat endpoint)"
)

// Providers reports whether any vault served has an embeddings provider
// with a vector index, and whether any has a chat model: the tools that
// need one are listed only when it is there.
func (s *Core) Providers() (embeddings, llm bool) {
	for _, v := range s.vaults {
		embeddings = embeddings || (v.Embedder != nil && v.Vectors != nil)
		llm = llm || v.LLM != nil
	}
	return embeddings, llm
}

// Liveness says whether work is waiting and whether retrieval is current.
type Liveness struct {
	PendingDirectives   int    `json:"pendingDirectives"`
	LastLogDate         string `json:"lastLogDate,omitempty" jsonschema:"newest date in log.md, YYYY-MM-DD"`
	EmbeddingIndexStale bool   `json:"embeddingIndexStale" jsonschema:"some notes are not embedded at their current content yet (the next semantic call embeds them)"`
	Indexing            string `json:"indexing" jsonschema:"starting, indexing or ready"`
	IndexedNotes        int    `json:"indexedNotes" jsonschema:"notes processed in the current or last indexing pass"`
	NotesToIndex        int    `json:"notesToIndex" jsonschema:"notes to process in that pass"`
}

// Problem is a file that could not be indexed (or only partly).
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

type vaultInfoOut struct {
	Coverage
	Vault           string       `json:"vault"`
	Root            string       `json:"root"`
	NoteCount       int          `json:"noteCount" jsonschema:"notes in the vault (while the first index pass runs: the Markdown files of its listing)"`
	AttachmentCount int          `json:"attachmentCount"`
	IndexedAt       string       `json:"indexedAt,omitempty"`
	AgentsFile      *string      `json:"agentsFile" jsonschema:"the vault's AGENTS.md brief, or null"`
	ImmutablePaths  []string     `json:"immutablePaths"`
	State           string       `json:"state,omitempty" jsonschema:"where the index and Sheaf's own objects (leases, proposals, cursor key) live: a folder on the server's machine, or the bucket's .sheaf/ prefix"`
	Ledger          string       `json:"ledger" jsonschema:"the note every write is logged in (created by the first write), or off"`
	Capabilities    Capabilities `json:"capabilities"`
	Liveness        Liveness     `json:"liveness"`
	Problems        []Problem    `json:"problems,omitempty" jsonschema:"files skipped or degraded while indexing (at most 50)"`
}

// agentsBriefMax caps the AGENTS.md text returned, to protect the context window.
const agentsBriefMax = 16 << 10

// VaultInfo implements get_vault_info.
func (s *Core) VaultInfo(ctx context.Context, in vaultInfoIn) (*vaultInfoOut, error) {
	// A cold stateless handler answers from the catalog's summary alone
	// (cat is nil then): one small read, whatever the vault's size.
	v, sum, cat, err := s.openSummary(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	out := &vaultInfoOut{
		Vault: v.ID, Root: v.Root, NoteCount: sum.Notes, AttachmentCount: sum.Attachments,
		ImmutablePaths: append([]string{}, v.ImmutablePaths...),
		State:          v.State, Ledger: v.ledgerPath(),
	}
	if out.Ledger == "" {
		out.Ledger = "off"
	}
	if t := sum.IndexedAt; !t.IsZero() {
		out.IndexedAt = t.UTC().Format(time.RFC3339)
	}
	if data, _, err := v.Store.Get(ctx, "AGENTS.md", 0); err == nil {
		text := string(data)
		if len(text) > agentsBriefMax {
			text = text[:agentsBriefMax] + "\n…(truncated; read_note AGENTS.md for the rest)"
		}
		out.AgentsFile = &text
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	out.Capabilities = Capabilities{HasIndexCatalog: sum.HasIndex, ProposeOnly: auth.IdentityFrom(ctx).ProposeOnly}
	out.Capabilities.Embeddings = v.Embedder != nil && v.Vectors != nil
	out.Capabilities.LLM = v.LLM != nil
	if !out.Capabilities.Embeddings {
		out.Capabilities.EmbeddingsOff = embeddingsOffReason
	}
	if !out.Capabilities.LLM {
		out.Capabilities.LLMOff = llmOffReason
	}
	if out.Capabilities.Embeddings && v.Embeddings != nil && cat != nil {
		// An unreadable vector index must not take the orientation tool
		// down with it: report it stale (the next semantic call refreshes
		// it, or reports the failure itself).
		stale, err := v.Embeddings.Stale(ctx, cat)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			slog.Warn("vault info: cannot tell whether the embeddings are current", "vault", v.ID, "err", err)
			stale = 1
		}
		out.Liveness.EmbeddingIndexStale = stale > 0
	}
	out.Liveness.PendingDirectives = sum.PendingDirectives
	if data, _, err := v.Store.Get(ctx, "log.md", 1<<20); err == nil {
		for _, e := range vault.ParseLedger(data).Entries {
			out.Liveness.LastLogDate = max(out.Liveness.LastLogDate, e.Date)
		}
	}
	st := v.status()
	out.Liveness.Indexing, out.Liveness.IndexedNotes, out.Liveness.NotesToIndex = st.State, st.Done, st.Total
	if st.State != "ready" && st.Notes > 0 {
		// The listing is true before the index is: count from it.
		out.NoteCount = st.Notes
	}
	// The catalog carries the problems the indexer recorded (in the cloud,
	// through its snapshot); a live indexer's own report wins per path.
	// The summary lists the first ones by path: enough, as only as many
	// are shown.
	probs := map[string]string{}
	for _, p := range sum.Problems {
		probs[p.Path] = p.Reason
	}
	maps.Copy(probs, st.Problems)
	for p, why := range probs {
		out.Problems = append(out.Problems, Problem{Path: p, Reason: why})
	}
	sort.Slice(out.Problems, func(i, j int) bool { return out.Problems[i].Path < out.Problems[j].Path })
	if len(out.Problems) > vault.SummaryProblems {
		out.Problems = out.Problems[:vault.SummaryProblems]
	}
	return out, nil
}
