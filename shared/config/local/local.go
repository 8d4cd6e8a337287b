// Package local wires a vault folder to the embedded adapters: the fs
// store, the SQLite FTS5 text index, the embedded vector index and the
// in-memory catalog kept current by an indexer. It is apart from package
// config so that the cloud builds (the Lambda functions) do not link SQLite.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/audit"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/embed"
	histfolder "github.com/sheaf-dev/sheaf/shared/history/folder"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/store/split"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
	vecembedded "github.com/sheaf-dev/sheaf/shared/vectors/embedded"
)

// Vault is a vault folder wired to the embedded adapters.
type Vault struct {
	Vault   *core.Vault
	Indexer *indexer.Indexer
	Root    string // absolute vault folder
	State   string // folder holding index.db and the catalog (catalog/)
	Layout  Layout // where the state, Sheaf's own objects and the keys live
	// Embeddings keeps the vectors in step with the notes; nil without an
	// embeddings provider (then the semantic tools say "not configured").
	Embeddings *indexer.Embeddings
	text       *embedded.Index
	vectors    vectors.Index // nil without embeddings
	store      *split.Store
	history    *histfolder.Store // nil with --history off

	loaded chan struct{}      // closed once Indexer.Catalog is loaded
	stop   context.CancelFunc // ends what Start started; nil before Start
	bg     sync.WaitGroup     // what Start started
}

// Open opens (or creates) the derived state of the vault folder c.Vault,
// its catalog loaded. It does not index: call Start (background) or
// Indexer.Sync (foreground).
func Open(ctx context.Context, c *config.Config, log *slog.Logger) (*Vault, error) {
	l, err := OpenLazily(ctx, c, log)
	if err != nil {
		return nil, err
	}
	<-l.loaded
	return l, nil
}

// OpenLazily is Open returning before the catalog snapshot is read (work
// that grows with the vault: about 100 ms for 10k notes), so that a server
// answers initialize meanwhile. The tools' catalog, the reindex of their
// writes, Start and Close wait for the load, and Status says "starting"
// until it is done; Indexer must not be used directly before Loaded.
func OpenLazily(ctx context.Context, c *config.Config, log *slog.Logger) (*Vault, error) {
	if log == nil {
		log = slog.Default()
	}
	if c.Vault == "" {
		return nil, errors.New("no vault: pass --vault DIR or set SHEAF_VAULT")
	}
	if strings.Contains(c.Vault, "://") {
		return nil, fmt.Errorf("vault %q is not a folder: serve a cloud vault with `sheaf serve`, index it with `sheaf reconcile`", c.Vault)
	}
	if c.Search != "" && c.Search != "embedded" {
		// Never ignored silently: a folder vault's full-text index is the
		// embedded one (its question lane is that index's).
		return nil, fmt.Errorf("--search %q: a folder vault is searched by the embedded index (--search embedded); Meilisearch serves s3:// vaults", c.Search)
	}
	chat, rr, err := c.OpenLLM()
	if err != nil {
		return nil, fmt.Errorf("chat model: %w", err)
	}
	root, err := filepath.Abs(c.Vault)
	if err != nil {
		return nil, err
	}
	st, layout, err := OpenStore(root, c.State)
	if err != nil {
		return nil, err
	}
	state := layout.State
	text, err := embedded.Open(filepath.Join(state, "index.db"))
	if err != nil {
		return nil, fmt.Errorf("opening the text index in %s: %w", state, err)
	}
	snaps := &FileSnapshots{Path: filepath.Join(state, "catalog.json.gz")}
	// Catalog is set by load, before loaded is closed.
	ix := &indexer.Indexer{Store: st, Text: text, Snapshots: snaps, MaxNoteBytes: c.MaxNoteBytes, Log: log}
	id := c.VaultID
	if id == "" {
		id = config.VaultIDFrom(root)
	}
	allow, err := core.ParseAllow(c.IngestAllow)
	if err != nil {
		text.Close()
		return nil, err
	}
	l := &Vault{Indexer: ix, Root: root, State: state, Layout: layout, text: text, store: st, loaded: make(chan struct{})}
	v := &core.Vault{
		ID: id, Root: root, Store: st, Text: text, Catalogs: loadingCatalog{l},
		Ingest: core.IngestConfig{Allow: allow},
		Status: l.status,
		Ready:  ix.Ready, IndexWait: indexWait(c.IndexWait),
		ImmutablePaths: c.ImmutablePaths, MaxNoteBytes: c.MaxNoteBytes, MaxAttachmentBytes: c.MaxAttachmentBytes,
		CursorKey: c.CursorKey, LLM: chat, Reranker: rr,
		Reindex: loadingReindexer{l}, Ledger: c.Ledger, // writes are indexed before the tool returns
	}
	v.State = state
	l.Vault = v
	if !c.NoAudit {
		if v.Audit, err = audit.New(audit.Options{Store: st}); err != nil {
			text.Close()
			return nil, err
		}
	}
	if err := l.openHistory(c); err != nil {
		text.Close()
		return nil, err
	}
	if err := l.openEmbeddings(ctx, c, log); err != nil {
		text.Close()
		return nil, err
	}
	go l.load(context.WithoutCancel(ctx), snaps, log)
	return l, nil
}

