package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/audit"
	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/internal/schemes"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// Site is where a vault lives, as its --vault URL's scheme decides: its
// store and where its derived state goes. The folder door
// (shared/config/local) opens file sites, cloud.go s3 sites; Open builds
// the rest the same way for every site.
type Site struct {
	Store store.Store
	Root  string // the vault as shown: an absolute folder, or the URL without credentials
	ID    string // the vault id unless --vault-id gives one
	State string // core.Vault.State: where Sheaf's own objects live
	// Disk is a folder that outlasts the process, for the embedded
	// indexes (index.db, vectors.bin); "" when there is none (a bucket
	// served from Lambda or a container), which refuses them.
	Disk      string
	Snapshots indexer.SnapshotStore // where the catalog snapshot is saved
	// History opens the note history (called unless --history off).
	History func() (history.Store, error)
	// Live is set by a site whose catalog this process keeps, indexing
	// the notes itself (a folder): it wires o.Vault's readiness and status
	// to o.Indexer and returns the load of the saved catalog into
	// o.Indexer.Catalog (Build makes the tools' catalog and reindex the
	// indexer's once it has run). nil: the catalog is the snapshot another process (the
	// indexer function, sheaf reconcile) saves, and the handler's own
	// writes are laid over it until that process catches up. (A func, so
	// that the Lambda functions do not link the live side.)
	Live func(ctx context.Context, o *Opened, c *Config, log *slog.Logger) (load func())
	// KeyPath and Bucket are the indexer's, for S3 events (nil, "": none).
	KeyPath func(key string) (string, bool)
	Bucket  string
	Close   func() error // nil: nothing to close
}

// Indexes reports whether this process indexes the vault itself (Live is
// set): the local door then runs the indexer and the file watcher.
func (s *Site) Indexes() bool { return s.Live != nil }

// SiteOpener opens the site of c.Vault.
type SiteOpener func(ctx context.Context, c *Config) (*Site, error)

// sites is a plain map, not a schemes.Registry, and is never handed to a
// generic function: a generic's dictionary would mark SiteOpener, and so
// *Config, as used in an interface, and the linker would then keep every
// method of *Config and, through Flags, all of pflag in the Lambda
// bootstraps (400 KB).
var (
	sitesMu sync.RWMutex
	sites   = map[string]SiteOpener{}
)

// RegisterSite makes Open handle vaults of scheme (store.SchemeOf) with o;
// the package that knows the site calls it from its init.
// It panics when the scheme is registered twice.
func RegisterSite(scheme string, o SiteOpener) {
	sitesMu.Lock()
	defer sitesMu.Unlock()
	if _, dup := sites[scheme]; dup {
		panic("config: site scheme " + scheme + " registered twice")
	}
	sites[scheme] = o
}

