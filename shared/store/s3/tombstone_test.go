package s3

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
)

// TestTombstoneLeftBehind: a delete that stopped after its tombstone (a
// crash, a lost connection) leaves an object no reader sees, and a create
// of the path replaces it.
func TestTombstoneLeftBehind(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	bucket := newBucket(t, srv)
	client := srv.Client(t)
	st := New(client, bucket, "v")
	ctx := t.Context()
	if _, err := st.Put(ctx, "keep.md", []byte("keep"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("v/gone.md"),
		Body: bytes.NewReader(tombstoneBody), Metadata: map[string]string{tombstoneMeta: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(ctx, "gone.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Stat of a tombstone: %v, want ErrNotFound", err)
	}
	if _, _, err := st.Get(ctx, "gone.md", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of a tombstone: %v, want ErrNotFound", err)
	}
	if _, _, err := st.GetRange(ctx, "gone.md", 0, 4); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRange of a tombstone: %v, want ErrNotFound", err)
	}
	if err := st.Delete(ctx, "gone.md", tombstoneETag); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete(ETag) of a tombstone: %v, want ErrNotFound", err)
	}
	var listed []string
	if err := st.List(ctx, "", func(o store.Object) error { listed = append(listed, o.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0] != "keep.md" {
		t.Errorf("List shows %v, want only keep.md", listed)
	}
	obj, err := st.Put(ctx, "gone.md", []byte("new"), store.PutOptions{IfNoneMatch: true})
	if err != nil {
		t.Fatalf("a create over a tombstone: %v", err)
	}
	if data, got, err := st.Get(ctx, "gone.md", 0); err != nil || string(data) != "new" || got.ETag != obj.ETag {
		t.Errorf("after the create: %q %v %v", data, got, err)
	}
	if _, err := st.Put(ctx, "gone.md", []byte("again"), store.PutOptions{IfNoneMatch: true}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a create over a real object: %v, want ErrConflict", err)
	}
}

// TestDeleteLeavesNoTombstone: a conditional delete removes its tombstone.
func TestDeleteLeavesNoTombstone(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	bucket := newBucket(t, srv)
	client := srv.Client(t)
	st := New(client, bucket, "")
	ctx := t.Context()
	obj, err := st.Put(ctx, "a.md", []byte("a"), store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "a.md", obj.ETag); err != nil {
		t.Fatal(err)
	}
	out, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Contents) != 0 {
		t.Errorf("objects left after a conditional delete: %d (%s)", len(out.Contents), aws.ToString(out.Contents[0].Key))
	}
}

func TestCheckConditionalWrites(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	st := New(srv.Client(t), newBucket(t, srv), "v")
	if err := st.CheckConditionalWrites(t.Context()); err != nil {
		t.Errorf("versitygw: %v", err)
	}
	// A server that ignores the conditions (this fake accepts every PUT)
	// is found out.
	careless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer careless.Close()
	client := s3.New(s3.Options{BaseEndpoint: aws.String(careless.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	if err := New(client, "b", "").CheckConditionalWrites(t.Context()); !errors.Is(err, ErrNoConditionalWrites) {
		t.Errorf("a server that ignores conditions: %v, want ErrNoConditionalWrites", err)
	}
}
