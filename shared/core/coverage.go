package core

import (
	"context"
	"sync"
	"time"
)

// Coverage is embedded in every tool result. It says when an answer is not
// the whole truth and why, so no tool ever answers from an incomplete index,
// or with a cut list, as if it were complete. All its fields are absent from
// a complete answer.
type Coverage struct {
	Partial  bool      `json:"partial,omitempty" jsonschema:"true when this answer is incomplete: indexing and/or clipped say why"`
	Indexing *Indexing `json:"indexing,omitempty" jsonschema:"the vault's index pass was still running, or changes on disk were not indexed yet: the answer covers only what is indexed so far; ask again when it is done"`
	Clipped  []Clipped `json:"clipped,omitempty" jsonschema:"the response budget cut these lists of this answer: page on (next_offset) or narrow the request"`
	// Unindexed is not partial: those files are left out by design, and
	// said to be.
	Unindexed int      `json:"unindexed,omitempty" jsonschema:"Markdown files no index holds (too large to index, binary, unreadable): this answer cannot include them; get_vault_info.problems lists them; read_note still reads them (read_attachment one with binary content)"`
	Lagging   *Lagging `json:"lagging,omitempty" jsonschema:"notes this server wrote that the vault's shared index has not caught up with yet: this answer includes them, other servers of the vault show the older version until the indexer has processed the change"`
}

// Lagging lists this server's writes not yet in the vault's shared index.
type Lagging struct {
	Notes    []string `json:"notes" jsonschema:"their paths, oldest write first (at most 20)"`
	Count    int      `json:"count"`
	OldestMs int64    `json:"oldest_ms" jsonschema:"how long ago the oldest of them was written, in milliseconds"`
}

// Indexing is the progress of the index pass an answer came from.
type Indexing struct {
	State   string `json:"state" jsonschema:"starting or indexing (a pass over the vault), or catching-up (the index is complete but for the pending changes)"`
	Indexed int    `json:"indexed" jsonschema:"notes indexed so far in this pass"`
	Total   int    `json:"total" jsonschema:"notes this pass indexes (0 while the vault is being listed)"`
	Notes   int    `json:"notes,omitempty" jsonschema:"Markdown files in the vault, from its listing"`
	Pending int    `json:"pending,omitempty" jsonschema:"files or folders changed on disk that the index has not taken in yet (it does within about a second)"`
}

// Clipped says which list the response budget cut, and where to go on.
type Clipped struct {
	Field      string `json:"field" jsonschema:"the list that was cut, e.g. items"`
	Kept       int    `json:"kept" jsonschema:"entries returned"`
	Of         int    `json:"of" jsonschema:"entries the list had before the cut"`
	NextOffset *int   `json:"next_offset,omitempty" jsonschema:"pass it as offset to get the entries that were cut"`
	MaxBytes   int    `json:"max_bytes" jsonschema:"the response budget, serialized bytes of the whole result"`
}

// call is what the core knows about one tool call while it runs: the
// response budget, and the index state of the vaults the call read.
type call struct {
	budget int

	mu        sync.Mutex
	indexing  *Indexing
	unindexed int
	lagging   *Lagging
	after     []func() // run once the tool has answered (see afterAnswer)

	// spend counts the call toward the paid rate limit the first time
	// the core is about to spend on a provider (see charge); nil when the
	// door counts it already or keeps no limit.
	spend    func() error
	spendErr error
	spent    bool
}

// OnSpend has the call counted toward the paid rate limit, once, when the
// core first spends on the user's embeddings or LLM key for it: the doors
// set it for tools that are not paid in themselves but may be (search in
// semantic or hybrid mode, search_and_read with embeddings). A non-nil
// error from fn (rate-limited) becomes the call's error.
func (c *call) OnSpend(fn func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spend = fn
}

// charge counts the call in ctx toward the paid limit before the core
// spends on a provider; it returns the limit's error.
func charge(ctx context.Context) error {
	c := callFrom(ctx)
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.spent && c.spend != nil {
		c.spent, c.spendErr = true, c.spend()
	}
	return c.spendErr
}

// afterAnswer has fn run once the tool has answered, before the answer is
// sent: work the answer must not wait for.
func (c *call) afterAnswer(fn func()) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.after = append(c.after, fn)
}

