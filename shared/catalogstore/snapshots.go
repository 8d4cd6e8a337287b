package catalogstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// DefaultSnapshotKey is where Sheaf before catalog format 3 kept the whole
// snapshot in one object. It is read when no manifest exists (then the
// first save writes the segmented layout) and never written.
const DefaultSnapshotKey = ".sheaf/catalog.json.gz"

// DefaultCatalogDir is where the segmented catalog lives in a store.
const DefaultCatalogDir = ".sheaf/catalog/"

// ManifestName is the manifest's name inside the catalog folder.
const ManifestName = "manifest.json"

const (
	manifestFormat = "sheaf-catalog-manifest"
	// manifestVersion is the version written: 4 lists segments of the
	// binary format (and a summary). Version 3, whose segments are JSON
	// lines, is still read; a save rewrites it as 4.
	manifestVersion    = 4
	minManifestVersion = 3
	// partPaths is how many paths one segment object holds at most: bigger
	// segments are split by path hash, so readers fetch and decode them on
	// all cores.
	partPaths = 4096
	// mergeFanout is how many segments of one size class are merged into
	// one (see Snapshots).
	mergeFanout = 8
	// levelBase is the size of the smallest size class, in paths.
	levelBase = 256
	// fetchers is how many segment objects are read at once.
	fetchers = 16
)

// manifest lists the segments that make up the catalog, oldest first. It
// is the one object written conditionally: a segment is visible once the
// manifest names it.
type manifest struct {
	Format    string       `json:"format"`
	Version   int          `json:"version"`
	Seq       uint64       `json:"seq"` // Last of the newest segment
	IndexedAt time.Time    `json:"indexed_at"`
	Segments  []segmentRef `json:"segments"`
	// Summary is the catalog's, as of Seq (version 4 on; nil before):
	// what a cold handler answers get_vault_info from.
	Summary *vault.Summary `json:"summary,omitempty"`
	// Turn, when set and not expired, is the one writer that may save
	// next (see Snapshots.TakeTurn).
	Turn *turn `json:"turn,omitempty"`
}

// turn is a writer's claim on the next save.
type turn struct {
	Writer string    `json:"writer"`
	Until  time.Time `json:"until"`
}

// turnLength bounds how long a turn holds the other writers back: long
// enough for a catch-up and a save, short enough that a writer that died
// holding it delays the others only briefly.
const turnLength = 10 * time.Second

// held reports whether the turn, when set, belongs to a writer other than
// me and has not expired.
func (t *turn) held(me string) bool {
	return t != nil && t.Writer != me && time.Now().Before(t.Until)
}

// segmentRef is one segment: the saves First..Last merged, stored as one
// or more parts (disjoint by path hash).
type segmentRef struct {
	First uint64   `json:"first"`
	Last  uint64   `json:"last"`
	Paths int      `json:"paths"`
	Bytes int64    `json:"bytes"`
	Parts []string `json:"parts"` // object names inside the catalog folder
}

// level is the size class of a segment: 0 below levelBase*mergeFanout
// paths, one more for each further factor of mergeFanout.
func (r segmentRef) level() int {
	l := 0
	for n := r.Paths / levelBase; n >= mergeFanout; n /= mergeFanout {
		l++
	}
	return l
}

// catalogFiles reads and writes the segmented layout of one store.
type catalogFiles struct {
	store  store.Store
	dir    string // with a trailing slash
	legacy string
}

func (f catalogFiles) manifestKey() string { return f.dir + ManifestName }

