package indexer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// BenchmarkSync10k is a cold index of a generated 10k-note vault into an
// on-disk FTS5 index (the vault in /dev/shm when possible, to time Sheaf
// rather than this machine's slow file creation).
func BenchmarkSync10k(b *testing.B) {
	dir := os.Getenv("SHEAF_BENCH_VAULT")
	if dir == "" {
		base := ""
		if _, err := os.Stat("/dev/shm"); err == nil {
			base = "/dev/shm"
		}
		tmp, err := os.MkdirTemp(base, "sheaf-sync-")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "v")
		if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: 10000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	st, err := fs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		text, err := embedded.Open(filepath.Join(b.TempDir(), "index.db"))
		if err != nil {
			b.Fatal(err)
		}
		ix := &Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text}
		b.StartTimer()
		s, err := ix.Sync(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(s.Indexed)/s.Elapsed.Seconds(), "notes/s")
		text.Close()
	}
}
