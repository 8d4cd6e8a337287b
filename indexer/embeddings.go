package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// DefaultEmbedBatch is how many passages Embeddings gathers, across notes,
// before one Embed call (the embedder splits it further to its own limits).
const DefaultEmbedBatch = 256

// flushEvery bounds the work a crash can lose during a long first pass: the
// vector index is flushed at least this often while a pass runs.
const flushEvery = 30 * time.Second

// Embeddings keeps a vault's vectors in step with its catalog: one point per
// passage, keyed by the passage's content hash. It implements the tools
// package's Embeddings port (structurally).
//
// The text embedded for a passage is its note's title, its heading path
// ("A > B") and its Markdown text, one per line: the title and headings say
// what a short section is about, which its text alone often does not. Every
// note also gets a name point (vectors.NameOrdinal) embedding its title and
// aliases, so a note with no passages (empty, or frontmatter only) is
// findable and never stale forever.
//
// The index holds one embedding model: when Vectors.Space differs from the
// embedder's model or dimensions, the next Refresh resets it and re-embeds
// every note. Vectors of two models are never mixed.
type Embeddings struct {
	Store        store.Store
	Embedder     embed.Embedder
	Vectors      vectors.Index
	MaxNoteBytes int64        // notes bigger than this are not embedded; 0: DefaultMaxNoteBytes
	Batch        int          // passages per Embed call; 0: DefaultEmbedBatch
	Log          *slog.Logger // nil: slog.Default()

	mu      sync.Mutex
	pathsMu sync.Mutex // one RefreshPaths at a time
	flight  *flight
	// failed remembers notes that cannot be embedded (binary, too large) by
	// the catalog hash they had, so they are neither retried nor counted
	// stale until they change.
	failed map[string]string
	// clean is the catalog state the last complete pass left fully
	// embedded: while the catalog is at that generation there is nothing
	// to do (comparing 10k notes costs tens of milliseconds; this check,
	// nothing). It assumes this Embeddings is the only writer of Vectors.
	clean struct {
		cat   *vault.Catalog
		gen   uint64
		model string
	}
}

// flight is one Refresh pass that concurrent callers share.
type flight struct {
	cat      *vault.Catalog
	gen      uint64 // the catalog generation the pass started from
	done     chan struct{}
	notes    int
	passages int
	err      error
}

// Refresh embeds every note of cat whose content changed since it was last
// embedded (only passages whose content is new go to the embedder) and
// prunes notes that are no longer in cat. It reports how many notes were
// written and how many passages were sent to the embedder.
//
// One pass runs at a time. A caller that arrives during a pass waits for it
// and shares its result when that pass started from the caller's catalog at
// least as new as the caller saw it; otherwise it runs (or joins) the next
// pass. A caller's ctx bounds its own wait; when the caller running a pass
// gives up, a waiting caller runs a new pass, which resumes where the old
// one stopped (written notes are no longer stale).
func (e *Embeddings) Refresh(ctx context.Context, cat *vault.Catalog) (notes, passages int, err error) {
	want := cat.Generation()
	for {
		e.mu.Lock()
		if e.isClean(cat) {
			e.mu.Unlock()
			return 0, 0, nil
		}
		f := e.flight
		if f == nil {
			f = &flight{cat: cat, gen: cat.Generation(), done: make(chan struct{})}
			e.flight = f
			e.mu.Unlock()
			e.lead(ctx, f)
			return f.notes, f.passages, f.err
		}
		e.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
		if f.cat == cat && f.gen >= want {
			if f.err == nil || !isContextErr(f.err) {
				return f.notes, f.passages, f.err
			}
		}
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
	}
}

