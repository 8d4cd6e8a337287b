package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// A conditional delete goes through a tombstone. S3-compatible servers do
// not all make a DELETE's If-Match atomic with PUTs: versitygw 1.8 checks
// it outside the lock its PUTs take, so a conditional overwrite racing a
// conditional delete of the same version could be published between the
// check and the removal and then removed, while both answered success (an
// acknowledged write lost, about 3 times in 1,000 tight races). Their
// conditional PUTs are atomic (they are what every write's compare-and-
// swap rests on), so Delete(path, etag) first overwrites the version etag
// with a tombstone by a PUT with If-Match: exactly one of that PUT and a
// racing conditional overwrite wins. Only then is the tombstone deleted,
// with If-Match on its own ETag, which no writer of Sheaf's can hold: a
// create (If-None-Match) fails while the tombstone is there, a write
// conditioned on an older version fails too. Readers never see a
// tombstone: Stat, Get and GetRange answer store.ErrNotFound for it (its
// metadata says what it is) and List skips it (by size and ETag).
//
// The cost is one PUT more than a plain conditional DELETE, and an S3 event
// (ObjectCreated) for the tombstone, which the indexer reads as a removal.
// A PUT without a condition racing the tombstone's removal within the same
// millisecond can still be lost on such a server; Sheaf writes notes only
// with a condition.

// tombstoneBody is a tombstone's content: a NUL makes it binary, never a
// note anyone wrote.
var tombstoneBody = []byte("\x00sheaf: deleted\x00\n")

// tombstoneMeta is the user metadata key (x-amz-meta-sheaf-tombstone) that
// marks a tombstone.
const tombstoneMeta = "sheaf-tombstone"

// tombstoneETag is the ETag of a tombstone on servers whose ETag of a
// single-part upload is its MD5 (AWS S3 without SSE-KMS, versitygw, MinIO):
// what List recognises one by.
var tombstoneETag = func() string {
	sum := md5.Sum(tombstoneBody)
	return hex.EncodeToString(sum[:])
}()

// isTombstone reports whether an object's metadata marks it as a tombstone.
func isTombstone(meta map[string]string) bool {
	_, ok := meta[tombstoneMeta]
	return ok
}

// listedTombstone reports whether a listed object is a tombstone.
func listedTombstone(size int64, etag string) bool {
	return size == int64(len(tombstoneBody)) && etag == tombstoneETag
}

// deleteIfMatch removes the object at key (clean path p) if its ETag is
// still ifMatch: ErrConflict when another version is there, ErrNotFound
// when none is.
func (s *Store) deleteIfMatch(ctx context.Context, key, p, ifMatch string) error {
	out, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &key,
		Body:          bytes.NewReader(tombstoneBody),
		ContentLength: aws.Int64(int64(len(tombstoneBody))),
		IfMatch:       aws.String(quote(ifMatch)),
		Metadata:      map[string]string{tombstoneMeta: "1"},
	})
	if err != nil {
		err = s.wrap(ctx, "delete", p, err)
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("s3: delete %q: no longer ETag %q: %w", p, ifMatch, err)
		}
		return err // ErrNotFound: S3 answers If-Match on a missing key with 404
	}
	// The version is gone: the delete has happened. Removing the tombstone
	// is tidying; one left behind (a failure here) stays invisible, and a
	// create over it replaces it (see Put).
	t := etag(out.ETag)
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key, IfMatch: aws.String(quote(t))}); err != nil {
		if werr := s.wrap(ctx, "delete", p, err); !errors.Is(werr, store.ErrNotFound) && !errors.Is(werr, store.ErrConflict) {
			slog.Warn("s3: a tombstone was left behind (invisible; a create replaces it)", "path", p, "err", werr)
		}
	}
	return nil
}

// replaceTombstone is Put's answer to a create (If-None-Match) refused
// because something is at key: when it is a tombstone left behind, the
// create overwrites it, conditionally on the tombstone's ETag. It returns
// the PUT's output, or ok false when the key holds no tombstone.
func (s *Store) replaceTombstone(ctx context.Context, in *s3.PutObjectInput) (*s3.PutObjectOutput, bool, error) {
	h, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: in.Key})
	if err != nil || !isTombstone(h.Metadata) {
		return nil, false, nil
	}
	again := *in
	again.IfNoneMatch = nil
	again.IfMatch = h.ETag
	if seeker, ok := in.Body.(*bytes.Reader); ok {
		if _, err := seeker.Seek(0, 0); err != nil {
			return nil, true, err
		}
	}
	out, err := s.client.PutObject(ctx, &again)
	return out, true, err
}

// ErrNoConditionalWrites is returned (wrapped) by CheckConditionalWrites
// when the server ignores If-Match or If-None-Match on PUT: then no write
// is compare-and-swap, and no delete is safe from a racing write.
var ErrNoConditionalWrites = errors.New("s3: the server does not honour conditional writes")

// CheckConditionalWrites tests, with a probe object under .sheaf/ that it
// deletes again, that the server refuses a PUT whose If-None-Match or
// If-Match does not hold: every write's compare-and-swap, and every
// conditional delete (see tombstone.go), rests on that. It costs four
// requests, so long-lived processes call it at start (a Lambda handler
// makes no request at init).
func (s *Store) CheckConditionalWrites(ctx context.Context) error {
	key := s.Key(".sheaf/probe-conditional-" + randomName())
	put := func(opts func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
		in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: bytes.NewReader([]byte("probe")), ContentLength: aws.Int64(5)}
		opts(in)
		return s.client.PutObject(ctx, in)
	}
	defer func() {
		_, _ = s.client.DeleteObject(context.WithoutCancel(ctx), &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	}()
	first, err := put(func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if err != nil {
		if err := s.wrap(ctx, "probe", ".sheaf/probe", err); errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("%w: a create of a new key was refused (%v)", ErrNoConditionalWrites, err)
		}
		return fmt.Errorf("s3: probing conditional writes: %w", s.wrap(ctx, "probe", ".sheaf/probe", err))
	}
	if _, err := put(func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); err == nil {
		return fmt.Errorf("%w: a PUT with If-None-Match: * replaced an existing object", ErrNoConditionalWrites)
	} else if werr := s.wrap(ctx, "probe", ".sheaf/probe", err); !errors.Is(werr, store.ErrConflict) {
		return fmt.Errorf("s3: probing conditional writes: %w", werr)
	}
	wrong := "0" + etag(first.ETag)
	if _, err := put(func(in *s3.PutObjectInput) { in.IfMatch = aws.String(quote(wrong)) }); err == nil {
		return fmt.Errorf("%w: a PUT with a stale If-Match replaced the object", ErrNoConditionalWrites)
	} else if werr := s.wrap(ctx, "probe", ".sheaf/probe", err); !errors.Is(werr, store.ErrConflict) {
		return fmt.Errorf("s3: probing conditional writes: %w", werr)
	}
	return nil
}

// randomName is 12 random hex digits.
func randomName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
