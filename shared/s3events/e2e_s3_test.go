package s3events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	s3store "github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// recorder is the webhook endpoint of the end-to-end test. It listens
// before versitygw starts (versitygw refuses to start otherwise), answers
// the start-up test event itself, keeps every body it receives for replay,
// and can drop events to simulate losing them.
type recorder struct {
	mu      sync.Mutex
	bodies  [][]byte
	handler atomic.Pointer[http.Handler]
	drop    atomic.Bool
	own     atomic.Int64 // events for Sheaf's own objects, all ignored
	applied atomic.Int64
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
	body := buf.Bytes()
	hints, kind, err := DecodeEvent(body)
	if err == nil && kind == KindTestEvent {
		return
	}
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, bytes.Clone(body))
	rec.mu.Unlock()
	for _, h := range hints {
		if strings.Contains(h.Key, "/.sheaf/") {
			rec.own.Add(1)
		}
	}
	h := rec.handler.Load()
	if h == nil || rec.drop.Load() {
		return // lost
	}
	sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
	r.Body = io.NopCloser(bytes.NewReader(body))
	(*h).ServeHTTP(sw, r)
	if sw.code == http.StatusOK {
		rec.applied.Add(1)
	}
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

func (rec *recorder) recorded() [][]byte {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.bodies)
}

// e2e is a vault in a versitygw bucket under prefix "vault", indexed
// through the webhook.
type e2e struct {
	srv    *s3test.Server
	client *awss3.Client
	store  *s3store.Store
	ix     *indexer.Indexer
	rec    *recorder
}

const e2eBucket, e2ePrefix = "notes", "vault"

func startE2E(t *testing.T) *e2e {
	t.Helper()
	rec := &recorder{}
	hook := httptest.NewUnstartedServer(rec)
	hook.Start() // 127.0.0.1, before versitygw
	t.Cleanup(hook.Close)
	srv := s3test.Start(t, s3test.Options{WebhookURL: hook.URL + "/events"})
	srv.CreateBucket(t, e2eBucket)
	client := srv.Client(t)
	st := s3store.New(client, e2eBucket, e2ePrefix)
	text, err := embedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { text.Close() })
	ix := &indexer.Indexer{
		Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: &catalogstore.Snapshots{Store: st},
		MaxNoteBytes: 1 << 20, KeyPath: st.Path, Bucket: e2eBucket,
	}
	h := Webhook(ix, "")
	rec.handler.Store(&h)
	return &e2e{srv: srv, client: client, store: st, ix: ix, rec: rec}
}

func (e *e2e) put(t testing.TB, p string, data []byte) {
	t.Helper()
	_, err := e.client.PutObject(context.Background(), &awss3.PutObjectInput{
		Bucket: aws.String(e2eBucket), Key: aws.String(e2ePrefix + "/" + p), Body: bytes.NewReader(data),
	})
	if err != nil {
		t.Fatalf("put %q: %v", p, err)
	}
}

func (e *e2e) del(t testing.TB, p string) {
	t.Helper()
	_, err := e.client.DeleteObject(context.Background(), &awss3.DeleteObjectInput{
		Bucket: aws.String(e2eBucket), Key: aws.String(e2ePrefix + "/" + p),
	})
	if err != nil {
		t.Fatalf("delete %q: %v", p, err)
	}
}

// upload puts every file under dir at prefix+relative path, 16 at a time.
func (e *e2e) upload(t *testing.T, dir, prefix string) int {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Error(err)
					continue
				}
				rel, _ := filepath.Rel(dir, p)
				e.put(t, prefix+filepath.ToSlash(rel), data)
			}
		}()
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	return len(files)
}

// mismatch compares catalog paths+hashes and text-index paths with a fresh
// listing of the bucket; "" when they agree exactly.
func (e *e2e) mismatch(t testing.TB, c *vault.Catalog) string {
	t.Helper()
	want := storeState(t, e.store, maxNote(e.ix))
	var diffs []string
	for _, n := range c.Notes() {
		if h, ok := want[n.Path]; !ok || h != n.Hash {
			diffs = append(diffs, "catalog has "+n.Path)
		}
	}
	for p := range want {
		if n, ok := c.Note(p); !ok || n.Path != p {
			diffs = append(diffs, "catalog lacks "+p)
		}
	}
	paths, err := e.ix.Text.Paths(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for p := range paths {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, "text index has "+p)
		}
	}
	for p := range want {
		if _, ok := paths[p]; !ok {
			diffs = append(diffs, "text index lacks "+p)
		}
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("... %d more", len(diffs)-5))
	}
	return strings.Join(diffs, "; ")
}

