package embedded

import (
	"context"
	"fmt"
	"net/url"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// Scheme is the URL scheme of the embedded vector index:
// embedded:/abs/vectors.bin (its folder must exist), or embedded: alone for
// an index kept in memory only. No parameters.
const Scheme = "embedded"

func init() { vectors.Register(Scheme, openURL) }

// openURL implements vectors.Opener.
func openURL(_ context.Context, u *url.URL, _ vectors.Defaults) (vectors.Index, error) {
	if u.Host != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("embedded: vector index %q: want embedded:PATH, without host or parameters", u.Redacted())
	}
	path := u.Path
	if u.Opaque != "" {
		path = u.Opaque
	}
	return Open(path)
}