// RefreshPaths is Refresh for the notes at paths only: each one in cat is
// re-read and written with its vectors (only passages whose content is new
// go to the embedder), and each one not in cat loses its vectors. It costs
// the paths, not the vault (Refresh reads every note's hash from the
// vector index): the indexer calls it after each batch, and a periodic
// Refresh heals whatever it missed. When the vector index holds no space
// or another model's, it runs Refresh instead, which resets it.
func (e *Embeddings) RefreshPaths(ctx context.Context, cat *vault.Catalog, paths []string) (notes, passages int, err error) {
	if len(paths) == 0 {
		return 0, 0, nil
	}
	sp, err := e.Vectors.Space(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the vector index's space: %w", err)
	}
	if d := e.Embedder.Dimensions(); sp.Dim <= 0 || sp.Model != e.Embedder.Model() || (d > 0 && d != sp.Dim) {
		return e.Refresh(ctx, cat)
	}
	e.pathsMu.Lock()
	defer e.pathsMu.Unlock()
	r := &run{e: e, dim: sp.Dim, flushed: time.Now()}
	var gone []string
	for _, p := range paths {
		n, ok := cat.Note(p)
		if !ok || n.Path != p {
			gone = append(gone, p)
			continue
		}
		e.mu.Lock()
		skip := e.failed[n.Path] == n.Hash
		e.mu.Unlock()
		if skip {
			continue
		}
		pend, err := r.prepare(ctx, n)
		if err != nil {
			return r.notes, r.passages, err
		}
		if pend == nil {
			continue
		}
		r.queue = append(r.queue, pend)
		if len(r.texts) >= e.batch() {
			if err := r.flush(ctx); err != nil {
				return r.notes, r.passages, err
			}
		}
	}
	if err := r.flush(ctx); err != nil {
		return r.notes, r.passages, err
	}
	if len(gone) > 0 {
		if err := e.Vectors.Delete(ctx, gone...); err != nil {
			return r.notes, r.passages, fmt.Errorf("removing the vectors of deleted notes: %w", err)
		}
	}
	if len(gone) > 0 || r.notes > 0 {
		if err := e.persist(ctx); err != nil {
			return r.notes, r.passages, err
		}
	}
	if r.retry {
		return r.notes, r.passages, errors.New("embeddings: some notes could not be read; they are retried later")
	}
	return r.notes, r.passages, nil
}

// lead runs the pass of flight f and releases its waiters, even if the
// pass panics.
func (e *Embeddings) lead(ctx context.Context, f *flight) {
	complete := false
	defer func() {
		e.mu.Lock()
		e.flight = nil
		if f.err == nil && complete {
			e.clean.cat, e.clean.gen, e.clean.model = f.cat, f.gen, e.Embedder.Model()
		}
		e.mu.Unlock()
		close(f.done)
	}()
	f.err = errors.New("embeddings: the pass panicked") // until it returns
	f.notes, f.passages, complete, f.err = e.pass(ctx, f.cat)
}

