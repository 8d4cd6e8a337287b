package embedded

import (
	"context"
	"sync"
)

// noteCache keeps the question lane's notes as readAskNotes reads them
// (their names, headings, metadata and passages' stems), so that a note
// in the first-stage pool of one question after another is read from
// SQLite once: reading the pool's 50 notes was about a quarter of a
// question's CPU on a 10k-note vault. Like the term caches it serves
// entries only while the index is as it was when they were read (this
// process's write counter and stems_fts's structure record), and it
// holds at most noteCacheBytes.
type noteCache struct {
	mu     sync.Mutex
	at     indexState // what the notes were read at
	notes  map[int64]*noteEntry
	bytes  int    // the cost of all entries (noteCost)
	clock  uint64 // last use, for eviction
	budget int    // bytes kept at most; 0 is noteCacheBytes
}

type noteEntry struct {
	note askNote // as read: no score, best -1
	cost int
	used uint64
}

// noteCacheBytes bounds the note cache: about 3,600 notes of the 10k
// bench vault (4.6 KB each, their terms held folded in one string).
const noteCacheBytes = 16 << 20

// loadAskNotes reads the notes of ids for the question lane, from the
// cache when the index is unchanged, in ids' order. A note deleted since
// the ranking comes back gone (and is not kept).
func (ix *Index) loadAskNotes(ctx context.Context, ids []int64) ([]*askNote, error) {
	now, err := ix.stateOf(ctx, "stems_fts")
	if err != nil {
		return nil, err
	}
	c := &ix.notes
	out := make([]*askNote, len(ids))
	var missing []int
	c.mu.Lock()
	if !c.at.is(now) {
		c.at, c.notes, c.bytes = now, nil, 0
	}
	for i, id := range ids {
		if e, ok := c.notes[id]; ok {
			c.clock++
			e.used = c.clock
			n := e.note
			out[i] = &n
		} else {
			missing = append(missing, i)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	want := make([]int64, len(missing))
	for k, i := range missing {
		want[k] = ids[i]
	}
	got, err := ix.readAskNotes(ctx, want)
	if err != nil {
		return nil, err
	}
	read := make([]askNote, 0, len(missing))
	for k, i := range missing {
		out[i] = got[k]
		if !got[k].gone {
			read = append(read, *got[k])
		}
	}
	if len(read) == 0 {
		return out, nil
	}
	// What was read describes the state read first only if the index did
	// not change meanwhile: keep it only then.
	after, err := ix.stateOf(ctx, "stems_fts")
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if after.is(now) && c.at.is(now) {
		for _, n := range read {
			c.add(n)
		}
	}
	return out, nil
}

// add keeps note n. c.mu is held.
func (c *noteCache) add(n askNote) {
	cost, budget := noteCost(&n), c.budget
	if budget == 0 {
		budget = noteCacheBytes
	}
	if cost > budget/4 {
		return
	}
	if c.notes == nil {
		c.notes = map[int64]*noteEntry{}
	}
	if old, ok := c.notes[n.id]; ok {
		c.bytes -= old.cost
		delete(c.notes, n.id)
	}
	if c.bytes+cost > budget {
		c.evict(budget*3/4 - cost)
	}
	c.clock++
	c.notes[n.id] = &noteEntry{note: n, cost: cost, used: c.clock}
	c.bytes += cost
}

// evict drops the least recently used notes until the rest cost at most
// keep. c.mu is held.
func (c *noteCache) evict(keep int) {
	for _, id := range leastRecent(c.notes, func(e *noteEntry) uint64 { return e.used }) {
		if c.bytes <= keep {
			return
		}
		c.bytes -= c.notes[id].cost
		delete(c.notes, id)
	}
}

// noteCost estimates the bytes note n holds: its strings and headers.
func noteCost(n *askNote) int {
	const header = 64
	cost := header*4 + len(n.path) + len(n.title) + len(n.lang) + len(n.names) + len(n.heads) + len(n.meta)
	for _, p := range n.passages {
		cost += header + len(p.terms)
	}
	return cost
}
