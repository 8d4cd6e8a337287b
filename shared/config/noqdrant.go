//go:build sheaf_noqdrant

package config

import (
	"context"
	"net/url"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// A build without the Qdrant client says so for its schemes, rather than
// that it cannot open them.
func init() {
	refuse := func(context.Context, *url.URL, vectors.Defaults) (vectors.Index, error) { return nil, ErrNoQdrant }
	vectors.Register("qdrant", refuse)
	vectors.Register("qdrants", refuse)
}