// readManifest returns the manifest and its ETag; found is false when there
// is none.
func (f catalogFiles) readManifest(ctx context.Context) (m manifest, etag string, found bool, err error) {
	data, obj, err := f.store.Get(ctx, f.manifestKey(), 1<<26)
	if errors.Is(err, store.ErrNotFound) {
		return manifest{}, "", false, nil
	}
	if err != nil {
		return manifest{}, "", false, err
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Format != manifestFormat {
		return manifest{}, "", false, fmt.Errorf("%s is not a catalog manifest", f.manifestKey())
	}
	if m.Version < minManifestVersion || m.Version > manifestVersion { // the ETag lets a save replace it
		return manifest{}, obj.ETag, false, fmt.Errorf("%w: manifest %s has version %d, want %d to %d", vault.ErrSnapshotVersion, f.manifestKey(), m.Version, minManifestVersion, manifestVersion)
	}
	return m, obj.ETag, true, nil
}

// readSegments fetches and decodes every part of refs, several at once,
// and returns them in order (parts of one segment are disjoint, so their
// order does not matter). A part deleted meanwhile (merged by another
// writer) gives store.ErrNotFound: read the manifest again.
func (f catalogFiles) readSegments(ctx context.Context, refs []segmentRef) ([]*vault.Segment, error) {
	var keys []string
	for _, r := range refs {
		keys = append(keys, r.Parts...)
	}
	out := make([]*vault.Segment, len(keys))
	errs := make([]error, len(keys))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(fetchers, len(keys)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(keys); i = int(next.Add(1) - 1) {
				data, _, err := f.store.Get(ctx, f.dir+keys[i], 0)
				if err == nil {
					out[i], err = vault.ReadSegment(bytes.NewReader(data))
				}
				if err != nil {
					errs[i] = fmt.Errorf("catalog segment %s: %w", keys[i], err)
				}
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// writeSegment stores seg as the saves first..last, split into parts of at
// most partPaths paths, each under a new name.
func (f catalogFiles) writeSegment(ctx context.Context, seg *vault.Segment, first, last uint64) (segmentRef, error) {
	ref := segmentRef{First: first, Last: last, Paths: seg.Len()}
	parts := seg.Split((seg.Len() + partPaths - 1) / partPaths)
	id := randomID()
	names := make([]string, len(parts))
	sizes := make([]int64, len(parts))
	errs := make([]error, len(parts))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(fetchers, len(parts)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(parts); i = int(next.Add(1) - 1) {
				var buf bytes.Buffer
				if errs[i] = parts[i].Write(&buf); errs[i] != nil {
					continue
				}
				names[i] = fmt.Sprintf("seg-%016x-%016x-%s-%d.bin.zst", last, first, id, i)
				sizes[i] = int64(buf.Len())
				_, errs[i] = f.store.Put(ctx, f.dir+names[i], buf.Bytes(), store.PutOptions{IfNoneMatch: true})
			}
		})
	}
	wg.Wait()
	ref.Parts = names
	for _, s := range sizes {
		ref.Bytes += s
	}
	if err := errors.Join(errs...); err != nil {
		f.remove(context.WithoutCancel(ctx), ref)
		return segmentRef{}, fmt.Errorf("writing a catalog segment: %w", err)
	}
	return ref, nil
}

// remove deletes the parts of refs, best effort: a part left behind is
// only garbage, which Sweep collects.
func (f catalogFiles) remove(ctx context.Context, refs ...segmentRef) {
	for _, r := range refs {
		for _, p := range r.Parts {
			if p != "" {
				_ = f.store.Delete(ctx, f.dir+p, "")
			}
		}
	}
}

// discard deletes the parts of ref after its manifest write failed with
// err, but only when err says the manifest was not written (a lost
// condition). Any other error (a timeout, a reset connection) may hide a
// write the store did make: the manifest may now name ref, so its parts
// stay; Sweep deletes them later if no manifest names them.
func (f catalogFiles) discard(ctx context.Context, err error, ref segmentRef) {
	if errors.Is(err, store.ErrConflict) {
		f.remove(context.WithoutCancel(ctx), ref)
	}
}

// writeManifest writes m if the manifest's ETag is still etag ("": if
// there is none); store.ErrConflict otherwise.
func (f catalogFiles) writeManifest(ctx context.Context, m manifest, etag string) (string, error) {
	m.Format, m.Version = manifestFormat, manifestVersion
	data, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	obj, err := f.store.Put(ctx, f.manifestKey(), data, store.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
	if err != nil {
		return "", err
	}
	return obj.ETag, nil
}

// readLegacy reads a whole snapshot of format 1 to 3 at the legacy key:
// nil when there is none or it is of another version.
func (f catalogFiles) readLegacy(ctx context.Context) (*vault.Catalog, error) {
	if f.legacy == "" {
		return nil, nil
	}
	data, _, err := f.store.Get(ctx, f.legacy, 0)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := vault.ReadSnapshot(bytes.NewReader(data))
	if errors.Is(err, vault.ErrSnapshotVersion) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the catalog snapshot %s: %w", f.legacy, err)
	}
	return c, nil
}

// view is the manifest a reader or writer last saw.
type view struct {
	man   manifest
	etag  string // "": no manifest existed
	found bool
}

// load reads the whole catalog: the manifest's segments, or the legacy
// snapshot when there is no manifest (nil when there is neither). A segment
// merged away between reading the manifest and reading it is retried.
func (f catalogFiles) load(ctx context.Context) (*vault.Catalog, view, error) {
	for attempt := 1; ; attempt++ {
		m, etag, found, err := f.readManifest(ctx)
		if err != nil {
			return nil, view{etag: etag}, err
		}
		if !found {
			c, err := f.readLegacy(ctx)
			return c, view{}, err
		}
		var segs []*vault.Segment
		var c *vault.Catalog
		vault.Bulk(func() {
			if segs, err = f.readSegments(ctx, m.Segments); err == nil {
				c = vault.CatalogOf(segs...)
			}
		})
		if errors.Is(err, store.ErrNotFound) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, view{}, err
		}
		if c.IndexedAt().IsZero() || m.IndexedAt.After(c.IndexedAt()) {
			c.SetIndexedAt(m.IndexedAt)
		}
		return c, view{man: m, etag: etag, found: true}, nil
	}
}

// update brings a reader at v up to the manifest now stored. It returns
// the segments to apply in order, or a whole catalog when applying is not
// enough (the manifest was replaced, or its base merged in saves the
// reader has not seen, dropping their removals); neither when nothing
// changed.
func (f catalogFiles) update(ctx context.Context, v view) (view, []*vault.Segment, *vault.Catalog, error) {
	for attempt := 1; ; attempt++ {
		m, etag, found, err := f.readManifest(ctx)
		switch {
		case err != nil:
			return view{etag: etag}, nil, nil, err
		case !found && !v.found:
			return v, nil, nil, nil
		case found && etag == v.etag:
			return v, nil, nil, nil
		}
		nv := view{man: m, etag: etag, found: found}
		if !found || m.Seq < v.man.Seq || !v.found {
			c, lv, err := f.load(ctx)
			if err == nil && c == nil {
				c = vault.NewCatalog()
			}
			return lv, nil, c, err
		}
		var todo []segmentRef
		for i, r := range m.Segments {
			if r.Last <= v.man.Seq {
				continue
			}
			if i == 0 && r.First <= v.man.Seq { // a new base over saves seen and unseen
				c, lv, err := f.load(ctx)
				if err == nil && c == nil {
					c = vault.NewCatalog()
				}
				return lv, nil, c, err
			}
			todo = append(todo, r)
		}
		segs, err := f.readSegments(ctx, todo)
		if errors.Is(err, store.ErrNotFound) && attempt < 3 {
			continue
		}
		if err != nil {
			return v, nil, nil, err
		}
		return nv, segs, nil, nil
	}
}

// Snapshots keeps the catalog in the vault's store as segments listed
// by a manifest (the cloud layout, under ".sheaf/catalog/"; the local one,
// in the state folder, see local.FileSnapshots). It is an
// indexer.ChangeSaver:
//
//   - Each save writes one new segment holding only the changed paths
//     (new names, never overwritten), then the manifest, conditionally on
//     the ETag last seen (If-None-Match when there was none), so two
//     writers never silently overwrite each other: the loser gets
//     store.ErrConflict, catches up on the winner's segments and retries.
//   - After a save, when the newest mergeFanout segments are of one size
//     class, they are merged into one (a path hash splits big segments into
//     parts of partPaths), and the merged-away objects deleted: each path
//     is rewritten about once per size class, so the bytes written per
//     note stay about constant, and a reader fetches a few dozen objects
//     at most, whatever the vault's size.
//   - With no manifest, the legacy whole snapshot at Key is loaded and the
//     first save writes the whole catalog as the first segment.
type Snapshots struct {
	Store store.Store
	Key   string // the legacy whole snapshot; default DefaultSnapshotKey
	Dir   string // default DefaultCatalogDir

	mu      sync.Mutex
	view    view   // the manifest last loaded, saved or caught up
	applied uint64 // the saves reflected in the caller's catalog
	spare   *spare // a segment written by a save that lost the race
	writer  string // this writer's id in turns
	stats   SaveStats
}

// spare is a segment written by a save whose manifest write lost the race
// (the condition failed: no manifest names it). The next save reuses it
// when it holds exactly what that save would write, the usual case when
// racing indexers changed different notes: a retry after a conflict then
// costs a manifest write, not a segment's, which keeps the window in which
// another writer can win again short.
type spare struct {
	ref segmentRef
	seg *vault.Segment
}

// SaveStats counts what a Snapshots wrote.
type SaveStats struct {
	Saves         int   // segments saved (one per successful SaveChanges with changes)
	Conflicts     int   // saves refused because another writer saved first
	SegmentBytes  int64 // compressed bytes of the segments saved
	LastSaveBytes int64 // of the last one
	MaxSaveBytes  int64 // of the biggest one
	Merges        int   // merges of segments
	MergeBytes    int64 // compressed bytes the merges wrote
	Segments      int   // segments in the manifest now
	Reused        int   // saves after a conflict that reused the segment the lost save wrote
	Turns         int   // turns taken (see TakeTurn)
}

// Stats returns the counts so far.
func (s *Snapshots) Stats() SaveStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Segments = len(s.view.man.Segments)
	return st
}

