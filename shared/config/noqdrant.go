//go:build sheaf_noqdrant

package config

import (
	"context"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// openQdrant refuses: this build leaves the Qdrant client (and gRPC) out.
func openQdrant(context.Context, *Config, string) (vectors.Index, error) {
	return nil, ErrNoQdrant
}
