package vault

import (
	"runtime/debug"
	"sync"
)

// Bulk runs fn, a burst of allocation whose result stays live (a catalog
// loaded or indexed in bulk), with the garbage collector paused: collecting
// while the live heap only grows finds little garbage and costs a third of
// a cold load. A memory limit (GOMEMLIMIT, which the Lambda functions set)
// still makes the collector run when the heap nears it. Concurrent bursts
// share one pause; the previous setting comes back when the last ends.
func Bulk(fn func()) {
	bulkMu.Lock()
	if bulkDepth == 0 {
		bulkGC = debug.SetGCPercent(-1)
	}
	bulkDepth++
	bulkMu.Unlock()
	defer func() {
		bulkMu.Lock()
		defer bulkMu.Unlock()
		if bulkDepth--; bulkDepth == 0 {
			debug.SetGCPercent(bulkGC)
		}
	}()
	fn()
}

var (
	bulkMu    sync.Mutex
	bulkDepth int
	bulkGC    int // the GC percent to restore
)
