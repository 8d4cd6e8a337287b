package core

// A caller limited to some folders (auth.Identity.Folders) works in a view
// of the vault: the same Vault with every port wrapped so that the notes
// outside its folders do not exist. The catalog is filtered (lists, links,
// tags and their counts, backlinks, lint, directives), the store answers
// "not found" for hidden files and leaves them out of listings, and the
// text and vector indexes get a mandatory path filter, applied before
// ranking, so totals and scores are computed over visible notes only.
// Handlers receive the view from s.vault and s.open and cannot reach
// around it; the guard (access.go) still checks path arguments first, so
// that a hidden path is folder-not-allowed rather than "not found".

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/ingest"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// vaultState is what a vault keeps between calls, shared by the vault and
// every caller's view of it.
type vaultState struct {
	cursors atomic.Pointer[auth.Cursors] // the cursor signer, loaded on first use

	// writes is held shared by every write tool and exclusively by a
	// move (movelock.go).
	writes sync.RWMutex

	mu     sync.Mutex
	scopes map[string]*scope // by allowlist rules
	caches map[any]any       // what the tool families keep (see cached)

	locks          history.PathLocks // the writes' path locks (history.go)
	historyOff     atomic.Bool       // the history said it keeps no versions (logged once)
	historyChecked atomic.Bool       // the history said it keeps versions (versions.go)
	fetchState                       // ingest_url's Fetcher
}

// cached returns what v and every caller's view of it keep under key
// between calls (find_references' folded texts, the scans of notes read by
// pages), made by mk on first use.
func cached[T any](v *Vault, key any, mk func() *T) *T {
	st := v.state()
	st.mu.Lock()
	defer st.mu.Unlock()
	c, ok := st.caches[key].(*T)
	if !ok {
		if st.caches == nil {
			st.caches = map[any]any{}
		}
		c = mk()
		st.caches[key] = c
	}
	return c
}

// maxScopes bounds the allowlists whose filtered catalogs a vault keeps.
const maxScopes = 64

var stateMu sync.Mutex // guards the lazy creation of Vault.own

// state returns the vault's shared state, creating it on first use.
func (v *Vault) state() *vaultState {
	stateMu.Lock()
	defer stateMu.Unlock()
	if v.own == nil {
		v.own = &vaultState{}
	}
	return v.own
}

// viewFor returns v as a caller limited to f sees it.
func (v *Vault) viewFor(f *auth.Folders) *Vault {
	st := v.state()
	key := strings.Join(f.Rules(), "\x00")
	st.mu.Lock()
	sc := st.scopes[key]
	if sc == nil {
		if len(st.scopes) >= maxScopes {
			clear(st.scopes)
		}
		if st.scopes == nil {
			st.scopes = map[string]*scope{}
		}
		sc = &scope{folders: f}
		st.scopes[key] = sc
	}
	st.mu.Unlock()

	vw := *v // shares own: caches, cursor key
	vw.Catalogs = scopedCatalogs{inner: v.Catalogs, sc: sc}
	vw.Store = scopedStore{inner: v.Store, f: f, state: scopedStatePath(key)}
	if v.Text != nil {
		vw.Text = scopedText{inner: v.Text, vw: &vw}
	}
	if v.Vectors != nil {
		vw.Vectors = scopedVectors{inner: v.Vectors, vw: &vw}
	}
	if v.Embeddings != nil {
		vw.Embeddings = scopedEmbeddings{inner: v.Embeddings}
	}
	if status := v.Status; status != nil {
		vw.Status = func() IndexStatus { return scopeStatus(status(), f) }
	}
	vw.scope = sc
	return &vw
}

// scope is one allowlist's filtered catalog, rebuilt when the catalog
// changes.
type scope struct {
	folders *auth.Folders

	mu    sync.Mutex
	base  *vault.Catalog
	gen   uint64
	cat   *vault.Catalog
	paths []string // the visible notes' paths, sorted
}

