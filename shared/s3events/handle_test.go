package s3events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/aws/aws-lambda-go/events"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/catalogstore"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// cloudFixture is an indexer wired as in the cloud: the snapshot in the
// store, keys under "vault/" in bucket "sheaf-vault".
type cloudFixture struct {
	dir   string
	store *indexertest.FlakyStore
	ix    *indexer.Indexer
}

func newCloudFixture(t *testing.T, files map[string]string) *cloudFixture {
	t.Helper()
	dir, st, text := indexertest.LocalVault(t, files)
	fl := &indexertest.FlakyStore{Store: st}
	return &cloudFixture{dir: dir, store: fl, ix: newCloudIndexer(fl, text)}
}

// saved loads the snapshot in the store, as a fresh instance would.
func (f *cloudFixture) saved(t *testing.T) *vault.Catalog {
	t.Helper()
	return indexertest.Saved(t, f.store)
}

func newCloudIndexer(st store.Store, text textindex.Index) *indexer.Indexer {
	return &indexer.Indexer{
		Store: st, Catalog: vault.NewCatalog(), Text: text, Snapshots: &catalogstore.Snapshots{Store: st},
		MaxNoteBytes: 1 << 20, Bucket: "sheaf-vault",
		KeyPath: func(key string) (string, bool) { return strings.CutPrefix(key, "vault/") },
	}
}

// awsEvent builds an S3 notification as AWS sends it (keys form-encoded).
func awsEvent(name string, keys ...string) []byte {
	type rec = map[string]any
	var recs []rec
	for _, k := range keys {
		recs = append(recs, rec{
			"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": "us-east-1",
			"eventTime": "2024-05-02T10:11:12.345Z", "eventName": name,
			"userIdentity": rec{"principalId": "AWS:AIDAEXAMPLE"},
			"s3": rec{"s3SchemaVersion": "1.0", "configurationId": "sheaf-notes",
				"bucket": rec{"name": "sheaf-vault", "arn": "arn:aws:s3:::sheaf-vault"},
				"object": rec{"key": url.QueryEscape("vault/" + k), "sequencer": "0055AED6DCD90281E5"}},
		})
	}
	b, _ := json.Marshal(rec{"Records": recs})
	return b
}

func (f *cloudFixture) handle(t *testing.T, raw []byte) Summary {
	t.Helper()
	out, err := Handle(context.Background(), f.ix, raw)
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	sum, ok := out.(Summary)
	if !ok {
		t.Fatalf("Handle returned %T", out)
	}
	return sum
}