func (s *Snapshots) files() catalogFiles {
	dir := s.Dir
	if dir == "" {
		dir = DefaultCatalogDir
	}
	if dir[len(dir)-1] != '/' {
		dir += "/"
	}
	legacy := s.Key
	if legacy == "" {
		legacy = DefaultSnapshotKey
	}
	return catalogFiles{store: s.Store, dir: dir, legacy: legacy}
}

// Load implements indexer.SnapshotStore. A snapshot of another format version gives
// (nil, nil); the next save replaces it.
func (s *Snapshots) Load(ctx context.Context) (*vault.Catalog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, v, err := s.files().load(ctx)
	if errors.Is(err, vault.ErrSnapshotVersion) {
		s.view, s.applied = v, 0 // its ETag: the next save replaces it
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.view, s.applied = v, v.man.Seq
	return c, nil
}

// Save implements indexer.SnapshotStore: it writes the whole catalog as the only
// segment.
func (s *Snapshots) Save(ctx context.Context, c *vault.Catalog) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveWhole(ctx, c)
}

func (s *Snapshots) saveWhole(ctx context.Context, c *vault.Catalog) error {
	if s.view.found && s.applied != s.view.man.Seq {
		// The manifest last seen holds saves c lacks (adopted by a merge):
		// writing c whole would drop them.
		s.stats.Conflicts++
		return fmt.Errorf("the catalog is behind the manifest: %w", store.ErrConflict)
	}
	f := s.files()
	seq := s.view.man.Seq + 1
	ref, err := f.writeSegment(ctx, c.Segment(nil), 1, seq)
	if err != nil {
		return err
	}
	sum := c.Summary()
	m := manifest{Seq: seq, IndexedAt: c.IndexedAt(), Segments: []segmentRef{ref}, Summary: &sum}
	etag, err := f.writeManifest(ctx, m, s.view.etag)
	if err != nil {
		f.discard(ctx, err, ref)
		if errors.Is(err, store.ErrConflict) {
			s.stats.Conflicts++
		}
		return err
	}
	old := s.view.man.Segments
	s.view, s.applied = view{man: m, etag: etag, found: true}, seq
	s.counted(ref)
	f.remove(context.WithoutCancel(ctx), old...)
	return nil
}

