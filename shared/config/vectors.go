package config

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// ErrNoQdrant is OpenQdrant's error in a build without the Qdrant client,
// which small deployments leave out (-tags sheaf_noqdrant).
var ErrNoQdrant = errors.New("this build of sheaf has no Qdrant support: rebuild without -tags sheaf_noqdrant")

// IsQdrant reports whether a --vectors value names a Qdrant server
// (qdrant://host:6334, or qdrants:// for TLS).
func IsQdrant(v string) bool {
	return strings.HasPrefix(v, "qdrant://") || strings.HasPrefix(v, "qdrants://")
}

// OpenQdrant opens the Qdrant collection c.Vectors names: the URL's
// collection, else "sheaf-<vaultID>"; the URL's API key, else --vectors-key.
// It makes no network call.
func (c *Config) OpenQdrant(ctx context.Context, vaultID string) (vectors.Index, error) {
	if !IsQdrant(c.Vectors) {
		return nil, fmt.Errorf("--vectors %q: want embedded or qdrant://host:6334 (qdrants:// for TLS)", c.Vectors)
	}
	return openQdrant(ctx, c, vaultID)
}
