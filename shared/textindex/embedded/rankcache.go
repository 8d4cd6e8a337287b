package embedded

import (
	"context"
	"fmt"
	"sync"
)

// A plain search ranks every matching note (BM25 in FTS5, about 2 µs a
// match) before it can return the first ten. rankCache keeps the top of the
// last few rankings so that the next page of a search, or the same search
// again, reads them instead of ranking every match again.
//
// An entry is used only while the index is unchanged: this process's write
// counter (Index.gen) and FTS5's structure record, which every committed
// write to notes_fts rewrites (also another process's), must both be what
// they were before the ranking ran. Paths, titles and passages are always
// read afresh; a note deleted since is skipped as before.
type rankCache struct {
	mu      sync.Mutex
	entries []rankEntry // most recently used last
}

// rankCacheSize bounds the rankings kept. Each keeps twice the notes up to
// the end of the page that ranked it, so the next page is there too: reading
// a hundred rows where ten are asked for costs a cheap search 10% more.
const rankCacheSize = 8

type rankEntry struct {
	key   string     // ranking query and arguments
	at    indexState // what it was ranked at
	top   []ranked   // the best len(top) notes
	total int        // matching notes
}

// rankPage is rank, served from the cache when it holds the page.
func (r ranking) rankPage(ctx context.Context, limit, offset int) ([]ranked, int, error) {
	ix := r.ix
	key := fmt.Sprintf("%s\x00%q", r.from, r.args)
	// Read before ranking: a write in between makes the entry look older
	// than its ranking, never newer, so it is only missed, never stale.
	now, err := ix.stateOf(ctx, "notes_fts")
	if err != nil {
		return r.rank(ctx, limit, offset)
	}
	c := &ix.ranks
	c.mu.Lock()
	for i, e := range c.entries {
		if e.key != key || !e.at.is(now) {
			continue
		}
		if offset+limit > len(e.top) && len(e.top) < e.total {
			break // the page reaches past what was kept
		}
		c.entries = append(append(c.entries[:i:i], c.entries[i+1:]...), e)
		c.mu.Unlock()
		return page(e.top, e.total, limit, offset)
	}
	c.mu.Unlock()

	top, total, err := r.rank(ctx, 2*(offset+limit), 0)
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	for i, e := range c.entries {
		if e.key == key {
			c.entries = append(c.entries[:i:i], c.entries[i+1:]...)
			break
		}
	}
	if len(c.entries) == rankCacheSize {
		c.entries = c.entries[1:]
	}
	c.entries = append(c.entries, rankEntry{key, now, top, total})
	c.mu.Unlock()
	return page(top, total, limit, offset)
}

// page returns top[offset:offset+limit] and total, or no notes and 0 past
// the end, as rank does.
func page(top []ranked, total, limit, offset int) ([]ranked, int, error) {
	if offset >= len(top) {
		return nil, 0, nil
	}
	return top[offset:min(offset+limit, len(top))], total, nil
}