func (s *Snapshots) counted(ref segmentRef) {
	s.stats.Saves++
	s.stats.SegmentBytes += ref.Bytes
	s.stats.LastSaveBytes = ref.Bytes
	s.stats.MaxSaveBytes = max(s.stats.MaxSaveBytes, ref.Bytes)
}

// SaveChanges implements indexer.ChangeSaver. With no manifest yet, or a catalog
// that has not caught up with the manifest last seen, it saves nothing:
// the first case writes the whole catalog, the second is a conflict.
func (s *Snapshots) SaveChanges(ctx context.Context, c *vault.Catalog, paths []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.view.found {
		return s.saveWhole(ctx, c)
	}
	if s.applied != s.view.man.Seq {
		s.stats.Conflicts++
		return fmt.Errorf("the catalog is behind the manifest: %w", store.ErrConflict)
	}
	if t := s.view.man.Turn; t.held(s.me()) {
		s.stats.Conflicts++
		return fmt.Errorf("another indexer has the turn to save, until %s: %w", t.Until.Format(time.RFC3339), store.ErrConflict)
	}
	f := s.files()
	m := s.view.man
	m.Segments = slices.Clone(m.Segments)
	m.IndexedAt = c.IndexedAt()
	m.Turn = nil // ours, or expired: given back
	sum := c.Summary()
	m.Summary = &sum
	var ref segmentRef
	var seg *vault.Segment
	if len(paths) > 0 {
		seg = c.Segment(paths)
		var err error
		if ref, err = s.segmentFor(ctx, seg, m.Seq+1); err != nil {
			return err
		}
		m.Seq++
		m.Segments = append(m.Segments, ref)
	}
	etag, err := f.writeManifest(ctx, m, s.view.etag)
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			s.stats.Conflicts++
			if seg != nil {
				s.spare = &spare{ref: ref, seg: seg}
				return err
			}
		}
		f.discard(ctx, err, ref)
		return err
	}
	s.view, s.applied = view{man: m, etag: etag, found: true}, m.Seq
	if len(paths) > 0 {
		s.counted(ref)
	}
	s.merge(ctx)
	return nil
}

