package core

import (
	"context"
	"net/netip"
	"time"

	"github.com/sheaf-dev/sheaf/shared/audit"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/ingest"
	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/rank"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// Catalogs gives the tools the current Catalog. The local server hands out
// its live one; a stateless handler revalidates a stored snapshot.
type Catalogs interface {
	Catalog(ctx context.Context) (*vault.Catalog, error)
}

// Summaries is a Catalogs that can give the catalog's Summary without
// loading the catalog: a cold stateless handler reads it from the catalog's
// manifest, so its first get_vault_info costs one small read whatever the
// vault's size. ok is false when it cannot (the caller loads the catalog).
type Summaries interface {
	Summary(ctx context.Context) (sum vault.Summary, ok bool, err error)
}

// Prefetcher is a Catalogs that can load its catalog in the background: the
// core asks it to once a call answered from the Summary alone has been
// answered, so that the answer does not share the CPU with the load.
type Prefetcher interface {
	Prefetch(ctx context.Context)
}

// LiveCatalog is a Catalogs over an in-memory catalog kept current by an indexer.
type LiveCatalog struct{ C *vault.Catalog }

// Catalog implements Catalogs.
func (l LiveCatalog) Catalog(context.Context) (*vault.Catalog, error) { return l.C, nil }

// IndexStatus is the indexer's progress as get_vault_info reports it.
type IndexStatus struct {
	State    string            // "starting", "indexing", "ready" (or "failed": the last pass stopped on an error)
	Done     int               // notes processed in the current or last pass
	Total    int               // notes that pass processes
	Notes    int               // Markdown files in the vault's listing; 0 until listed
	Problems map[string]string // path -> why it is skipped or degraded
	// Pending counts changes the file watcher has seen and not indexed
	// yet: answers from the index are partial while it is not 0.
	Pending int
}

// Embeddings keeps a vault's vectors in step with its notes. The tools call
// Refresh before every semantic query, so a changed note is re-embedded
// before the next semantic call.
type Embeddings interface {
	// Refresh embeds every note of cat whose content changed since it was
	// last embedded (only passages with new content go to the provider) and
	// prunes notes that are gone; it reports how many notes and passages
	// were (re)embedded.
	Refresh(ctx context.Context, cat *vault.Catalog) (notes, passages int, err error)
	// Stale counts the notes of cat not yet embedded at their current content.
	Stale(ctx context.Context, cat *vault.Catalog) (int, error)
}

// Vault is one vault as the tools see it: ports, no adapters.
type Vault struct {
	ID       string // the `vault` argument's value; ^[a-z0-9_-]+$
	Root     string // shown by get_vault_info (a folder or s3://bucket/prefix)
	Store    store.Store
	Text     textindex.Reader // the tools never write an index
	Catalogs Catalogs
	Status   func() IndexStatus // nil: always ready
	// Ready returns a channel closed when the current index pass is done,
	// or nil when none runs. A call that needs the index waits up to
	// IndexWait for it (0: DefaultIndexWait; negative: not at all), then
	// answers from what is indexed, marked partial.
	Ready     func() <-chan struct{}
	IndexWait time.Duration

	// Semantic retrieval; all nil when no embeddings provider is set up.
	Embedder   embed.Embedder
	Vectors    vectors.Reader
	Embeddings Embeddings
	// LLM is the chat model of answer, expand, lint_semantic, suggest_tags
	// and eval's faithfulness; nil when none is set up. Reranker, when set,
	// is the hosted cross-encoder of answer's rerank (else the LLM reranks).
	LLM      llm.Chat
	Reranker llm.Reranker
	// Ranking tunes the question lane and the fusion (nil: rank.Default,
	// what ships); the retrieval harness sets it to score other values.
	Ranking *rank.Params

	// Reindex, when set, indexes what a write tool changed before the tool
	// returns (read-your-writes); nil leaves it to the change events.
	Reindex Reindexer
	// Lagging, when set, lists this server's writes the vault's shared
	// index has not caught up with (the cloud); answers then say so.
	Lagging func() []Lag
	// History keeps every note's past versions (who wrote each, with
	// which tool, in which transaction); nil keeps none, and the history
	// tools say so.
	History history.Store
	// Ledger is the note every write is logged in ("" means log.md; "off"
	// logs nothing).
	Ledger string
	// State says where the vault's derived state and Sheaf's own objects
	// live (a folder on this machine, or the bucket's .sheaf/ prefix), for
	// get_vault_info; "" when unknown.
	State string

	// Audit is the vault's read audit (audit.go); nil: off.
	Audit *audit.Log
	// Ingest says what ingest_url may fetch (see IngestConfig).
	Ingest IngestConfig

	ImmutablePaths     []string // write-once prefixes, e.g. "sources/"
	MaxNoteBytes       int64    // read_note refuses bigger notes; 0: 16 MiB
	MaxAttachmentBytes int64    // read_attachment refuses bigger files; 0: 5 MiB
	CursorKey          string   // HMAC key of search_and_read cursors; "": the key stored in the vault, created once

	own   *vaultState // caches and the cursor signer, shared with every caller's view
	scope *scope      // in a caller's view: the allowlist it is limited to; nil for the whole vault
	// MaxWait caps how long await_directives blocks, for platforms with a
	// request limit (25 s behind API Gateway); 0: 55 s.
	MaxWait time.Duration
}

// MaxNote is the largest note read_note reads whole and a write writes.
func (v *Vault) MaxNote() int64 { return v.maxNote() }

// MaxAttachment is the largest file read_attachment returns.
func (v *Vault) MaxAttachment() int64 { return v.maxAttachment() }

// ranking returns the vault's ranking parameters.
func (v *Vault) ranking() rank.Params {
	if v.Ranking != nil {
		return *v.Ranking
	}
	return rank.Default
}

func (v *Vault) maxNote() int64 {
	if v.MaxNoteBytes > 0 {
		return v.MaxNoteBytes
	}
	return 16 << 20
}

func (v *Vault) maxAttachment() int64 {
	if v.MaxAttachmentBytes > 0 {
		return v.MaxAttachmentBytes
	}
	return 5 << 20
}

// Reindexer brings a server's own indexes (catalog, text index) up to date
// with paths a write tool just changed, before the tool returns, so the
// same server's reads, searches, backlinks and outlines see the write.
type Reindexer interface {
	Reindex(ctx context.Context, paths ...string) error
}

// Lag is one of this server's writes that the vault's shared index does
// not hold yet (a cloud deployment, where the indexer saves the catalog
// other servers read).
type Lag struct {
	Path  string
	Since time.Time
}

// IngestConfig is how a vault ingests: the address ranges a fetch may
// reach besides public ones (tests, intranets), and the fetch's limits.
type IngestConfig struct {
	Allow  []netip.Prefix
	Limits ingest.Limits
	// Resolve, when set, looks host names up (tests point names at chosen
	// addresses); nil: the system resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}
