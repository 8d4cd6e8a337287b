package core

// ingest_file's presigned upload, for files bigger than a request may
// carry (the Lambda's 6 MB payload). ingest_file {name, media_type,
// upload: true} writes a manifest, .sheaf/ingest/uploads/<id>.json, and
// answers a presigned PUT URL for .sheaf/ingest/uploads/<id>.bin. The
// caller PUTs the file there; the indexer, on that object's event, calls
// FileUpload, which files it exactly as ingest_file with content does and
// records the note (or the refusal) in the manifest. ingest_file
// {upload_id} answers the note once it is filed.

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/ingest"
	"github.com/sheaf-dev/sheaf/shared/store"
)

const (
	ingestUploadDir = ".sheaf/ingest/uploads/"
	// IngestUploadTTL is how long an upload URL may be used.
	IngestUploadTTL = 15 * time.Minute
	// IngestUploadMaxBytes is the largest file an upload may file.
	IngestUploadMaxBytes = ingest.DefaultMaxBytes
	// uploadFilingTTL is how long a filing in progress holds its upload
	// before another event may take it over (its holder died).
	uploadFilingTTL = 2 * time.Minute
)

// Uploader is the optional ability of a vault's store to hand out
// presigned uploads (an S3 bucket).
type Uploader interface {
	PresignPut(ctx context.Context, path string, ttl time.Duration) (string, error)
}

// uploadOut is the state of a presigned upload.
type uploadOut struct {
	ID        string `json:"id" jsonschema:"pass it as upload_id to get the note once the file is filed"`
	State     string `json:"state" jsonschema:"waiting: PUT the file to url (path is empty until it is filed); filed: the note is path; expired: the URL lapsed before a file arrived"`
	URL       string `json:"url,omitempty" jsonschema:"presigned URL: PUT the file's bytes to it (no other headers needed) before expires_at"`
	Method    string `json:"method,omitempty"`
	ExpiresAt string `json:"expires_at,omitempty"`
	MaxBytes  int64  `json:"max_bytes,omitempty"`
}

// uploadManifest is an upload's record under .sheaf/ingest/uploads/.
type uploadManifest struct {
	Name      string    `json:"name"`
	MediaType string    `json:"media_type,omitempty"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
	State     string    `json:"state"` // waiting, filing, filed, failed
	Until     time.Time `json:"until,omitzero"`
	// Filed.
	Path        string `json:"path,omitempty"`
	ContentHash string `json:"content_hash,omitempty"`
	Size        int64  `json:"size,omitempty"`
	Title       string `json:"title,omitempty"`
	SourceHash  string `json:"source_hash,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	// Failed: the refusal, as the tool error says it.
	Message string         `json:"message,omitempty"`
	Fields  map[string]any `json:"fields,omitempty"`
}

var uploadIDPattern = regexp.MustCompile(`^[0-9a-f]{24}$`)

func uploadPaths(id string) (manifest, staged string) {
	return ingestUploadDir + id + ".json", ingestUploadDir + id + ".bin"
}

// UploadOf is the upload id of a staged upload's path, false for any other
// path (the indexer asks for every object event of .sheaf/).
func UploadOf(path string) (string, bool) {
	id, ok := strings.CutPrefix(path, ingestUploadDir)
	if !ok {
		return "", false
	}
	id, ok = strings.CutSuffix(id, ".bin")
	return id, ok && uploadIDPattern.MatchString(id)
}

// ProposeError refuses an upload to a propose-only caller: an upload URL
// or an upload's note cannot wait in a proposal (content_base64 can).
func (in ingestFileIn) ProposeError() error {
	if in.Upload || in.UploadID != "" {
		return newError(KindUnsupported, map[string]any{"argument": "upload", "propose_only": true},
			"A propose-only credential cannot upload: send the file as content_base64, and the call is queued as a proposal.")
	}
	return nil
}

// startUpload makes an upload for in.Name and answers its URL.
func (s *Core) startUpload(ctx context.Context, v *Vault, in ingestFileIn) (*ingestOut, error) {
	up, ok := v.Store.(Uploader)
	if !ok {
		return nil, newError(KindUnsupported, map[string]any{"argument": "upload", "reason": "no-upload"},
			"This vault takes files in the call only: send the file as content_base64 (presigned uploads need an S3 vault).")
	}
	f, err := ingest.CheckFile(in.Name, in.MediaType)
	if err != nil {
		return nil, ingestError(err)
	}
	var b [12]byte
	_, _ = crand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := s.now().UTC()
	m := uploadManifest{Name: f.Name, MediaType: in.MediaType, Created: now, Expires: now.Add(IngestUploadTTL), State: "waiting"}
	manifest, staged := uploadPaths(id)
	if _, err := putManifest(ctx, v.Store, manifest, "", m); err != nil {
		return nil, err
	}
	url, err := up.PresignPut(ctx, staged, IngestUploadTTL)
	if err != nil {
		return nil, err
	}
	return &ingestOut{SourceFile: f.Name, Upload: &uploadOut{ID: id, State: "waiting", URL: url, Method: "PUT",
		ExpiresAt: m.Expires.Format(time.RFC3339), MaxBytes: IngestUploadMaxBytes}}, nil
}