// filter returns base as the scope sees it: built once, then brought up
// to date with each change of the catalog (or reload of its snapshot) at
// the cost of the notes that changed.
func (sc *scope) filter(base *vault.Catalog) (*vault.Catalog, []string) {
	gen := base.Generation()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	switch {
	case sc.cat == nil:
		sc.cat = base.Filter(sc.folders.Allows)
	case sc.base != base || sc.gen != gen:
		sc.cat.Resync(base, sc.folders.Allows)
	default:
		return sc.cat, sc.paths
	}
	sc.base, sc.gen = base, gen
	sc.paths = sc.cat.Paths()
	return sc.cat, sc.paths
}

// visiblePaths returns the notes the view may see in the current catalog.
func (v *Vault) visiblePaths(ctx context.Context) ([]string, error) {
	cat, err := v.Catalogs.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	_, paths := v.scope.filter(baseOf(cat))
	return paths, nil
}

func baseOf(c *vault.Catalog) *vault.Catalog {
	if b := c.Base(); b != nil {
		return b
	}
	return c
}

type scopedCatalogs struct {
	inner Catalogs
	sc    *scope
}

// Catalog implements Catalogs.
func (s scopedCatalogs) Catalog(ctx context.Context) (*vault.Catalog, error) {
	c, err := s.inner.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	cat, _ := s.sc.filter(c)
	return cat, nil
}

// sheafOwn reports whether p is one of Sheaf's own objects (cursor key,
// leases, proposals, feedback), which the tools handle for every caller and
// never show; tool arguments cannot name them (auth.Denied).
func sheafOwn(p string) bool { return strings.HasPrefix(p, ".sheaf/") }

// scopedStore hides the files outside the folders, and Sheaf's own
// objects about them (leases, proposals). The directive revision is kept
// per allowlist (state), so that a scoped caller's await_directives cursor
// moves with its own notes only and does not fight the whole vault's.
type scopedStore struct {
	inner store.Store
	f     *auth.Folders
	state string // where this scope's directive revision lives
}

// scopedStatePath is the directive revision object of an allowlist.
func scopedStatePath(rules string) string {
	sum := sha256.Sum256([]byte(rules))
	return ".sheaf/directives/state-" + hex.EncodeToString(sum[:8]) + ".json"
}

// at maps a path to the object it stands for in this view.
func (s scopedStore) at(p string) string {
	if p == directiveStatePath {
		return s.state
	}
	return p
}

// maxOwnObject bounds the read of one of Sheaf's own objects to check whom
// it is about.
const maxOwnObject = maxProposalBytes

// about returns the notes one of Sheaf's own objects names, and whether it
// is such an object.
func about(p string, data []byte) ([]string, bool) {
	switch {
	case strings.HasPrefix(p, leaseDir+"/"):
		var l struct{ Path string }
		if json.Unmarshal(data, &l) != nil {
			return nil, true // damaged: about nobody we can tell
		}
		return []string{l.Path}, true
	case strings.HasPrefix(p, ProposalDir):
		var pr struct{ Targets []struct{ Path string } }
		if json.Unmarshal(data, &pr) != nil {
			return nil, true
		}
		out := make([]string, len(pr.Targets))
		for i, t := range pr.Targets {
			out[i] = t.Path
		}
		return out, true
	}
	return nil, false
}

// ownVisible reports whether the own object p with content data is about
// visible notes only (a damaged one about nobody known is hidden).
func (s scopedStore) ownVisible(p string, data []byte) bool {
	paths, own := about(p, data)
	if !own {
		return true
	}
	if len(paths) == 0 {
		return false
	}
	for _, q := range paths {
		if !s.f.Allows(q) {
			return false
		}
	}
	return true
}

// aboutOwn reports whether p may be one of the objects about names.
func aboutOwn(p string) bool {
	return strings.HasPrefix(p, leaseDir+"/") || strings.HasPrefix(p, ProposalDir)
}

var (
	_ store.Store       = scopedStore{}
	_ store.RangeReader = scopedStore{}
)

func (s scopedStore) visible(p string) bool { return sheafOwn(p) || s.f.Allows(p) }

func hiddenErr(p string) error { return fmt.Errorf("%s: %w", p, store.ErrNotFound) }

// List implements store.Store.
func (s scopedStore) List(ctx context.Context, prefix string, fn func(store.Object) error) error {
	return s.inner.List(ctx, prefix, func(o store.Object) error {
		if !s.visible(o.Path) {
			return nil
		}
		return fn(o)
	})
}

