//go:build sheaf_noqdrant

package config

const hasQdrant = false
