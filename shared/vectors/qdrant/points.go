package qdrant

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// Payload fields.
const (
	fPath     = "path"
	fOrdinal  = "ordinal"
	fHash     = "hash"
	fNoteHash = "note_hash"
	fHeading  = "heading"
	fTags     = "tags"
	fDirs     = "dirs"
	fHead     = "head"
)

// Request sizes.
const (
	batchPoints = 256     // points per Upsert request
	batchBytes  = 4 << 20 // rough payload+vector bytes per Upsert request
	batchPaths  = 256     // paths per Delete request
	pageScroll  = 1024    // points per Scroll page without vectors
	pageVectors = 256     // points per Scroll page with vectors
)

// marker starts an encoded payload string (a Unicode noncharacter).
const marker = "\uFDD0"

// enc makes s valid UTF-8, reversibly (see the package doc).
func enc(s string) string {
	if utf8.ValidString(s) && !strings.HasPrefix(s, marker) {
		return s
	}
	return marker + base64.RawURLEncoding.EncodeToString([]byte(s))
}

// dec reverses enc; a string it cannot decode is returned as it is.
func dec(s string) string {
	rest, ok := strings.CutPrefix(s, marker)
	if !ok {
		return s
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return s
	}
	return string(b)
}

// dirs returns every folder holding path: the prefixes before each '/'.
func dirs(path string) []string {
	var out []string
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			out = append(out, path[:i])
		}
	}
	return out
}

func strList(ss []string) *qdrant.Value {
	vals := make([]*qdrant.Value, len(ss))
	for i, s := range ss {
		vals[i] = qdrant.NewValueString(enc(s))
	}
	return qdrant.NewValueFromList(vals...)
}

// Upsert implements vectors.Index.
func (ix *Index) Upsert(ctx context.Context, points ...vectors.Point) error {
	if err := ix.check(ctx); err != nil {
		return err
	}
	if len(points) == 0 {
		return nil
	}
	sp, err := ix.spaceFor(ctx, len(points[0].Vector))
	if err != nil {
		return err
	}
	if sp.Dim == 0 {
		return vectors.ErrNoSpace
	}
	notes, err := vectors.GroupPoints(points, sp.Dim)
	if err != nil {
		return fmt.Errorf("qdrant: %w", err)
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	paths := make([]string, len(notes))
	for i, n := range notes {
		paths[i] = n[0].Path
	}
	if err := ix.deletePaths(ctx, paths); err != nil {
		return err
	}
	var batch []*qdrant.PointStruct
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := ix.pts.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: ix.name, Wait: qdrant.PtrOf(true), Points: batch})
		batch, size = nil, 0
		if isNotFound(err) && ctx.Err() == nil {
			ix.setSpace(vectors.Space{}) // dropped by another process
			return fmt.Errorf("qdrant: upsert: %w", vectors.ErrNoSpace)
		}
		if err != nil {
			// Best effort: no half-written note stays searchable.
			_ = ix.deletePaths(ctx, paths)
			if status.Code(err) == codes.InvalidArgument && ctx.Err() == nil {
				// Reset elsewhere to another dimension since we checked?
				if now, lerr := ix.loadSpace(ctx); lerr == nil && now.Dim != sp.Dim {
					return fmt.Errorf("qdrant: upsert: %w: want %d now", vectors.ErrDimension, now.Dim)
				}
			}
			return wrap(ctx, "upsert", err)
		}
		return nil
	}
	for _, n := range notes {
		for i, p := range n {
			ps := ix.pointStruct(p, i == len(n)-1)
			sz := 4*len(p.Vector) + 64 + len(p.Path)*(2+strings.Count(p.Path, "/")) +
				len(p.Hash) + len(p.NoteHash) + len(p.Heading) + 2*len(strings.Join(p.Tags, ""))
			if len(batch) == batchPoints || (len(batch) > 0 && size+sz > batchBytes) {
				if err := flush(); err != nil {
					return err
				}
			}
			batch = append(batch, ps)
			size += sz
		}
	}
	return flush()
}

