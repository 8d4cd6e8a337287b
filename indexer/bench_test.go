package indexer

import (
	"context"
	"encoding/json"
	"fmt"
	iofs "io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	s3store "github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
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

// BenchmarkHandleS3Events indexes a generated 1,000-note vault from S3
// events, as the indexer Lambda does: SQS batches of ten AWS-style
// notifications, each batch applied and the catalog snapshot saved
// (conditionally) in the store. The store is a versitygw bucket when
// versitygw is installed (see s3test), else the fs store.
func BenchmarkHandleS3Events(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "v")
	notes := 1000 // SHEAF_BENCH_EVENT_NOTES=10000 measures a bigger bulk upload
	if n, err := strconv.Atoi(os.Getenv("SHEAF_BENCH_EVENT_NOTES")); err == nil && n > 0 {
		notes = n
	}
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: notes, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	var (
		st      store.Store
		keyPath func(string) (string, bool)
		prefix  string
	)
	if _, err := s3test.Binary(); err == nil {
		srv := s3test.Start(b, s3test.Options{})
		srv.CreateBucket(b, "bench")
		s3st := s3store.New(srv.Client(b), "bench", "vault")
		st, keyPath, prefix = s3st, s3st.Path, "vault/"
		uploadDir(b, st, dir)
		b.Log("store: versitygw")
	} else {
		fsst, err := fs.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		st = fsst
		b.Log("store: fs (versitygw not installed)")
	}
	var paths []string
	if err := st.List(context.Background(), "", func(o store.Object) error {
		paths = append(paths, o.Path)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	// SQS hands the function up to 10 messages, or up to 10,000 with a
	// batching window (template.yaml uses 100): every batch costs one
	// snapshot save, so bigger batches amortise it.
	for _, size := range []int{10, 100} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			benchHandle(b, st, keyPath, prefix, paths, size)
		})
	}
}

func benchHandle(b *testing.B, st store.Store, keyPath func(string) (string, bool), prefix string, paths []string, size int) {
	var batches [][]byte
	for i := 0; i < len(paths); i += size {
		var bodies []string
		for _, p := range paths[i:min(i+size, len(paths))] {
			bodies = append(bodies, string(awsRecord(prefix+p)))
		}
		batches = append(batches, sqsBatch(b, bodies...))
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := st.Delete(ctx, DefaultSnapshotKey, ""); err != nil {
			b.Fatal(err)
		}
		text, err := embedded.Open(filepath.Join(b.TempDir(), "index.db"))
		if err != nil {
			b.Fatal(err)
		}
		ix := &Indexer{Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: &StoreSnapshots{Store: st}, KeyPath: keyPath}
		b.StartTimer()
		start := time.Now()
		for _, batch := range batches {
			out, err := ix.Handle(ctx, batch)
			if err != nil || len(out.(events.SQSEventResponse).BatchItemFailures) > 0 {
				b.Fatalf("batch: %+v %v", out, err)
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		if ix.Catalog.Len() < len(paths)*99/100 {
			b.Fatalf("indexed %d notes", ix.Catalog.Len())
		}
		b.ReportMetric(float64(ix.Catalog.Len())/elapsed.Seconds(), "notes/s")
		text.Close()
	}
}

// awsRecord is an AWS S3 notification for key (form-encoded, as AWS does).
func awsRecord(key string) []byte {
	out, _ := json.Marshal(map[string]any{"Records": []any{map[string]any{
		"eventVersion": "2.1", "eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
		"s3": map[string]any{"bucket": map[string]any{"name": "bench", "arn": "arn:aws:s3:::bench"},
			"object": map[string]any{"key": url.QueryEscape(key)}},
	}}})
	return out
}

// uploadDir copies a folder into st, 16 files at a time.
func uploadDir(b *testing.B, st store.Store, dir string) {
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	var wg sync.WaitGroup
	jobs := make(chan string)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				data, err := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				if err == nil {
					_, err = st.Put(context.Background(), filepath.ToSlash(rel), data, store.PutOptions{})
				}
				if err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
}