func TestHandleS3Events(t *testing.T) {
	f := newCloudFixture(t, map[string]string{
		"Café/menu + prices 💡.md": "# Menu\nsoup of the day",
		"Inbox/old note.md":       "old note about turnips",
		"庭の記録.md":                 "庭の記録 garden log",
		".sheaf/notes.md":         "hidden",
		"img/p.png":               "\x89PNG",
	})
	sum := f.handle(t, fixtureBytes(t, "aws-s3-put.json"))
	if sum.Kind != KindS3 || sum.Applied != 1 || f.ix.Catalog.Len() != 1 {
		t.Fatalf("put: %+v, catalog %v", sum, indexertest.NotePaths(f.ix.Catalog))
	}
	if _, ok := f.ix.Catalog.Note("Café/menu + prices 💡.md"); !ok {
		t.Errorf("put: catalog %v", indexertest.NotePaths(f.ix.Catalog))
	}

	f.handle(t, awsEvent("ObjectCreated:Put", "Inbox/old note.md", "img/p.png"))
	if _, ok := f.ix.Catalog.Attachment("img/p.png"); !ok || f.ix.Catalog.Len() != 2 {
		t.Fatalf("second put: %v", indexertest.NotePaths(f.ix.Catalog))
	}
	os.Remove(filepath.Join(f.dir, "Inbox", "old note.md"))
	sum = f.handle(t, fixtureBytes(t, "aws-s3-delete.json"))
	if _, ok := f.ix.Catalog.Note("Inbox/old note.md"); ok || sum.Applied != 1 {
		t.Errorf("delete: %+v, catalog %v", sum, indexertest.NotePaths(f.ix.Catalog))
	}
	if got := indexertest.Search(t, f.ix.Text, "turnips"); len(got) != 0 {
		t.Errorf("deleted note still searchable: %v", got)
	}

	// A delete marker for an object that is (still, again) there: events
	// are hints, what the store holds wins.
	f.handle(t, fixtureBytes(t, "aws-s3-delete-marker.json"))
	if _, ok := f.ix.Catalog.Note("庭の記録.md"); !ok {
		t.Errorf("present object removed on a stale delete event")
	}

	// Sheaf's own objects, keys outside the vault prefix, other buckets and
	// test events are ignored.
	foreign := strings.ReplaceAll(string(awsEvent("ObjectCreated:Put", "x.md")), `"sheaf-vault"`, `"other-bucket"`)
	for _, raw := range [][]byte{
		awsEvent("ObjectCreated:Put", ".sheaf/catalog.json.gz", ".sheaf/notes.md", ".obsidian/workspace.json"),
		[]byte(strings.ReplaceAll(string(awsEvent("ObjectCreated:Put", "x.md")), "vault%2F", "elsewhere%2F")),
		[]byte(foreign),
	} {
		before := f.store.Stats.Load()
		sum := f.handle(t, raw)
		if sum.Applied != 0 || sum.Ignored != sum.Hints || f.store.Stats.Load() != before {
			t.Errorf("%s: %+v, %d Stat calls", raw, sum, f.store.Stats.Load()-before)
		}
	}
	if sum := f.handle(t, fixtureBytes(t, "aws-s3-test-event.json")); sum.Kind != KindTestEvent {
		t.Errorf("test event: %+v", sum)
	}

	// The snapshot in the store has it all.
	c := f.saved(t)
	if got, want := indexertest.NotePaths(c), indexertest.NotePaths(f.ix.Catalog); !slices.Equal(got, want) {
		t.Errorf("snapshot %v, catalog %v", got, want)
	}
}

func TestHandleSQSBatchItemFailures(t *testing.T) {
	f := newCloudFixture(t, map[string]string{
		"a.md": "alpha", "bin.md": "\x00\x01\x02binary", "flaky.md": "flaky", "huge.md": strings.Repeat("big ", 1<<19),
	})
	f.store.FailOn("flaky.md", errors.New("connection reset by peer"))
	raw := sqsBatch(t,
		string(awsEvent("ObjectCreated:Put", "a.md")),
		"{garbage",
		snsEnvelope(t, string(awsEvent("ObjectCreated:Put", "bin.md", "huge.md"))),
		string(awsEvent("ObjectCreated:Put", "flaky.md", "a.md")),
	)
	out, err := Handle(context.Background(), f.ix, raw)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := out.(events.SQSEventResponse)
	if !ok {
		t.Fatalf("Handle returned %T", out)
	}
	var ids []string
	for _, fl := range resp.BatchItemFailures {
		ids = append(ids, fl.ItemIdentifier)
	}
	// The garbage message and the one naming the failing path come back;
	// poison objects (binary, too large) do not.
	if !slices.Equal(ids, []string{"msg-b", "msg-d"}) {
		t.Errorf("batch item failures %v, want [msg-b msg-d]", ids)
	}
	if _, ok := f.ix.Catalog.Note("a.md"); !ok {
		t.Errorf("a.md not indexed")
	}
	probs := f.ix.Status().Problems
	if !strings.Contains(probs["bin.md"], "binary") || !strings.Contains(probs["huge.md"], "too large") {
		t.Errorf("problems %v", probs)
	}

	// Three messages, one garbage: exactly one failure.
	out, _ = Handle(context.Background(), f.ix, sqsBatch(t,
		string(awsEvent("ObjectCreated:Put", "a.md")), "\x00\xff", string(fixtureBytes(t, "eventbridge-deleted.json"))))
	if resp := out.(events.SQSEventResponse); len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "msg-b" {
		t.Errorf("failures %+v, want only msg-b", resp.BatchItemFailures)
	}
	// The response marshals as Lambda expects, an empty list when all is well.
	out, _ = Handle(context.Background(), f.ix, sqsBatch(t, string(awsEvent("ObjectCreated:Put", "a.md"))))
	if b, _ := json.Marshal(out); string(b) != `{"batchItemFailures":[]}` {
		t.Errorf("response %s", b)
	}

	// When the snapshot cannot be saved nothing is durable: every message
	// comes back.
	f.ix.Snapshots = failingSnapshots{}
	indexertest.Write(t, f.dir, "c.md", "charlie")
	out, err = Handle(context.Background(), f.ix, sqsBatch(t, string(awsEvent("ObjectCreated:Put", "c.md")), "{}"))
	if resp := out.(events.SQSEventResponse); err != nil || len(resp.BatchItemFailures) != 2 {
		t.Errorf("failures %+v %v, want both messages", resp.BatchItemFailures, err)
	}
}

