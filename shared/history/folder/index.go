package folder

import (
	"math"
	"time"

	"github.com/sheaf-dev/sheaf/shared/history"
)

// index is the log in memory: version records by path (oldest first), by
// ID and by transaction; the versions that others replaced; the holds.
type index struct {
	seq      uint64
	byPath   map[string][]*record
	ids      map[string]*record
	byTx     map[string][]*record
	replaced map[string]bool
	holds    map[string]time.Time
}

func newIndex() *index {
	return &index{
		byPath: map[string][]*record{}, ids: map[string]*record{}, byTx: map[string][]*record{},
		replaced: map[string]bool{}, holds: map[string]time.Time{},
	}
}

func (ix *index) add(r *record) {
	ix.seq = max(ix.seq, r.Seq)
	if r.Hold != "" {
		if r.Until.After(ix.holds[r.Hold]) {
			ix.holds[r.Hold] = r.Until
		}
		return
	}
	if r.V == nil {
		return
	}
	ix.byPath[r.V.Path] = append(ix.byPath[r.V.Path], r)
	ix.ids[r.V.ID] = r
	if r.V.Transaction != "" {
		ix.byTx[r.V.Transaction] = append(ix.byTx[r.V.Transaction], r)
	}
	if r.Replaces != "" {
		ix.replaced[r.Replaces] = true
	}
}

// head is the newest version of path that is not replaced (by ix or by
// more), or nil.
func (ix *index) head(path string, more ...map[string]bool) *record {
	recs := ix.byPath[path]
outer:
	for i := len(recs) - 1; i >= 0; i-- {
		id := recs[i].V.ID
		if ix.replaced[id] {
			continue
		}
		for _, m := range more {
			if m[id] {
				continue outer
			}
		}
		return recs[i]
	}
	return nil
}

// chain is the history of path, newest first, following moves: after an
// OpMove come the older versions of the path it came from (without the
// tombstone the move left there).
func (ix *index) chain(path string) []*record {
	var out []*record
	limit := uint64(math.MaxUint64)
	came := ""
	for path != "" {
		recs := ix.byPath[path]
		next := ""
		for i := len(recs) - 1; i >= 0; i-- {
			r := recs[i]
			if r.Seq >= limit || ix.replaced[r.V.ID] {
				continue
			}
			if r.V.Op == history.OpMoveAway && came != "" && r.V.To == came {
				continue
			}
			out = append(out, r)
			if r.V.Op == history.OpMove && r.V.From != "" && r.V.From != path {
				next, limit = r.V.From, r.Seq
				break
			}
		}
		came, path = path, next
	}
	return out
}

// pending stages the records of one Record call over the index, so that
// each change sees those before it, and nothing is indexed unless the
// append succeeds.
type pending struct {
	ix       *index
	seq      uint64
	recs     []*record
	replaced map[string]bool
}

func (ix *index) pending() *pending {
	return &pending{ix: ix, seq: ix.seq, replaced: map[string]bool{}}
}

func (p *pending) next() uint64 {
	p.seq++
	return p.seq
}

func (p *pending) add(r *record) {
	p.recs = append(p.recs, r)
	if r.Replaces != "" {
		p.replaced[r.Replaces] = true
	}
}

func (p *pending) head(path string) *record {
	for i := len(p.recs) - 1; i >= 0; i-- {
		if r := p.recs[i]; r.V != nil && r.V.Path == path && !p.replaced[r.V.ID] {
			return r
		}
	}
	return p.ix.head(path, p.replaced)
}

func (p *pending) byID(id string) *record {
	if id == "" {
		return nil
	}
	for _, r := range p.recs {
		if r.V != nil && r.V.ID == id {
			return r
		}
	}
	return p.ix.ids[id]
}
