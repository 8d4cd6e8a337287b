package s3

import (
	"context"
	"net/url"

	"github.com/sheaf-dev/sheaf/shared/store"
)

func init() { store.Register(Scheme, openURL) }

// openURL implements store.Opener for the URLs ParseURL reads. It makes no
// network call.
func openURL(ctx context.Context, u *url.URL) (store.Store, error) {
	c, err := ParseURL(u.String())
	if err != nil {
		return nil, err
	}
	return Open(ctx, c)
}
