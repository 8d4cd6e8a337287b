package embedded

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// minChunk is the fewest points worth a goroutine of their own.
const minChunk = 4096

// Search implements vectors.Index.
func (ix *Index) Search(ctx context.Context, query []float32, k int, f vectors.Filter) ([]vectors.Hit, error) {
	return ix.search(ctx, query, k, f, false)
}

// SearchNotes implements vectors.Index.
func (ix *Index) SearchNotes(ctx context.Context, query []float32, k int, f vectors.Filter) ([]vectors.Hit, error) {
	return ix.search(ctx, query, k, f, true)
}

func (ix *Index) search(ctx context.Context, query []float32, k int, f vectors.Filter, byNote bool) ([]vectors.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, errClosed
	}
	dim := ix.space.Dim
	if dim == 0 {
		return nil, nil
	}
	if err := vectors.CheckVector(query, dim); err != nil {
		return nil, fmt.Errorf("embedded: search: %w", err)
	}
	if k <= 0 || len(ix.pts) == 0 {
		return nil, nil
	}
	q := slices.Clone(query)
	vectors.Normalize(q)

	cands, all := ix.candidates(f)
	m := len(cands)
	if all {
		m = len(ix.pts)
	}
	if m == 0 {
		return nil, nil
	}
	buf := getScores(m)
	defer scorePool.Put(buf)
	scores := *buf
	ix.score(q, cands, all, scores)

	at := func(j int) int32 {
		if all {
			return int32(j)
		}
		return cands[j]
	}
	top := topK{ix: ix, k: k}
	if !byNote {
		for j, s := range scores {
			top.offer(s, at(j))
		}
	} else {
		best := make([]int32, len(ix.notes)) // note id -> 1 + position in scores of its best point
		for j, s := range scores {
			i := at(j)
			n := ix.pts[i].note
			if b := int(best[n]) - 1; b < 0 || ix.better(s, i, scores[b], at(b)) {
				best[n] = int32(j + 1)
			}
		}
		for _, b := range best {
			if b > 0 {
				top.offer(scores[b-1], at(int(b-1)))
			}
		}
	}
	return top.hits(), nil
}

// candidates resolves f to the points it admits, in increasing order, or
// all == true when it admits every point.
func (ix *Index) candidates(f vectors.Filter) (cands []int32, all bool) {
	tagOK := ix.tagMatch(f)
	pathFilter := f
	pathFilter.Paths = nil
	noPath := f.PathPrefix == "" && strings.Trim(f.Folder, "/") == ""
	if f.Paths == nil && noPath && tagOK == nil {
		return nil, true
	}
	admit := func(i int32) bool { return tagOK == nil || tagOK[ix.pts[i].tagset] }

	noteOK := make([]bool, len(ix.notes))
	if f.Paths != nil {
		// A short list of notes: gather their points directly.
		var ids []int32
		n := 0
		for _, p := range f.Paths {
			if id, ok := ix.byKey[p]; ok && !noteOK[id] && pathFilter.MatchPath(p) {
				noteOK[id] = true
				ids = append(ids, id)
				n += len(ix.notes[id].points)
			}
		}
		if n*8 < len(ix.pts) {
			for _, id := range ids {
				for _, i := range ix.notes[id].points {
					if admit(i) {
						cands = append(cands, i)
					}
				}
			}
			slices.Sort(cands)
			return cands, false
		}
	} else if !noPath {
		for id, n := range ix.notes {
			noteOK[id] = n.path != "" && pathFilter.MatchPath(n.path)
		}
	} else {
		for id, n := range ix.notes {
			noteOK[id] = n.path != ""
		}
	}
	for i, p := range ix.pts {
		if noteOK[p.note] && admit(int32(i)) {
			cands = append(cands, int32(i))
		}
	}
	return cands, false
}

// tagMatch returns, by tagset id, whether the set has every filter tag;
// nil when f has no tags.
func (ix *Index) tagMatch(f vectors.Filter) []bool {
	if !slices.ContainsFunc(f.Tags, func(t string) bool { return vault.NormalizeTag(t) != "" }) {
		return nil
	}
	ok := make([]bool, len(ix.tags.sets))
	for id, s := range ix.tags.sets {
		ok[id] = s.refs > 0 && f.MatchTags(s.keys)
	}
	return ok
}

// score writes the dot product of q with each candidate's vector into
// scores, splitting the work over the available cores.
func (ix *Index) score(q []float32, cands []int32, all bool, scores []float32) {
	dim := len(q)
	run := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			i := j
			if !all {
				i = int(cands[j])
			}
			scores[j] = dot(q, ix.slab[i*dim:(i+1)*dim])
		}
	}
	m := len(scores)
	workers := min(runtime.GOMAXPROCS(0), m/minChunk)
	if workers <= 1 {
		run(0, m)
		return
	}
	var wg sync.WaitGroup
	step := (m + workers - 1) / workers
	for lo := 0; lo < m; lo += step {
		hi := min(lo+step, m)
		wg.Go(func() { run(lo, hi) })
	}
	wg.Wait()
}

// dot is the inner product of two equal-length vectors, with eight
// independent accumulators so the additions pipeline.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

var scorePool sync.Pool // of *[]float32

func getScores(n int) *[]float32 {
	if p, ok := scorePool.Get().(*[]float32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

// better orders hits: higher score first, then path, then ordinal, so equal
// scores rank the same way every time.
func (ix *Index) better(sa float32, a int32, sb float32, b int32) bool {
	if sa != sb {
		return sa > sb
	}
	pa, pb := &ix.pts[a], &ix.pts[b]
	if pa.note != pb.note {
		return ix.notes[pa.note].path < ix.notes[pb.note].path
	}
	return pa.ordinal < pb.ordinal
}

// topK keeps the k best points seen in a min-heap (worst at the root).
type topK struct {
	ix *Index
	k  int
	h  []scored
}

type scored struct {
	s float32
	i int32
}

func (t *topK) worse(a, b int) bool {
	return t.ix.better(t.h[b].s, t.h[b].i, t.h[a].s, t.h[a].i)
}

func (t *topK) offer(s float32, i int32) {
	if len(t.h) < t.k {
		t.h = append(t.h, scored{s, i})
		for c := len(t.h) - 1; c > 0; {
			p := (c - 1) / 2
			if !t.worse(c, p) {
				break
			}
			t.h[c], t.h[p] = t.h[p], t.h[c]
			c = p
		}
		return
	}
	if !t.ix.better(s, i, t.h[0].s, t.h[0].i) {
		return
	}
	t.h[0] = scored{s, i}
	for p := 0; ; {
		c := 2*p + 1
		if c >= len(t.h) {
			break
		}
		if c+1 < len(t.h) && t.worse(c+1, c) {
			c++
		}
		if !t.worse(c, p) {
			break
		}
		t.h[c], t.h[p] = t.h[p], t.h[c]
		p = c
	}
}

func (t *topK) hits() []vectors.Hit {
	slices.SortFunc(t.h, func(a, b scored) int {
		if t.ix.better(a.s, a.i, b.s, b.i) {
			return -1
		}
		return 1
	})
	out := make([]vectors.Hit, len(t.h))
	for n, e := range t.h {
		p := t.ix.pts[e.i]
		out[n] = vectors.Hit{Path: t.ix.notes[p.note].path, Ordinal: p.ordinal, Heading: p.heading, Score: e.s}
	}
	return out
}
