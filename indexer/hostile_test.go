package indexer

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sheaf-dev/sheaf/shared/store"
)

func TestPathOfKey(t *testing.T) {
	ix := newCloudIndexer(nil, nil)
	for key, want := range map[string]string{
		"vault/a.md":             "a.md",
		"vault/Cafe\u0301.md":    "Caf\u00e9.md",
		"vault/p/./b.md":         "p/b.md",
		"vault/q//b.md":          "q/b.md",
		"vault/./c.md":           "c.md",
		"vault/a/../b.md":        "b.md",
		"vault/../x.md":          "",
		"vault/../vault2/x.md":   "",
		"vault":                  "",
		"vault/":                 "",
		"vault-other/x.md":       "",
		"vaultx.md":              "",
		"vault/.sheaf/x.md":      "",
		"vault/x/.obsidian/y.md": "",
		"vault/p/./.sheaf/y.md":  "",
		"vault/dir.md/":          "",
		"vault/dir//":            "",
		"vault/bad\xff.md":       "",
		"/vault/a.md":            "",
	} {
		got, ok := ix.pathOfKey("sheaf-vault", key)
		if got != want || ok != (want != "") {
			t.Errorf("pathOfKey(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if _, ok := ix.pathOfKey("other-bucket", "vault/a.md"); ok {
		t.Errorf("a key of another bucket was mapped")
	}
}

// rec is an S3 notification record with the given raw s3.object.
func rec(object string) string {
	return `{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"sheaf-vault"},"object":` + object + `}}`
}

func TestHostileEvents(t *testing.T) {
	f := newCloudFixture(t, map[string]string{"a.md": "alpha", "b.md": "bravo"})
	ctx := context.Background()

	// Payloads that are no event at all fail; nothing panics.
	for name, ev := range map[string]string{
		"no s3.object":                   `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"sheaf-vault"}}}]}`,
		"key null":                       `{"Records":[` + rec(`{"key":null}`) + `]}`,
		"key number":                     `{"Records":[` + rec(`{"key":12}`) + `]}`,
		"EventBridge no detail":          `{"source":"aws.s3","detail-type":"Object Created"}`,
		"EventBridge other":              `{"source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","detail":{}}`,
		"EventBridge detail null object": `{"source":"aws.s3","detail-type":"Object Created","detail":{"object":null}}`,
		"garbage":                        strings.Repeat("\x00garbage{", 100),
		"not an object":                  `"Records"`,
	} {
		if _, err := f.ix.Handle(ctx, json.RawMessage(ev)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A size given as a string, an unknown EventBridge S3 detail-type: the
	// key still counts.
	sum := f.handle(t, []byte(`{"Records":[`+rec(`{"key":"vault/a.md","size":"12"}`)+`]}`))
	if sum.Applied != 1 {
		t.Errorf("size as string: %+v", sum)
	}
	sum = f.handle(t, []byte(`{"source":"aws.s3","detail-type":"Object Restore Completed","detail":{"bucket":{"name":"sheaf-vault"},"object":{"key":"vault/b.md"}}}`))
	if sum.Applied != 1 {
		t.Errorf("unknown S3 detail-type: %+v", sum)
	}

	// SQS: no records, a 1 MB garbage body next to good ones, 10,000 records.
	if _, err := f.ix.Handle(ctx, json.RawMessage(`{"Records":[]}`)); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	garbage := make([]byte, 1<<20)
	for i := range garbage {
		garbage[i] = byte(rand.IntN(256))
	}
	out, err := f.ix.Handle(ctx, sqsBatch(t, string(awsEvent("ObjectCreated:Put", "a.md")), string(garbage), string(awsEvent("ObjectCreated:Put", "b.md"))))
	resp, ok := out.(events.SQSEventResponse)
	if err != nil || !ok || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "msg-b" {
		t.Errorf("garbage message: %+v %v", out, err)
	}
	var bodies []string
	for i := range 10000 {
		bodies = append(bodies, string(awsEvent("ObjectCreated:Put", fmt.Sprintf("gone/%d.md", i%3000))))
	}
	out, err = f.ix.Handle(ctx, sqsBatch(t, bodies...))
	if resp, ok := out.(events.SQSEventResponse); err != nil || !ok || len(resp.BatchItemFailures) != 0 {
		t.Errorf("10,000 records: %+v %v", out, err)
	}
	if f.ix.Catalog.Len() != 2 {
		t.Errorf("catalog: %v", notePaths(f.ix.Catalog))
	}
}

func TestWebhookHostile(t *testing.T) {
	f := newCloudFixture(t, map[string]string{"a.md": "alpha"})
	srv := httptest.NewServer(f.ix.Webhook())
	defer srv.Close()
	post := func(body io.Reader, header map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, body)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(awsEvent("ObjectCreated:Put", "a.md"))
	w.Close()
	if code := post(&gz, map[string]string{"Content-Encoding": "gzip"}); code != http.StatusBadRequest {
		t.Errorf("gzip body: %d", code)
	}
	// Chunked (no Content-Length), over the limit.
	pr, pw := io.Pipe()
	go func() {
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		for range MaxWebhookBody/len(chunk) + 2 {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	if code := post(pr, nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body over the limit: %d", code)
	}
	pr.Close()
	for _, body := range []string{"", "{", "null", "[1,2", `{"Records":[null]}`, `{"Records":{}}`} {
		if code := post(strings.NewReader(body), nil); code != http.StatusBadRequest {
			t.Errorf("%q: %d", body, code)
		}
	}
	if code := post(bytes.NewReader(awsEvent("ObjectCreated:Put", "a.md")), nil); code != http.StatusOK {
		t.Errorf("after hostile requests: %d", code)
	}
}

// swapStore rewrites a note right after its Stat: the content changes
// between HEAD and GET.
type swapStore struct {
	store.Store
	dir  string
	path string
	body string
}

func (s *swapStore) Stat(ctx context.Context, p string) (store.Object, error) {
	obj, err := s.Store.Stat(ctx, p)
	if p == s.path && s.body != "" {
		if werr := os.WriteFile(filepath.Join(s.dir, p), []byte(s.body), 0o644); werr != nil {
			return obj, werr
		}
		s.body = ""
	}
	return obj, err
}

func TestContentChangesBetweenHeadAndGet(t *testing.T) {
	f := newCloudFixture(t, map[string]string{"a.md": "# A\nfirst version"})
	f.handle(t, awsEvent("ObjectCreated:Put", "a.md"))
	write(t, f.dir, "a.md", "# A\nsecond version, longer")
	sw := &swapStore{Store: f.ix.Store, dir: f.dir, path: "a.md", body: "# A\nthird version, the one that stays"}
	f.ix.Store = sw
	f.handle(t, awsEvent("ObjectCreated:Put", "a.md"))
	n, ok := f.ix.Catalog.Note("a.md")
	_, cur, err := sw.Store.Get(context.Background(), "a.md", 0)
	if err != nil || !ok || n.ETag != cur.ETag || n.Size != cur.Size {
		t.Errorf("catalog %+v, store %+v, %v", n, cur, err)
	}
	if got := (&fixture{ix: f.ix}).search(t, "stays"); len(got) != 1 {
		t.Errorf("the content read last is not the one indexed: %v", got)
	}
}
