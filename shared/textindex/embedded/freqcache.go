package embedded

import (
	"context"
	"sync"
)

// freqCache keeps the note frequency of the index terms questions asked
// for: stems_vocab counts a term's notes by reading its whole doclist, a
// millisecond a question on a 10k-note vault for words most notes hold.
// Entries are used only while the index is unchanged, as in termCache.
type freqCache struct {
	mu  sync.Mutex
	at  indexState
	dfs map[string]int64
}

// maxFreqs bounds the terms freqCache keeps; past it, it starts again
// empty.
const maxFreqs = 1 << 16

// noteFreqs returns the number of notes whose stems_fts row holds each of
// toks: from the cache, or read.
func (ix *Index) noteFreqs(ctx context.Context, toks []string) (map[string]int64, error) {
	now, err := ix.stateOf(ctx, "stems_fts")
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(toks))
	var missing []string
	c := &ix.freqs
	c.mu.Lock()
	if !c.at.is(now) {
		c.at, c.dfs = now, nil
	}
	for _, tok := range toks {
		if df, ok := c.dfs[tok]; ok {
			out[tok] = df
		} else if _, asked := out[tok]; !asked {
			out[tok] = 0
			missing = append(missing, tok)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	for _, tok := range missing {
		if out[tok], err = ix.docFreq(ctx, tok); err != nil {
			return nil, err
		}
	}
	// Counts read one by one describe one state only if the index did not
	// change meanwhile.
	after, err := ix.stateOf(ctx, "stems_fts")
	if err != nil || !after.is(now) {
		return out, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.is(now) {
		return out, nil
	}
	if c.dfs == nil || len(c.dfs)+len(missing) > maxFreqs {
		c.dfs = make(map[string]int64, len(missing))
	}
	for _, tok := range missing {
		c.dfs[tok] = out[tok]
	}
	return out, nil
}
