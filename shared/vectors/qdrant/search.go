package qdrant

import (
	"context"
	"fmt"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

const (
	pageQuery = 1024   // hits per Query request
	minPost   = 64     // fewest hits fetched when a prefix is checked here
	maxGroups = 10_000 // most notes one SearchNotes returns
)

// plan is a vectors.Filter translated for Qdrant.
type plan struct {
	filter *qdrant.Filter // nil: no condition
	prefix string         // hits' paths must also start with this (checked here)
	none   bool           // the filter admits nothing
}

func (p plan) admits(path string) bool { return strings.HasPrefix(path, p.prefix) }

// translate turns f into Qdrant conditions, leaving to the caller only the
// part of a PathPrefix after its last '/' (see the package doc).
func translate(f vectors.Filter) plan {
	var must []*qdrant.Condition
	var p plan
	if f.Paths != nil {
		// The path conditions are resolved here, on the listed paths.
		var keys []string
		seen := map[string]bool{}
		for _, path := range f.Paths {
			if f.MatchPath(path) && !seen[path] {
				seen[path] = true
				keys = append(keys, enc(path))
			}
		}
		if len(keys) == 0 {
			return plan{none: true}
		}
		must = append(must, qdrant.NewMatchKeywords(fPath, keys...))
	} else {
		if dir := strings.Trim(f.Folder, "/"); dir != "" {
			must = append(must, qdrant.NewMatchKeyword(fDirs, enc(dir)))
		}
		if pre := f.PathPrefix; pre != "" {
			i := strings.LastIndexByte(pre, '/')
			if i > 0 {
				// "a/b/" is in dirs exactly when the path starts with "a/b/".
				must = append(must, qdrant.NewMatchKeyword(fDirs, enc(pre[:i])))
			}
			if i == 0 || i < len(pre)-1 {
				p.prefix = pre
			}
		}
	}
	for _, t := range f.Tags {
		if k := vault.NormalizeTag(t); k != "" {
			must = append(must, qdrant.NewMatchKeyword(fTags, enc(k)))
		}
	}
	if len(must) > 0 {
		p.filter = &qdrant.Filter{Must: must}
	}
	return p
}

// Search implements vectors.Index.
func (ix *Index) Search(ctx context.Context, query []float32, k int, f vectors.Filter) ([]vectors.Hit, error) {
	q, p, err := ix.prepare(ctx, query, k, f)
	if q == nil || err != nil {
		return nil, err
	}
	page := uint64(min(k, pageQuery))
	if p.prefix != "" {
		page = uint64(min(max(4*k, minPost), pageQuery))
	}
	var hits []vectors.Hit
	seen := map[string]bool{} // point ids: pages may overlap under writes
	for offset := uint64(0); ; offset += page {
		req := &qdrant.QueryPoints{
			CollectionName: ix.name, Query: qdrant.NewQueryDense(q), Filter: p.filter,
			Limit: qdrant.PtrOf(page), WithPayload: qdrant.NewWithPayloadInclude(fPath, fOrdinal, fHeading),
		}
		if offset > 0 {
			req.Offset = qdrant.PtrOf(offset)
		}
		resp, err := ix.pts.Query(ctx, req)
		if err != nil {
			return nil, ix.searchErr(ctx, err, len(query))
		}
		for _, sp := range resp.GetResult() {
			id := sp.GetId().GetUuid()
			if h := hitOf(sp); p.admits(h.Path) && !seen[id] {
				seen[id] = true
				if hits = append(hits, h); len(hits) == k {
					return hits, nil
				}
			}
		}
		if uint64(len(resp.GetResult())) < page {
			return hits, nil
		}
	}
}

// SearchNotes implements vectors.Index with Qdrant's group search (group_by
// path, one hit per group). It returns at most maxGroups notes.
func (ix *Index) SearchNotes(ctx context.Context, query []float32, k int, f vectors.Filter) ([]vectors.Hit, error) {
	q, p, err := ix.prepare(ctx, query, k, f)
	if q == nil || err != nil {
		return nil, err
	}
	k = min(k, maxGroups)
	limit := uint64(k)
	if p.prefix != "" {
		limit = uint64(min(max(4*k, minPost), maxGroups))
	}
	for {
		resp, err := ix.pts.QueryGroups(ctx, &qdrant.QueryPointGroups{
			CollectionName: ix.name, Query: qdrant.NewQueryDense(q), Filter: p.filter,
			Limit: qdrant.PtrOf(limit), GroupSize: qdrant.PtrOf(uint64(1)), GroupBy: fPath,
			WithPayload: qdrant.NewWithPayloadInclude(fPath, fOrdinal, fHeading),
		})
		if err != nil {
			return nil, ix.searchErr(ctx, err, len(query))
		}
		groups := resp.GetResult().GetGroups()
		var hits []vectors.Hit
		for _, g := range groups {
			if len(g.GetHits()) == 0 {
				continue
			}
			if h := hitOf(g.Hits[0]); p.admits(h.Path) {
				if hits = append(hits, h); len(hits) == k {
					break
				}
			}
		}
		if len(hits) == k || uint64(len(groups)) < limit || limit == maxGroups {
			return hits, nil
		}
		limit = min(4*limit, maxGroups)
	}
}

// prepare checks a search's arguments. A nil query with a nil error means
// there is nothing to find.
func (ix *Index) prepare(ctx context.Context, query []float32, k int, f vectors.Filter) ([]float32, plan, error) {
	if err := ix.check(ctx); err != nil {
		return nil, plan{}, err
	}
	sp, err := ix.spaceFor(ctx, len(query))
	if err != nil || sp.Dim == 0 {
		return nil, plan{}, err
	}
	if err := vectors.CheckVector(query, sp.Dim); err != nil {
		return nil, plan{}, fmt.Errorf("qdrant: search: %w", err)
	}
	p := translate(f)
	if k <= 0 || p.none {
		return nil, plan{}, nil
	}
	return normalized(query), p, nil
}

// searchErr maps a failed search: a collection dropped meanwhile has
// nothing to find, and a dimension changed meanwhile is ErrDimension.
func (ix *Index) searchErr(ctx context.Context, err error, dim int) error {
	if ctx.Err() == nil {
		switch status.Code(err) {
		case codes.NotFound:
			ix.setSpace(vectors.Space{})
			return nil
		case codes.InvalidArgument:
			if sp, lerr := ix.loadSpace(ctx); lerr == nil && sp.Dim != dim {
				return fmt.Errorf("qdrant: search: %w: got %d, want %d", vectors.ErrDimension, dim, sp.Dim)
			}
		}
	}
	return wrap(ctx, "search", err)
}

func hitOf(sp *qdrant.ScoredPoint) vectors.Hit {
	pl := sp.GetPayload()
	return vectors.Hit{
		Path:    dec(pl[fPath].GetStringValue()),
		Ordinal: int(pl[fOrdinal].GetIntegerValue()),
		Heading: dec(pl[fHeading].GetStringValue()),
		Score:   sp.GetScore(),
	}
}
