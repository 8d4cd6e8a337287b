package vectors

import (
	"context"
	"net/url"

	"github.com/sheaf-dev/sheaf/shared/internal/schemes"
)

// Vector indexes are opened by URL, as gocloud.dev opens buckets: each
// adapter registers its schemes from its package's init (embedded:
// embedded:PATH, a file; qdrant: qdrant and qdrants), and a program links
// only the adapters its main imports.

// Defaults are what the configuration says beside the URL: the name of
// the vector index (a Qdrant collection) unless the URL names one, and an API key unless
// the URL carries one.
type Defaults struct {
	Name   string
	APIKey string
}

// Opener opens the Index a URL of its scheme names. It parses the URL's
// parameters itself and rejects any it does not know, and makes no
// network call.
type Opener func(ctx context.Context, u *url.URL, d Defaults) (Index, error)

var openers = schemes.New[Opener]("vectors", "vector indexes")

// Register makes Open handle scheme with o; adapters call it from their
// package's init. It panics when the scheme is registered twice.
func Register(scheme string, o Opener) { openers.Register(scheme, o) }

// Schemes are the schemes this program can open, sorted.
func Schemes() []string { return openers.Schemes() }

// Registered reports whether this program can open scheme.
func Registered(scheme string) bool {
	_, ok := openers.Lookup(scheme)
	return ok
}

// Open opens the Index rawurl names; its scheme picks the adapter, which
// the program's main must import.
func Open(ctx context.Context, rawurl string, d Defaults) (Index, error) {
	u, o, err := openers.Resolve("--vectors", rawurl)
	if err != nil {
		return nil, err
	}
	return o(ctx, u, d)
}
