package s3

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// maxSpellings bounds the spellings of one path that are followed.
const maxSpellings = 8

// walk lists every key under the folder prefix (any spelling of it) and
// calls file for objects and dir for folder markers, with their clean
// paths. Keys that are no valid path, hidden ones below prefix, and second
// spellings of a path already seen are skipped.
func (s *Store) walk(ctx context.Context, prefix string, file func(string, types.Object) error, dir func(string) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	pre, err := store.CleanDir(prefix)
	if err != nil {
		return err
	}
	roots := []string{s.root}
	if pre != "" {
		roots = []string{s.Key(pre) + "/"}
		if !plain(pre) {
			if roots, err = s.spellings(ctx, pre, true); err != nil {
				return err
			}
		}
	}
	seen := map[string]bool{} // non-ASCII paths (markers with a '/')
	for _, root := range roots {
		err := s.listKeys(ctx, root, "", func(key string, o types.Object) error {
			name, marker := strings.CutSuffix(key, "/")
			if !marker && listedTombstone(aws.ToInt64(o.Size), etag(o.ETag)) {
				return nil // a delete in progress (see tombstone.go)
			}
			p, ok := s.Path(name)
			if !ok {
				return nil
			}
			rel := p
			if pre != "" {
				if rel, ok = strings.CutPrefix(p, pre+"/"); !ok {
					return nil
				}
			}
			if hidden(rel) {
				return nil
			}
			if !isASCII(p) {
				id := p
				if marker {
					id += "/"
				}
				if seen[id] {
					return nil
				}
				seen[id] = true
			}
			switch {
			case marker && dir != nil:
				return dir(p)
			case !marker && file != nil:
				if nfc := s.Key(p); nfc != key {
					s.remember(nfc, key)
				}
				return file(p, o)
			}
			return nil
		}, nil)
		if err != nil {
			return err
		}
	}
	return nil
}

