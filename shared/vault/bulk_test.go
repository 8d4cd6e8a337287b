package vault

import (
	"runtime/debug"
	"sync"
	"testing"
)

// Bulk pauses the collector while any burst runs and restores the setting
// once the last one ends, however they overlap.
func TestBulkRestoresGC(t *testing.T) {
	old := debug.SetGCPercent(137)
	defer debug.SetGCPercent(old)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			Bulk(func() {
				if p := debug.SetGCPercent(-1); p != -1 {
					t.Errorf("inside Bulk the GC percent is %d", p)
				}
			})
		})
	}
	wg.Wait()
	if p := debug.SetGCPercent(137); p != 137 {
		t.Fatalf("after Bulk the GC percent is %d, want 137", p)
	}
}
