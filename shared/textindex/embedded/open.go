package embedded

import (
	"context"
	"fmt"
	"net/url"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// Scheme is the URL scheme of the embedded index: embedded:/abs/index.db,
// an SQLite file (its folder must exist), or embedded: alone for a
// private in-memory index. No parameters.
const Scheme = "embedded"

func init() { textindex.Register(Scheme, openURL) }

// openURL implements textindex.Opener.
func openURL(_ context.Context, u *url.URL, _ textindex.Defaults) (textindex.Index, error) {
	if u.Host != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("embedded: text index %q: want embedded:PATH, without host or parameters", u.Redacted())
	}
	path := u.Path
	if u.Opaque != "" {
		path = u.Opaque
	}
	return Open(path)
}
