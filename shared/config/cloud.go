package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/audit"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/embed"
	s3history "github.com/sheaf-dev/sheaf/shared/history/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// LambdaMaxWait is how long await_directives may block on Lambda: under API
// Gateway's 30 s integration limit.
const LambdaMaxWait = 25 * time.Second

// SearchTimeout bounds one read of Meilisearch by the tools (a search, the
// list of indexed paths): a server that accepts connections but never
// answers fails the tool call instead of hanging it. The indexer's writes,
// which wait for Meilisearch's tasks, are not bounded by it.
const SearchTimeout = 10 * time.Second

// boundedText bounds the reads of a text index by timeout.
type boundedText struct {
	textindex.Reader
	timeout time.Duration
}

// Search implements textindex.Reader.
func (b boundedText) Search(ctx context.Context, q textindex.Query, opts textindex.Options) (textindex.Result, error) {
	bctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	res, err := b.Reader.Search(bctx, q, opts)
	return res, b.explain(ctx, bctx, err)
}

// Ask implements textindex.Reader.
func (b boundedText) Ask(ctx context.Context, q textindex.Question, opts textindex.Options) (textindex.Result, error) {
	bctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	res, err := b.Reader.Ask(bctx, q, opts)
	return res, b.explain(ctx, bctx, err)
}

// Paths implements textindex.Reader.
func (b boundedText) Paths(ctx context.Context) (map[string]time.Time, error) {
	bctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	paths, err := b.Reader.Paths(bctx)
	return paths, b.explain(ctx, bctx, err)
}

// explain says so when the bound, not the caller, ended a call.
func (b boundedText) explain(caller, bounded context.Context, err error) error {
	if err != nil && caller.Err() == nil && bounded.Err() != nil {
		return fmt.Errorf("the search service did not answer within %v: %w", b.timeout, err)
	}
	return err
}

// Cloud is a vault in S3 wired to the cloud adapters: the s3 store, a
// Meilisearch index, the catalog snapshot under the vault's .sheaf/ prefix
// (read by the tools through indexer.StoreCatalogs, written by the
// indexer), and Qdrant plus an embeddings provider when configured.
type Cloud struct {
	Vault      *core.Vault
	Indexer    *indexer.Indexer
	Embeddings *indexer.Embeddings // nil without an embeddings provider
	Store      *s3.Store
	Root       string // the vault URL, without credentials

	snaps   *indexer.StoreSnapshots
	loadMu  sync.Mutex
	loaded  bool
	vectors vectors.Index
}

// IsCloud reports whether a --vault value names a cloud vault (s3://).
func IsCloud(vault string) bool { return strings.HasPrefix(vault, s3.Scheme+"://") }

// OpenCloud wires a cloud vault (--vault s3://bucket/prefix, --search
// http(s)://meili:7700). It makes no network call: every adapter connects
// on first use, so a Lambda init stays within a few milliseconds. On Lambda
// (AWS_LAMBDA_RUNTIME_API set) await_directives is capped at LambdaMaxWait.
func OpenCloud(ctx context.Context, c *Config, log *slog.Logger) (*Cloud, error) {
	if log == nil {
		log = slog.Default()
	}
	if !IsCloud(c.Vault) {
		return nil, fmt.Errorf("vault %q: a cloud vault is an s3://bucket/prefix URL", c.Vault)
	}
	sc, err := s3.ParseURL(c.Vault)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(c.Search, "http://") && !strings.HasPrefix(c.Search, "https://") {
		return nil, fmt.Errorf("--search %q: an s3:// vault is searched by Meilisearch: pass --search http(s)://host:7700 (SHEAF_SEARCH)", c.Search)
	}
	st, err := s3.Open(ctx, sc)
	if err != nil {
		return nil, err
	}
	id := c.VaultID
	if id == "" {
		id = cloudVaultID(sc)
	}
	text, err := meili.Open(ctx, meili.Config{URL: c.Search, APIKey: c.SearchKey, Index: "sheaf-" + id})
	if err != nil {
		return nil, err
	}
	snaps := &indexer.StoreSnapshots{Store: st}
	ix := &indexer.Indexer{
		Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: snaps,
		MaxNoteBytes: c.MaxNoteBytes, Log: log, KeyPath: st.Path, Bucket: sc.Bucket,
		TrackChanges: c.EmbedBaseURL != "",
	}
	// A long-lived server loads the catalog in the background after a
	// first answer from its summary; a Lambda instance, frozen between
	// invocations, would only slow that answer (see StoreCatalogs).
	onLambda := os.Getenv("AWS_LAMBDA_RUNTIME_API") != ""
	catalogs := &indexer.StoreCatalogs{Store: st, Preload: !onLambda}
	// The handler's own writes are laid over the shared snapshot (and
	// written to Meilisearch) until the indexer has caught up with them.
	overlay := &indexer.Overlay{Base: catalogs, Store: st, Text: text, MaxNoteBytes: c.MaxNoteBytes}
	v := &core.Vault{
		ID: id, Root: sc.URL(), Store: st, Text: boundedText{Reader: text, timeout: SearchTimeout},
		Catalogs: overlay, Reindex: overlay, Ledger: c.Ledger,
		Lagging: func() []core.Lag {
			var out []core.Lag
			for _, l := range overlay.Lagging() {
				out = append(out, core.Lag{Path: l.Path, Since: l.Since})
			}
			return out
		},
		// No snapshot in the bucket means no indexer has run yet: every
		// answer says so instead of describing an empty vault.
		Status: func() core.IndexStatus {
			if catalogs.Missing() {
				return core.IndexStatus{State: "starting"}
			}
			return core.IndexStatus{State: "ready"}
		},
		ImmutablePaths: c.ImmutablePaths, MaxNoteBytes: c.MaxNoteBytes, MaxAttachmentBytes: c.MaxAttachmentBytes,
		CursorKey: c.CursorKey, State: cloudState(sc),
	}
	if v.Ingest.Allow, err = core.ParseAllow(c.IngestAllow); err != nil {
		return nil, err
	}
	if !c.NoAudit {
		every := time.Duration(0) // the default: every 5 s
		if onLambda {
			every = -1 // the handler flushes before it returns
		}
		if v.Audit, err = audit.New(audit.Options{Store: st, FlushEvery: every}); err != nil {
			return nil, err
		}
	}
	if onLambda {
		v.MaxWait = LambdaMaxWait
	}
	switch c.History {
	case "", "on":
		// The bucket's object versions are the history (no network call
		// here: a bucket without versioning is reported when history is read).
		if v.History, err = s3history.New(st); err != nil {
			return nil, err
		}
	case "off":
	default:
		return nil, fmt.Errorf("--history %q: on or off", c.History)
	}
	if v.LLM, v.Reranker, err = c.OpenLLM(); err != nil {
		return nil, err
	}
	cl := &Cloud{Vault: v, Indexer: ix, Store: st, Root: v.Root, snaps: snaps}
	// The indexer files ingest_file's presigned uploads as they arrive.
	ix.Uploads = func(ctx context.Context, path string) error {
		s, err := core.New(v)
		if err != nil {
			return err
		}
		return s.FileUpload(ctx, path)
	}
	if err := cl.openEmbeddings(ctx, c, log); err != nil {
		return nil, err
	}
	return cl, nil
}

