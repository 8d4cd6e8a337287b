package indexer

import (
	"context"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// refreshChunk is how many paths Refresh applies as one batch.
const refreshChunk = 256

// Refresh brings the catalog in step with listed, the store's objects under
// folders (none: the whole vault) as List reports them: every path whose
// listing differs from what the catalog holds (a note by ETag and size, an
// attachment by size and time), and every path the catalog holds under
// folders that the listing lacks, is applied (re-read, or removed), all
// in the same batches, so that a folder renamed goes from its old name to
// its new one at once. It is the cheap half of Sync: no text index
// listing, no exclusive lock, so tools keep answering meanwhile. skip,
// when set, leaves out a listed object that differs (a file already known
// to be unindexable at that version). It returns the paths it applied and
// their errors, in order.
func (ix *Indexer) Refresh(ctx context.Context, folders []string, listed []store.Object, skip func(store.Object) bool) ([]string, []error) {
	prefixes := make([]string, 0, len(folders))
	for _, f := range folders {
		if f == "" {
			prefixes = nil
			break
		}
		prefixes = append(prefixes, strings.TrimSuffix(f, "/")+"/")
	}
	in := func(p string) bool {
		if len(prefixes) == 0 {
			return true
		}
		for _, pre := range prefixes {
			if strings.HasPrefix(p, pre) {
				return true
			}
		}
		return false
	}
	seen := make(map[string]bool, len(listed))
	var todo []string
	for _, o := range listed {
		if vault.Ignored(o.Path) || !in(o.Path) || seen[o.Path] {
			continue
		}
		seen[o.Path] = true
		if ix.holds(o) || (skip != nil && skip(o)) {
			continue
		}
		todo = append(todo, o.Path)
	}
	ix.Catalog.Each(func(n *vault.Note) {
		if in(n.Path) && !seen[n.Path] {
			todo = append(todo, n.Path)
		}
	})
	for _, a := range ix.Catalog.Attachments() {
		if in(a.Path) && !seen[a.Path] {
			todo = append(todo, a.Path)
		}
	}
	errs := make([]error, 0, len(todo))
	for i := 0; i < len(todo); i += refreshChunk {
		if ctx.Err() != nil {
			for range todo[i:] {
				errs = append(errs, ctx.Err())
			}
			break
		}
		errs = append(errs, ix.applyMany(ctx, todo[i:min(i+refreshChunk, len(todo))])...)
	}
	return todo, errs
}

// holds reports whether the catalog holds o as listed.
func (ix *Indexer) holds(o store.Object) bool {
	if vault.IsNotePath(o.Path) {
		n, ok := ix.Catalog.Note(o.Path)
		return ok && n.Path == o.Path && n.ETag == o.ETag && n.Size == o.Size
	}
	a, ok := ix.Catalog.Attachment(o.Path)
	return ok && a.Size == o.Size && a.Modified.Equal(o.Modified)
}