// siteSchemes are the schemes of the registered sites, sorted.
func siteSchemes() []string {
	sitesMu.RLock()
	defer sitesMu.RUnlock()
	var out []string
	for s := range sites { // not maps.Keys: its dictionary would keep *Config's methods, see sites
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// OpenSite opens the site of c.Vault, chosen by its scheme.
func OpenSite(ctx context.Context, c *Config) (*Site, error) {
	if c.Vault == "" {
		return nil, errors.New("no vault: pass --vault DIR or s3://bucket/prefix (SHEAF_VAULT)")
	}
	scheme := store.SchemeOf(c.Vault)
	sitesMu.RLock()
	o, ok := sites[scheme]
	sitesMu.RUnlock()
	if !ok {
		return nil, Refuse("--vault", c.Vault, fmt.Sprintf("this program cannot open %s vaults (it can open: %s)", scheme, strings.Join(siteSchemes(), ", ")))
	}
	return o(ctx, c)
}

// ErrNoQdrant is the error of a qdrant:// --vectors in a build without the
// Qdrant client, which small deployments leave out (-tags sheaf_noqdrant).
var ErrNoQdrant = errors.New("this build of sheaf has no Qdrant support: rebuild without -tags sheaf_noqdrant")

// Refuse refuses flag=value for this vault (a flag that means nothing,
// or something else, for its site), saying why and what to do. The error
// is a *core.Error of the stable kind core.KindUnsupported.
func Refuse(flag, value, why string) error {
	return &core.Error{Kind: core.KindUnsupported, Message: fmt.Sprintf("%s %q: %s", flag, value, why)}
}

// asRefusal is the refusal (kind unsupported, naming the schemes this
// program can open) of a URL whose scheme no linked adapter registered,
// or nil for any other error.
func asRefusal(err error) error {
	var ue *schemes.UnknownError
	if !errors.As(err, &ue) {
		return nil
	}
	return Refuse(ue.Flag, ue.Value, ue.Reason())
}

// Opened is a vault built from configuration: the core vault the tools
// and the shell commands use, and the indexer that keeps its derived state.
type Opened struct {
	Vault      *core.Vault
	Indexer    *indexer.Indexer
	Embeddings *indexer.Embeddings // nil without an embeddings provider
	Site       *Site

	text    textindex.Index
	vectors vectors.Index // nil without an embeddings provider
	loaded  chan struct{} // closed once Indexer.Catalog is loaded (see OpenLazily)
	begin   chan struct{} // closed by Begin: the lazy loads may start
	once    sync.Once     // Begin
	gc      func()        // restores the GC target startupGC raised
}

// Loaded returns a channel closed once the catalog is loaded: at once but
// for a vault from OpenLazily. Use the Indexer only after it is closed.
func (o *Opened) Loaded() <-chan struct{} { return o.loaded }

// Begin lets the loads of a vault from OpenLazily start: a server calls it
// once it has answered initialize, so that they do not compete with that
// answer for the CPU. Whatever waits for a load (a tool's call, Close)
// calls it first, so a load is never waited for without being begun.
// Begin is idempotent; an eagerly opened vault has begun already.
func (o *Opened) Begin() {
	o.once.Do(func() {
		if o.gc != nil {
			o.gc() // before any load: vault.Bulk saves what it finds
		}
		close(o.begin)
	})
}

// startupGC raises the garbage collector's target while a server starts,
// unless GOGC is set, and returns what restores it: OpenLazily raises it,
// Begin restores it. Start-up allocates a few MB that live on (the tool
// declarations, SQLite's first connection): at the default target a
// collection ran in the middle of it, and its write barriers slowed the
// declarations (10 ms from main to the initialize answer became 7).
func startupGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(400)
	return sync.OnceFunc(func() { debug.SetGCPercent(old) })
}

// Open opens the site of c.Vault and builds the vault on it (Build).
func Open(ctx context.Context, c *Config, log *slog.Logger) (*Opened, error) {
	return open(ctx, c, log, false)
}

// OpenLazily is Open for a server that answers before it has done any
// work that grows with the vault: a live site's catalog snapshot (about
// 100 ms of CPU per 10k notes) and an embedded vector index (read whole)
// are read in the background. Meanwhile the tools' catalog and the
// reindex of their writes wait for the load (as long as their call's
// context lets them), as do the vector calls, Close, and whoever reads
// Loaded before using the Indexer; the status says "starting".
func OpenLazily(ctx context.Context, c *Config, log *slog.Logger) (*Opened, error) {
	return open(ctx, c, log, true)
}

func open(ctx context.Context, c *Config, log *slog.Logger, lazy bool) (*Opened, error) {
	site, err := OpenSite(ctx, c)
	if err != nil {
		return nil, err
	}
	o, err := build(ctx, c, site, log, lazy)
	if err != nil && site.Close != nil {
		err = errors.Join(err, site.Close())
	}
	return o, err
}

// Build builds the vault c describes on site, for every door: the text
// index (--search: embedded on the site's disk, or any URL a linked
// adapter opens, e.g. Meilisearch), the vectors (--vectors, likewise),
// the catalog, the history, the read audit and the models. It makes no
// network call. On Lambda (AWS_LAMBDA_RUNTIME_API set) the audit is
// flushed by the handler and await_directives is capped at LambdaMaxWait.
func Build(ctx context.Context, c *Config, site *Site, log *slog.Logger) (*Opened, error) {
	return build(ctx, c, site, log, false)
}

func build(ctx context.Context, c *Config, site *Site, log *slog.Logger, lazy bool) (_ *Opened, err error) {
	if log == nil {
		log = slog.Default()
	}
	if c.History != "" && c.History != "on" && c.History != "off" {
		return nil, fmt.Errorf("--history %q: on or off", c.History)
	}
	if !site.Indexes() {
		if err := refuseUnlive(c); err != nil {
			return nil, err
		}
	}
	o := &Opened{Site: site, loaded: make(chan struct{}), begin: make(chan struct{})}
	if !lazy {
		o.Begin()
	} else {
		o.gc = startupGC()
	}
	defer func() {
		if err != nil {
			o.release()
		}
	}()
	id := c.VaultID
	if id == "" {
		id = site.ID
	}
	if o.text, err = openText(ctx, c, site, id, lazy); err != nil {
		return nil, err
	}
	chat, rr, err := c.OpenLLM()
	if err != nil {
		return nil, fmt.Errorf("chat model: %w", err)
	}
	allow, err := core.ParseAllow(c.IngestAllow)
	if err != nil {
		return nil, err
	}
	onLambda := os.Getenv("AWS_LAMBDA_RUNTIME_API") != ""
	ix := &indexer.Indexer{
		Store: site.Store, Catalog: vault.NewCatalog(), Text: o.text, Snapshots: site.Snapshots,
		MaxNoteBytes: c.MaxNoteBytes, Log: log, KeyPath: site.KeyPath, Bucket: site.Bucket,
		TrackChanges: !site.Indexes() && c.EmbedBaseURL != "",
	}
	var reads textindex.Reader = o.text
	if c.Search != "" && c.Search != "embedded" {
		reads = boundedText{Reader: o.text, timeout: SearchTimeout}
	}
	v := &core.Vault{
		ID: id, Root: site.Root, Store: site.Store, Text: reads, State: site.State,
		Ingest: core.IngestConfig{Allow: allow}, Ledger: c.Ledger, CursorKey: c.CursorKey,
		ImmutablePaths: c.ImmutablePaths, MaxNoteBytes: c.MaxNoteBytes, MaxAttachmentBytes: c.MaxAttachmentBytes,
		LLM: chat, Reranker: rr,
	}
	if onLambda {
		v.MaxWait = LambdaMaxWait
	}
	o.Vault, o.Indexer = v, ix
	loadCatalog := func() {}
	if site.Indexes() {
		loadCatalog = o.liveCatalog(ctx, c, log)
	} else {
		o.sharedCatalog(c, onLambda)
	}
	if !c.NoAudit {
		every := time.Duration(0) // the default: every 5 s
		if onLambda {
			every = -1 // the handler flushes before it returns
		}
		if v.Audit, err = audit.New(audit.Options{Store: site.Store, FlushEvery: every}); err != nil {
			return nil, err
		}
	}
	if c.History != "off" && site.History != nil {
		if v.History, err = site.History(); err != nil {
			return nil, err
		}
		if ob, ok := v.History.(history.Observer); ok && site.Indexes() {
			ix.History = ob // the indexer records the changes made outside Sheaf
		}
	}
	if err := o.openEmbeddings(ctx, c, log, lazy); err != nil {
		return nil, err
	}
	if !lazy {
		loadCatalog()
		close(o.loaded)
		return o, nil
	}
	go func() {
		<-o.begin
		loadCatalog()
		close(o.loaded)
		if site.Indexes() {
			// A server restarted over its saved catalog builds the indexes
			// its queries need once the start-up index pass is over (the
			// first search waits for that pass, not for this), rather than
			// in its first question that reads links or names (~100 ms of
			// CPU on 10k notes). A catalog built from nothing has them.
			if pass := o.Indexer.Ready(); pass != nil {
				<-pass
			}
			o.Indexer.Catalog.Warm()
		}
	}()
	return o, nil
}

// refuseUnlive refuses the settings that mean nothing where another
// process indexes the vault: this one follows no folder, runs no index
// pass and prunes no history (the bucket's lifecycle rule does).
func refuseUnlive(c *Config) error {
	scheme := store.SchemeOf(c.Vault)
	if c.NoWatch {
		return Refuse("--no-watch", "true", "this process does not follow an "+scheme+":// vault (its indexer does): drop --no-watch")
	}
	if c.Given("index-wait") {
		return Refuse("--index-wait", c.IndexWait.String(), "this process runs no index pass over an "+scheme+":// vault (its indexer does): drop --index-wait")
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"history-days", c.HistoryDays}, {"history-keep", c.HistoryKeep}} {
		if c.Given(f.name) {
			return Refuse("--"+f.name, strconv.Itoa(f.v), "an "+scheme+":// vault's history is the bucket's object versions, kept by its lifecycle rule: drop --"+f.name)
		}
	}
	return nil
}

