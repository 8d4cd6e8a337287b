// Package s3 is the S3 adapter of the store port: the vault is every object
// under a key prefix of one bucket, on AWS S3 or any S3-compatible server.
//
// A vault path p is stored under the key prefix + "/" + p (just p when the
// prefix is empty). Paths are NFC; keys written by other tools may be NFD or
// otherwise unnormalised: List reports them by their NFC path, and Stat, Get,
// Put and Delete of the NFC path find them (Put overwrites the existing
// spelling rather than adding a twin). Only paths whose NFD form differs
// (accented letters, Hangul, ...) can have such twins; looking for them costs
// one listing, narrowed by the name's leading characters, per folder level
// with such a name. Reads look only when the NFC key is missing and remember
// what they find; Put and Delete of such paths always look.
//
// A key ending in '/' is a folder marker, not an object: Folders reports it,
// List does not. Folders otherwise exist while objects are inside them.
//
// ETags are the server's, without quotes; Modified is truncated to whole
// seconds (S3 reports seconds in HEAD and GET, milliseconds in listings).
// Conditional writes use S3's If-Match and If-None-Match headers; a 412 or
// 409 answer is store.ErrConflict. A missing bucket is ErrNoBucket, never
// store.ErrNotFound.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sheaf-dev/sheaf/shared/store"
)

var _ store.Store = (*Store)(nil)

// ErrNoBucket is returned (wrapped) when the bucket does not exist.
var ErrNoBucket = errors.New("s3: bucket does not exist")

// Store is a vault in an S3 bucket. It is safe for concurrent use.
type Store struct {
	client *s3.Client
	bucket string
	root   string // the key prefix + "/", or "" for the whole bucket

	maxKeys int32 // page size of listings; 0: the server's (1000)

	mu    sync.Mutex
	names map[string]string // NFC key -> key as stored, for other spellings
}

// maxNames bounds the spelling cache; it is dropped when full.
const maxNames = 1 << 16

// New returns a store over the objects of bucket under prefix, using client
// as it is (endpoint, credentials, retries).
func New(client *s3.Client, bucket, prefix string) *Store {
	prefix = strings.Trim(prefix, "/")
	root := ""
	if prefix != "" {
		root = prefix + "/"
	}
	return &Store{client: client, bucket: bucket, root: root, names: map[string]string{}}
}

// Key returns the object key of the clean vault path p: prefix + "/" + p.
func (s *Store) Key(p string) string { return s.root + p }

// Path returns the vault path of an object key: the part after the prefix,
// NFC-normalised. It is false when the key is outside the prefix or names
// no valid path (see store.CleanPath; a folder marker ending in '/' is not
// a path).
func (s *Store) Path(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, s.root)
	if !ok || strings.HasPrefix(rest, "./") {
		return "", false // "./a" would alias "a"
	}
	p, err := store.CleanPath(rest)
	return p, err == nil
}

// clean checks the context and cleans a path from the caller.
func clean(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return store.CleanPath(path)
}

// Stat returns the metadata of the object at path: one HEAD request, and a
// HEAD of the bucket when the object is missing.
func (s *Store) Stat(ctx context.Context, path string) (store.Object, error) {
	p, err := clean(ctx, path)
	if err != nil {
		return store.Object{}, err
	}
	var obj store.Object
	err = s.withKey(ctx, p, func(key string) (err error) {
		obj, err = s.head(ctx, key, p)
		return err
	})
	return obj, err
}

// head returns the metadata of key. HEAD answers a missing bucket with a
// bare 404; the bucket is checked then, so that it is not ErrNotFound.
func (s *Store) head(ctx context.Context, key, p string) (store.Object, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		err = s.wrap(ctx, "stat", p, err)
		if errors.Is(err, store.ErrNotFound) && s.noBucket(ctx) {
			return store.Object{}, fmt.Errorf("s3: stat %q: %q: %w (%w)", p, s.bucket, ErrNoBucket, &store.MissingError{What: "bucket", Name: s.bucket})
		}
		return store.Object{}, err
	}
	if isTombstone(out.Metadata) {
		return store.Object{}, fmt.Errorf("s3: stat %q: deleted: %w", p, store.ErrNotFound)
	}
	return store.Object{
		Path:     p,
		Size:     aws.ToInt64(out.ContentLength),
		Modified: modified(out.LastModified),
		ETag:     etag(out.ETag),
		Version:  aws.ToString(out.VersionId),
		Meta:     out.Metadata,
	}, nil
}

