package vault

import (
	"mime"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Attachment is a non-Markdown file in the vault (image, PDF, data, canvas).
type Attachment struct {
	Path     string    `json:"path"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
	MimeType string    `json:"mime_type"`
}

// mimeFallback names the types Obsidian vaults commonly hold, so the answer
// does not depend on the host's mime.types files.
var mimeFallback = map[string]string{
	".md":     "text/markdown",
	".png":    "image/png",
	".jpg":    "image/jpeg",
	".jpeg":   "image/jpeg",
	".gif":    "image/gif",
	".webp":   "image/webp",
	".svg":    "image/svg+xml",
	".pdf":    "application/pdf",
	".csv":    "text/csv",
	".json":   "application/json",
	".txt":    "text/plain",
	".canvas": "application/json",
}

// MimeTypeOf returns the MIME type for a file name from its extension,
// "application/octet-stream" when unknown.
func MimeTypeOf(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if ext == "" {
		return "application/octet-stream"
	}
	if t, ok := mimeFallback[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// set is a set of vault paths: a short slice while small (most index keys
// name one or two notes), a map once it grows, so adding and removing a path
// stay cheap at any size.
type set struct {
	few  []string
	many map[string]struct{}
}

// smallSet is the size up to which a set stays a slice.
const smallSet = 16

func (s *set) add(p string) {
	if s.many != nil {
		s.many[p] = struct{}{}
		return
	}
	if slices.Contains(s.few, p) {
		return
	}
	if len(s.few) < smallSet {
		s.few = append(s.few, p)
		return
	}
	s.many = make(map[string]struct{}, 2*smallSet)
	for _, q := range s.few {
		s.many[q] = struct{}{}
	}
	s.many[p] = struct{}{}
	s.few = nil
}

func (s *set) del(p string) {
	if s.many != nil {
		delete(s.many, p)
		return
	}
	if i := slices.Index(s.few, p); i >= 0 {
		s.few = slices.Delete(s.few, i, i+1)
	}
}

func (s *set) has(p string) bool {
	if s == nil {
		return false
	}
	if s.many != nil {
		_, ok := s.many[p]
		return ok
	}
	return slices.Contains(s.few, p)
}

func (s *set) len() int {
	if s == nil {
		return 0
	}
	if s.many != nil {
		return len(s.many)
	}
	return len(s.few)
}

// all iterates over the paths in s, in no particular order.
func (s *set) all(yield func(string) bool) {
	if s == nil {
		return
	}
	if s.many != nil {
		for p := range s.many {
			if !yield(p) {
				return
			}
		}
		return
	}
	for _, p := range s.few {
		if !yield(p) {
			return
		}
	}
}

// index maps a key to the paths carrying it.
type index map[string]*set

func (ix index) add(key, p string) {
	s := ix[key]
	if s == nil {
		s = &set{}
		ix[key] = s
	}
	s.add(p)
}

func (ix index) del(key, p string) {
	if s := ix[key]; s != nil {
		s.del(p)
		if s.len() == 0 {
			delete(ix, key)
		}
	}
}

// idPrefixLen is the shortest id prefix ByID accepts.
const idPrefixLen = 6

// Catalog is the whole vault's note metadata and link graph, in memory.
// Links are stored as written and resolved at query time against the name
// indexes, so changing one note never touches another. Every mutation costs
// O(size of that note). A Catalog is safe for concurrent use; the Notes it
// returns share slices with it and must be treated as read-only.
type Catalog struct {
	mu        sync.RWMutex
	gen       uint64
	indexedAt time.Time
	// built holds the index families built so far: a catalog loaded in
	// bulk builds each on first use (see ensure), so a cold reader pays
	// only for the indexes its queries need: none to list or read notes,
	// the names to resolve a link, the links too for backlinks. Bits are
	// set only under mu, held exclusively.
	built   atomic.Uint32
	buildMu sync.Mutex // one build of indexes at a time (see ensure)

	notes map[string]*Note
	// The names family.
	folded   index // lower-cased path -> paths
	pathKeys index // LinkKey(path) -> note paths
	bases    index // last segment of LinkKey(path) -> note paths
	aliases  index // LinkKey(alias) -> note paths
	ids      index // lower-cased id -> note paths
	idHeads  index // first idPrefixLen runes of the lower-cased id -> note paths
	// The facets family.
	tags     index // tag and each ancestor -> note paths
	entities index // entity -> note paths
	// The links family.
	linkSegs index // last segment of each outgoing link key -> source paths
	// The meta family: the costliest (every frontmatter value of every
	// note) and the one fewest queries use.
	meta map[string]index // frontmatter key -> canonical value -> note paths

	atts     map[string]Attachment
	attKeys  index // LinkKey(path) -> attachment paths
	attBases index // last segment of LinkKey(path) -> attachment paths

	problems map[string]string // path -> why the file is skipped or degraded

	base *Catalog // the catalog this one was filtered from (see Filter); nil for a full one

	inboundMu sync.Mutex
	inboundAt uint64             // the gen inbound describes
	inbound   map[string]Inbound // Inbound's answers at inboundAt
}

// NewCatalog returns an empty Catalog.
func NewCatalog() *Catalog {
	c := loadCatalog(nil, 0)
	c.built.Store(uint32(allFamilies))
	return c
}

// loadCatalog returns a catalog of notes (later duplicates win), with room
// for about atts attachments. Its indexes are built on first use (see
// ensure): until then they are empty and unsized.
func loadCatalog(notes []*Note, atts int) *Catalog {
	c := &Catalog{
		notes:    make(map[string]*Note, len(notes)),
		atts:     make(map[string]Attachment, atts),
		attKeys:  make(index, atts),
		attBases: make(index, atts),
		problems: map[string]string{},
	}
	c.makeIndexes(allFamilies, 0)
	for _, n := range notes {
		c.notes[n.Path] = n
	}
	return c
}

// family is a set of note indexes built and kept together.
type family uint32

const (
	names  family = 1 << iota // folded, pathKeys, bases, aliases, ids, idHeads
	facets                    // tags, entities
	links                     // linkSegs
	meta                      // meta

	allFamilies = names | facets | links | meta
)

// has reports whether the families f are all built.
func (c *Catalog) has(f family) bool { return family(c.built.Load())&f == f }

// indexParts are the functions that add a note to (or remove it from) the
// indexes of each family, several for a family whose maps can be filled
// apart. Each touches its own maps, so a bulk build runs them all at once.
var indexParts = []struct {
	f   family
	add func(c *Catalog, n *Note, add bool)
}{
	{names, (*Catalog).indexFolded},
	{names, (*Catalog).indexPathKeys},
	{names, (*Catalog).indexAliasesAndIDs},
	{facets, (*Catalog).indexFacets},
	{links, (*Catalog).indexLinks},
	{meta, (*Catalog).indexMeta},
}

// indexLinks maintains the index from the last segment of each outgoing
// link key to the linking notes.
func (c *Catalog) indexLinks(n *Note, add bool) {
	for _, l := range n.Links {
		put(c.linkSegs, lastSegment(linkKey(l)), n.Path, add)
	}
}

// Upsert adds or replaces the note at n.Path.
func (c *Catalog) Upsert(n Note) {
	n.Path = norm.NFC.String(n.Path)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.upsertLocked(&n)
	c.gen++
}

func (c *Catalog) upsertLocked(n *Note) {
	if old := c.notes[n.Path]; old != nil {
		c.unindex(old)
	}
	c.notes[n.Path] = n
	c.indexNote(n, true)
}

// Remove deletes the note at path and reports whether it was present.
func (c *Catalog) Remove(p string) bool {
	p = norm.NFC.String(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.notes[p]
	if old == nil {
		return false
	}
	c.unindex(old)
	delete(c.notes, p)
	c.gen++
	return true
}

func (c *Catalog) unindex(n *Note) { c.indexNote(n, false) }

// indexNote adds n to (or removes it from) every index built so far. Both
// directions derive the same keys from the note, so removal is exact.
func (c *Catalog) indexNote(n *Note, add bool) {
	built := family(c.built.Load())
	for _, part := range indexParts {
		if built&part.f != 0 {
			part.add(c, n, add)
		}
	}
}

// put adds p under key, or removes it.
func put(ix index, key, p string, add bool) {
	if add {
		ix.add(key, p)
	} else {
		ix.del(key, p)
	}
}

// indexFolded, indexPathKeys and indexAliasesAndIDs maintain the names
// family, the indexes that find a note by name: path in any case, link
// key and base name, alias, id.
func (c *Catalog) indexFolded(n *Note, add bool) {
	put(c.folded, foldKey(n.Path), n.Path, add)
}

func (c *Catalog) indexPathKeys(n *Note, add bool) {
	pk := LinkKey(n.Path)
	put(c.pathKeys, pk, n.Path, add)
	put(c.bases, lastSegment(pk), n.Path, add)
}

func (c *Catalog) indexAliasesAndIDs(n *Note, add bool) {
	p := n.Path
	for _, a := range n.Aliases {
		if k := LinkKey(a); k != "" {
			put(c.aliases, k, p, add)
		}
	}
	if id := foldKey(strings.TrimSpace(n.ID)); id != "" {
		put(c.ids, id, p, add)
		if utf8.RuneCountInString(id) >= idPrefixLen {
			put(c.idHeads, runePrefix(id, idPrefixLen), p, add)
		}
	}
}

// indexFacets maintains the tag and entity indexes: a note is under each
// of its tags and each ancestor of one (ExpandTags, without building the
// list: a set holds a path once however often it is added or removed).
func (c *Catalog) indexFacets(n *Note, add bool) {
	p := n.Path
	for _, t := range n.Tags {
		t = NormalizeTag(t)
		for i := 1; i < len(t); i++ {
			if t[i] == '/' && t[i-1] != '/' {
				put(c.tags, t[:i], p, add)
			}
		}
		if t != "" {
			put(c.tags, t, p, add)
		}
	}
	for _, e := range n.Entities {
		if e = norm.NFC.String(e); e != "" {
			put(c.entities, e, p, add)
		}
	}
}

// indexMeta maintains the frontmatter value index.
func (c *Catalog) indexMeta(n *Note, add bool) {
	p := n.Path
	for k, v := range n.Frontmatter {
		ix := c.meta[k]
		if ix == nil {
			if !add {
				continue
			}
			ix = index{}
			c.meta[k] = ix
		}
		for _, cv := range metaValues(v) {
			put(ix, cv, p, add)
		}
		if len(ix) == 0 {
			delete(c.meta, k)
		}
	}
}

// ensure builds the families f of a catalog loaded in bulk, those not built
// yet, once, their parts concurrently and in Bulk. Every reader of an index
// calls it before taking mu (see rlock). The indexes are built apart, with
// mu held shared, and installed with it held exclusively: readers that need
// no index (a note by its path, a list) are not held up by a build. When a
// write lands between the two, the build is done again with mu held
// exclusively, which no write can overtake.
func (c *Catalog) ensure(f family) {
	if c.has(f) {
		return
	}
	c.buildMu.Lock()
	defer c.buildMu.Unlock()
	todo := f &^ family(c.built.Load())
	if todo == 0 {
		return
	}
	c.mu.RLock()
	gen := c.gen
	b := c.buildIndexes(todo)
	testHookBuilding()
	c.mu.RUnlock()
	testHookBuilt()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		b = c.buildIndexes(todo)
	}
	moveIndexes(b, c, todo)
	c.built.Store(c.built.Load() | uint32(todo))
}

// Test hooks: while indexes are built with mu held shared, and after.
var testHookBuilding, testHookBuilt = func() {}, func() {}

// buildIndexes returns a catalog holding nothing but the indexes of the
// families f over c's notes; mu must be held, shared or not.
func (c *Catalog) buildIndexes(f family) *Catalog {
	b := &Catalog{}
	b.makeIndexes(f, len(c.notes))
	Bulk(func() {
		notes := make([]*Note, 0, len(c.notes))
		for _, n := range c.notes {
			notes = append(notes, n)
		}
		var wg sync.WaitGroup
		for _, part := range indexParts {
			if f&part.f != 0 {
				wg.Go(func() {
					for _, n := range notes {
						part.add(b, n, true)
					}
				})
			}
		}
		wg.Wait()
	})
	return b
}

// makeIndexes gives c empty indexes of the families f, sized for about n
// notes (the sparse ones, aliases, ids and entities, left to grow).
func (c *Catalog) makeIndexes(f family, n int) {
	if f&names != 0 {
		c.folded, c.pathKeys, c.bases = make(index, n), make(index, n), make(index, n)
		c.aliases, c.ids, c.idHeads = index{}, index{}, index{}
	}
	if f&facets != 0 {
		c.tags, c.entities = make(index, n/4), index{}
	}
	if f&links != 0 {
		c.linkSegs = make(index, n)
	}
	if f&meta != 0 {
		c.meta = map[string]index{}
	}
}

// moveIndexes gives c the indexes of the families f that b holds.
func moveIndexes(b, c *Catalog, f family) {
	if f&names != 0 {
		c.folded, c.pathKeys, c.bases, c.aliases, c.ids, c.idHeads = b.folded, b.pathKeys, b.bases, b.aliases, b.ids, b.idHeads
	}
	if f&facets != 0 {
		c.tags, c.entities = b.tags, b.entities
	}
	if f&links != 0 {
		c.linkSegs = b.linkSegs
	}
	if f&meta != 0 {
		c.meta = b.meta
	}
}

// Warm builds the indexes most queries need (all but the frontmatter
// values'), for a server that has the time before its next call.
func (c *Catalog) Warm() { c.ensure(warm) }

// Warmed reports whether the indexes Warm builds are built.
func (c *Catalog) Warmed() bool { return c.has(warm) }

// warm is the index families Warm builds.
const warm = names | facets | links

// rlock takes mu shared, the families f built.
func (c *Catalog) rlock(f family) {
	c.ensure(f)
	c.mu.RLock()
}

// UpsertAttachment adds or replaces a non-Markdown file. An empty MimeType
// is filled in from the extension.
func (c *Catalog) UpsertAttachment(a Attachment) {
	a.Path = norm.NFC.String(a.Path)
	if a.MimeType == "" {
		a.MimeType = MimeTypeOf(a.Path)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.upsertAttachmentLocked(a)
	c.gen++
}

func (c *Catalog) upsertAttachmentLocked(a Attachment) {
	if _, ok := c.atts[a.Path]; !ok {
		k := LinkKey(a.Path)
		c.attKeys.add(k, a.Path)
		c.attBases.add(lastSegment(k), a.Path)
	}
	c.atts[a.Path] = a
}

// RemoveAttachment deletes the attachment at path and reports whether it
// was present.
func (c *Catalog) RemoveAttachment(p string) bool {
	p = norm.NFC.String(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.atts[p]; !ok {
		return false
	}
	k := LinkKey(p)
	c.attKeys.del(k, p)
	c.attBases.del(lastSegment(k), p)
	delete(c.atts, p)
	c.gen++
	return true
}

// SetIndexedAt records when the vault was last indexed.
func (c *Catalog) SetIndexedAt(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.indexedAt = t
	c.gen++
}

// SetProblem records why the file at path was skipped or only partly
// indexed (binary, too large, invalid UTF-8, bad frontmatter); why == ""
// clears it. It reports whether anything changed. Problems are about files,
// not notes: removing a note (often done because it cannot be indexed)
// keeps its problem, and whoever sees the file vanish or index cleanly
// clears it. An empty path is ignored.
func (c *Catalog) SetProblem(p, why string) bool {
	p = norm.NFC.String(p)
	if p == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, had := c.problems[p]
	switch {
	case why == "" && !had, had && old == why:
		return false
	case why == "":
		delete(c.problems, p)
	default:
		c.problems[p] = why
	}
	c.gen++
	return true
}

// Problem returns the recorded problem of the file at p ("" for none).
func (c *Catalog) Problem(p string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.problems[norm.NFC.String(p)]
}

// Problems returns a copy of the recorded problems, path -> why.
func (c *Catalog) Problems() map[string]string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]string, len(c.problems))
	for p, why := range c.problems {
		out[p] = why
	}
	return out
}

// Unindexed lists, sorted, the Markdown files with a problem that kept
// them out of the catalog (too large, binary, unreadable): no index holds
// them.
func (c *Catalog) Unindexed() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for p := range c.problems {
		if _, ok := c.notes[p]; !ok && IsNotePath(p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// CountUnindexed is len(Unindexed()), without building the list.
func (c *Catalog) CountUnindexed() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for p := range c.problems {
		if _, ok := c.notes[p]; !ok && IsNotePath(p) {
			n++
		}
	}
	return n
}

// Generation counts mutations; it changes whenever the Catalog does.
func (c *Catalog) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// IndexedAt returns the time given to SetIndexedAt.
func (c *Catalog) IndexedAt() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.indexedAt
}

// Note returns the note at path (NFC), falling back to the only note whose
// path matches case-insensitively.
func (c *Catalog) Note(p string) (Note, bool) {
	np := norm.NFC.String(p)
	c.mu.RLock()
	if n := c.notes[np]; n != nil {
		defer c.mu.RUnlock()
		return *n, true
	}
	if !c.has(names) {
		// A miss on a catalog loaded in bulk: one pass over the paths
		// costs less than building the name indexes for the fold.
		defer c.mu.RUnlock()
		if n := c.scanFolded(np); n != nil {
			return *n, true
		}
		return Note{}, false
	}
	c.mu.RUnlock()
	c.rlock(names)
	defer c.mu.RUnlock()
	if n := c.lookup(p); n != nil {
		return *n, true
	}
	return Note{}, false
}

func (c *Catalog) lookup(p string) *Note {
	p = norm.NFC.String(p)
	if n := c.notes[p]; n != nil {
		return n
	}
	if s := c.folded[foldKey(p)]; s.len() == 1 {
		for q := range s.all {
			return c.notes[q]
		}
	}
	return nil
}

// scanFolded is lookup's case-insensitive fallback without the folded
// index: the only note whose foldKey is p's, nil if none or several.
func (c *Catalog) scanFolded(p string) *Note {
	key := foldKey(p)
	asciiKey := isASCII(key)
	var found *Note
	for q, n := range c.notes {
		if isASCII(q) { // foldKey(q) is q in lower case: compare without it
			if !asciiKey || len(q) != len(key) || !strings.EqualFold(q, key) {
				continue
			}
		} else if foldKey(q) != key {
			continue
		}
		if found != nil {
			return nil
		}
		found = n
	}
	return found
}

// Len returns the number of notes.
func (c *Catalog) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.notes)
}

// Each calls fn with every note, in no order, without copying any: for a
// pass over a big vault that needs a few fields of each. fn sees the note
// read-only, under the catalog's lock, and must not call the catalog.
func (c *Catalog) Each(fn func(*Note)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, n := range c.notes {
		fn(n)
	}
}

// Notes returns every note, sorted by path.
func (c *Catalog) Notes() []Note {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Note, 0, len(c.notes))
	for _, n := range c.notes {
		out = append(out, *n)
	}
	sortNotes(out)
	return out
}

// Attachment returns the attachment at path (NFC).
func (c *Catalog) Attachment(p string) (Attachment, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a, ok := c.atts[norm.NFC.String(p)]
	return a, ok
}

// Attachments returns every attachment, sorted by path.
func (c *Catalog) Attachments() []Attachment {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Attachment, 0, len(c.atts))
	for _, a := range c.atts {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Attachment) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// ByID returns the notes whose id equals idOrPrefix (case-insensitively);
// failing that, when idOrPrefix has at least 6 characters, the notes whose
// id starts with it. Several results mean the prefix is ambiguous.
func (c *Catalog) ByID(idOrPrefix string) []Note {
	q := foldKey(strings.TrimSpace(idOrPrefix))
	if q == "" {
		return nil
	}
	c.rlock(names)
	defer c.mu.RUnlock()
	if s := c.ids[q]; s.len() > 0 {
		return c.notesOf(s)
	}
	if utf8.RuneCountInString(q) < idPrefixLen {
		return nil
	}
	var out []Note
	for p := range c.idHeads[runePrefix(q, idPrefixLen)].all {
		n := c.notes[p]
		if strings.HasPrefix(foldKey(strings.TrimSpace(n.ID)), q) {
			out = append(out, *n)
		}
	}
	sortNotes(out)
	return out
}

// notesOf returns the notes at the paths in s, sorted by path.
func (c *Catalog) notesOf(s *set) []Note {
	out := make([]Note, 0, s.len())
	for p := range s.all {
		if n := c.notes[p]; n != nil {
			out = append(out, *n)
		}
	}
	sortNotes(out)
	return out
}

func sortNotes(ns []Note) {
	slices.SortFunc(ns, func(a, b Note) int { return strings.Compare(a.Path, b.Path) })
}

// foldKey is the case- and normalisation-insensitive form of s.
func foldKey(s string) string {
	return norm.NFC.String(strings.ToLower(norm.NFC.String(s)))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lastSegment returns the part of a slash-separated key after its last '/'.
func lastSegment(k string) string {
	return k[strings.LastIndexByte(k, '/')+1:]
}

// runePrefix returns the first n runes of s.
func runePrefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// linkKey is l.Key, computed from l.Target when a caller left it empty.
func linkKey(l Link) string {
	if l.Key == "" && l.Target != "" {
		return LinkKey(l.Target)
	}
	return l.Key
}
