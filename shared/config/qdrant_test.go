//go:build !sheaf_noqdrant

package config

import (
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vectors/qdrant"
)

const hasQdrant = true

func TestIsQdrantSchemes(t *testing.T) {
	for _, s := range []string{qdrant.Scheme, qdrant.TLSScheme} {
		if !IsQdrant(s + "://h:6334") {
			t.Errorf("IsQdrant does not know the %s scheme", s)
		}
	}
}