// liveCatalog wires the tools to the catalog of the indexer this process
// runs (the site's Live: readiness and status; the load of the saved
// catalog): they read it as it is kept current, and writes are indexed
// before they return. It returns the load, which Build runs before it
// returns (or, for OpenLazily, in the background: until then the tools
// wait and the status says "starting").
func (o *Opened) liveCatalog(ctx context.Context, c *Config, log *slog.Logger) (load func()) {
	v := o.Vault
	load = o.Site.Live(context.WithoutCancel(ctx), o, c, log) // a load is short and bounded; Close waits for it
	v.Catalogs, v.Reindex = loadingCatalog{o}, loadingReindexer{o}
	status := v.Status
	v.Status = func() core.IndexStatus {
		select {
		case <-o.loaded:
			return status()
		default:
			return core.IndexStatus{State: "starting"}
		}
	}
	return load
}

// await begins the loads and waits for the catalog to be loaded, or for
// ctx to end.
func (o *Opened) await(ctx context.Context) error {
	o.Begin()
	select {
	case <-o.loaded:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loadingCatalog is the live catalog of the indexer, once it is loaded.
type loadingCatalog struct{ o *Opened }

// Catalog implements core.Catalogs.
func (l loadingCatalog) Catalog(ctx context.Context) (*vault.Catalog, error) {
	if err := l.o.await(ctx); err != nil {
		return nil, err
	}
	return l.o.Indexer.Catalog, nil
}

// Resident implements core.Resident: the indexer's catalog once loaded.
func (l loadingCatalog) Resident() *vault.Catalog {
	select {
	case <-l.o.loaded:
		return l.o.Indexer.Catalog
	default:
		return nil
	}
}

// loadingReindexer is the indexer's Reindex, once the catalog is loaded.
type loadingReindexer struct{ o *Opened }

// Reindex implements core.Reindexer.
func (r loadingReindexer) Reindex(ctx context.Context, paths ...string) error {
	if err := r.o.await(ctx); err != nil {
		return err
	}
	return r.o.Indexer.Reindex(ctx, paths...)
}

// sharedCatalog reads the catalog snapshot another process saves. A
// long-lived server loads it in the background after a first answer from
// its summary; a Lambda instance, frozen between invocations, would only
// slow that answer (see catalogstore.Catalogs). The handler's own writes
// are laid over the snapshot (and written to the text index) until the
// indexer has caught up with them.
func (o *Opened) sharedCatalog(c *Config, onLambda bool) {
	v := o.Vault
	catalogs := &catalogstore.Catalogs{Store: v.Store, Preload: !onLambda}
	overlay := &indexer.Overlay{Base: catalogs, Store: v.Store, Text: o.text, MaxNoteBytes: c.MaxNoteBytes}
	v.Catalogs, v.Reindex = overlay, overlay
	v.Lagging = func() []core.Lag {
		var out []core.Lag
		for _, l := range overlay.Lagging() {
			out = append(out, core.Lag{Path: l.Path, Since: l.Since})
		}
		return out
	}
	// No snapshot yet means no indexer has run: every answer says so
	// instead of describing an empty vault.
	v.Status = func() core.IndexStatus {
		if catalogs.Missing() {
			return core.IndexStatus{State: "starting"}
		}
		return core.IndexStatus{State: "ready"}
	}
}

// openText opens the text index --search names: "embedded" (or "") is
// the SQLite index on the site's disk, anything else a URL. Lazily, the
// embedded one is opened in the background (lazyText; see Opened.Opening).
func openText(ctx context.Context, c *Config, site *Site, id string, lazy bool) (textindex.Index, error) {
	u := c.Search
	if u == "" || u == "embedded" {
		if site.Disk == "" {
			return nil, Refuse("--search", "embedded", "this vault has no lasting disk for the embedded index: pass a Meilisearch URL, --search http(s)://host:7700 (SHEAF_SEARCH)")
		}
		u = "embedded:" + filepath.ToSlash(filepath.Join(site.Disk, "index.db"))
	}
	open := func() (textindex.Index, error) {
		ix, err := textindex.Open(ctx, u, textindex.Defaults{Name: "sheaf-" + id, APIKey: c.SearchKey})
		if r := asRefusal(err); r != nil {
			return nil, r
		}
		if err != nil {
			return nil, fmt.Errorf("opening the text index: %w", err)
		}
		return ix, nil
	}
	if !lazy || !strings.HasPrefix(u, "embedded:") {
		return open()
	}
	now := make(chan struct{})
	close(now)
	return lazyText{openInBackground(now, func() {}, open)}, nil
}

// Opening waits for what OpenLazily opens in the background before a
// server's first answer (the embedded text index) and returns the error
// that kept it from opening, as Open would have: a server that cannot
// search its vault refuses to start rather than fail every search.
func (o *Opened) Opening(ctx context.Context) error {
	if l, ok := o.text.(lazyText); ok {
		_, err := l.index(ctx)
		return err
	}
	return nil
}

// warnGluedPrefixes warns about an embedding prefix that does not end in
// whitespace: models' prefixes do ("search_query: "), and a shell or a
// YAML file easily drops the space, gluing the prefix to every text.
func warnGluedPrefixes(c *Config, log *slog.Logger) {
	for _, p := range [][2]string{{"--embed-query-prefix", c.EmbedQueryPrefix}, {"--embed-document-prefix", c.EmbedDocumentPrefix}} {
		if p[1] != "" && strings.TrimRightFunc(p[1], unicode.IsSpace) == p[1] {
			log.Warn("embedding prefix does not end in a space: it is sent glued to the text (quote it to keep a trailing space)", "flag", p[0], "prefix", p[1])
		}
	}
}

// openEmbeddings wires the embeddings provider and the vector index
// --vectors names when c.EmbedBaseURL is set: "embedded" is the index on
// the site's disk, anything else a URL (a Qdrant collection, "sheaf-<vault
// id>" unless the URL names one).
func (o *Opened) openEmbeddings(ctx context.Context, c *Config, log *slog.Logger, lazy bool) error {
	if c.EmbedBaseURL == "" {
		return nil
	}
	u := c.Vectors
	if u == "" || u == "embedded" {
		if o.Site.Disk == "" {
			return Refuse("--vectors", "embedded", "this vault has no lasting disk for the embedded vector index: pass --vectors qdrant://host:6334 (SHEAF_VECTORS)")
		}
		u = "embedded:" + filepath.ToSlash(filepath.Join(o.Site.Disk, "vectors.bin"))
	}
	emb, err := embed.New(embed.Config{BaseURL: c.EmbedBaseURL, Model: c.EmbedModel, APIKey: c.EmbedKey, Dimensions: c.EmbedDimensions,
		QueryPrefix: c.EmbedQueryPrefix, DocumentPrefix: c.EmbedDocumentPrefix})
	if err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	warnGluedPrefixes(c, log)
	open := func() (vectors.Index, error) {
		vec, err := vectors.Open(ctx, u, vectors.Defaults{Name: "sheaf-" + o.Vault.ID, APIKey: c.VectorsKey})
		if r := asRefusal(err); r != nil {
			return nil, r
		}
		if err != nil {
			return nil, err
		}
		if l, ok := vec.(interface{ LoadError() error }); ok && l.LoadError() != nil {
			log.Warn("vector index unreadable; re-embedding", "err", l.LoadError())
		}
		return vec, nil
	}
	var vec vectors.Index
	if lazy && strings.HasPrefix(u, "embedded:") {
		// The embedded index reads its whole file: in the background.
		vec = openVectorsLazily(o.begin, o.Begin, func() (vectors.Index, error) {
			vec, err := open()
			if err != nil {
				log.Error("opening the vector index; semantic calls will fail", "err", err)
			}
			return vec, err
		})
	} else if vec, err = open(); err != nil {
		return err
	}
	o.vectors = vec
	o.Embeddings = &indexer.Embeddings{Store: o.Vault.Store, Embedder: emb, Vectors: vec, MaxNoteBytes: c.MaxNoteBytes, Log: log}
	o.Vault.Embedder, o.Vault.Vectors, o.Vault.Embeddings = emb, vec, o.Embeddings
	return nil
}

// Close flushes the read audit, saves the catalog of a live site (so that
// the next start resumes where this one stopped) and closes the indexes,
// the history and the site. Stop what runs over the vault first.
func (o *Opened) Close() error {
	var errs []error
	o.Begin()
	<-o.loaded // Save reads the catalog
	if o.Site.Indexes() {
		errs = append(errs, o.Indexer.Save(context.Background()))
	}
	errs = append(errs, o.release())
	if o.Site.Close != nil {
		errs = append(errs, o.Site.Close())
	}
	return errors.Join(errs...)
}

// release flushes the read audit (what the last seconds recorded) and
// closes the history and the indexes (the embedded vector index flushes on
// Close): what Build opened on the site.
func (o *Opened) release() error {
	if o.gc != nil {
		o.gc()
	}
	var errs []error
	if o.Vault != nil {
		errs = append(errs, o.Vault.Audit.Close(context.Background()))
		if h, ok := o.Vault.History.(io.Closer); ok {
			errs = append(errs, h.Close())
		}
	}
	if o.text != nil {
		errs = append(errs, o.text.Close())
	}
	if o.vectors != nil {
		errs = append(errs, o.vectors.Close())
	}
	return errors.Join(errs...)
}
