package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/store/storetest"
)

var buckets atomic.Int64

// newBucket creates a bucket with a fresh name.
func newBucket(t testing.TB, srv *s3test.Server) string {
	name := fmt.Sprintf("bucket-%d", buckets.Add(1))
	srv.CreateBucket(t, name)
	return name
}

func TestConformance(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	t.Run("New", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			return New(srv.Client(t), newBucket(t, srv), "")
		})
	})
	// Open goes through ParseURL and the checksum settings for
	// S3-compatible endpoints.
	t.Run("Open", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			c, err := ParseURL(srv.URL(newBucket(t, srv), "vaults/alice"))
			if err != nil {
				t.Fatal(err)
			}
			c.AccessKey, c.SecretKey = srv.AccessKey, srv.SecretKey
			s, err := Open(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

// counter counts requests by operation and the response body bytes read.
type counter struct {
	mu    sync.Mutex
	ops   map[string]int
	bytes atomic.Int64
}

func (c *counter) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[op]
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.ops)
	c.bytes.Store(0)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

type countingTransport struct{ c *counter }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{resp.Body, &t.c.bytes}
	}
	return resp, err
}

// countedClient is srv's client with a counter on it.
func countedClient(t testing.TB, srv *s3test.Server) (*s3.Client, *counter) {
	c := &counter{ops: map[string]int{}}
	opts := srv.Client(t).Options()
	{
		o := &opts
		o.HTTPClient = &http.Client{Transport: countingTransport{c}}
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("count",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					c.mu.Lock()
					c.ops[awsmiddleware.GetOperationName(ctx)]++
					c.mu.Unlock()
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	}
	return s3.New(opts), c
}

func mustPut(t testing.TB, s *Store, p string, data []byte) store.Object {
	t.Helper()
	obj, err := s.Put(context.Background(), p, data, store.PutOptions{})
	if err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
	return obj
}

func listed(t testing.TB, s *Store, prefix string) []string {
	t.Helper()
	var got []string
	err := s.List(context.Background(), prefix, func(o store.Object) error {
		got = append(got, o.Path)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	slices.Sort(got)
	return got
}

// rawKeys lists the bucket's keys with the raw client.
func rawKeys(t testing.TB, client *s3.Client, bucket string) []string {
	t.Helper()
	out, err := client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	slices.Sort(keys)
	return keys
}

func rawPut(t testing.TB, client *s3.Client, bucket, key, data string) {
	t.Helper()
	_, err := client.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: strings.NewReader(data),
	})
	if err != nil {
		t.Fatalf("raw put %q: %v", key, err)
	}
}

func same(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func TestPrefixIsolation(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	client := srv.Client(t)
	bucket := newBucket(t, srv)
	a := New(client, bucket, "/vaults/a/")
	ab := New(client, bucket, "vaults/ab")
	all := New(client, bucket, "")
	mustPut(t, a, "x.md", []byte("a"))
	mustPut(t, a, "dir/y.md", []byte("a"))
	mustPut(t, ab, "x.md", []byte("ab"))
	mustPut(t, all, "top.md", []byte("top"))

	same(t, "a.List", listed(t, a, ""), "dir/y.md", "x.md")
	same(t, "ab.List", listed(t, ab, ""), "x.md")
	same(t, "all.List", listed(t, all, ""), "top.md", "vaults/a/dir/y.md", "vaults/a/x.md", "vaults/ab/x.md")
	if data, _, err := ab.Get(t.Context(), "x.md", 0); err != nil || string(data) != "ab" {
		t.Errorf("ab.Get(x.md) = %q, %v", data, err)
	}
	if _, err := ab.Stat(t.Context(), "dir/y.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ab.Stat(dir/y.md) = %v, want ErrNotFound", err)
	}
	if dirs, err := ab.Folders(t.Context(), ""); err != nil || len(dirs) != 0 {
		t.Errorf("ab.Folders = %q, %v; want none", dirs, err)
	}
	if err := a.Delete(t.Context(), "x.md", ""); err != nil {
		t.Fatal(err)
	}
	same(t, "ab.List after a.Delete", listed(t, ab, ""), "x.md")
	same(t, "raw keys", rawKeys(t, client, bucket), "top.md", "vaults/a/dir/y.md", "vaults/ab/x.md")

	if k := a.Key("dir/y.md"); k != "vaults/a/dir/y.md" {
		t.Errorf("Key = %q", k)
	}
	for key, want := range map[string]string{
		"vaults/a/dir/y.md": "dir/y.md",
		"vaults/ab/x.md":    "",
		"vaults/a":          "",
		"vaults/a/":         "",
		"vaults/a/dir/":     "",
	} {
		if p, ok := a.Path(key); p != want || ok != (want != "") {
			t.Errorf("Path(%q) = %q, %v; want %q", key, p, ok, want)
		}
	}
}

func TestPagination(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	client, cnt := countedClient(t, srv)
	s := New(client, newBucket(t, srv), "v")
	s.maxKeys = 7
	var want []string
	for i := range 60 {
		p := fmt.Sprintf("d%d/n%02d.md", i%3, i)
		want = append(want, p)
		mustPut(t, s, p, []byte(p))
	}
	mustPut(t, s, ".sheaf/hidden.json", nil)
	if err := s.MakeFolder(t.Context(), "empty"); err != nil {
		t.Fatal(err)
	}
	cnt.reset()
	same(t, "List", listed(t, s, ""), want...)
	// 60 objects, a marker and a hidden object: 62 keys, 7 a page.
	if n := cnt.count("ListObjectsV2"); n != 9 {
		t.Errorf("List made %d ListObjectsV2 calls, want 9 pages of 7", n)
	}
	dirs, err := s.Folders(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Folders", dirs, "d0", "d1", "d2", "empty")

	// The spelling lookup pages too: the NFD key sorts after 20 others.
	rawPut(t, client, s.bucket, "v/d1/zz-re\u0301sume\u0301.md", "nfd")
	fresh := New(client, s.bucket, "v")
	fresh.maxKeys = 7
	if data, _, err := fresh.Get(t.Context(), "d1/zz-r\u00e9sum\u00e9.md", 0); err != nil || string(data) != "nfd" {
		t.Errorf("Get(NFC of a paged NFD key) = %q, %v", data, err)
	}
}

func TestNFDKeys(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	client, cnt := countedClient(t, srv)
	bucket := newBucket(t, srv)
	const (
		nfdDir  = "Cafe\u0301"
		nfcDir  = "Caf\u00e9"
		nfdNote = nfdDir + "/Re\u0301sume\u0301 notes.md"
		nfcNote = nfcDir + "/R\u00e9sum\u00e9 notes.md"
	)
	for key, data := range map[string]string{
		"vault/" + nfdNote:                     "nfd note",
		"vault/" + nfdDir + "/plain.md":        "plain",
		"vault/" + nfdDir + "/sub/deep.md":     "deep",
		"vault/ascii/e\u0301t\u00e9.md":        "mixed",
		"vault/" + nfdDir + "/.hidden/nope.md": "hidden",
	} {
		rawPut(t, client, bucket, key, data)
	}
	s := New(client, bucket, "vault")
	same(t, "List", listed(t, s, ""), nfcNote, nfcDir+"/plain.md", nfcDir+"/sub/deep.md", "ascii/\u00e9t\u00e9.md")
	same(t, "List(NFC dir)", listed(t, s, nfcDir), nfcNote, nfcDir+"/plain.md", nfcDir+"/sub/deep.md")
	same(t, "List(NFD dir)", listed(t, s, nfdDir+"/"), nfcNote, nfcDir+"/plain.md", nfcDir+"/sub/deep.md")
	dirs, err := s.Folders(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Folders", dirs, nfcDir, nfcDir+"/sub", "ascii")
	dirs, err = s.Folders(t.Context(), nfcDir)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Folders(NFC dir)", dirs, nfcDir+"/sub")

	// A fresh store has no remembered spellings: it must look them up.
	for _, p := range []string{nfcNote, nfdNote, nfcDir + "/sub/deep.md", "ascii/\u00e9t\u00e9.md"} {
		fresh := New(client, bucket, "vault")
		obj, err := fresh.Stat(t.Context(), p)
		if err != nil || obj.Path != cleanOf(p) || obj.ETag == "" {
			t.Errorf("Stat(%q) = %+v, %v", p, obj, err)
		}
		data, gobj, err := New(client, bucket, "vault").Get(t.Context(), p, 100)
		if err != nil || gobj.ETag != obj.ETag || len(data) == 0 {
			t.Errorf("Get(%q) = %q, %+v, %v", p, data, gobj, err)
		}
	}
	// A path with one normal form only is not looked for.
	cnt.reset()
	if _, err := New(client, bucket, "vault").Stat(t.Context(), "\u65E5\u672C/\u30CE\u30FC\u30C8.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Stat(missing CJK path) = %v", err)
	}
	if n := cnt.count("ListObjectsV2"); n != 0 {
		t.Errorf("Stat(missing CJK path) listed %d times", n)
	}
	// After a listing, a read of an NFD key is one request.
	listed(t, s, "")
	cnt.reset()
	if _, _, err := s.Get(t.Context(), nfcNote, 0); err != nil {
		t.Fatal(err)
	}
	if n := cnt.count("GetObject") + cnt.count("ListObjectsV2") + cnt.count("HeadObject"); n != 1 {
		t.Errorf("Get of a listed NFD key took %d requests, want 1", n)
	}

	// Writes go to the existing spelling; no NFC twin appears.
	put, err := New(client, bucket, "vault").Put(t.Context(), nfcNote, []byte("rewritten"), store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), nfcNote, []byte("stale"), store.PutOptions{IfMatch: "0123"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Put(stale IfMatch) = %v, want ErrConflict", err)
	}
	if _, err := s.Put(t.Context(), nfcNote, []byte("again"), store.PutOptions{IfMatch: put.ETag}); err != nil {
		t.Errorf("Put(IfMatch) over the NFD key: %v", err)
	}
	keys := rawKeys(t, client, bucket)
	if !slices.Contains(keys, "vault/"+nfdNote) || slices.Contains(keys, "vault/"+nfcNote) {
		t.Errorf("after Put(NFC): keys %q, want the NFD key only", keys)
	}
	// Both spellings present: listed once, both deleted.
	rawPut(t, client, bucket, "vault/"+nfcNote, "twin")
	same(t, "List with twins", listed(t, s, nfcDir), nfcNote, nfcDir+"/plain.md", nfcDir+"/sub/deep.md")
	if err := New(client, bucket, "vault").Delete(t.Context(), nfcNote, ""); err != nil {
		t.Fatal(err)
	}
	for _, k := range rawKeys(t, client, bucket) {
		if strings.Contains(k, "notes.md") {
			t.Errorf("after Delete: %q remains", k)
		}
	}
	if _, err := s.Stat(t.Context(), nfcNote); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Stat after Delete = %v, want ErrNotFound", err)
	}
	// Conditional delete of an NFD key.
	obj, err := s.Stat(t.Context(), nfcDir+"/plain.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := New(client, bucket, "vault").Delete(t.Context(), nfcDir+"/plain.md", "bogus"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Delete(bogus ETag) = %v, want ErrConflict", err)
	}
	if err := New(client, bucket, "vault").Delete(t.Context(), nfcDir+"/plain.md", obj.ETag); err != nil {
		t.Errorf("Delete(ETag) of an NFD key: %v", err)
	}
	same(t, "List at the end", listed(t, s, ""), nfcDir+"/sub/deep.md", "ascii/\u00e9t\u00e9.md")
}