// converge waits until the indexes match the bucket.
func (e *e2e) converge(t *testing.T, what string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		d := e.mismatch(t, e.ix.Catalog)
		if d == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not converged after %v: %s", what, limit, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestE2EVersityGWWebhook(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	ctx := context.Background()
	e := startE2E(t)

	// The sample vault and a generated 1,000-note vault, as a user's sync
	// tool would upload them: events arrive through the webhook.
	gen := filepath.Join(t.TempDir(), "gen")
	if _, err := vaultgen.Generate(gen, vaultgen.Options{Notes: 1000, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n := e.upload(t, filepath.Join("..", "..", "infra", "sample-vault"), "")
	n += e.upload(t, gen, "gen/")
	e.converge(t, "initial upload", 2*time.Minute)
	t.Logf("%d objects uploaded and indexed through the webhook in %v (%d notes)", n, time.Since(start), e.ix.Catalog.Len())
	if e.rec.own.Load() == 0 {
		t.Errorf("no events for the catalog snapshot seen: the own-writes check proves nothing")
	}
	if st := e.ix.Status(); !strings.Contains(st.Problems["binary.md"], "binary") {
		t.Errorf("binary.md not reported: %v", st.Problems)
	}

	// Deletes, renames (copy + delete), overwrites, a note that turns binary.
	notes := e.ix.Catalog.Notes()
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(notes), func(i, j int) { notes[i], notes[j] = notes[j], notes[i] })
	for i, n := range notes[:60] {
		data, _, err := e.store.Get(ctx, n.Path, 0)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 4 {
		case 0:
			e.del(t, n.Path)
		case 1:
			e.put(t, "renamed/"+strings.ReplaceAll(n.Path, "/", " + "), data)
			e.del(t, n.Path)
		case 2:
			e.put(t, n.Path, append(data, []byte("\n\nEdited: ünïcödé 💡 +%20\n")...))
		case 3:
			e.put(t, n.Path, []byte("\x00\x01binary now"))
		}
	}
	e.converge(t, "edits", time.Minute)

	// Every event again, duplicated and reordered, through Handle: events
	// are hints, nothing changes.
	bodies := e.rec.recorded()
	bodies = append(bodies, bodies...)
	r.Shuffle(len(bodies), func(i, j int) { bodies[i], bodies[j] = bodies[j], bodies[i] })
	for len(bodies) > 0 {
		k := min(len(bodies), 10)
		var batch []string
		for _, b := range bodies[:k] {
			batch = append(batch, string(b))
		}
		out, err := Handle(ctx, e.ix, sqsBatch(t, batch...))
		if resp, ok := out.(events.SQSEventResponse); err != nil || !ok || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("replay: %+v %v", out, err)
		}
		bodies = bodies[k:]
	}
	if d := e.mismatch(t, e.ix.Catalog); d != "" {
		t.Fatalf("after replay: %s", d)
	}

	// A crash: events lost while the bucket changes, then a batch cut short
	// mid-way (the Lambda timing out), then a fresh instance from the
	// snapshot reconciles.
	e.rec.drop.Store(true)
	var lost []string
	for i, n := range notes[60:160] {
		p := n.Path
		switch i % 3 {
		case 0:
			e.del(t, p)
		default:
			e.put(t, p, []byte(fmt.Sprintf("# Rewritten %d\nafter the crash", i)))
		}
		lost = append(lost, string(awsEventAt(e2ePrefix+"/"+p)))
	}
	for i := range 20 {
		e.put(t, fmt.Sprintf("new/after crash %d.md", i), []byte("new note"))
	}
	cut, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	_, _ = Handle(cut, e.ix, sqsBatch(t, lost[:10]...))
	cancel()
	// Let the dropped webhook requests drain before comparing.
	time.Sleep(500 * time.Millisecond)
	if d := e.mismatch(t, e.ix.Catalog); d == "" {
		t.Fatalf("the crash left nothing to repair: the test proves nothing")
	}

	fresh := &indexer.Indexer{Store: e.store, Text: e.ix.Text, Snapshots: &catalogstore.Snapshots{Store: e.store},
		MaxNoteBytes: e.ix.MaxNoteBytes, KeyPath: e.store.Path, Bucket: e2eBucket}
	c, err := fresh.Snapshots.Load(ctx)
	if err != nil || c == nil {
		t.Fatalf("loading the snapshot: %v", err)
	}
	fresh.Catalog = c
	st, err := fresh.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reconcile: %+v", st)
	e.ix = fresh
	if d := e.mismatch(t, fresh.Catalog); d != "" {
		t.Errorf("after reconcile: %s", d)
	}
	saved, err := (&catalogstore.Snapshots{Store: e.store}).Load(ctx)
	if err != nil || saved == nil {
		t.Fatal(err)
	}
	if d := e.mismatch(t, saved); d != "" {
		t.Errorf("saved snapshot after reconcile: %s", d)
	}
	cats := &catalogstore.Catalogs{Store: e.store}
	if rc, err := cats.Catalog(ctx); err != nil || rc.Len() != saved.Len() {
		t.Errorf("catalogstore.Catalogs: %v, %v", rc, err)
	}
}

// awsEventAt is an AWS-style notification for key in the e2e bucket.
func awsEventAt(key string) []byte {
	b, _ := json.Marshal(map[string]any{"Records": []any{map[string]any{
		"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
		"s3": map[string]any{"bucket": map[string]any{"name": e2eBucket, "arn": "arn:aws:s3:::" + e2eBucket},
			"object": map[string]any{"key": url.QueryEscape(key)}},
	}}})
	return b
}