type failingSnapshots struct{}

func (failingSnapshots) Load(context.Context) (*vault.Catalog, error) { return nil, nil }
func (failingSnapshots) Save(context.Context, *vault.Catalog) error {
	return errors.New("s3: service unavailable")
}

func TestHandleVersityGWAndAltKeys(t *testing.T) {
	f := newCloudFixture(t, map[string]string{
		"Café/Résumé notes+1 💡.md": "emoji note", "dir/x y+z%20.md": "odd name", "a+b.md": "plus",
	})
	f.ix.Bucket = "notes"
	if sum := f.handle(t, fixtureBytes(t, "versitygw-put.json")); sum.Applied != 1 || sum.Kind != KindWebhook {
		t.Errorf("versitygw put: %+v", sum)
	}
	f.ix.KeyPath, f.ix.Bucket = nil, "vault-bkt"
	if sum := f.handle(t, fixtureBytes(t, "vgw-put-plus.json")); sum.Applied != 1 || sum.Kind != KindWebhook {
		t.Errorf("versitygw put with + and %%: %+v", sum)
	}
	if got := indexertest.NotePaths(f.ix.Catalog); !slices.Equal(got, []string{"Café/Résumé notes+1 💡.md", "dir/x y+z%20.md"}) {
		t.Errorf("catalog %v", got)
	}
	os.Remove(filepath.Join(f.dir, "Café", "Résumé notes+1 💡.md"))
	f.ix.KeyPath, f.ix.Bucket = newCloudIndexer(nil, nil).KeyPath, "notes"
	if sum := f.handle(t, fixtureBytes(t, "versitygw-delete.json")); sum.Applied != 1 || f.ix.Catalog.Len() != 1 {
		t.Errorf("versitygw delete: %+v, catalog %v", sum, indexertest.NotePaths(f.ix.Catalog))
	}
	f.ix.KeyPath = nil
	// A sender of unknown encoding: both readings are applied, the one
	// that exists is indexed.
	f.ix.Bucket = ""
	sum := f.handle(t, []byte(`{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"x"},"object":{"key":"a+b.md"}}}]}`))
	if _, ok := f.ix.Catalog.Note("a+b.md"); !ok || sum.Applied != 2 {
		t.Errorf("unknown sender: %+v, catalog %v", sum, indexertest.NotePaths(f.ix.Catalog))
	}
}

// assertMatchesStore checks c and ix's text index against the store.
func assertMatchesStore(t testing.TB, ix *indexer.Indexer, c *vault.Catalog) {
	t.Helper()
	indexertest.AssertMatchesStore(t, ix.Store, maxNote(ix), ix.Text, c)
}

