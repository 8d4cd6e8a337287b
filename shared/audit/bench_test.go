package audit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

// BenchmarkCounts100k: retrieval counts over a vault whose 100,000 paths
// have all been read. "cached" is what a read tool pays per call inside
// CountsTTL; "refresh" is reading the base (and a delta) again after it.
func BenchmarkCounts100k(b *testing.B) {
	ctx := context.Background()
	st, err := fs.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	l, err := New(Options{Store: st, Instance: "bench", FlushEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100_000 {
		l.Record(Record{Tool: "read_note", Path: fmt.Sprintf("folder-%d/note-%d.md", i%100, i)})
	}
	if err := l.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	l.Record(Record{Tool: "read_note", Path: "folder-1/note-1.md"})
	if err := l.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	var size int64
	_ = st.List(ctx, DefaultPrefix+baseDir, func(o store.Object) error { size += o.Size; return nil })
	b.Logf("base: %d bytes in %d shards for 100k paths", size, baseShards)
	paths := []string{"folder-1/note-1.md", "folder-7/note-7.md"}
	b.Run("cached", func(b *testing.B) {
		l.o.CountsTTL = time.Hour
		if _, err := l.Counts(ctx, paths); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if m, err := l.Counts(ctx, paths); err != nil || m[paths[0]] != 2 {
				b.Fatal(m, err)
			}
		}
	})
	b.Run("refresh", func(b *testing.B) {
		for b.Loop() {
			l.viewMu.Lock()
			l.view = nil
			l.viewMu.Unlock()
			if m, err := l.Counts(ctx, paths); err != nil || m[paths[0]] != 2 {
				b.Fatal(m, err)
			}
		}
	})
}
