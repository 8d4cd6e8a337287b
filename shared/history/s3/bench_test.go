package s3

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/history/diff"
	"github.com/sheaf-dev/sheaf/shared/history/historytest"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
)

// BenchmarkWrite: a compare-and-swap overwrite of a 10 KB note on
// versitygw: history off (a bucket without versioning, no metadata, no
// Record) and on (versioning, the attribution metadata, Record).
func BenchmarkWrite(b *testing.B) {
	srv := s3test.Start(b, s3test.Options{Versioning: true})
	for _, on := range []bool{false, true} {
		name := "history=off"
		if on {
			name = "history=on"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			vault := newVault(b, srv, on)
			rng := rand.New(rand.NewPCG(1, 1))
			note := historytest.Note(rng, 10<<10)
			if _, err := vault.Put(ctx, "n.md", note, store.PutOptions{}); err != nil {
				b.Fatal(err)
			}
			h, err := New(vault)
			if err != nil {
				b.Fatal(err)
			}
			w := &historytest.Writer{Vault: vault, History: h}
			var lat historytest.Latencies
			for i := 0; b.Loop(); i++ {
				note = historytest.Edit(rng, note, i)
				lat.Time(func() {
					if on {
						_, err = w.Put(ctx, "n.md", history.OpOverwrite, note, history.Change{Author: history.Author{Subject: "key:b"}, Transaction: ""})
					} else {
						var cur store.Object
						if _, cur, err = vault.Get(ctx, "n.md", 0); err == nil {
							_, err = vault.Put(ctx, "n.md", note, store.PutOptions{IfMatch: cur.ETag})
						}
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

// BenchmarkHistory1000: a 10 KB note written 1,000 times through Sheaf's
// write path on versitygw: the bytes the bucket's versions take, then
// listing, reading and diffing them.
func BenchmarkHistory1000(b *testing.B) {
	srv := s3test.Start(b, s3test.Options{Versioning: true})
	ctx := context.Background()
	vault := newVault(b, srv, true)
	h, err := New(vault)
	if err != nil {
		b.Fatal(err)
	}
	w := &historytest.Writer{Vault: vault, History: h}
	rng := rand.New(rand.NewPCG(2, 2))
	note := historytest.Note(rng, 10<<10)
	for i := range 1000 {
		op := history.OpOverwrite
		if i == 0 {
			op = history.OpWrite
		}
		if _, err := w.Put(ctx, "n.md", op, note, history.Change{Author: history.Author{Subject: "key:b"}}); err != nil {
			b.Fatal(err)
		}
		note = historytest.Edit(rng, note, i)
	}
	// What the bucket keeps: every version whole.
	var bytes int64
	in := &awss3.ListObjectVersionsInput{Bucket: aws.String(vaultBucket(vault)), Prefix: aws.String("vault/n.md")}
	for p := awss3.NewListObjectVersionsPaginator(srv.Client(b), in); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range out.Versions {
			bytes += aws.ToInt64(v.Size)
		}
	}
	first, err := h.List(ctx, "n.md", history.ListOptions{Limit: 1})
	if err != nil || len(first.Versions) == 0 {
		b.Fatal(err)
	}
	var ids []string
	after := ""
	for len(ids) < 1000 {
		p, err := h.List(ctx, "n.md", history.ListOptions{After: after, Limit: 200})
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range p.Versions {
			ids = append(ids, v.ID)
		}
		if !p.More {
			break
		}
		after = ids[len(ids)-1]
	}
	if len(ids) != 1000 {
		b.Fatalf("%d versions listed, want 1000", len(ids))
	}
	var list, deep, read, df historytest.Latencies
	for i := 0; b.Loop(); i++ {
		list.Time(func() { _, err = h.List(ctx, "n.md", history.ListOptions{}) })
		deep.Time(func() { _, err = h.List(ctx, "n.md", history.ListOptions{After: ids[900]}) })
		var a, c []byte
		read.Time(func() { a, _, err = h.Read(ctx, "n.md", ids[(i*37)%len(ids)]) })
		c, _, _ = h.Read(ctx, "n.md", ids[0])
		df.Time(func() { _ = diff.Diff("old", "now", a, c, diff.Options{Budget: 16 << 10}) })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bytes)/1024, "bucket-KiB/1000-edits")
	list.Report(b, "list")
	deep.Report(b, "list-page-at-900")
	read.Report(b, "read")
	df.Report(b, "diff")
}