// isClean reports whether cat is as the last complete pass left it.
// Called with e.mu held.
func (e *Embeddings) isClean(cat *vault.Catalog) bool {
	return e.clean.cat == cat && e.clean.gen == cat.Generation() && e.clean.model == e.Embedder.Model()
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Stale counts the notes of cat that are not embedded at their current
// content: changed or new notes, or every note when the index holds another
// model's vectors. Notes that cannot be embedded are not counted.
func (e *Embeddings) Stale(ctx context.Context, cat *vault.Catalog) (int, error) {
	e.mu.Lock()
	clean := e.isClean(cat)
	e.mu.Unlock()
	if clean {
		return 0, nil
	}
	stored, _, _, err := e.indexed(ctx)
	if err != nil {
		return 0, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, note := range cat.Notes() {
		if stored[note.Path] != EmbeddedAs(note.Hash) && e.failed[note.Path] != note.Hash {
			n++
		}
	}
	return n, nil
}

// indexed reads what the vector index holds: note path -> note hash
// (empty when the index must be reset), whether it must be reset because it
// holds no space or another model's, and its dimensions. An embedder that
// does not know its dimensions yet is taken to match (flush checks the
// first vectors it gets).
func (e *Embeddings) indexed(ctx context.Context) (stored map[string]string, fresh bool, dim int, err error) {
	sp, err := e.Vectors.Space(ctx)
	if err != nil {
		return nil, false, 0, fmt.Errorf("reading the vector index's space: %w", err)
	}
	d := e.Embedder.Dimensions()
	if sp.Dim <= 0 || sp.Model != e.Embedder.Model() || (d > 0 && d != sp.Dim) {
		return map[string]string{}, true, sp.Dim, nil
	}
	if stored, err = e.Vectors.Notes(ctx); err != nil {
		return nil, false, 0, fmt.Errorf("reading the vector index: %w", err)
	}
	return stored, false, sp.Dim, nil
}

// errRestart: the model's dimensions changed under the same name; the index
// was reset and the pass must start over.
var errRestart = errors.New("embeddings: dimensions changed; index reset")

func (e *Embeddings) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

func (e *Embeddings) batch() int {
	if e.Batch > 0 {
		return e.Batch
	}
	return DefaultEmbedBatch
}

func (e *Embeddings) maxNote() int64 {
	if e.MaxNoteBytes > 0 {
		return e.MaxNoteBytes
	}
	return DefaultMaxNoteBytes
}

// pending is one note read and split, waiting for its missing vectors.
type pending struct {
	points  []vectors.Point
	missing []int // indexes into points still without a vector
}

// run is the state of one pass.
type run struct {
	e        *Embeddings
	fresh    bool // the index must be Reset before the first write
	dim      int  // the index's dimensions when not fresh
	queue    []*pending
	texts    []string
	notes    int
	passages int
	retry    bool // a note was skipped for a reason that may pass
	flushed  time.Time
}

// pass is one reconcile: prune, then embed what is stale. It starts over
// once if the model turns out to have changed its dimensions. complete is
// false when a note was skipped for a reason that may pass (a read error).
func (e *Embeddings) pass(ctx context.Context, cat *vault.Catalog) (notes, passages int, complete bool, err error) {
	r, err := e.reconcile(ctx, cat)
	if errors.Is(err, errRestart) {
		var r2 *run
		r2, err = e.reconcile(ctx, cat)
		r2.notes += r.notes
		r2.passages += r.passages
		r = r2
	}
	return r.notes, r.passages, !r.retry, err
}

func (e *Embeddings) reconcile(ctx context.Context, cat *vault.Catalog) (*run, error) {
	r := &run{e: e, flushed: time.Now()}
	stored, fresh, dim, err := e.indexed(ctx)
	if err != nil {
		return r, err
	}
	all := cat.Notes()
	inCat := make(map[string]bool, len(all))
	for _, n := range all {
		inCat[n.Path] = true
	}
	var gone []string
	for p := range stored {
		if !inCat[p] {
			gone = append(gone, p)
		}
	}
	if len(gone) > 0 {
		if err := e.Vectors.Delete(ctx, gone...); err != nil {
			return r, fmt.Errorf("pruning deleted notes: %w", err)
		}
	}
	e.mu.Lock()
	for p := range e.failed {
		if !inCat[p] {
			delete(e.failed, p)
		}
	}
	var todo []vault.Note
	for _, n := range all {
		if stored[n.Path] != EmbeddedAs(n.Hash) && e.failed[n.Path] != n.Hash {
			todo = append(todo, n)
		}
	}
	e.mu.Unlock()
	sort.Slice(todo, func(i, j int) bool { return todo[i].Path < todo[j].Path })

	r.fresh, r.dim = fresh, dim
	for _, n := range todo {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		p, err := r.prepare(ctx, n)
		if err != nil {
			return r, err
		}
		if p == nil {
			continue
		}
		r.queue = append(r.queue, p)
		if len(r.texts) >= e.batch() {
			if err := r.flush(ctx); err != nil {
				return r, err
			}
		}
	}
	if err := r.flush(ctx); err != nil {
		return r, err
	}
	if len(gone) > 0 || r.notes > 0 {
		if err := e.persist(ctx); err != nil {
			return r, err
		}
	}
	return r, nil
}

// prepare reads and splits one stale note, reusing the stored vector of
// every passage whose content is unchanged. It returns nil for a note that
// is skipped; an error only for failures of the whole pass.
func (r *run) prepare(ctx context.Context, n vault.Note) (*pending, error) {
	e := r.e
	data, obj, err := e.Store.Get(ctx, n.Path, e.maxNote())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil // deleted meanwhile: the indexer will drop it
	case errors.Is(err, store.ErrTooLarge):
		e.remember(n, "too large")
		return nil, nil
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e.log().Warn("embeddings: cannot read note; will retry", "path", n.Path, "err", err)
		r.retry = true
		return nil, nil
	}
	if errors.Is(vault.Check(data), vault.ErrBinary) {
		e.remember(n, "binary content")
		return nil, nil
	}
	parsed := vault.Parse(obj.Path, data)
	sum := sha256.Sum256(data)
	noteHash := hex.EncodeToString(sum[:])
	title := parsed.Note.Title
	if title == "" {
		title = n.Title
	}
	var reuse map[string][]float32
	if !r.fresh {
		if reuse, err = e.Vectors.Hashes(ctx, n.Path); err != nil {
			return nil, fmt.Errorf("reading stored vectors of %s: %w", n.Path, err)
		}
	}
	p := &pending{}
	add := func(pt vectors.Point, text string) {
		pt.Path, pt.NoteHash, pt.Tags = n.Path, EmbeddedAs(noteHash), parsed.Note.Tags
		if v, ok := reuse[pt.Hash]; ok {
			pt.Vector = v
		} else {
			p.missing = append(p.missing, len(p.points))
			r.texts = append(r.texts, text)
		}
		p.points = append(p.points, pt)
	}
	for _, ps := range parsed.Passages {
		add(vectors.Point{Ordinal: ps.Ordinal, Hash: ps.Hash, Heading: ps.Heading()}, PassageText(title, ps))
	}
	name := NameText(title, parsed.Note.Aliases)
	add(vectors.Point{Ordinal: vectors.NameOrdinal, Hash: vectors.NameHash(name)}, name)
	return p, nil
}

// NameText is the text embedded for a note's name point: its title and
// aliases, one per line. A question rarely shares its words with a
// passage's; embedded alone, the few words a note is called by are
// compared with it directly (USE-lite, trained on sentences, scores a
// short name against a question far better than the same words diluted in
// a passage).
func NameText(title string, aliases []string) string {
	return strings.Join(append([]string{title}, aliases...), "\n")
}

// layout marks the points of a note embedded with a name point. A note
// whose points lack it (embedded by an earlier Sheaf) is stale, and is
// embedded again once: only its name goes to the embedder, its passages'
// vectors are reused by hash.
const layout = "+name"

// EmbeddedAs is the note hash stored with the points of a note at content
// hash h (vectors.Point.NoteHash, vectors.Reader.Notes).
func EmbeddedAs(h string) string { return h + layout }

// PassageText is the text embedded for a passage: the note's title, the
// passage's heading path and its text, one per line (empty parts left out).
func PassageText(title string, p vault.Passage) string {
	var b strings.Builder
	b.WriteString(title)
	if len(p.HeadingPath) > 0 {
		b.WriteString("\n")
		b.WriteString(strings.Join(p.HeadingPath, " > "))
	}
	if t := strings.TrimSpace(p.Text); t != "" {
		b.WriteString("\n")
		b.WriteString(t)
	}
	return b.String()
}

func (e *Embeddings) remember(n vault.Note, why string) {
	e.log().Info("embeddings: note not embedded", "path", n.Path, "reason", why)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed == nil {
		e.failed = map[string]string{}
	}
	e.failed[n.Path] = n.Hash
}

// flush embeds the queued texts in one call and writes the queued notes.
func (r *run) flush(ctx context.Context) error {
	if len(r.queue) == 0 {
		return nil
	}
	var vecs [][]float32
	if len(r.texts) > 0 {
		var err error
		if vecs, err = r.e.Embedder.Embed(ctx, r.texts); err != nil {
			return fmt.Errorf("embedding %d passages: %w", len(r.texts), err)
		}
		if len(vecs) != len(r.texts) {
			return fmt.Errorf("the embedder returned %d vectors for %d passages", len(vecs), len(r.texts))
		}
	}
	changed := !r.fresh && len(vecs) > 0 && len(vecs[0]) != r.dim
	if r.fresh || changed {
		if len(vecs) == 0 {
			return errors.New("internal: a fresh index with nothing to embed")
		}
		sp := vectors.Space{Model: r.e.Embedder.Model(), Dim: len(vecs[0])}
		if err := r.e.Vectors.Reset(ctx, sp); err != nil {
			return fmt.Errorf("resetting the vector index to %s/%d: %w", sp.Model, sp.Dim, err)
		}
		r.e.log().Info("embeddings: vector index reset", "model", sp.Model, "dimensions", sp.Dim)
		if changed {
			return errRestart
		}
		r.fresh, r.dim = false, sp.Dim
	}
	var points []vectors.Point
	i := 0
	for _, p := range r.queue {
		for _, m := range p.missing {
			p.points[m].Vector = vecs[i]
			i++
		}
		points = append(points, p.points...)
	}
	if err := r.e.Vectors.Upsert(ctx, points...); err != nil {
		return fmt.Errorf("writing vectors: %w", err)
	}
	r.notes += len(r.queue)
	r.passages += len(r.texts)
	r.queue, r.texts = r.queue[:0], r.texts[:0]
	if time.Since(r.flushed) >= flushEvery {
		r.flushed = time.Now()
		return r.e.persist(ctx)
	}
	return nil
}

// flusher is implemented by vector indexes that buffer writes (embedded).
type flusher interface {
	Flush(ctx context.Context) error
}

// persist flushes the vector index when it buffers writes.
func (e *Embeddings) persist(ctx context.Context) error {
	if f, ok := e.Vectors.(flusher); ok {
		if err := f.Flush(ctx); err != nil {
			return fmt.Errorf("saving the vector index: %w", err)
		}
	}
	return nil
}
