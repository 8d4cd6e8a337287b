//go:build !sheaf_noqdrant

package config

import (
	"context"
	"fmt"

	"github.com/sheaf-dev/sheaf/shared/vectors"
	"github.com/sheaf-dev/sheaf/shared/vectors/qdrant"
)

// openQdrant is OpenQdrant past the scheme check.
func openQdrant(ctx context.Context, c *Config, vaultID string) (vectors.Index, error) {
	qc, err := qdrant.ParseURL(c.Vectors)
	if err != nil {
		return nil, fmt.Errorf("--vectors: %w", err)
	}
	if qc.Collection == "" {
		qc.Collection = "sheaf-" + vaultID
	}
	if qc.APIKey == "" {
		qc.APIKey = c.VectorsKey
	}
	ix, err := qdrant.Open(ctx, qc)
	if err != nil {
		return nil, fmt.Errorf("opening the Qdrant collection %s: %w", qc.Collection, err)
	}
	return ix, nil
}
