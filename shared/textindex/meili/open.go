package meili

import (
	"context"
	"fmt"
	"net/url"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

func init() {
	textindex.Register("http", openURL)
	textindex.Register("https", openURL)
}

// openURL implements textindex.Opener for a Meilisearch server:
//
//	http(s)://HOST[:PORT][?index=UID&api_key=KEY]
//
// index is the index uid (default d.Name, "sheaf-<vault id>"), api_key
// the key (default d.APIKey, --search-key). User info, a path, a fragment
// and other or repeated parameters are refused. It makes no network call.
func openURL(ctx context.Context, u *url.URL, d textindex.Defaults) (textindex.Index, error) {
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("meili: URL %q: only host, port and parameters (index, api_key) are allowed", redacted(u))
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("meili: URL parameters: %w", err)
	}
	c := Config{APIKey: d.APIKey, Index: d.Name}
	for k, v := range q {
		if len(v) != 1 {
			return nil, fmt.Errorf("meili: URL parameter %q given %d times", k, len(v))
		}
		switch k {
		case "index":
			c.Index = v[0]
		case "api_key":
			c.APIKey = v[0]
		default:
			return nil, fmt.Errorf("meili: unknown URL parameter %q (known: index, api_key)", k)
		}
	}
	c.URL = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	return Open(ctx, c)
}

// redacted is u without its parameters (which may hold a key).
func redacted(u *url.URL) string {
	v := *u
	v.User, v.RawQuery = nil, ""
	return v.String()
}
