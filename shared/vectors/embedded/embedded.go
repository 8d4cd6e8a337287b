// Package embedded is the default vectors adapter: every vector in memory in
// one contiguous float32 slab, searched exactly (cosine as a dot product of
// unit vectors) in parallel, and persisted as one compact binary file written
// atomically on Flush and Close.
package embedded

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

var _ vectors.Index = (*Index)(nil)

var errClosed = errors.New("embedded: index closed")

// Index is an in-memory vector index, optionally backed by a file.
// It is safe for concurrent use.
type Index struct {
	path    string     // "" = memory only
	flushMu sync.Mutex // serialises Flush

	mu     sync.RWMutex
	closed bool
	space  vectors.Space
	// slab holds point i's unit (or zero) vector at [i*dim, (i+1)*dim).
	slab  []float32
	pts   []point
	notes []note // by note id; free slots have path ""
	freeN []int32
	byKey map[string]int32 // path -> note id
	tags  tagsets
	gen   uint64 // bumped by every change
	saved uint64 // gen at the last successful Flush or load

	loadErr error
}

// point is the metadata of one vector.
type point struct {
	note    int32 // note id
	tagset  int32 // tagsets id
	ordinal int
	hash    string
	heading string
}

type note struct {
	path   string
	hash   string  // the NoteHash of its points
	points []int32 // indexes into pts
}

// Open loads the index persisted at path, or starts empty if there is no
// file yet. A file that is corrupt or of another format version is not an
// error: the index starts empty, logs a warning and reports why through
// LoadError; the next Flush replaces the file. path "" keeps everything in
// memory only.
func Open(path string) (*Index, error) {
	ix := newIndex(path)
	if path == "" {
		return ix, nil
	}
	err := ix.load()
	var bad *formatError
	switch {
	case err == nil:
		return ix, nil
	case errors.As(err, &bad):
		slog.Warn("vectors: ignoring unreadable index file; starting empty", "path", path, "err", err)
		ix = newIndex(path)
		ix.loadErr = err
		return ix, nil
	default:
		return nil, err
	}
}

func newIndex(path string) *Index {
	return &Index{path: path, byKey: map[string]int32{}, tags: newTagsets()}
}

// LoadError reports why the file found at Open was discarded (corrupt,
// truncated, other version), or nil.
func (ix *Index) LoadError() error { return ix.loadErr }

// Space implements vectors.Index.
func (ix *Index) Space(ctx context.Context) (vectors.Space, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return vectors.Space{}, errClosed
	}
	return ix.space, nil
}

// Reset implements vectors.Index.
func (ix *Index) Reset(ctx context.Context, sp vectors.Space) error {
	if sp.Dim <= 0 || sp.Dim > maxDim {
		return fmt.Errorf("embedded: reset: dimension %d out of range 1..%d", sp.Dim, maxDim)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return errClosed
	}
	ix.clear()
	ix.space = sp
	ix.gen++
	return nil
}

func (ix *Index) clear() {
	ix.slab, ix.pts, ix.notes, ix.freeN = nil, nil, nil, nil
	ix.byKey = map[string]int32{}
	ix.tags = newTagsets()
}

// Upsert implements vectors.Index.
func (ix *Index) Upsert(ctx context.Context, points ...vectors.Point) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return errClosed
	}
	if ix.space.Dim == 0 {
		return vectors.ErrNoSpace
	}
	notes, err := vectors.GroupPoints(points, ix.space.Dim)
	if err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	if len(ix.pts)+len(points) > maxPoints {
		return fmt.Errorf("embedded: upsert: more than %d points", maxPoints)
	}
	for _, n := range notes {
		ix.deleteNote(n[0].Path)
		id := ix.newNote(n[0].Path)
		ix.notes[id].hash = strings.Clone(n[0].NoteHash)
		for _, p := range n {
			ix.addPoint(id, p)
		}
	}
	if len(notes) > 0 {
		ix.gen++
	}
	return nil
}

// newNote registers path (which must not exist) and returns its id.
func (ix *Index) newNote(path string) int32 {
	var id int32
	if n := len(ix.freeN); n > 0 {
		id = ix.freeN[n-1]
		ix.freeN = ix.freeN[:n-1]
		ix.notes[id] = note{path: path}
	} else {
		id = int32(len(ix.notes))
		ix.notes = append(ix.notes, note{path: path})
	}
	ix.byKey[path] = id
	return id
}

