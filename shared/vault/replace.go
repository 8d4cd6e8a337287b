package vault

// ReplaceWith makes c hold what src holds, in place, rewriting only the
// entries that differ: for a catalog shared with readers that keep the
// pointer (the indexer's, after another writer's save replaced it).
func (c *Catalog) ReplaceWith(src *Catalog) {
	keep := map[string]bool{}
	for _, n := range src.Notes() {
		keep[n.Path] = true
		if o, ok := c.Note(n.Path); ok && o.Path == n.Path && o.ETag == n.ETag && o.Hash == n.Hash && o.Size == n.Size && o.Modified.Equal(n.Modified) {
			continue
		}
		c.Upsert(n)
	}
	for _, n := range c.Notes() {
		if !keep[n.Path] {
			c.Remove(n.Path)
		}
	}
	clear(keep)
	for _, a := range src.Attachments() {
		keep[a.Path] = true
		c.UpsertAttachment(a)
	}
	for _, a := range c.Attachments() {
		if !keep[a.Path] {
			c.RemoveAttachment(a.Path)
		}
	}
	theirs := src.Problems()
	for p, why := range theirs {
		c.SetProblem(p, why)
	}
	for p := range c.Problems() {
		if _, ok := theirs[p]; !ok {
			c.SetProblem(p, "")
		}
	}
	c.SetIndexedAt(src.IndexedAt())
}