// noBucket reports whether HEAD on the bucket says it does not exist.
func (s *Store) noBucket(ctx context.Context) bool {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	return status(err) == http.StatusNotFound
}

// Get reads the object at path with one GET. With max > 0 it asks for the
// first max+1 bytes only and fails with ErrTooLarge when the object's total
// size, from Content-Range, is bigger than max.
func (s *Store) Get(ctx context.Context, path string, max int64) ([]byte, store.Object, error) {
	p, err := clean(ctx, path)
	if err != nil {
		return nil, store.Object{}, err
	}
	var (
		data []byte
		obj  store.Object
	)
	err = s.withKey(ctx, p, func(key string) (err error) {
		data, obj, err = s.get(ctx, key, p, max)
		return err
	})
	if err != nil {
		return nil, store.Object{}, err
	}
	return data, obj, nil
}

func (s *Store) get(ctx context.Context, key, p string, max int64) ([]byte, store.Object, error) {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}
	if max > 0 {
		in.Range = aws.String("bytes=0-" + strconv.FormatInt(max, 10))
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil && in.Range != nil && status(err) == http.StatusRequestedRangeNotSatisfiable {
		// An empty object has no byte 0: read it whole, still bounded below.
		in.Range = nil
		out, err = s.client.GetObject(ctx, in)
	}
	if err != nil {
		return nil, store.Object{}, s.wrap(ctx, "get", p, err)
	}
	defer out.Body.Close()
	if isTombstone(out.Metadata) {
		return nil, store.Object{}, fmt.Errorf("s3: get %q: deleted: %w", p, store.ErrNotFound)
	}
	size := aws.ToInt64(out.ContentLength)
	if total, ok := rangeTotal(aws.ToString(out.ContentRange)); ok {
		size = total
	}
	tooLarge := func(size int64) error {
		return fmt.Errorf("s3: get %q: %d bytes, limit %d: %w", p, size, max, store.ErrTooLarge)
	}
	if max > 0 && size > max {
		return nil, store.Object{}, tooLarge(size)
	}
	r := io.Reader(out.Body)
	if max > 0 {
		r = io.LimitReader(out.Body, max+1)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(size, 64<<20)) + 1)
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, store.Object{}, s.wrap(ctx, "get", p, err)
	}
	if max > 0 && int64(buf.Len()) > max {
		return nil, store.Object{}, tooLarge(int64(buf.Len()))
	}
	if int64(buf.Len()) != size {
		return nil, store.Object{}, fmt.Errorf("s3: get %q: read %d bytes of %d", p, buf.Len(), size)
	}
	return buf.Bytes(), store.Object{
		Path:     p,
		Size:     size,
		Modified: modified(out.LastModified),
		ETag:     etag(out.ETag),
		Version:  aws.ToString(out.VersionId),
		Meta:     out.Metadata,
	}, nil
}

// GetRange implements store.RangeReader with one ranged GET.
func (s *Store) GetRange(ctx context.Context, path string, off, n int64) ([]byte, store.Object, error) {
	p, err := clean(ctx, path)
	if err != nil {
		return nil, store.Object{}, err
	}
	if off < 0 || n < 0 {
		return nil, store.Object{}, fmt.Errorf("s3: get %q: negative range", p)
	}
	var (
		data []byte
		obj  store.Object
	)
	err = s.withKey(ctx, p, func(key string) (err error) {
		data, obj, err = s.getRange(ctx, key, p, off, n)
		return err
	})
	return data, obj, err
}

