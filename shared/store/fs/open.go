package fs

import (
	"context"
	"fmt"
	"net/url"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// Scheme is the URL scheme of folder vaults: file:///abs/folder, or a
// plain folder path. No parameters.
const Scheme = "file"

func init() { store.Register(Scheme, openURL) }

// openURL implements store.Opener.
func openURL(_ context.Context, u *url.URL) (store.Store, error) {
	if u.Host != "" && u.Host != "localhost" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("fs: vault %q: a folder takes no host, user, parameters or fragment", u.Redacted())
	}
	if u.Path == "" {
		return nil, fmt.Errorf("fs: no vault folder: pass --vault DIR")
	}
	return Open(u.Path)
}
