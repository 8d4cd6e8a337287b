package s3test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestStartStop(t *testing.T) {
	var endpoint string
	t.Run("server", func(t *testing.T) {
		s := Start(t, Options{})
		endpoint = s.Endpoint
		if !strings.HasPrefix(s.Endpoint, "http://127.0.0.1:") {
			t.Errorf("Endpoint = %q, want 127.0.0.1", s.Endpoint)
		}
		s.CreateBucket(t, "bucket")
		c := s.Client(t)
		if _, err := c.PutObject(t.Context(), &s3.PutObjectInput{
			Bucket: aws.String("bucket"), Key: aws.String("a b.md"), Body: strings.NewReader("hi"),
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(s.Dir, "bucket", "a b.md")); err != nil {
			t.Errorf("object not in the posix folder: %v", err)
		}
	})
	if resp, err := http.Get(endpoint); err == nil {
		resp.Body.Close()
		t.Errorf("versitygw still answers at %s after the test ended", endpoint)
	}
}

func TestBinaryFromEnv(t *testing.T) {
	t.Setenv(EnvBinary, filepath.Join(t.TempDir(), "missing"))
	if _, err := Binary(); err == nil || !strings.Contains(err.Error(), EnvBinary) {
		t.Errorf("Binary() with a missing %s = %v", EnvBinary, err)
	}
}

// event is the part of a versitygw notification the tests look at.
type event struct {
	Records []struct {
		EventName string `json:"eventName"`
		S3        struct {
			Bucket struct{ Name string } `json:"bucket"`
			Object struct {
				Key  string  `json:"key"`
				Size int64   `json:"size"`
				ETag *string `json:"eTag"`
			} `json:"object"`
		} `json:"s3"`
		Glacier struct {
			Restore struct {
				Expiry *string `json:"lifecycleRestorationExpiryTime"`
			} `json:"restoreEventData"`
		} `json:"glacierEventData"`
	}
}

// TestWebhook checks the notifications versitygw posts for a PUT and a
// DELETE of a key with spaces, '+' and non-ASCII characters. With
// SHEAF_WRITE_FIXTURES=1 it saves them as the indexer's test fixtures.
func TestWebhook(t *testing.T) {
	posts := make(chan []byte, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		posts <- b
	}))
	t.Cleanup(hook.Close)
	s := Start(t, Options{WebhookURL: hook.URL})
	next := func() []byte {
		t.Helper()
		select {
		case b := <-posts:
			return b
		case <-time.After(10 * time.Second):
			t.Fatal("no webhook post within 10 s")
			return nil
		}
	}
	if b := next(); !strings.Contains(string(b), `"s3:TestEvent"`) {
		t.Errorf("first post = %s, want versitygw's test event", b)
	}

	const body = "# R\u00e9sum\u00e9\n"
	const key = "vault/Caf\u00e9/R\u00e9sum\u00e9 notes+1 \U0001F4A1.md"
	s.CreateBucket(t, "notes")
	c := s.Client(t)
	if _, err := c.PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String("notes"), Key: aws.String(key), Body: strings.NewReader(body),
	}); err != nil {
		t.Fatal(err)
	}
	put := next()
	if _, err := c.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String("notes"), Key: aws.String(key)}); err != nil {
		t.Fatal(err)
	}
	del := next()

	for _, tc := range []struct {
		raw  []byte
		name string
		size int64
	}{{put, "s3:ObjectCreated:Put", int64(len(body))}, {del, "s3:ObjectRemoved:Delete", 0}} {
		var ev event
		if err := json.Unmarshal(tc.raw, &ev); err != nil || len(ev.Records) != 1 {
			t.Fatalf("payload %s: %v", tc.raw, err)
		}
		r := ev.Records[0]
		if r.EventName != tc.name || r.S3.Bucket.Name != "notes" || r.S3.Object.Key != key || r.S3.Object.Size != tc.size {
			t.Errorf("event = %+v, want %s of %q (raw key, not URL-encoded), size %d", r, tc.name, key, tc.size)
		}
		if r.Glacier.Restore.Expiry == nil || *r.Glacier.Restore.Expiry != "" {
			t.Errorf("glacierEventData restore expiry = %v, want the empty string versitygw sends", r.Glacier.Restore.Expiry)
		}
		if (r.S3.Object.ETag != nil) != (tc.size > 0) {
			t.Errorf("%s eTag = %v", tc.name, r.S3.Object.ETag)
		}
	}
	if os.Getenv("SHEAF_WRITE_FIXTURES") == "1" {
		dir := filepath.Join("..", "..", "..", "..", "indexer", "testdata")
		for name, b := range map[string][]byte{"versitygw-put.json": put, "versitygw-delete.json": del} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestPutDir: every file under a folder lands at prefix/its path, with
// its bytes; Put writes one key as given.
func TestPutDir(t *testing.T) {
	s := Start(t, Options{})
	s.CreateBucket(t, "vault")
	dir := t.TempDir()
	want := map[string]string{}
	for rel, body := range map[string]string{"a.md": "# A\n", "sub/Caf\u00e9 +1.md": "caf\u00e9", "sub/deeper/x.bin": "\x00\x01"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		want["team/notes/"+rel] = body
	}
	s.PutDir(t, "vault", "/team/notes/", dir)
	s.Put(t, "vault", "top level.md", []byte("top"))
	want["top level.md"] = "top"
	c := s.Client(t)
	for key, body := range want {
		out, err := c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String("vault"), Key: aws.String(key)})
		if err != nil {
			t.Errorf("get %q: %v", key, err)
			continue
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil || string(got) != body {
			t.Errorf("%q = %q, %v; want %q", key, got, err, body)
		}
	}
	list, err := c.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String("vault")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Contents) != len(want) {
		t.Errorf("%d objects in the bucket, want %d", len(list.Contents), len(want))
	}
}