func cleanOf(p string) string {
	c, _ := store.CleanPath(p)
	return c
}

func TestOddKeys(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	client := srv.Client(t)
	bucket := newBucket(t, srv)
	s := New(client, bucket, "my vault+1")
	names := []string{
		"Caf\u00e9/R\u00e9sum\u00e9 notes+1 \U0001F4A1.md",
		"100% done & dusted = yes?.md",
		"a+b/c+d.md",
		"%2F not a slash.md",
		"hash #tag; semi ~tilde 'q' \"dq\".md",
		"\U0001F469\u200D\U0001F469\u200D\U0001F467/family.md",
		"\u65E5\u672C\u8A9E/\u30CE\u30FC\u30C8.md",
		"spaces  two/ trailing space .md",
	}
	var keys []string
	for i, p := range names {
		obj := mustPut(t, s, p, []byte{byte(i)})
		if obj.Path != p {
			t.Errorf("Put(%q).Path = %q", p, obj.Path)
		}
		keys = append(keys, "my vault+1/"+p)
	}
	same(t, "raw keys", rawKeys(t, client, bucket), keys...)
	same(t, "List", listed(t, s, ""), names...)
	for i, p := range names {
		data, obj, err := s.Get(t.Context(), p, 0)
		if err != nil || !bytes.Equal(data, []byte{byte(i)}) || obj.Path != p {
			t.Errorf("Get(%q) = %v, %+v, %v", p, data, obj, err)
		}
		if got, ok := s.Path(s.Key(p)); !ok || got != p {
			t.Errorf("Path(Key(%q)) = %q, %v", p, got, ok)
		}
	}
}

