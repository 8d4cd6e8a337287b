//go:build !sheaf_noqdrant

package main

import _ "github.com/sheaf-dev/sheaf/shared/vectors/qdrant" // --vectors qdrant(s)://
