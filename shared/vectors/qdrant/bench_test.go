package qdrant

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vectors"
	"github.com/sheaf-dev/sheaf/shared/vectors/qdrant/qdrantfake"
)

// BenchmarkUpsertSearchNotes writes 10k points of 512 dims (1,000 notes of
// 10 passages) and runs 10 SearchNotes against the fake, reporting the RPCs
// each costs. The time is the fake's and the loopback's, not Qdrant's.
func BenchmarkUpsertSearchNotes(b *testing.B) {
	const notes, passages, dim, searches = 1000, 10, 512, 10
	srv := qdrantfake.New()
	ix := open(b, srv.Start(b))
	if err := ix.Reset(ctx, vectors.Space{Model: "bench", Dim: dim}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	randVec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = r.Float32()*2 - 1
		}
		return v
	}
	var pts []vectors.Point
	for n := range notes {
		path := fmt.Sprintf("folder%d/note%d.md", n%20, n)
		for p := range passages {
			pts = append(pts, vectors.Point{Path: path, Ordinal: p, Hash: fmt.Sprint(n, p), NoteHash: fmt.Sprint(n),
				Tags: []string{"bench/tag"}, Vector: randVec()})
		}
	}
	queries := make([][]float32, searches)
	for i := range queries {
		queries[i] = randVec()
	}
	var upsertRPCs, searchRPCs int
	for b.Loop() {
		srv.ResetCalls()
		if err := ix.Upsert(ctx, pts...); err != nil {
			b.Fatal(err)
		}
		upsertRPCs = len(srv.Calls())
		srv.ResetCalls()
		for _, q := range queries {
			hits, err := ix.SearchNotes(ctx, q, 10, vectors.Filter{Folder: "folder3", Tags: []string{"bench"}})
			if err != nil || len(hits) != 10 {
				b.Fatalf("SearchNotes = %d hits, %v", len(hits), err)
			}
		}
		searchRPCs = len(srv.Calls())
	}
	b.ReportMetric(float64(upsertRPCs), "upsert_rpcs")
	b.ReportMetric(float64(searchRPCs)/searches, "rpcs/search")
}
