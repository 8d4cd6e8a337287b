package s3events

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
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

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
		if _, err := Handle(ctx, f.ix, json.RawMessage(ev)); err == nil {
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
	if _, err := Handle(ctx, f.ix, json.RawMessage(`{"Records":[]}`)); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	garbage := make([]byte, 1<<20)
	for i := range garbage {
		garbage[i] = byte(rand.IntN(256))
	}
	out, err := Handle(ctx, f.ix, sqsBatch(t, string(awsEvent("ObjectCreated:Put", "a.md")), string(garbage), string(awsEvent("ObjectCreated:Put", "b.md"))))
	resp, ok := out.(events.SQSEventResponse)
	if err != nil || !ok || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "msg-b" {
		t.Errorf("garbage message: %+v %v", out, err)
	}
	var bodies []string
	for i := range 10000 {
		bodies = append(bodies, string(awsEvent("ObjectCreated:Put", fmt.Sprintf("gone/%d.md", i%3000))))
	}
	out, err = Handle(ctx, f.ix, sqsBatch(t, bodies...))
	if resp, ok := out.(events.SQSEventResponse); err != nil || !ok || len(resp.BatchItemFailures) != 0 {
		t.Errorf("10,000 records: %+v %v", out, err)
	}
	if f.ix.Catalog.Len() != 2 {
		t.Errorf("catalog: %v", notePaths(f.ix.Catalog))
	}
}

func TestWebhookHostile(t *testing.T) {
	f := newCloudFixture(t, map[string]string{"a.md": "alpha"})
	srv := httptest.NewServer(Webhook(f.ix, ""))
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
