package qdrant

import (
	"context"
	"fmt"
	"net/url"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

func init() {
	vectors.Register(Scheme, openURL)
	vectors.Register(TLSScheme, openURL)
}

// openURL implements vectors.Opener for the URLs ParseURL reads: the
// collection is the URL's, else d.Name; the API key the URL's, else
// d.APIKey. It makes no network call.
func openURL(ctx context.Context, u *url.URL, d vectors.Defaults) (vectors.Index, error) {
	c, err := ParseURL(u.String())
	if err != nil {
		return nil, err
	}
	if c.Collection == "" {
		c.Collection = d.Name
	}
	if c.APIKey == "" {
		c.APIKey = d.APIKey
	}
	ix, err := Open(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("opening the Qdrant collection %s: %w", c.Collection, err)
	}
	return ix, nil
}
