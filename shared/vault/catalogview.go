package vault

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
	f := newCatalog(len(notes), 0)
	f.load(notes)
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
