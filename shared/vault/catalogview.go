package vault

import (
	"maps"
	"slices"
)

// Filter returns a new Catalog holding only the notes, attachments and
// problems whose paths keep admits: the vault as a caller limited to some
// folders sees it. Links are resolved against what it holds, so a link to a
// note it leaves out reads as unresolved, and counts (tags, backlinks,
// orphans) count only what it holds. The result is a snapshot: later
// changes to c do not reach it. Its Generation is c's when it was taken,
// and Base returns c.
func (c *Catalog) Filter(keep func(path string) bool) *Catalog {
	c.mu.RLock()
	defer c.mu.RUnlock()
	notes := make([]*Note, 0, len(c.notes))
	for p, n := range c.notes {
		if keep(p) {
			notes = append(notes, n)
		}
	}
	f := loadCatalog(notes, 0)
	for p, a := range c.atts {
		if keep(p) {
			f.upsertAttachmentLocked(a)
		}
	}
	for p, why := range c.problems {
		if keep(p) {
			f.problems[p] = why
		}
	}
	f.gen, f.indexedAt, f.base = c.gen, c.indexedAt, c
	if c.base != nil {
		f.base = c.base
	}
	return f
}

// Base is the catalog c was filtered from, or nil when c is not a filtered
// view.
func (c *Catalog) Base() *Catalog { return c.base }

// Resync brings c, a catalog made by Filter, up to date with base (the
// catalog it was filtered from, or a newer one of the same vault, such as
// a reloaded snapshot) under keep, touching only what differs: a note whose
// version (hash, ETag, size, time) is unchanged keeps its place. It costs
// a lookup per note plus the work of the changed ones, against Filter's
// rebuild of every index. Afterwards Base returns base.
func (c *Catalog) Resync(base *Catalog, keep func(path string) bool) {
	base.mu.RLock()
	defer base.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := false
	for p, old := range c.notes {
		if n := base.notes[p]; n == nil || !keep(p) {
			c.unindex(old)
			delete(c.notes, p)
			changed = true
		}
	}
	for p, n := range base.notes {
		if old := c.notes[p]; (old == nil || !sameVersion(old, n)) && keep(p) {
			c.upsertLocked(n)
			changed = true
		}
	}
	for p, a := range c.atts {
		if b, ok := base.atts[p]; !ok || b != a || !keep(p) {
			k := LinkKey(p)
			c.attKeys.del(k, p)
			c.attBases.del(lastSegment(k), p)
			delete(c.atts, p)
			changed = true
		}
	}
	for p, a := range base.atts {
		if _, ok := c.atts[p]; !ok && keep(p) {
			c.upsertAttachmentLocked(a)
			changed = true
		}
	}
	problems := map[string]string{}
	for p, why := range base.problems {
		if keep(p) {
			problems[p] = why
		}
	}
	if !maps.Equal(problems, c.problems) {
		c.problems, changed = problems, true
	}
	if changed || !c.indexedAt.Equal(base.indexedAt) {
		c.indexedAt = base.indexedAt
		c.gen++
	}
	c.base = base
	if base.base != nil {
		c.base = base.base
	}
}

// sameVersion reports whether two notes of one path are the same version.
func sameVersion(a, b *Note) bool {
	return a == b || (a.Hash != "" && a.Hash == b.Hash && a.ETag == b.ETag && a.Size == b.Size && a.Modified.Equal(b.Modified))
}

// Paths returns the paths of every note, sorted.
func (c *Catalog) Paths() []string {
	c.mu.RLock()
	out := make([]string, 0, len(c.notes))
	for p := range c.notes {
		out = append(out, p)
	}
	c.mu.RUnlock()
	slices.Sort(out)
	return out
}