func (s *Store) getRange(ctx context.Context, key, p string, off, n int64) ([]byte, store.Object, error) {
	if n == 0 {
		obj, err := s.head(ctx, key, p)
		return []byte{}, obj, err
	}
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key,
		Range: aws.String("bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10))}
	out, err := s.client.GetObject(ctx, in)
	if err != nil && status(err) == http.StatusRequestedRangeNotSatisfiable {
		// At or past the end (or an empty object): nothing to read.
		obj, herr := s.head(ctx, key, p)
		return []byte{}, obj, herr
	}
	if err != nil {
		return nil, store.Object{}, s.wrap(ctx, "get", p, err)
	}
	defer out.Body.Close()
	if isTombstone(out.Metadata) {
		return nil, store.Object{}, fmt.Errorf("s3: get %q: deleted: %w", p, store.ErrNotFound)
	}
	size := aws.ToInt64(out.ContentLength)
	total, ranged := rangeTotal(aws.ToString(out.ContentRange))
	if !ranged {
		// The server ignored the range and sent it all.
		total = size
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(out.Body, max(size, 0)+1)); err != nil {
		return nil, store.Object{}, s.wrap(ctx, "get", p, err)
	}
	data := buf.Bytes()
	if !ranged {
		if off >= int64(len(data)) {
			data = nil
		} else {
			data = data[off:min(int64(len(data)), off+n)]
		}
	}
	if int64(len(data)) > n {
		return nil, store.Object{}, fmt.Errorf("s3: get %q: asked for %d bytes, got %d", p, n, len(data))
	}
	return append([]byte{}, data...), store.Object{
		Path:     p,
		Size:     total,
		Modified: modified(out.LastModified),
		ETag:     etag(out.ETag),
		Version:  aws.ToString(out.VersionId),
	}, nil
}

// rangeTotal returns the complete length from a Content-Range header such
// as "bytes 0-99/1234".
func rangeTotal(cr string) (int64, bool) {
	i := strings.LastIndexByte(cr, '/')
	if i < 0 || !strings.HasPrefix(cr, "bytes ") {
		return 0, false
	}
	n, err := strconv.ParseInt(cr[i+1:], 10, 64)
	return n, err == nil && n >= 0
}

// Put writes the object with one PUT (conditional when opts say so) and
// reads its modification time back with a HEAD. Paths that have another
// normal form first look for an existing spelling of the key to overwrite.
func (s *Store) Put(ctx context.Context, path string, data []byte, opts store.PutOptions) (store.Object, error) {
	p, err := clean(ctx, path)
	if err != nil {
		return store.Object{}, err
	}
	key := s.Key(p)
	if !plain(p) {
		keys, err := s.spellings(ctx, p, false)
		if err != nil {
			return store.Object{}, err
		}
		if len(keys) > 0 && !slices.Contains(keys, key) {
			key = keys[0]
		}
	}
	in := &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &key,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		Metadata:      opts.Meta,
	}
	if opts.IfMatch != "" {
		in.IfMatch = aws.String(quote(opts.IfMatch))
	}
	if opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil && opts.IfNoneMatch && status(err) == http.StatusPreconditionFailed {
		// A tombstone left behind by a delete is no object: replace it;
		// so is a delete marker (see createOverMarker).
		if o, ok, rerr := s.replaceTombstone(ctx, in); ok {
			out, err = o, rerr
		} else {
			out, err = s.createOverMarker(ctx, in, p, err)
		}
	}
	if err != nil {
		err = s.wrap(ctx, "put", p, err)
		if opts.IfMatch != "" && errors.Is(err, store.ErrNotFound) {
			// S3 answers If-Match on a missing key with 404.
			return store.Object{}, fmt.Errorf("s3: put %q: missing, want ETag %q: %w", p, opts.IfMatch, store.ErrConflict)
		}
		return store.Object{}, err
	}
	obj := store.Object{Path: p, Size: int64(len(data)), ETag: etag(out.ETag), Version: aws.ToString(out.VersionId), Meta: opts.Meta}
	// PUT does not return Last-Modified. If another write came in between,
	// the HEAD sees its ETag: fall back to the PUT response's Date.
	h, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key, VersionId: out.VersionId})
	if err == nil && etag(h.ETag) == obj.ETag {
		obj.Modified = modified(h.LastModified)
	} else {
		obj.Modified = responseDate(out.ResultMetadata)
	}
	return obj, nil
}

