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

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/config/local/watch"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/history"
	histfolder "github.com/sheaf-dev/sheaf/shared/history/folder"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/store/split"
)

// Vault is a vault folder as the local door runs it: config.Open's vault
// over the folder site, whose indexer this process runs (Start) and whose
// file watcher follows the folder.
type Vault struct {
	*config.Opened
	Root   string // absolute vault folder
	State  string // folder holding index.db and the catalog (catalog/)
	Layout Layout // where the state, Sheaf's own objects and the keys live

	stop context.CancelFunc // ends what Start started; nil before Start
	bg   sync.WaitGroup     // what Start started
}

func init() { config.RegisterSite(fs.Scheme, openFolder) }

// openFolder is the site of a vault folder: the notes in the folder, the
// derived state (the embedded indexes, the catalog snapshot, the history)
// in its state folder (see Layout), the catalog kept by this process.
func openFolder(_ context.Context, c *config.Config) (*config.Site, error) {
	root, err := filepath.Abs(strings.TrimPrefix(c.Vault, "file://"))
	if err != nil {
		return nil, err
	}
	st, layout, err := OpenStore(root, c.State)
	if err != nil {
		return nil, err
	}
	state := layout.State
	history := func() (history.Store, error) {
		opts := histfolder.Options{
			// 0: the defaults; negative: no minimum.
			Policy: histfolder.Policy{Days: c.HistoryDays, Keep: c.HistoryKeep},
		}
		if c.HistoryNoPrune {
			opts.PruneEvery = -1 // only the server, which is given the policy, prunes
		}
		h, err := histfolder.Open(filepath.Join(state, "history"), opts)
		if err != nil {
			return nil, fmt.Errorf("opening the note history in %s: %w", state, err)
		}
		return h, nil
	}
	return &config.Site{
		Store: st, Root: root, ID: config.VaultIDFrom(root), State: state, Disk: state,
		Snapshots: &FileSnapshots{Path: filepath.Join(state, "catalog.json.gz")},
		History:   history, Live: liveCatalog, Close: st.Close,
	}, nil
}

// liveCatalog wires the vault's readiness and status to the indexer this
// process runs, and returns the load of the saved catalog into it (see
// config.Site.Live: the tools read that catalog once it is loaded, as it
// is kept current, and writes are indexed before they return).
func liveCatalog(ctx context.Context, o *config.Opened, c *config.Config, log *slog.Logger) (load func()) {
	ix, v := o.Indexer, o.Vault
	v.Ready, v.IndexWait = func() <-chan struct{} { o.Begin(); return ix.Ready() }, indexWait(c.IndexWait) // waiting for the first pass begins the loads
	v.Status = func() core.IndexStatus {
		s := ix.Status()
		return core.IndexStatus{State: s.State, Done: s.Done, Total: s.Total, Notes: s.Notes, Problems: s.Problems, Pending: s.Pending}
	}
	return func() {
		cat, err := o.Site.Snapshots.Load(ctx)
		if err != nil {
			log.Warn("catalog snapshot unreadable; rebuilding", "err", err)
		}
		if cat != nil {
			ix.Catalog = cat
		}
	}
}

// indexWait maps the --index-wait setting (0: do not wait) to the tools'
// (0: the default, negative: do not wait).
func indexWait(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// Open opens (or creates) the derived state of the vault folder c.Vault
// (config.Open). It does not index: call Start (background) or
// Indexer.Sync (foreground).
func Open(ctx context.Context, c *config.Config, log *slog.Logger) (*Vault, error) {
	if c.Vault == "" {
		return nil, errors.New("no vault: pass --vault DIR or set SHEAF_VAULT")
	}
	if store.SchemeOf(c.Vault) != fs.Scheme {
		return nil, fmt.Errorf("vault %q is not a folder: serve a cloud vault with `sheaf serve`, index it with `sheaf reconcile`", c.Vault)
	}
	o, err := config.Open(ctx, c, log)
	if err != nil {
		return nil, err
	}
	return Of(o, c)
}

// Of is the local door over o, the vault c describes opened on a folder
// site.
func Of(o *config.Opened, c *config.Config) (*Vault, error) {
	if !o.Site.Indexes() {
		o.Close()
		return nil, fmt.Errorf("vault %q is not a folder", o.Vault.Root)
	}
	layout, err := Locate(o.Site.Root, c.State) // as openFolder found it
	if err != nil {
		o.Close()
		return nil, err
	}
	return &Vault{Opened: o, Root: o.Site.Root, State: o.Site.State, Layout: layout}, nil
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
		<-l.Loaded() // the catalog (config.OpenLazily)
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
		if err := watch.Run(ctx, l.Indexer, l.Root, watch.Options{}); err != nil && ctx.Err() == nil {
			l.Indexer.Log.Error("watching the vault", "err", err)
		}
	}()
}

// Close stops what Start started (an index pass stops after the batch it is
// writing), then closes the vault (config.Opened.Close: the catalog saved,
// so that the next start resumes where this one stopped).
func (l *Vault) Close() error {
	l.Begin() // Start's pass waits for the catalog
	if l.stop != nil {
		l.stop()
		l.bg.Wait()
	}
	return l.Opened.Close()
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