func TestETagAndVersion(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	client := srv.Client(t)
	bucket := newBucket(t, srv)
	s := New(client, bucket, "")
	obj := mustPut(t, s, "n.md", []byte("hello"))
	head, err := client.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("n.md")})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Trim(aws.ToString(head.ETag), `"`); obj.ETag != want || strings.Contains(obj.ETag, `"`) {
		t.Errorf("Put ETag %q, server says %q", obj.ETag, aws.ToString(head.ETag))
	}
	if !obj.Modified.Equal(head.LastModified.UTC()) {
		t.Errorf("Put Modified %v, server says %v", obj.Modified, head.LastModified)
	}
	// An ETag given with quotes works as well.
	if _, err := s.Put(t.Context(), "n.md", []byte("bye"), store.PutOptions{IfMatch: `"` + obj.ETag + `"`}); err != nil {
		t.Errorf("Put(quoted IfMatch): %v", err)
	}
	// A write by another client makes the old ETag stale.
	rawPut(t, client, bucket, "n.md", "someone else")
	cur, err := s.Stat(t.Context(), "n.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), "n.md", []byte("mine"), store.PutOptions{IfMatch: obj.ETag}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Put(IfMatch) after a foreign write = %v, want ErrConflict", err)
	}
	if err := s.Delete(t.Context(), "n.md", obj.ETag); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Delete(stale) = %v, want ErrConflict", err)
	}
	if err := s.Delete(t.Context(), "n.md", cur.ETag); err != nil {
		t.Errorf("Delete(current): %v", err)
	}
}