func TestDuplicateAndReorderedEventsConverge(t *testing.T) {
	f := newCloudFixture(t, nil)
	r := rand.New(rand.NewPCG(1, 2))
	var evs [][]byte
	names := []string{"a.md", "b c.md", "d+e.md", "f%g.md", "Café.md", "Cafe\u0301 2.md", "日本/語.md", "x/💡.md"}
	for i := range 120 {
		n := names[r.IntN(len(names))]
		if r.IntN(4) == 0 {
			os.Remove(filepath.Join(f.dir, filepath.FromSlash(n)))
			evs = append(evs, awsEvent("ObjectRemoved:Delete", n))
		} else {
			indexertest.Write(t, f.dir, n, fmt.Sprintf("version %d of %s", i, n))
			evs = append(evs, awsEvent("ObjectCreated:Put", n))
		}
		if r.IntN(3) == 0 { // some events arrive now, the rest later
			f.handle(t, evs[len(evs)-1])
		}
	}
	// The rest arrive late, duplicated and shuffled, in SQS batches of
	// up to ten.
	evs = append(evs, evs...)
	r.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	for len(evs) > 0 {
		n := min(len(evs), 1+r.IntN(10))
		var bodies []string
		for _, e := range evs[:n] {
			bodies = append(bodies, string(e))
		}
		out, err := Handle(context.Background(), f.ix, sqsBatch(t, bodies...))
		if err != nil || len(out.(events.SQSEventResponse).BatchItemFailures) != 0 {
			t.Fatalf("batch: %+v %v", out, err)
		}
		evs = evs[n:]
	}
	assertMatchesStore(t, f.ix, f.ix.Catalog)
	assertMatchesStore(t, f.ix, f.saved(t))
}

func TestWebhook(t *testing.T) {
	f := newCloudFixture(t, map[string]string{"Café/Résumé notes+1 💡.md": "emoji note", "flaky.md": "x"})
	f.ix.Bucket = "notes"
	srv := httptest.NewServer(Webhook(f.ix, "s3cret"))
	defer srv.Close()
	post := func(body, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, readAll(t, resp))
		return resp.StatusCode, b.String()
	}
	put := string(fixtureBytes(t, "versitygw-put.json"))
	if code, _ := post(put, ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code, _ := post(put, "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	// The token as a Basic password, as a webhook URL's userinfo sends it.
	for pass, want := range map[string]int{"wrong": http.StatusUnauthorized, "s3cret": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(string(fixtureBytes(t, "vgw-test-event.json"))))
		req.SetBasicAuth("sheaf", pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Basic password %q: %d, want %d", pass, resp.StatusCode, want)
		}
	}
	if resp, err := http.Get(srv.URL); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v", resp, err)
	}
	if code, _ := post(strings.Repeat(" ", MaxWebhookBody+1), "s3cret"); code != http.StatusRequestEntityTooLarge {
		t.Errorf("huge body: %d", code)
	}
	for _, body := range []string{"{garbage", `{"reconcile":true}`, string(sqsBatch(t, put))} {
		if code, _ := post(body, "s3cret"); code != http.StatusBadRequest {
			t.Errorf("%.30s: %d, want 400", body, code)
		}
	}
	if code, body := post(string(fixtureBytes(t, "vgw-test-event.json")), "s3cret"); code != http.StatusOK {
		t.Errorf("test event: %d %s", code, body)
	}
	code, body := post(put, "s3cret")
	if code != http.StatusOK || !strings.Contains(body, `"applied":1`) {
		t.Errorf("put: %d %s", code, body)
	}
	if _, ok := f.ix.Catalog.Note("Café/Résumé notes+1 💡.md"); !ok {
		t.Errorf("not indexed")
	}
	f.store.FailOn("flaky.md", errors.New("disk on fire"))
	flaky := strings.ReplaceAll(put, "Café/Résumé notes+1 💡.md", "flaky.md")
	if code, body := post(flaky, "s3cret"); code != http.StatusInternalServerError || !strings.Contains(body, "flaky.md") {
		t.Errorf("failing path: %d %s", code, body)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// countingSnapshots counts saves into a catalogstore.Snapshots.
type countingSnapshots struct {
	*catalogstore.Snapshots
	saves atomic.Int64
}

func (c *countingSnapshots) Save(ctx context.Context, cat *vault.Catalog) error {
	c.saves.Add(1)
	return c.Snapshots.Save(ctx, cat)
}

func (c *countingSnapshots) SaveChanges(ctx context.Context, cat *vault.Catalog, paths []string) error {
	c.saves.Add(1)
	return c.Snapshots.SaveChanges(ctx, cat, paths)
}

func TestWebhookBurstIsBatched(t *testing.T) {
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("n%03d.md", i)] = fmt.Sprintf("note %d", i)
	}
	f := newCloudFixture(t, files)
	snaps := &countingSnapshots{Snapshots: &catalogstore.Snapshots{Store: f.store}}
	f.ix.Snapshots = snaps
	srv := httptest.NewServer(Webhook(f.ix, ""))
	defer srv.Close()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for p := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(string(awsEvent("ObjectCreated:Put", p))))
			if err != nil || resp.StatusCode != http.StatusOK {
				failed.Add(1)
			}
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 || f.ix.Catalog.Len() != 100 {
		t.Fatalf("%d requests failed, %d notes indexed", failed.Load(), f.ix.Catalog.Len())
	}
	// Every request answered after a save holding its note, yet the burst
	// cost far fewer saves than requests.
	if n := snaps.saves.Load(); n > 50 || n == 0 {
		t.Errorf("%d snapshot saves for 100 concurrent requests", n)
	}
	assertMatchesStore(t, f.ix, f.saved(t))
	t.Logf("100 concurrent webhook requests, %d snapshot saves", snaps.saves.Load())
}