// listKeys pages through ListObjectsV2 under prefix, with delimiter delim
// when it is not "", calling obj for each object and sub for each common
// prefix.
func (s *Store) listKeys(ctx context.Context, prefix, delim string, obj func(string, types.Object) error, sub func(string) error) error {
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, EncodingType: types.EncodingTypeUrl}
	if prefix != "" {
		in.Prefix = &prefix
	}
	if delim != "" {
		in.Delimiter = &delim
	}
	if s.maxKeys > 0 {
		in.MaxKeys = &s.maxKeys
	}
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return s.wrap(ctx, "list", strings.TrimPrefix(prefix, s.root), err)
		}
		// Keys are URL-encoded only when the server says so (versitygw
		// ignores the request and sends them raw).
		encoded := out.EncodingType == types.EncodingTypeUrl
		for _, o := range out.Contents {
			if key, ok := decodeKey(aws.ToString(o.Key), encoded); ok && obj != nil {
				if err := obj(key, o); err != nil {
					return err
				}
			}
		}
		for _, cp := range out.CommonPrefixes {
			if key, ok := decodeKey(aws.ToString(cp.Prefix), encoded); ok && sub != nil {
				if err := sub(key); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func decodeKey(k string, encoded bool) (string, bool) {
	if !encoded {
		return k, true
	}
	k, err := url.QueryUnescape(k)
	return k, err == nil
}

// spellings returns the existing keys whose path is p: object keys, or
// with dir the key prefixes (ending in '/') of folders named p. It lists
// one folder level per segment that needs it, narrowed by the segment's
// leading ASCII bytes, which every spelling of the segment shares.
func (s *Store) spellings(ctx context.Context, p string, dir bool) ([]string, error) {
	segs := strings.Split(p, "/")
	parents := []string{s.root}
	for i, seg := range segs {
		last := i == len(segs)-1
		if !last && plain(seg) {
			for j := range parents {
				parents[j] += seg + "/"
			}
			continue
		}
		match := func(parent, key string) bool {
			name, ok := strings.CutPrefix(key, parent)
			return ok && norm.NFC.String(name) == seg
		}
		var next []string
		for _, parent := range parents {
			err := s.listKeys(ctx, parent+sharedPrefix(seg), "/", func(key string, _ types.Object) error {
				if last && !dir && match(parent, key) {
					next = append(next, key)
				}
				return nil
			}, func(cp string) error {
				if (!last || dir) && match(parent, strings.TrimSuffix(cp, "/")) {
					next = append(next, cp)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			if len(next) >= maxSpellings {
				next = next[:maxSpellings]
				break
			}
		}
		if parents = next; len(parents) == 0 {
			return nil, nil
		}
	}
	return parents, nil
}

// withKey calls fn with the key of clean path p and returns its result:
// first a remembered other spelling, then the NFC key, then (for paths that
// have another normal form) the other spellings a listing finds, for as long
// as fn fails with store.ErrNotFound.
func (s *Store) withKey(ctx context.Context, p string, fn func(key string) error) error {
	nfc := s.Key(p)
	if k, ok := s.cached(nfc); ok {
		err := fn(k)
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		s.forget(nfc)
	}
	err := fn(nfc)
	if plain(p) || !errors.Is(err, store.ErrNotFound) {
		return err
	}
	keys, lerr := s.spellings(ctx, p, false)
	if lerr != nil {
		return lerr
	}
	for _, k := range keys {
		if k == nfc {
			continue
		}
		if kerr := fn(k); !errors.Is(kerr, store.ErrNotFound) {
			if kerr == nil {
				s.remember(nfc, k)
			}
			return kerr
		}
	}
	return err
}

func (s *Store) cached(nfc string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.names[nfc]
	return k, ok
}

func (s *Store) remember(nfc, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.names) >= maxNames {
		clear(s.names)
	}
	s.names[nfc] = key
}

func (s *Store) forget(nfc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.names, nfc)
}

// wrap maps an SDK error to the port's sentinels.
func (s *Store) wrap(ctx context.Context, op, p string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("s3: %s %q: %w: %w", op, p, cerr, err)
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	switch st := status(err); {
	case noCredentials(err):
		return fmt.Errorf("s3: %s %q: no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with a role (%v): %w", op, p, err, store.ErrDenied)
	case st == 403 || code == "AccessDenied" || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch":
		return fmt.Errorf("s3: %s %q: the credentials may not do this in bucket %q (%s): check the key and its policy: %w", op, p, s.bucket, code, store.ErrDenied)
	case code == "NoSuchBucket":
		return fmt.Errorf("s3: %s %q: bucket %q: %w (%w)", op, p, s.bucket, ErrNoBucket, &store.MissingError{What: "bucket", Name: s.bucket})
	case st == 404 || code == "NoSuchKey" || code == "NotFound":
		return fmt.Errorf("s3: %s %q: %w", op, p, store.ErrNotFound)
	case st == 412 || st == 409 || code == "PreconditionFailed" || code == "ConditionalRequestConflict":
		return fmt.Errorf("s3: %s %q: %s: %w", op, p, code, store.ErrConflict)
	}
	return fmt.Errorf("s3: %s %q: %w", op, p, err)
}

// status is the HTTP status of a failed request, or 0.
func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// etag strips the quotes S3 puts around ETags.
func etag(e *string) string { return strings.Trim(aws.ToString(e), `"`) }

// quote makes an ETag an If-Match value.
func quote(e string) string { return `"` + strings.Trim(e, `"`) + `"` }

func modified(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Second)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// plain reports whether the NFC path p has no other normal form, so that
// no other spelling of its key needs looking for. (Spellings that differ in
// the order of combining marks or use singletons such as U+212A KELVIN SIGN
// are not looked for.)
func plain(p string) bool {
	return isASCII(p) || norm.NFD.String(p) == p
}

// sharedPrefix is the leading part of the NFC segment seg that its NFD form
// shares, cut back before its last starter: every spelling of seg starts
// with it, so a listing narrowed by it finds them all.
func sharedPrefix(seg string) string {
	d := norm.NFD.String(seg)
	if d == seg {
		return seg
	}
	n := 0
	for n < len(seg) && n < len(d) && seg[n] == d[n] {
		n++
	}
	for n > 0 && n < len(seg) && !utf8.RuneStart(seg[n]) {
		n--
	}
	// Back to the last starter: the marks after it may combine otherwise.
	for n > 0 {
		_, size := utf8.DecodeLastRuneInString(seg[:n])
		n -= size
		if norm.NFC.PropertiesString(seg[n:]).CCC() == 0 {
			break
		}
	}
	return seg[:n]
}

// hidden reports whether a segment of rel starts with '.'.
func hidden(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// noCredentials reports whether err says the SDK found no credentials at
// all. The SDK has no type for it; its message is stable.
func noCredentials(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "failed to refresh cached credentials") || strings.Contains(msg, "failed to retrieve credentials")
}