func TestGetTooLarge(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	client, cnt := countedClient(t, srv)
	s := New(client, newBucket(t, srv), "")
	big := bytes.Repeat([]byte("x"), 4<<20)
	mustPut(t, s, "big.md", big)
	cnt.reset()
	_, _, err := s.Get(t.Context(), "big.md", 1000)
	if !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "4194304") {
		t.Errorf("Get(max=1000) of 4 MiB = %v, want ErrTooLarge naming the size", err)
	}
	if n := cnt.bytes.Load(); n > 4096 {
		t.Errorf("Get(max=1000) read %d response bytes", n)
	}
	if n := cnt.count("GetObject") + cnt.count("HeadObject"); n != 1 {
		t.Errorf("Get(max) made %d requests, want 1", n)
	}
	data, obj, err := s.Get(t.Context(), "big.md", 4<<20)
	if err != nil || !bytes.Equal(data, big) || obj.Size != 4<<20 {
		t.Errorf("Get(max=size) = %d bytes, %+v, %v", len(data), obj, err)
	}
	// An empty object answers a ranged GET with 416.
	empty := mustPut(t, s, "empty.md", nil)
	data, obj, err = s.Get(t.Context(), "empty.md", 10)
	if err != nil || len(data) != 0 || obj.ETag != empty.ETag || obj.Size != 0 {
		t.Errorf("Get(empty, max) = %q, %+v, %v", data, obj, err)
	}
}