// responseDate is the Date header of a response, or now.
func responseDate(md middleware.Metadata) time.Time {
	if resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
		if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			return t.UTC()
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}

// Delete removes the object; every spelling of its key when ifMatch is "".
// With ifMatch it HEADs the object (ErrNotFound when missing, ErrConflict
// when the ETag differs), then replaces that version by a tombstone with a
// conditional PUT and deletes the tombstone (see tombstone.go): a write
// racing the delete either wins (the delete fails with ErrConflict) or
// fails, on every server whose conditional PUTs are atomic, even where a
// DELETE's If-Match is not.
func (s *Store) Delete(ctx context.Context, path string, ifMatch string) error {
	p, err := clean(ctx, path)
	if err != nil {
		return err
	}
	nfc := s.Key(p)
	defer s.forget(nfc)
	if ifMatch == "" {
		keys := []string{nfc}
		if !plain(p) {
			more, err := s.spellings(ctx, p, false)
			if err != nil {
				return err
			}
			for _, k := range more {
				if k != nfc {
					keys = append(keys, k)
				}
			}
		}
		for _, k := range keys {
			if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &k}); err != nil {
				if err = s.wrap(ctx, "delete", p, err); !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
		}
		return nil
	}
	var cur store.Object
	key := ""
	err = s.withKey(ctx, p, func(k string) (err error) {
		cur, err = s.head(ctx, k, p)
		key = k
		return err
	})
	if err != nil {
		return err
	}
	if cur.ETag != ifMatch {
		return fmt.Errorf("s3: delete %q: ETag %q, want %q: %w", p, cur.ETag, ifMatch, store.ErrConflict)
	}
	return s.deleteIfMatch(ctx, key, p, ifMatch)
}

// MakeFolder creates an empty folder: a marker object named path + "/".
func (s *Store) MakeFolder(ctx context.Context, path string) error {
	p, err := clean(ctx, path)
	if err != nil {
		return err
	}
	key := s.Key(p) + "/"
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(nil), ContentLength: aws.Int64(0),
	})
	if err != nil {
		return s.wrap(ctx, "make folder", p, err)
	}
	return nil
}

// List calls fn for every object under prefix, page by page. Folder
// markers, keys that are no valid path, and objects in hidden folders below
// prefix are skipped. Objects carry no Version (listings have none). When
// two keys spell one path, it is listed once, with either key's metadata.
func (s *Store) List(ctx context.Context, prefix string, fn func(store.Object) error) error {
	return s.walk(ctx, prefix, func(p string, o types.Object) error {
		return fn(store.Object{
			Path:     p,
			Size:     aws.ToInt64(o.Size),
			Modified: modified(o.LastModified),
			ETag:     etag(o.ETag),
		})
	}, nil)
}

// Folders returns every folder under prefix, sorted: the folders of the
// objects' keys and the folder markers, hidden ones below prefix and prefix
// itself excluded.
func (s *Store) Folders(ctx context.Context, prefix string) ([]string, error) {
	pre, err := store.CleanDir(prefix)
	if err != nil {
		return nil, err
	}
	start := 0
	if pre != "" {
		start = len(pre) + 1
	}
	set := map[string]bool{}
	add := func(p string) {
		for i := start; i < len(p); i++ {
			if p[i] == '/' {
				set[p[:i]] = true
			}
		}
	}
	err = s.walk(ctx, prefix, func(p string, _ types.Object) error {
		add(p)
		return nil
	}, func(p string) error {
		add(p + "/")
		return nil
	})
	if err != nil {
		return nil, err
	}
	dirs := []string{}
	for d := range set {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return dirs, nil
}