func (ix *Index) pointStruct(p vectors.Point, head bool) *qdrant.PointStruct {
	return &qdrant.PointStruct{
		Id:      qdrant.NewIDUUID(ix.pointID(p.Path, p.Ordinal)),
		Vectors: qdrant.NewVectorsDense(normalized(p.Vector)),
		Payload: map[string]*qdrant.Value{
			fPath:     qdrant.NewValueString(enc(p.Path)),
			fOrdinal:  qdrant.NewValueInt(int64(p.Ordinal)),
			fHash:     qdrant.NewValueString(enc(p.Hash)),
			fNoteHash: qdrant.NewValueString(enc(p.NoteHash)),
			fHeading:  qdrant.NewValueString(enc(p.Heading)),
			fTags:     strList(vault.ExpandTags(p.Tags)),
			fDirs:     strList(dirs(p.Path)),
			fHead:     qdrant.NewValueBool(head),
		},
	}
}

// normalized returns a unit-length copy of v (vectors.Normalize: Qdrant's
// float32 norm would overflow or underflow on huge or tiny vectors).
func normalized(v []float32) []float32 {
	out := slices.Clone(v)
	vectors.Normalize(out)
	return out
}

// Delete implements vectors.Index.
func (ix *Index) Delete(ctx context.Context, paths ...string) error {
	if err := ix.check(ctx); err != nil {
		return err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	return ix.deletePaths(ctx, paths)
}

// deletePaths removes the points of paths, batchPaths paths per request. A
// missing collection has nothing to delete.
func (ix *Index) deletePaths(ctx context.Context, paths []string) error {
	for chunk := range slices.Chunk(paths, batchPaths) {
		keys := make([]string, len(chunk))
		for i, p := range chunk {
			keys[i] = enc(p)
		}
		_, err := ix.pts.Delete(ctx, &qdrant.DeletePoints{
			CollectionName: ix.name, Wait: qdrant.PtrOf(true),
			Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords(fPath, keys...)}}),
		})
		if isNotFound(err) && ctx.Err() == nil {
			return nil
		}
		if err != nil {
			return wrap(ctx, "delete", err)
		}
	}
	return nil
}

// scroll calls fn with every point f admits, page by page. A missing
// collection has no points.
func (ix *Index) scroll(ctx context.Context, f *qdrant.Filter, fields []string, withVectors bool, fn func(*qdrant.RetrievedPoint)) error {
	limit := uint32(pageScroll)
	if withVectors {
		limit = pageVectors
	}
	req := &qdrant.ScrollPoints{
		CollectionName: ix.name, Filter: f, Limit: &limit,
		WithPayload: qdrant.NewWithPayloadInclude(fields...),
		WithVectors: qdrant.NewWithVectors(withVectors),
	}
	for {
		resp, err := ix.pts.Scroll(ctx, req)
		if isNotFound(err) && ctx.Err() == nil {
			return nil
		}
		if err != nil {
			return wrap(ctx, "scroll", err)
		}
		for _, p := range resp.GetResult() {
			fn(p)
		}
		if resp.NextPageOffset == nil {
			return nil
		}
		req.Offset = resp.NextPageOffset
	}
}

// Hashes implements vectors.Index. The vectors come back unit length.
func (ix *Index) Hashes(ctx context.Context, path string) (map[string][]float32, error) {
	if err := ix.check(ctx); err != nil {
		return nil, err
	}
	out := map[string][]float32{}
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(fPath, enc(path))}}
	err := ix.scroll(ctx, f, []string{fHash}, true, func(p *qdrant.RetrievedPoint) {
		v := p.GetVectors().GetVector()
		data := v.GetDense().GetData()
		if data == nil {
			data = v.GetData() // servers before 1.14 fill only the old field
		}
		out[dec(p.GetPayload()[fHash].GetStringValue())] = slices.Clone(data)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Notes implements vectors.Index: the notes with a head point (those whose
// last Upsert completed).
func (ix *Index) Notes(ctx context.Context) (map[string]string, error) {
	if err := ix.check(ctx); err != nil {
		return nil, err
	}
	out := map[string]string{}
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool(fHead, true)}}
	err := ix.scroll(ctx, f, []string{fPath, fNoteHash}, false, func(p *qdrant.RetrievedPoint) {
		pl := p.GetPayload()
		out[dec(pl[fPath].GetStringValue())] = dec(pl[fNoteHash].GetStringValue())
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