func TestMissingBucket(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	ctx := t.Context()
	for _, p := range []string{"note.md", "Caf\u00e9/n\u00f6te.md"} {
		s := New(srv.Client(t), "no-such-bucket", "v")
		_, serr := s.Stat(ctx, p)
		_, _, gerr := s.Get(ctx, p, 0)
		_, perr := s.Put(ctx, p, []byte("x"), store.PutOptions{})
		_, ferr := s.Folders(ctx, "")
		for what, err := range map[string]error{
			"Stat":          serr,
			"Get":           gerr,
			"Put":           perr,
			"Delete":        s.Delete(ctx, p, ""),
			"Delete(ETag)":  s.Delete(ctx, p, "e"),
			"List":          s.List(ctx, "", func(store.Object) error { return nil }),
			"Folders":       ferr,
			"List(unicode)": s.List(ctx, "\u00e9", func(store.Object) error { return nil }),
		} {
			var missing *store.MissingError
			if !errors.Is(err, ErrNoBucket) || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no-such-bucket") || !errors.As(err, &missing) || missing.Name != "no-such-bucket" {
				t.Errorf("%s(%q) = %v, want ErrNoBucket naming the bucket", what, p, err)
			}
		}
	}
}

func TestOpen(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_PROFILE", "")
	ctx := t.Context()
	for _, c := range []Config{
		{},
		{Bucket: "b/x"},
		{Bucket: "bkt"}, // no region anywhere
		{Bucket: "bkt", Region: "us-east-1", AccessKey: "a"},
		{Bucket: "bkt", Endpoint: "ftp://x"},
	} {
		if _, err := Open(ctx, c); err == nil {
			t.Errorf("Open(%+v) succeeded", c)
		}
	}
	// No I/O at construction: nothing listens on this endpoint.
	s, err := Open(ctx, Config{Bucket: "bkt", Endpoint: "http://127.0.0.1:1", PathStyle: true, AccessKey: "a", SecretKey: "b"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := s.Stat(ctx, "x.md"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Stat against a closed port = %v, want a connection error", err)
	}
	t.Setenv("AWS_REGION", "eu-west-3")
	if _, err := Open(ctx, Config{Bucket: "bkt"}); err != nil {
		t.Errorf("Open with AWS_REGION: %v", err)
	}
}

func BenchmarkPutGet(b *testing.B) {
	srv := s3test.Start(b, s3test.Options{})
	s := New(srv.Client(b), newBucket(b, srv), "bench")
	data := bytes.Repeat([]byte("sheaf 4k "), 4096/9+1)[:4096]
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		p := fmt.Sprintf("notes/n%d.md", i%100)
		if _, err := s.Put(ctx, p, data, store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.Get(ctx, p, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	srv := s3test.Start(b, s3test.Options{})
	s := New(srv.Client(b), newBucket(b, srv), "bench")
	data := bytes.Repeat([]byte("x"), 4096)
	ctx := context.Background()
	for i := range 100 {
		if _, err := s.Put(ctx, fmt.Sprintf("notes/n%d.md", i), data, store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		if _, _, err := s.Get(ctx, fmt.Sprintf("notes/n%d.md", i%100), 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