// load reads the catalog snapshot (an unreadable one is rebuilt by the
// next index pass) and closes loaded.
func (l *Vault) load(ctx context.Context, snaps *FileSnapshots, log *slog.Logger) {
	defer close(l.loaded)
	if beforeLoad != nil {
		beforeLoad()
	}
	cat, err := snaps.Load(ctx)
	if err != nil {
		log.Warn("catalog snapshot unreadable; rebuilding", "err", err)
	}
	if cat == nil {
		cat = vault.NewCatalog()
	}
	l.Indexer.Catalog = cat
}

// beforeLoad, set by tests only, runs before the catalog is read.
var beforeLoad func()

// Loaded returns a channel closed once the catalog snapshot is loaded.
func (l *Vault) Loaded() <-chan struct{} { return l.loaded }

// status is the indexer's Status as the tools see it: "starting" until
// the catalog is loaded.
func (l *Vault) status() core.IndexStatus {
	select {
	case <-l.loaded:
	default:
		return core.IndexStatus{State: "starting"}
	}
	s := l.Indexer.Status()
	return core.IndexStatus{State: s.State, Done: s.Done, Total: s.Total, Notes: s.Notes, Problems: s.Problems, Pending: s.Pending}
}

// await waits for the catalog to be loaded, or for ctx to end.
func (l *Vault) await(ctx context.Context) error {
	select {
	case <-l.loaded:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loadingCatalog is the live catalog of the indexer, once it is loaded.
type loadingCatalog struct{ l *Vault }

// Catalog implements core.Catalogs.
func (c loadingCatalog) Catalog(ctx context.Context) (*vault.Catalog, error) {
	if err := c.l.await(ctx); err != nil {
		return nil, err
	}
	return c.l.Indexer.Catalog, nil
}

// loadingReindexer is the indexer's Reindex, once the catalog is loaded.
type loadingReindexer struct{ l *Vault }

// Reindex implements core.Reindexer.
func (r loadingReindexer) Reindex(ctx context.Context, paths ...string) error {
	if err := r.l.await(ctx); err != nil {
		return err
	}
	return r.l.Indexer.Reindex(ctx, paths...)
}

// openHistory opens the vault's note history in <state>/history (unless
// --history off): the write tools record every version there, and the
// indexer records the changes made outside Sheaf.
func (l *Vault) openHistory(c *config.Config) error {
	switch c.History {
	case "off":
		return nil
	case "", "on":
	default:
		return fmt.Errorf("--history %q: on or off", c.History)
	}
	opts := histfolder.Options{
		// 0: the defaults; negative: no minimum.
		Policy: histfolder.Policy{Days: c.HistoryDays, Keep: c.HistoryKeep},
	}
	if c.HistoryNoPrune {
		opts.PruneEvery = -1 // only the server, which is given the policy, prunes
	}
	h, err := histfolder.Open(filepath.Join(l.State, "history"), opts)
	if err != nil {
		return fmt.Errorf("opening the note history in %s: %w", l.State, err)
	}
	l.history = h
	l.Vault.History = h
	l.Indexer.History = h
	return nil
}

// openEmbeddings wires the embeddings provider and the vector index when
// c.EmbedBaseURL is set: the embedded index at <state>/vectors.bin, or a
// Qdrant collection ("sheaf-<vault id>" unless the URL names one).
func (l *Vault) openEmbeddings(ctx context.Context, c *config.Config, log *slog.Logger) error {
	if c.EmbedBaseURL == "" {
		return nil
	}
	emb, err := embed.New(embed.Config{BaseURL: c.EmbedBaseURL, Model: c.EmbedModel, APIKey: c.EmbedKey, Dimensions: c.EmbedDimensions})
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	vec, err := openVectors(ctx, c, l.State, l.Vault.ID, log)
	if err != nil {
		return err
	}
	l.vectors = vec
	l.Embeddings = &indexer.Embeddings{Store: l.Vault.Store, Embedder: emb, Vectors: vec, MaxNoteBytes: c.MaxNoteBytes, Log: log}
	l.Vault.Embedder, l.Vault.Vectors, l.Vault.Embeddings = emb, vec, l.Embeddings
	return nil
}

// openVectors opens the vector index c.Vectors names; the embedded one is
// read in the background (see lazyVectors).
func openVectors(ctx context.Context, c *config.Config, state, vaultID string, log *slog.Logger) (vectors.Index, error) {
	if c.Vectors != "" && c.Vectors != "embedded" {
		return c.OpenQdrant(ctx, vaultID)
	}
	// Read in the background: the file holds every vector of the vault.
	return openVectorsLazily(func() (vectors.Index, error) {
		ix, err := vecembedded.Open(filepath.Join(state, "vectors.bin"))
		if err != nil {
			log.Error("opening the vector index; semantic calls will fail", "err", err)
			return nil, fmt.Errorf("opening the vector index: %w", err)
		}
		if lerr := ix.LoadError(); lerr != nil {
			log.Warn("vector index unreadable; re-embedding", "err", lerr)
		}
		return ix, nil
	}), nil
}

// Start reconciles the vault in the background and then, unless noWatch,
// follows changes until ctx ends or Close is called. It returns at once;
// calls that need the index wait for this first pass (core.Vault.Ready).
func (l *Vault) Start(ctx context.Context, noWatch bool) {
	ctx, l.stop = context.WithCancel(ctx)
	l.Indexer.Expect()
	noWatchAfterAll := func() {}
	if !noWatch {
		noWatchAfterAll = l.Indexer.ExpectWatch()
	}
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		<-l.loaded
		if _, err := l.Indexer.Sync(ctx, nil); err != nil && ctx.Err() == nil {
			l.Indexer.Log.Error("indexing the vault", "err", err)
		}
		if l.Embeddings != nil && ctx.Err() == nil {
			// Embed now so that the first semantic call is fast; semantic
			// calls meanwhile wait for this pass rather than start another.
			l.bg.Add(1)
			go func() {
				defer l.bg.Done()
				if n, p, err := l.Embeddings.Refresh(ctx, l.Indexer.Catalog); err != nil && ctx.Err() == nil {
					l.Indexer.Log.Warn("embedding the vault; semantic calls will retry", "err", err)
				} else if n > 0 {
					l.Indexer.Log.Info("embedded the vault", "notes", n, "passages", p)
				}
			}()
		}
		if noWatch || ctx.Err() != nil {
			noWatchAfterAll()
			return
		}
		if err := l.Indexer.Watch(ctx, l.Root); err != nil && ctx.Err() == nil {
			l.Indexer.Log.Error("watching the vault", "err", err)
		}
	}()
}

// Close stops what Start started (an index pass stops after the batch it is
// writing), saves the catalog, so that the next start resumes where this
// one stopped, and closes the indexes.
func (l *Vault) Close() error {
	if l.stop != nil {
		l.stop()
		l.bg.Wait()
	}
	aerr := l.Vault.Audit.Close(context.Background()) // what the last seconds recorded
	<-l.loaded                                        // Save reads the catalog
	serr := l.Indexer.Save(context.Background())
	var verr error
	if l.vectors != nil {
		verr = l.vectors.Close() // the embedded index flushes on Close
	}
	var herr error
	if l.history != nil {
		herr = l.history.Close()
	}
	return errors.Join(aerr, serr, l.text.Close(), verr, herr, l.store.Close())
}

// indexWait maps the --index-wait setting (0: do not wait) to the tools'
// (0: the default, negative: do not wait).
func indexWait(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// OpenStore opens the vault folder root (absolute) as one store: notes,
// the trash and the ledger in the folder, Sheaf's own objects in the state
// folder, the keys in the keys folder (see Layout). state is --state.
func OpenStore(root, state string) (*split.Store, Layout, error) {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, Layout{}, fmt.Errorf("the vault folder %s does not exist: create it (mkdir -p %q) or pass the folder of your notes with --vault", root, root)
	case err != nil:
		return nil, Layout{}, fmt.Errorf("the vault folder %s: %w", root, err)
	case !fi.IsDir():
		return nil, Layout{}, fmt.Errorf("the vault %s is a file, not a folder: pass the folder of your notes with --vault", root)
	}
	layout, err := Locate(root, state)
	if err != nil {
		return nil, layout, err
	}
	notes, err := fs.OpenWith(root, fs.Options{LockFile: layout.VaultLock})
	if err != nil {
		return nil, layout, fmt.Errorf("opening the vault: %w", err)
	}
	own, err := fs.OpenWith(layout.State, fs.Options{Private: true})
	if err != nil {
		return nil, layout, fmt.Errorf("opening the state folder: %w", err)
	}
	return &split.Store{Notes: notes, State: own, Keys: &lazyDir{dir: layout.Keys}, KeysName: filepath.Join(layout.Keys, "keys.json")}, layout, nil
}