// TakeTurn claims the next save, for a writer that has lost several races
// in a row: it writes the manifest now stored back as it is, with this
// writer's turn (conditionally: store.ErrConflict when another writer saved
// between the read and the write). Other writers then neither save nor
// merge until this one has caught up and saved, which gives the turn back,
// or turnLength has passed. Without it a writer whose catch-up takes
// longer than the others' saves (a big merged segment to apply) could lose
// every race. It reports whether this writer holds the turn.
func (s *Snapshots) TakeTurn(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files()
	m, etag, found, err := f.readManifest(ctx)
	if err != nil || !found {
		return false, err // no manifest: the first save writes the whole catalog
	}
	if m.Turn.held(s.me()) {
		return false, nil
	}
	m.Turn = &turn{Writer: s.me(), Until: time.Now().Add(turnLength)}
	if _, err := f.writeManifest(ctx, m, etag); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return false, nil
		}
		return false, err
	}
	s.stats.Turns++
	return true, nil // the next CatchUp reads the manifest back
}

// me is this writer's id in turns.
func (s *Snapshots) me() string {
	if s.writer == "" {
		s.writer = randomID()
	}
	return s.writer
}

// segmentFor returns seg stored as save seq: the spare segment when it
// holds exactly seg, else seg written anew (and the spare deleted).
func (s *Snapshots) segmentFor(ctx context.Context, seg *vault.Segment, seq uint64) (segmentRef, error) {
	f := s.files()
	if sp := s.spare; sp != nil {
		s.spare = nil
		if sameState(sp.seg, seg) {
			sp.ref.First, sp.ref.Last = seq, seq
			s.stats.Reused++
			return sp.ref, nil
		}
		f.remove(context.WithoutCancel(ctx), sp.ref)
	}
	return f.writeSegment(ctx, seg, seq, seq)
}

// sameState reports whether two segments give the same paths the same
// state (their index times aside).
func sameState(a, b *vault.Segment) bool {
	return reflect.DeepEqual(a.Notes, b.Notes) && reflect.DeepEqual(a.Attachments, b.Attachments) &&
		reflect.DeepEqual(a.Problems, b.Problems) && reflect.DeepEqual(a.Removed, b.Removed)
}