// uploadState answers ingest_file {upload_id}: the filed note, the
// refusal, or that the file has not been filed yet.
func (s *Core) uploadState(ctx context.Context, v *Vault, id string) (*ingestOut, error) {
	if !uploadIDPattern.MatchString(id) {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "upload_id"}, "upload_id is the id an upload answered (24 hex digits).")
	}
	manifest, staged := uploadPaths(id)
	m, _, err := getManifest(ctx, v.Store, manifest)
	if errors.Is(err, store.ErrNotFound) {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "upload_id"}, "There is no upload %s in this vault.", id)
	}
	if err != nil {
		return nil, err
	}
	switch m.State {
	case "filed":
		idx := WriteIndex{State: "current"}
		if cat, err := v.Catalogs.Catalog(ctx); err != nil {
			return nil, err
		} else if _, ok := cat.Note(m.Path); !ok {
			idx = WriteIndex{State: "pending", Note: "the indexer filed this note; this server's search and lists show it once its index has caught up (usually seconds)"}
		}
		return &ingestOut{
			noteResult: noteResult{Path: m.Path, ContentHash: m.ContentHash, Size: m.Size, Index: idx},
			Title:      m.Title, SourceFile: m.Name, SourceHash: m.SourceHash, ContentType: m.ContentType, Truncated: m.Truncated,
			Upload: &uploadOut{ID: id, State: "filed"},
		}, nil
	case "failed":
		return nil, newError(KindArgsInvalid, m.Fields, "%s", m.Message)
	}
	state := "waiting"
	if s.now().After(m.Expires) {
		if _, err := v.Store.Stat(ctx, staged); errors.Is(err, store.ErrNotFound) {
			state = "expired"
		}
	}
	return &ingestOut{SourceFile: m.Name, Upload: &uploadOut{ID: id, State: state, ExpiresAt: m.Expires.Format(time.RFC3339), MaxBytes: IngestUploadMaxBytes}}, nil
}

// FileUpload files the upload staged at path (UploadOf) in the first
// vault, as ingest_file with content does, records the note or the
// refusal in its manifest and deletes the staged file. The indexer calls
// it for the object's event; a repeated event is a no-op. An error is
// worth retrying (the store failed).
func (s *Core) FileUpload(ctx context.Context, path string) error {
	id, ok := UploadOf(path)
	if !ok {
		return nil
	}
	v, err := s.ready(ctx, VaultArg{})
	if err != nil {
		return err
	}
	manifest, staged := uploadPaths(id)
	m, etag, err := getManifest(ctx, v.Store, manifest)
	if errors.Is(err, store.ErrNotFound) {
		return v.Store.Delete(ctx, staged, "") // no upload was made for it
	}
	if err != nil {
		return err
	}
	now := s.now().UTC()
	if m.State == "filed" || m.State == "failed" || (m.State == "filing" && now.Before(m.Until)) {
		return nil // done, or another event is filing it
	}
	m.State, m.Until = "filing", now.Add(uploadFilingTTL)
	if etag, err = putManifest(ctx, v.Store, manifest, etag, m); errors.Is(err, store.ErrConflict) {
		return nil // another event took it
	} else if err != nil {
		return err
	}
	out, ferr := s.fileStaged(ctx, v, staged, m)
	if ferr != nil {
		var te *Error
		if !errors.As(ferr, &te) || te.Kind == KindInternal {
			m.State, m.Until = "waiting", time.Time{} // let a retry file it
			_, _ = putManifest(context.WithoutCancel(ctx), v.Store, manifest, etag, m)
			return ferr
		}
		m.State, m.Message, m.Fields = "failed", te.Message, te.Fields
	} else {
		m.State, m.Path, m.ContentHash, m.Size = "filed", out.Path, out.ContentHash, out.Size
		m.Title, m.SourceHash, m.ContentType, m.Truncated = out.Title, out.SourceHash, out.ContentType, out.Truncated
	}
	m.Until = time.Time{}
	if _, err := putManifest(context.WithoutCancel(ctx), v.Store, manifest, etag, m); err != nil {
		return err
	}
	return v.Store.Delete(context.WithoutCancel(ctx), staged, "")
}

// fileStaged reads the staged file and files it as a source note.
func (s *Core) fileStaged(ctx context.Context, v *Vault, staged string, m uploadManifest) (*ingestOut, error) {
	data, _, err := v.Store.Get(ctx, staged, IngestUploadMaxBytes)
	switch {
	case errors.Is(err, store.ErrTooLarge):
		obj, _ := v.Store.Stat(ctx, staged)
		return nil, ingestError(&ingest.Error{Reason: ingest.ReasonTooLarge, Message: "The uploaded file is bigger than the 20 MiB an upload may file.",
			Fields: map[string]any{"max_bytes": IngestUploadMaxBytes, "size": obj.Size}})
	case err != nil:
		return nil, err
	}
	f, err := ingest.NewFile(m.Name, m.MediaType, data, IngestUploadMaxBytes)
	if err != nil {
		return nil, ingestError(err)
	}
	return s.fileSource(ctx, v, f, "upload")
}

func getManifest(ctx context.Context, st store.Store, path string) (uploadManifest, string, error) {
	var m uploadManifest
	data, obj, err := st.Get(ctx, path, 64<<10)
	if err != nil {
		return m, "", err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, "", err
	}
	return m, obj.ETag, nil
}

// putManifest writes m conditionally on etag ("": the object must not
// exist).
func putManifest(ctx context.Context, st store.Store, path, etag string, m uploadManifest) (string, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	obj, err := st.Put(ctx, path, data, store.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
	return obj.ETag, err
}
