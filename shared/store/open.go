package store

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/internal/schemes"
)

// Stores are opened by URL, as gocloud.dev opens buckets: each adapter
// registers its scheme (fs: file, s3: s3) from its package's init, and a
// program links only the adapters its main imports.

// Opener opens the store a URL of its scheme names. It parses the URL's
// parameters itself and rejects any it does not know.
type Opener func(ctx context.Context, u *url.URL) (Store, error)

var openers = schemes.New[Opener]("store", "vaults")

// Register makes Open handle scheme with o. It panics when the scheme is
// registered twice.
func Register(scheme string, o Opener) { openers.Register(scheme, o) }

// Schemes are the schemes this program can open, sorted.
func Schemes() []string { return openers.Schemes() }

// SchemeOf is the scheme of a vault location: the URL's, or "file" for a
// plain folder path.
func SchemeOf(location string) string {
	if i := strings.Index(location, "://"); i > 0 {
		return location[:i]
	}
	return "file"
}

// Open opens the store at location: a URL whose scheme picks the adapter
// (s3://bucket/prefix?...), or a folder path (file).
func Open(ctx context.Context, location string) (Store, error) {
	scheme := SchemeOf(location)
	var u *url.URL
	if scheme == "file" && !strings.HasPrefix(location, "file://") {
		u = &url.URL{Scheme: "file", Path: location}
	} else {
		var err error
		if u, err = url.Parse(location); err != nil {
			return nil, fmt.Errorf("vault %q: not a URL or a folder: %w", location, err)
		}
	}
	o, ok := openers.Lookup(scheme)
	if !ok {
		return nil, openers.Unknown("--vault", u.Redacted(), scheme)
	}
	return o(ctx, u)
}