// Stat implements store.Store.
func (s scopedStore) Stat(ctx context.Context, p string) (store.Object, error) {
	p = s.at(p)
	if !s.visible(p) {
		return store.Object{}, hiddenErr(p)
	}
	if aboutOwn(p) {
		_, obj, err := s.Get(ctx, p, maxOwnObject)
		return obj, err
	}
	return s.inner.Stat(ctx, p)
}

// Get implements store.Store.
func (s scopedStore) Get(ctx context.Context, p string, max int64) ([]byte, store.Object, error) {
	p = s.at(p)
	if !s.visible(p) {
		return nil, store.Object{}, hiddenErr(p)
	}
	data, obj, err := s.inner.Get(ctx, p, max)
	if err == nil && !s.ownVisible(p, data) {
		return nil, store.Object{}, hiddenErr(p)
	}
	return data, obj, err
}

// GetRange implements store.RangeReader.
func (s scopedStore) GetRange(ctx context.Context, p string, off, n int64) ([]byte, store.Object, error) {
	p = s.at(p)
	if !s.visible(p) || aboutOwn(p) {
		return nil, store.Object{}, hiddenErr(p)
	}
	return store.GetRange(ctx, s.inner, p, off, n)
}

// Put implements store.Store. A scoped caller may create or replace its
// own objects only about visible notes.
func (s scopedStore) Put(ctx context.Context, p string, data []byte, opts store.PutOptions) (store.Object, error) {
	p = s.at(p)
	if !s.visible(p) || !s.ownVisible(p, data) {
		return store.Object{}, folderNotAllowed(p)
	}
	return s.inner.Put(ctx, p, data, opts)
}

// Delete implements store.Store.
func (s scopedStore) Delete(ctx context.Context, p string, ifMatch string) error {
	p = s.at(p)
	if !s.visible(p) {
		return folderNotAllowed(p)
	}
	if aboutOwn(p) {
		if _, _, err := s.Get(ctx, p, maxOwnObject); errors.Is(err, store.ErrNotFound) {
			return nil // hidden or gone: nothing this caller may delete
		}
	}
	return s.inner.Delete(ctx, p, ifMatch)
}

// Folders implements store.Store.
func (s scopedStore) Folders(ctx context.Context, prefix string) ([]string, error) {
	all, err := s.inner.Folders(ctx, prefix)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(d string) bool { return !s.f.ShowsFolder(d) }), nil
}

// scopedText ranks visible notes only: the filter is part of the query, so
// the index scores and counts nothing else.
type scopedText struct {
	inner textindex.Reader
	vw    *Vault
}

// Search implements textindex.Reader.
func (t scopedText) Search(ctx context.Context, q textindex.Query, opts textindex.Options) (textindex.Result, error) {
	visible, err := t.vw.visiblePaths(ctx)
	if err != nil {
		return textindex.Result{}, err
	}
	opts.Filter.Paths = intersect(opts.Filter.Paths, visible)
	return t.inner.Search(ctx, q, opts)
}

// Ask implements textindex.Reader, with the same mandatory filter.
func (t scopedText) Ask(ctx context.Context, q textindex.Question, opts textindex.Options) (textindex.Result, error) {
	visible, err := t.vw.visiblePaths(ctx)
	if err != nil {
		return textindex.Result{}, err
	}
	opts.Filter.Paths = intersect(opts.Filter.Paths, visible)
	return t.inner.Ask(ctx, q, opts)
}

// Paths implements textindex.Reader.
func (t scopedText) Paths(ctx context.Context) (map[string]time.Time, error) {
	all, err := t.inner.Paths(ctx)
	if err != nil {
		return nil, err
	}
	maps.DeleteFunc(all, func(p string, _ time.Time) bool { return !t.vw.scope.folders.Allows(p) })
	return all, nil
}

// scopedVectors searches visible notes' passages only.
type scopedVectors struct {
	inner vectors.Reader
	vw    *Vault
}