// CatchUp implements indexer.ChangeSaver.
func (s *Snapshots) CatchUp(ctx context.Context, c *vault.Catalog) ([]string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.view
	if s.applied != v.man.Seq { // a merge adopted saves not applied yet
		v.man.Seq, v.etag = s.applied, "-"
	}
	nv, segs, whole, err := s.files().update(ctx, v)
	if errors.Is(err, vault.ErrSnapshotVersion) {
		whole, nv, err = vault.NewCatalog(), view{etag: nv.etag}, nil // replaced by the next save
	}
	if err != nil {
		return nil, false, err
	}
	s.view, s.applied = nv, nv.man.Seq
	if whole != nil {
		c.ReplaceWith(whole)
		return nil, true, nil
	}
	var paths []string
	for _, seg := range segs {
		c.Apply(seg)
		paths = append(paths, seg.Paths()...)
	}
	if !nv.man.IndexedAt.IsZero() && nv.man.IndexedAt.After(c.IndexedAt()) {
		c.SetIndexedAt(nv.man.IndexedAt)
	}
	slices.Sort(paths)
	return slices.Compact(paths), false, nil
}

// merge merges the newest segments while mergeFanout or more of them are
// of the newest one's size class or smaller. It is best effort: a failure,
// or another writer merging first, leaves the segments as they are.
func (s *Snapshots) merge(ctx context.Context) {
	f := s.files()
	for range 8 {
		if s.view.man.Turn.held(s.me()) {
			return // its holder is catching up: moving segments would undo that
		}
		refs := s.view.man.Segments
		n := len(refs)
		if n < mergeFanout {
			return
		}
		lvl := refs[n-1].level()
		j := n - 1
		for j > 0 && refs[j-1].level() <= lvl {
			j--
		}
		if n-j < mergeFanout {
			return
		}
		run := slices.Clone(refs[j:])
		segs, err := f.readSegments(ctx, run)
		if err != nil {
			return
		}
		merged := vault.MergeSegments(segs, j == 0)
		ref, err := f.writeSegment(ctx, merged, run[0].First, run[len(run)-1].Last)
		if err != nil {
			return
		}
		m := s.view.man
		m.Segments = append(slices.Clone(refs[:j]), ref)
		etag, err := f.writeManifest(ctx, m, s.view.etag)
		if errors.Is(err, store.ErrConflict) {
			// Another writer saved meanwhile: keep its segments after ours
			// when the merged ones are still there, unmerged.
			var cur manifest
			cur, etag, _, err = f.readManifest(ctx)
			if err == nil && len(cur.Segments) >= n && sameRefs(cur.Segments[:n], refs) {
				m = cur
				m.Segments = append(append(slices.Clone(refs[:j]), ref), cur.Segments[n:]...)
				etag, err = f.writeManifest(ctx, m, etag)
			} else if err == nil {
				err = store.ErrConflict
			}
		}
		if err != nil {
			f.discard(ctx, err, ref)
			return
		}
		s.view = view{man: m, etag: etag, found: true}
		s.stats.Merges++
		s.stats.MergeBytes += ref.Bytes
		f.remove(context.WithoutCancel(ctx), run...)
	}
}

func sameRefs(a, b []segmentRef) bool {
	return slices.EqualFunc(a, b, func(x, y segmentRef) bool {
		return x.First == y.First && x.Last == y.Last && slices.Equal(x.Parts, y.Parts)
	})
}

// Sweep deletes segment objects that no manifest names and that are older
// than age: parts of saves that lost a race or died before their manifest
// was written. Merged-away parts are deleted as they are replaced.
func (s *Snapshots) Sweep(ctx context.Context, age time.Duration) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files()
	m, _, found, err := f.readManifest(ctx)
	if err != nil || !found {
		return 0, err
	}
	named := map[string]bool{ManifestName: true}
	for _, r := range m.Segments {
		for _, p := range r.Parts {
			named[p] = true
		}
	}
	var stale []string
	err = f.store.List(ctx, f.dir, func(o store.Object) error {
		name := o.Path[len(f.dir):]
		if !named[name] && time.Since(o.Modified) > age {
			stale = append(stale, o.Path)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, p := range stale {
		if err := f.store.Delete(ctx, p, ""); err != nil {
			return 0, err
		}
	}
	return len(stale), nil
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
