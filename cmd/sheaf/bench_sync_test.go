package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// BenchmarkSyncCloud pushes a generated vault (SHEAF_BENCH_SYNC_NOTES
// notes, 10,000 by default, an attachment every 25th) with `sheaf sync
// --wait` to versitygw while `sheaf reconcile --webhook` indexes what the
// bucket's events announce, then syncs again with nothing changed. It
// reports files/s sent, bytes sent, the seconds from the sync's start to
// the index showing everything (time to searchable), and the files the
// second sync sent (0). Run with -benchtime 1x.
func BenchmarkSyncCloud(b *testing.B) {
	notes := 10000
	if n, err := strconv.Atoi(os.Getenv("SHEAF_BENCH_SYNC_NOTES")); err == nil && n > 0 {
		notes = n
	}
	dir := filepath.Join(b.TempDir(), "vault")
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: notes, Seed: 1, AttachmentsEvery: 25}); err != nil {
		b.Fatal(err)
	}
	took := regexp.MustCompile(`the cloud index shows all \d+ changes \(([0-9.]+)s\)`)
	for b.Loop() {
		v := indexedCloudVault(b)
		state := b.TempDir()
		start := time.Now()
		out := mustSync(b, v, dir, state, "--wait", "--wait-timeout", "30m", "--quiet")
		searchable := time.Since(start)
		n := syncSummary(b, out)
		m := summaryRE.FindStringSubmatch(out)
		secs, _ := strconv.ParseFloat(m[10], 64)
		w := took.FindStringSubmatch(out)
		if w == nil || n[8] != 0 {
			b.Fatalf("sync:\n%s", out)
		}
		waited, _ := strconv.ParseFloat(w[1], 64)
		again := syncSummary(b, mustSync(b, v, dir, state, "--quiet"))
		b.ReportMetric(float64(n[0])/secs, "files/s")
		b.ReportMetric(float64(n[1]), "bytes-sent")
		b.ReportMetric(secs, "s-to-send")
		b.ReportMetric(waited, "s-index-after-send")
		b.ReportMetric(searchable.Seconds(), "s-to-searchable")
		b.ReportMetric(float64(again[0]), "files-resent")
		b.Logf("%d files sent (%d bytes) in %.1fs; the index showed them %.1fs later (%.1fs from the start); a second sync sent %d",
			n[0], n[1], secs, waited, searchable.Seconds(), again[0])
	}
}