func (x scopedVectors) narrow(ctx context.Context, f vectors.Filter) (vectors.Filter, error) {
	visible, err := x.vw.visiblePaths(ctx)
	if err != nil {
		return f, err
	}
	f.Paths = intersect(f.Paths, visible)
	return f, nil
}

// Search implements vectors.Reader.
func (x scopedVectors) Search(ctx context.Context, q []float32, k int, f vectors.Filter) ([]vectors.Hit, error) {
	f, err := x.narrow(ctx, f)
	if err != nil {
		return nil, err
	}
	return x.inner.Search(ctx, q, k, f)
}

// SearchNotes implements vectors.Reader.
func (x scopedVectors) SearchNotes(ctx context.Context, q []float32, k int, f vectors.Filter) ([]vectors.Hit, error) {
	f, err := x.narrow(ctx, f)
	if err != nil {
		return nil, err
	}
	return x.inner.SearchNotes(ctx, q, k, f)
}

// Hashes implements vectors.Reader: a hidden note has no vectors.
func (x scopedVectors) Hashes(ctx context.Context, p string) (map[string][]float32, error) {
	if !x.vw.scope.folders.Allows(p) {
		return map[string][]float32{}, nil
	}
	return x.inner.Hashes(ctx, p)
}

// Notes implements vectors.Reader.
func (x scopedVectors) Notes(ctx context.Context) (map[string]string, error) {
	all, err := x.inner.Notes(ctx)
	if err != nil {
		return nil, err
	}
	maps.DeleteFunc(all, func(p, _ string) bool { return !x.vw.scope.folders.Allows(p) })
	return all, nil
}

// Space implements vectors.Reader.
func (x scopedVectors) Space(ctx context.Context) (vectors.Space, error) { return x.inner.Space(ctx) }

// scopedEmbeddings refreshes the whole vault's vectors (they serve every
// caller, and a refresh given a filtered catalog would prune the hidden
// notes' vectors), and reports staleness of visible notes only. The counts
// of a refresh are withheld: they would count hidden notes.
type scopedEmbeddings struct{ inner Embeddings }

// Refresh implements Embeddings.
func (e scopedEmbeddings) Refresh(ctx context.Context, cat *vault.Catalog) (int, int, error) {
	_, _, err := e.inner.Refresh(ctx, baseOf(cat))
	return 0, 0, err
}

// Stale implements Embeddings.
func (e scopedEmbeddings) Stale(ctx context.Context, cat *vault.Catalog) (int, error) {
	return e.inner.Stale(ctx, cat)
}

// scopeStatus is the index status a scoped caller may see: the state and
// the problems of visible files, not the counts, which count the whole
// vault. Pending changes, which may be anywhere, show as one: the caller's
// answers are partial meanwhile without learning how much changed elsewhere.
func scopeStatus(st IndexStatus, f *auth.Folders) IndexStatus {
	out := IndexStatus{State: st.State, Pending: min(st.Pending, 1)}
	for p, why := range st.Problems {
		if f.Allows(p) {
			if out.Problems == nil {
				out.Problems = map[string]string{}
			}
			out.Problems[p] = why
		}
	}
	return out
}

// intersect narrows a Paths filter (nil: no restriction) to visible
// (sorted). The result is never nil: an empty one admits nothing.
func intersect(asked, visible []string) []string {
	if asked == nil {
		return slices.Clone(visible)
	}
	out := []string{}
	for _, p := range asked {
		if _, ok := slices.BinarySearch(visible, p); ok {
			out = append(out, p)
		}
	}
	return out
}

// fetchState is the Fetcher a vault's state keeps.
type fetchState struct {
	fetchOnce sync.Once
	fetch     *ingest.Fetcher
}

// Resident is implemented by Catalogs that may hold the whole vault's
// catalog in memory: Resident returns it without waiting, or nil.
type Resident interface {
	Resident() *vault.Catalog
}

// Resident implements Resident.
func (l LiveCatalog) Resident() *vault.Catalog { return l.C }

// residentCatalog is the whole vault's catalog when it is held in memory,
// nil otherwise.
func residentCatalog(c Catalogs) *vault.Catalog {
	switch c := c.(type) {
	case scopedCatalogs:
		return residentCatalog(c.inner)
	case Resident:
		return c.Resident()
	}
	return nil
}
