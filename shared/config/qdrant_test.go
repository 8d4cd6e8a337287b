//go:build !sheaf_noqdrant

package config

import _ "github.com/sheaf-dev/sheaf/shared/vectors/qdrant"

const hasQdrant = true
