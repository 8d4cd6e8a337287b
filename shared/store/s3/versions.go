package s3

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/sheaf-dev/sheaf/shared/store"
)

var _ store.Versioned = (*Store)(nil)

// Versioning reports whether the bucket keeps versions (its versioning
// status is Enabled; Suspended and never-enabled are false).
func (s *Store) Versioning(ctx context.Context) (bool, error) {
	out, err := s.client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &s.bucket})
	if err != nil {
		return false, s.wrap(ctx, "versioning", "", err)
	}
	return out.Status == types.BucketVersioningStatusEnabled, nil
}

// Versions lists the versions and delete markers of the object at path
// (its NFC key only), newest first, a page of ListObjectVersions at a
// time. S3 answers versions and delete markers in separate lists; they are
// merged by time, the latest first, and, where both ids are ULIDs (as
// versitygw's are, which reports versions' times in whole seconds only),
// by id within one second.
func (s *Store) Versions(ctx context.Context, path string, fn func(store.ObjectVersion) error) error {
	p, err := clean(ctx, path)
	if err != nil {
		return err
	}
	key := s.Key(p)
	in := &s3.ListObjectVersionsInput{Bucket: &s.bucket, Prefix: &key}
	if s.maxKeys > 0 {
		in.MaxKeys = aws.Int32(s.maxKeys)
	}
	var all []store.ObjectVersion
	for {
		out, err := s.client.ListObjectVersions(ctx, in)
		if err != nil {
			return s.wrap(ctx, "versions", p, err)
		}
		past := false // listings are sorted by key: past ours, stop
		for _, v := range out.Versions {
			if k := aws.ToString(v.Key); k != key {
				past = past || k > key
				continue
			}
			all = append(all, store.ObjectVersion{
				Object: store.Object{Path: p, Size: aws.ToInt64(v.Size), Modified: precise(v.LastModified),
					ETag: etag(v.ETag), Version: aws.ToString(v.VersionId)},
				Latest: aws.ToBool(v.IsLatest),
			})
		}
		for _, m := range out.DeleteMarkers {
			if k := aws.ToString(m.Key); k != key {
				past = past || k > key
				continue
			}
			all = append(all, store.ObjectVersion{
				Object:  store.Object{Path: p, Modified: precise(m.LastModified), Version: aws.ToString(m.VersionId)},
				Deleted: true, Latest: aws.ToBool(m.IsLatest),
			})
		}
		if past || !aws.ToBool(out.IsTruncated) {
			break
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
	slices.SortStableFunc(all, newestFirst)
	for _, v := range all {
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// newestFirst orders versions: the latest, then by time, then by ULID id.
func newestFirst(a, b store.ObjectVersion) int {
	if a.Latest != b.Latest {
		if a.Latest {
			return -1
		}
		return 1
	}
	ta, tb := a.Modified.Truncate(time.Second), b.Modified.Truncate(time.Second)
	if !ta.Equal(tb) {
		return tb.Compare(ta)
	}
	if isULID(a.Version) && isULID(b.Version) {
		return cmp.Compare(b.Version, a.Version)
	}
	return b.Modified.Compare(a.Modified)
}

func isULID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, c := range id {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) {
			return false
		}
	}
	return true
}

// precise is a listing's time in UTC, not truncated.
func precise(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// StatVersion returns one version's metadata with a HEAD.
func (s *Store) StatVersion(ctx context.Context, path, id string) (store.Object, error) {
	p, err := clean(ctx, path)
	if err != nil {
		return store.Object{}, err
	}
	key := s.Key(p)
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key, VersionId: &id})
	if err != nil {
		return store.Object{}, s.versionErr(ctx, "stat", p, id, err)
	}
	if aws.ToBool(out.DeleteMarker) {
		return store.Object{}, fmt.Errorf("s3: stat %q version %q: a delete marker: %w", p, id, store.ErrNotFound)
	}
	return store.Object{
		Path: p, Size: aws.ToInt64(out.ContentLength), Modified: modified(out.LastModified),
		ETag: etag(out.ETag), Version: aws.ToString(out.VersionId), Meta: out.Metadata,
	}, nil
}

// GetVersion reads one version with a GET (limit as Get's max).
func (s *Store) GetVersion(ctx context.Context, path, id string, limit int64) ([]byte, store.Object, error) {
	p, err := clean(ctx, path)
	if err != nil {
		return nil, store.Object{}, err
	}
	key := s.Key(p)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key, VersionId: &id})
	if err != nil {
		return nil, store.Object{}, s.versionErr(ctx, "get", p, id, err)
	}
	defer out.Body.Close()
	size := aws.ToInt64(out.ContentLength)
	if limit > 0 && size > limit {
		return nil, store.Object{}, fmt.Errorf("s3: get %q version %q: %d bytes, limit %d: %w", p, id, size, limit, store.ErrTooLarge)
	}
	r := io.Reader(out.Body)
	if limit > 0 {
		r = io.LimitReader(out.Body, limit+1)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(max(size, 0), 64<<20)))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, store.Object{}, s.wrap(ctx, "get", p, err)
	}
	data := buf.Bytes()
	if limit > 0 && int64(len(data)) > limit {
		return nil, store.Object{}, fmt.Errorf("s3: get %q version %q: over %d bytes: %w", p, id, limit, store.ErrTooLarge)
	}
	return data, store.Object{
		Path: p, Size: int64(len(data)), Modified: modified(out.LastModified),
		ETag: etag(out.ETag), Version: aws.ToString(out.VersionId), Meta: out.Metadata,
	}, nil
}

// versionErr maps a missing version (404 NoSuchVersion, or 400 for an id
// the server cannot parse) to store.ErrNotFound; a delete marker answers
// 405.
func (s *Store) versionErr(ctx context.Context, op, p, id string, err error) error {
	switch status(err) {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return fmt.Errorf("s3: %s %q version %q: %w", op, p, id, store.ErrNotFound)
	}
	return s.wrap(ctx, op, p, err)
}

// createOverMarker retries a create (If-None-Match: *) that failed with
// 412 on a key whose current version is a delete marker. S3 takes such a
// key as missing; versitygw 1.8 keeps the deleted object's ETag on its
// marker and refuses the create. The retry writes If-Match that ETag (the
// newest real version's), which versitygw compares with the marker's: the
// write is still conditional, so a racing writer wins or fails as before.
// When the key is not deleted, the first answer stands.
func (s *Store) createOverMarker(ctx context.Context, in *s3.PutObjectInput, p string, first error) (*s3.PutObjectOutput, error) {
	if _, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: in.Key}); status(err) != http.StatusNotFound {
		return nil, first // the object exists (or HEAD failed): a real conflict
	}
	var marker, prev *store.ObjectVersion
	err := s.Versions(ctx, p, func(v store.ObjectVersion) error {
		switch {
		case marker == nil && v.Deleted && v.Latest:
			marker = &v
			return nil
		case marker != nil && !v.Deleted:
			prev = &v
		}
		return errStop
	})
	if (err != nil && !errors.Is(err, errStop)) || marker == nil || prev == nil || in.Key == nil || *in.Key != s.Key(p) {
		return nil, first
	}
	retry := *in
	retry.IfNoneMatch, retry.IfMatch = nil, aws.String(quote(prev.ETag))
	if seeker, ok := in.Body.(interface {
		Seek(int64, int) (int64, error)
	}); ok {
		if _, err := seeker.Seek(0, 0); err != nil {
			return nil, first
		}
	}
	return s.client.PutObject(ctx, &retry)
}

var errStop = errors.New("stop")
