package config

import (
	"context"
	"fmt"
	"github.com/sheaf-dev/sheaf/shared/core"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/history"
	s3history "github.com/sheaf-dev/sheaf/shared/history/s3"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/textindex"
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

// Cloud is a vault in S3 as the cloud doors run it (the MCP and indexer
// functions, sheaf reconcile): Open's vault, whose catalog is the snapshot
// under the vault's .sheaf/ prefix (written by the indexer, read by the
// tools through catalogstore.Catalogs), and the bucket's store.
type Cloud struct {
	*Opened
	Store *s3.Store
	Root  string // the vault URL, without credentials

	loadMu sync.Mutex
	loaded bool
}

func init() { RegisterSite(s3.Scheme, openBucket) }

// IsCloud reports whether a --vault value names a vault in a bucket
// (any scheme but a folder's).
func IsCloud(vault string) bool { return store.SchemeOf(vault) != "file" }

// openBucket is the site of an s3://bucket/prefix vault: its state and
// catalog under the prefix's .sheaf/, its history the bucket's object
// versions, no lasting disk. It makes no network call.
func openBucket(ctx context.Context, c *Config) (*Site, error) {
	sc, err := s3.ParseURL(c.Vault)
	if err != nil {
		return nil, err
	}
	if c.State != "" {
		return nil, Refuse("--state", c.State, "an s3:// vault keeps its state under the bucket's .sheaf/ prefix: drop --state")
	}
	st, err := store.Open(ctx, c.Vault)
	if r := asRefusal(err); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, err
	}
	s3st := st.(*s3.Store)
	return &Site{
		Store: st, Root: sc.URL(), ID: cloudVaultID(sc), State: cloudState(sc),
		Snapshots: &catalogstore.Snapshots{Store: st},
		// No network call here: a bucket without versioning is reported
		// when history is read.
		History: func() (history.Store, error) { return s3history.New(st) },
		KeyPath: s3st.Path, Bucket: sc.Bucket,
	}, nil
}

// OpenCloud opens a vault in a bucket (--vault s3://bucket/prefix, --search
// http(s)://meili:7700) as Open does, for the cloud doors. It makes no
// network call: every adapter connects on first use, so a Lambda init
// stays within a few milliseconds.
func OpenCloud(ctx context.Context, c *Config, log *slog.Logger) (*Cloud, error) {
	if !IsCloud(c.Vault) {
		return nil, fmt.Errorf("vault %q: a cloud vault is an s3://bucket/prefix URL", c.Vault)
	}
	o, err := Open(ctx, c, log)
	if err != nil {
		return nil, err
	}
	st, ok := o.Site.Store.(*s3.Store)
	if !ok || o.Site.Indexes() {
		o.Close()
		return nil, fmt.Errorf("vault %q: not a bucket", c.Vault)
	}
	// The indexer files ingest_file's presigned uploads as they arrive.
	v := o.Vault
	o.Indexer.Uploads = func(ctx context.Context, path string) error {
		s, err := core.New(v)
		if err != nil {
			return err
		}
		return s.FileUpload(ctx, path)
	}
	return &Cloud{Opened: o, Store: st, Root: o.Vault.Root}, nil
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
	cat, err := cl.Site.Snapshots.Load(ctx)
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

// cloudVaultID derives the vault id from the prefix's last folder, or the
// bucket name for a whole bucket.
func cloudVaultID(sc s3.Config) string {
	if p := strings.Trim(sc.Prefix, "/"); p != "" {
		return VaultIDFrom(p)
	}
	return VaultIDFrom(sc.Bucket)
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