// maxNote is the size bound ix reads notes with.
func maxNote(ix *indexer.Indexer) int64 {
	if ix.MaxNoteBytes > 0 {
		return ix.MaxNoteBytes
	}
	return indexer.DefaultMaxNoteBytes
}

// TestGatedDefersUntilOpen: before Open, a Gated webhook checks and
// answers every notification (versitygw's start-up test event among them)
// without applying it; after Open it applies them.
func TestGatedDefersUntilOpen(t *testing.T) {
	f := newCloudFixture(t, map[string]string{"a.md": "# A"})
	g := NewGated("s3cret")
	srv := httptest.NewServer(g)
	defer srv.Close()
	post := func(body []byte, token string) (int, Summary) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sum Summary
		_ = json.NewDecoder(resp.Body).Decode(&sum)
		return resp.StatusCode, sum
	}
	put := awsEvent("ObjectCreated:Put", "a.md")
	if code, _ := post(put, "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong token before Open: %d", code)
	}
	if code, sum := post(fixtureBytes(t, "vgw-test-event.json"), "s3cret"); code != http.StatusOK || !sum.Deferred {
		t.Errorf("test event before Open: %d %+v", code, sum)
	}
	if code, sum := post(put, "s3cret"); code != http.StatusOK || !sum.Deferred || f.ix.Catalog.Len() != 0 {
		t.Errorf("put before Open: %d %+v, catalog %v", code, sum, indexertest.NotePaths(f.ix.Catalog))
	}
	g.Open(f.ix)
	if code, sum := post(put, "s3cret"); code != http.StatusOK || sum.Deferred || sum.Applied != 1 || f.ix.Catalog.Len() != 1 {
		t.Errorf("put after Open: %d %+v, catalog %v", code, sum, indexertest.NotePaths(f.ix.Catalog))
	}
}