// answered runs what afterAnswer deferred.
func (c *call) answered() {
	c.mu.Lock()
	after := c.after
	c.after = nil
	c.mu.Unlock()
	for _, fn := range after {
		fn()
	}
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// noteIndexing records that the call read an index whose pass had not
// finished.
func (c *call) noteIndexing(ix *Indexing) {
	if c == nil || ix == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.indexing == nil {
		c.indexing = ix
	}
}

// noteLagging records the writes of this server the shared index lacks.
func (c *call) noteLagging(lags []Lag, now time.Time) {
	if c == nil || len(lags) == 0 {
		return
	}
	lg := &Lagging{Count: len(lags), OldestMs: now.Sub(lags[0].Since).Milliseconds(), Notes: []string{}}
	for _, l := range lags[:min(len(lags), 20)] {
		lg.Notes = append(lg.Notes, l.Path)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lagging = lg
}

func (c *call) lagged() *Lagging {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lagging
}

// indexed is the index state the call's answer came from, nil when every
// index it read was complete, and how many files no index holds.
func (c *call) indexed() (*Indexing, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.indexing, c.unindexed
}

// noteUnindexed records files the index read by the call does not hold.
func (c *call) noteUnindexed(n int) {
	if c == nil || n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unindexed = max(c.unindexed, n)
}

// DefaultIndexWait is how long a call that arrives during an index pass
// waits for it before answering from what is indexed so far.
const DefaultIndexWait = 5 * time.Second

// awaitIndex waits, up to the vault's IndexWait, for the vault's current
// index pass; open then marks the call partial if it is still running.
func (v *Vault) awaitIndex(ctx context.Context) error {
	if v.Ready == nil || v.IndexWait < 0 {
		return nil
	}
	ready := v.Ready()
	if ready == nil {
		return nil
	}
	wait := v.IndexWait
	if wait == 0 {
		wait = DefaultIndexWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// status is the vault's index status; a vault without an indexer is ready.
func (v *Vault) status() IndexStatus {
	if v.Status == nil {
		return IndexStatus{State: "ready"}
	}
	return v.Status()
}

// Call is the state of one call as a door handles it: it makes one per
// call (NewCall), puts it in the call's context (WithCall) before calling
// the core, reads back what the answer must say of its coverage
// (Coverage) and runs what the core deferred once it has answered
// (Answered).
type Call = call

// NewCall starts the state of one call whose answer may take budget
// serialized bytes (0: DefaultMaxResponseBytes).
func NewCall(budget int) *Call { return &call{budget: budget} }

// WithCall returns ctx carrying the call state c.
func WithCall(ctx context.Context, c *Call) context.Context { return withCall(ctx, c) }

// CallFrom returns the call state in ctx, nil when there is none.
func CallFrom(ctx context.Context) *Call { return callFrom(ctx) }

// Budget is the most serialized bytes the call's answer may take.
func (c *call) Budget() int {
	if c == nil || c.budget <= 0 {
		return DefaultMaxResponseBytes
	}
	return c.budget
}

// Coverage is what the answer of the call must say of the indexes it read:
// the index pass still running (nil when none was), the files no index
// holds, this server's writes the shared index lacks.
func (c *call) Coverage() (indexing *Indexing, unindexed int, lagging *Lagging) {
	ix, n := c.indexed()
	return ix, n, c.lagged()
}

// Answered runs what the core deferred until the call has answered.
func (c *call) Answered() { c.answered() }

// Coverable is an answer that embeds Coverage.
type Coverable interface{ Covered() *Coverage }

// Covered gives the doors the embedded Coverage of any answer.
func (c *Coverage) Covered() *Coverage { return c }

// budgetOf is the response budget a handler that fits its own answer (a
// page) has in the call in ctx: what the core adds afterwards (coverage)
// is kept aside.
func budgetOf(ctx context.Context) int {
	b := DefaultMaxResponseBytes
	if c := callFrom(ctx); c != nil && c.budget > 0 {
		b = c.budget
	}
	return b - coverageReserve
}

// coverageReserve bounds what Coverage's indexing and unindexed add to a
// result, both copies.
const coverageReserve = 512
