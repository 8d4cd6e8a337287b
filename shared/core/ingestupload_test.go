package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/s3events"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	s3store "github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// putURL PUTs body to a presigned URL.
func putURL(t *testing.T, u string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT to the upload URL: %s", resp.Status)
	}
}

// uploadEvent is the S3 notification of an object written under the
// bucket's vault/ prefix.
func uploadEvent(path string) []byte {
	return fmt.Appendf(nil, `{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"uploads"},"object":{"key":%q}}}]}`, url.QueryEscape("vault/"+path))
}

// TestIngestUploadS3: ingest_file's presigned upload on versitygw. A 7 MB
// Markdown file (more than a Lambda request carries) is PUT to the URL,
// the indexer's Handle gets the object's event and files it as ingest_file
// with content would; ingest_file {upload_id} answers the note. A
// repeated event files nothing more; a file whose bytes contradict its
// media type is refused with the reason; a folder vault has no uploads.
func TestIngestUploadS3(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	srv.CreateBucket(t, "uploads")
	st := s3store.New(srv.Client(t), "uploads", "vault")
	s := coreOn(t, st)
	ctx := context.Background()
	ix := &indexer.Indexer{Store: st, Catalog: vault.NewCatalog(), KeyPath: st.Path, Bucket: "uploads", Uploads: s.FileUpload}

	start, err := s.IngestFile(ctx, ingestFileIn{Name: "field notes.md", Upload: true})
	if err != nil || start.Upload == nil || start.Upload.State != "waiting" || start.Upload.URL == "" || start.Path != "" {
		t.Fatalf("upload: %+v %v", start, err)
	}
	id := start.Upload.ID
	var big strings.Builder
	big.WriteString("# Field notes\n\n")
	for i := 0; big.Len() < 7<<20; i++ {
		fmt.Fprintf(&big, "Row %d: the pear trees on the north wall were pruned and tied in.\n\n", i)
	}
	putURL(t, start.Upload.URL, []byte(big.String()))
	if w, err := s.IngestFile(ctx, ingestFileIn{UploadID: id}); err != nil || w.Upload.State != "waiting" {
		t.Errorf("before the event: %+v %v", w, err)
	}

	staged := ingestUploadDir + id + ".bin"
	for range 2 { // a repeated event is a no-op
		sum, err := s3events.Handle(ctx, ix, uploadEvent(staged))
		if err != nil {
			t.Fatalf("Handle: %+v %v", sum, err)
		}
	}
	got, err := s.IngestFile(ctx, ingestFileIn{UploadID: id})
	if err != nil || got.Upload.State != "filed" || !strings.HasPrefix(got.Path, "sources/field-notes") || !got.Truncated || got.ContentType != "text/markdown" || got.SourceFile != "field notes.md" {
		t.Fatalf("after the event: %+v %v", got, err)
	}
	data, _, err := st.Get(ctx, got.Path, 0)
	if err != nil || hashOf(data) != got.ContentHash || !bytes.Contains(data, []byte("source_file: field notes.md")) || !bytes.Contains(data, []byte("pear trees")) {
		t.Errorf("the note (%v): %.300s", err, data)
	}
	if _, err := st.Stat(ctx, staged); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the staged file is still there: %v", err)
	}
	if notes := sourceNotes(t, st); len(notes) != 1 {
		t.Errorf("sources/ holds %v", notes)
	}

	// Bytes that are not what the media type says: refused, with the reason.
	bad, err := s.IngestFile(ctx, ingestFileIn{Name: "scan.pdf", MediaType: "application/pdf", Upload: true})
	if err != nil {
		t.Fatal(err)
	}
	putURL(t, bad.Upload.URL, []byte("not a PDF at all"))
	if _, err := s3events.Handle(ctx, ix, uploadEvent(ingestUploadDir+bad.Upload.ID+".bin")); err != nil {
		t.Fatal(err)
	}
	_, err = s.IngestFile(ctx, ingestFileIn{UploadID: bad.Upload.ID})
	if e := AsError(err); e == nil || e.Kind != KindArgsInvalid || e.Fields["reason"] != "content-mismatch" {
		t.Errorf("a bad upload: %v", err)
	}

	// Arguments: exactly one mode; a known id; a folder vault has none.
	for _, in := range []ingestFileIn{{Name: "a.md"}, {Name: "a.md", ContentBase64: "YQ==", Upload: true}, {UploadID: "nope"}, {UploadID: strings.Repeat("a", 24)}} {
		if e := AsError(func() error { _, err := s.IngestFile(ctx, in); return err }()); e == nil || e.Kind != KindArgsInvalid {
			t.Errorf("%+v: %v, want args-invalid", in, e)
		}
	}
	dir, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	if _, err := coreOn(t, dir).IngestFile(ctx, ingestFileIn{Name: "a.md", Upload: true}); AsError(err) == nil || AsError(err).Kind != KindUnsupported {
		t.Errorf("upload on a folder vault: %v", err)
	}
}