// addPoint appends p's normalised vector to the slab.
func (ix *Index) addPoint(id int32, p vectors.Point) {
	i := int32(len(ix.pts))
	ix.pts = append(ix.pts, point{
		note: id, tagset: ix.tags.add(vault.ExpandTags(p.Tags)),
		ordinal: p.Ordinal, hash: strings.Clone(p.Hash), heading: strings.Clone(p.Heading),
	})
	start := len(ix.slab)
	ix.slab = append(ix.slab, p.Vector...)
	vectors.Normalize(ix.slab[start:])
	ix.notes[id].points = append(ix.notes[id].points, i)
}

// Delete implements vectors.Index.
func (ix *Index) Delete(ctx context.Context, paths ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return errClosed
	}
	changed := false
	for _, p := range paths {
		changed = ix.deleteNote(p) || changed
	}
	if changed {
		ix.gen++
		ix.shrink()
	}
	return nil
}

// deleteNote removes path's points and frees its id; false if it is absent.
func (ix *Index) deleteNote(path string) bool {
	id, ok := ix.byKey[path]
	if !ok {
		return false
	}
	pts := ix.notes[id].points
	// Highest index first: the last point, swapped into each hole, is then
	// never one of this note's own points still to be removed.
	slices.SortFunc(pts, func(a, b int32) int { return cmp.Compare(b, a) })
	for _, i := range pts {
		ix.removePoint(i)
	}
	delete(ix.byKey, path)
	ix.notes[id] = note{}
	ix.freeN = append(ix.freeN, id)
	return true
}

// removePoint swap-removes point i: the last point moves into its slot.
func (ix *Index) removePoint(i int32) {
	dim := ix.space.Dim
	last := int32(len(ix.pts) - 1)
	ix.tags.release(ix.pts[i].tagset)
	if i != last {
		moved := ix.pts[last]
		ix.pts[i] = moved
		copy(ix.slab[int(i)*dim:int(i+1)*dim], ix.slab[int(last)*dim:])
		owner := ix.notes[moved.note].points
		owner[slices.Index(owner, last)] = i
	}
	ix.pts[last] = point{}
	ix.pts = ix.pts[:last]
	ix.slab = ix.slab[:int(last)*dim]
}

// shrink gives memory back after large deletes.
func (ix *Index) shrink() {
	const minFloats = 1 << 20
	if c := cap(ix.slab); c > minFloats && c > 2*len(ix.slab) {
		ix.slab = slices.Clip(slices.Clone(ix.slab))
		ix.pts = slices.Clip(slices.Clone(ix.pts))
	}
}

// Hashes implements vectors.Index. The vectors are copies, normalised.
func (ix *Index) Hashes(ctx context.Context, path string) (map[string][]float32, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, errClosed
	}
	out := map[string][]float32{}
	id, ok := ix.byKey[path]
	if !ok {
		return out, nil
	}
	dim := ix.space.Dim
	for _, i := range ix.notes[id].points {
		out[ix.pts[i].hash] = slices.Clone(ix.slab[int(i)*dim : int(i+1)*dim])
	}
	return out, nil
}

// Notes implements vectors.Index.
func (ix *Index) Notes(ctx context.Context) (map[string]string, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, errClosed
	}
	out := make(map[string]string, len(ix.byKey))
	for p, id := range ix.byKey {
		out[p] = ix.notes[id].hash
	}
	return out, nil
}

// Len returns the number of points.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.pts)
}

// Close flushes unsaved changes and releases the index; later calls fail.
func (ix *Index) Close() error {
	err := ix.Flush(context.Background())
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.clear()
	return err
}

// tagsets interns the distinct tag-key sets of points, so a filter checks
// each set once and points share one slice.
type tagsets struct {
	sets []tagset
	ids  map[string]int32 // joined keys -> id
	free []int32
}

type tagset struct {
	keys []string // vault.ExpandTags of a point's tags
	refs int
}

func newTagsets() tagsets { return tagsets{ids: map[string]int32{}} }

func (ts *tagsets) add(keys []string) int32 {
	k := strings.Join(keys, "\x00")
	if id, ok := ts.ids[k]; ok {
		ts.sets[id].refs++
		return id
	}
	var id int32
	if n := len(ts.free); n > 0 {
		id = ts.free[n-1]
		ts.free = ts.free[:n-1]
		ts.sets[id] = tagset{keys: keys, refs: 1}
	} else {
		id = int32(len(ts.sets))
		ts.sets = append(ts.sets, tagset{keys: keys, refs: 1})
	}
	ts.ids[k] = id
	return id
}

func (ts *tagsets) release(id int32) {
	s := &ts.sets[id]
	if s.refs--; s.refs > 0 {
		return
	}
	delete(ts.ids, strings.Join(s.keys, "\x00"))
	*s = tagset{}
	ts.free = append(ts.free, id)
}