// openEmbeddings wires the embeddings provider and the Qdrant collection
// when c.EmbedBaseURL is set. The embedded vector index needs a lasting
// disk, which a cloud deployment does not have.
func (cl *Cloud) openEmbeddings(ctx context.Context, c *Config, log *slog.Logger) error {
	if c.EmbedBaseURL == "" {
		return nil
	}
	if c.Vectors == "" || c.Vectors == "embedded" {
		return errors.New("--vectors: an s3:// vault keeps its vectors in Qdrant: pass --vectors qdrant://host:6334 (SHEAF_VECTORS)")
	}
	emb, err := embed.New(embed.Config{BaseURL: c.EmbedBaseURL, Model: c.EmbedModel, APIKey: c.EmbedKey, Dimensions: c.EmbedDimensions})
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	vec, err := c.OpenQdrant(ctx, cl.Vault.ID)
	if err != nil {
		return err
	}
	cl.vectors = vec
	cl.Embeddings = &indexer.Embeddings{Store: cl.Store, Embedder: emb, Vectors: vec, MaxNoteBytes: c.MaxNoteBytes, Log: log}
	cl.Vault.Embedder, cl.Vault.Vectors, cl.Vault.Embeddings = emb, vec, cl.Embeddings
	return nil
}

// cloudVaultID derives the vault id from the prefix's last folder, or the
// bucket name for a whole bucket.
func cloudVaultID(sc s3.Config) string {
	if p := strings.Trim(sc.Prefix, "/"); p != "" {
		return VaultIDFrom(p)
	}
	return VaultIDFrom(sc.Bucket)
}

// LoadCatalog seeds the indexer's catalog from the saved snapshot, once,
// before the indexer handles anything: not at init (it reads the bucket).
// With no snapshot yet the catalog stays empty and the first save creates
// one. A failed load is tried again by the next call.
func (cl *Cloud) LoadCatalog(ctx context.Context) error {
	cl.loadMu.Lock()
	defer cl.loadMu.Unlock()
	if cl.loaded {
		return nil
	}
	cat, err := cl.snaps.Load(ctx)
	if err != nil {
		return fmt.Errorf("loading the catalog snapshot: %w", err)
	}
	if cat != nil {
		cl.Indexer.Catalog = cat
	}
	cl.loaded = true
	return nil
}

// RefreshEmbeddings embeds the notes the indexer changed since the last
// call (only changed passages go to the provider) and drops the vectors of
// those it removed: the cost of a batch, not of the vault. A failure keeps
// the paths for the next call. A no-op without embeddings.
func (cl *Cloud) RefreshEmbeddings(ctx context.Context) error {
	if cl.Embeddings == nil {
		return nil
	}
	paths := cl.Indexer.TakeChanges()
	if _, _, err := cl.Embeddings.RefreshPaths(ctx, cl.Indexer.Catalog, paths); err != nil {
		cl.Indexer.GiveBack(paths)
		return err
	}
	return nil
}

// ReconcileEmbeddings brings the vectors in step with the whole catalog:
// every stale note embedded, every vanished one pruned (it reads every
// note's hash from the vector index). The reconcile runs it; a no-op
// without embeddings.
func (cl *Cloud) ReconcileEmbeddings(ctx context.Context) error {
	if cl.Embeddings == nil {
		return nil
	}
	taken := cl.Indexer.TakeChanges() // the whole pass covers them
	if _, _, err := cl.Embeddings.Refresh(ctx, cl.Indexer.Catalog); err != nil {
		cl.Indexer.GiveBack(taken)
		return err
	}
	return nil
}

// Close writes what the read audit still holds and releases the vector
// index's connection.
func (cl *Cloud) Close() error {
	err := cl.Vault.Audit.Close(context.Background())
	if cl.vectors != nil {
		err = errors.Join(err, cl.vectors.Close())
	}
	return err
}

// cloudState names the prefix under which a cloud vault keeps the catalog
// and Sheaf's own objects.
func cloudState(sc s3.Config) string {
	p := strings.Trim(sc.Prefix, "/")
	if p != "" {
		p += "/"
	}
	return s3.Scheme + "://" + sc.Bucket + "/" + p + ".sheaf/"
}
