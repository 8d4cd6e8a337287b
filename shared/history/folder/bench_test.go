package folder

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/history/diff"
	"github.com/sheaf-dev/sheaf/shared/history/historytest"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// BenchmarkWrite: a compare-and-swap overwrite of a 10 KB note (read, put
// If-Match, and with history the Record: blob and log fsynced), history on
// and off.
func BenchmarkWrite(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "history=off"
		if on {
			name = "history=on"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			vault := newVault(b)
			h, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			note := historytest.Note(rng, 10<<10)
			w := &historytest.Writer{Vault: vault, History: h}
			if _, err := w.Put(ctx, "n.md", history.OpWrite, note, history.Change{}); err != nil {
				b.Fatal(err)
			}
			var lat historytest.Latencies
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				note = historytest.Edit(rng, note, i)
				lat.Time(func() {
					if on {
						_, err = w.Put(ctx, "n.md", history.OpOverwrite, note, history.Change{Author: history.Author{Subject: "key:b"}})
					} else {
						err = plainPut(ctx, vault, "n.md", note)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			lat.Report(b, "write")
		})
	}
}

func plainPut(ctx context.Context, s store.Store, p string, data []byte) error {
	_, cur, err := s.Get(ctx, p, 0)
	if err != nil {
		return err
	}
	_, err = s.Put(ctx, p, data, store.PutOptions{IfMatch: cur.ETag})
	return err
}

// BenchmarkHistory1000: a 10 KB note edited 1,000 times: the state bytes
// that costs, then listing, reading and diffing its versions.
func BenchmarkHistory1000(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	h, err := Open(dir, Options{NoSync: true, PruneEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	rng := rand.New(rand.NewPCG(2, 2))
	note := historytest.Note(rng, 10<<10)
	prev := []byte(nil)
	for i := range 1000 {
		op := history.OpOverwrite
		if i == 0 {
			op = history.OpWrite
		}
		if _, err := h.Record(ctx, history.Change{Path: "n.md", Op: op, Data: note, Prev: prev}); err != nil {
			b.Fatal(err)
		}
		prev, note = note, historytest.Edit(rng, note, i)
	}
	var bytes int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			bytes += info.Size()
		}
		return nil
	})
	all, _ := h.List(ctx, "n.md", history.ListOptions{Limit: 2000})
	vs := all.Versions
	var list, deep, read, df historytest.Latencies
	for i := 0; b.Loop(); i++ {
		list.Time(func() { _, err = h.List(ctx, "n.md", history.ListOptions{}) })
		deep.Time(func() { _, err = h.List(ctx, "n.md", history.ListOptions{After: vs[900].ID}) })
		var a, c []byte
		read.Time(func() { a, _, err = h.Read(ctx, "n.md", vs[(i*37)%len(vs)].ID) })
		c, _, _ = h.Read(ctx, "n.md", vs[0].ID)
		df.Time(func() { _ = diff.Diff("old", "now", a, c, diff.Options{Budget: 16 << 10}) })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bytes)/1024, "state-KiB/1000-edits")
	b.ReportMetric(float64(len(note))/1024, "note-KiB")
	list.Report(b, "list")
	deep.Report(b, "list-page-at-900")
	read.Report(b, "read")
	df.Report(b, "diff")
}
