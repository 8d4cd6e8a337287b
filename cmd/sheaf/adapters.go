package main

// The backends this program opens by URL (--vault, --search, --vectors):
// each adapter registers its schemes when imported. Adding a backend is one
// import here (and in the other mains that ship it).
import (
	_ "github.com/sheaf-dev/sheaf/shared/config/local"       // --vault DIR: a folder
	_ "github.com/sheaf-dev/sheaf/shared/textindex/embedded" // --search embedded: SQLite FTS5
	_ "github.com/sheaf-dev/sheaf/shared/textindex/meili"    // --search http(s)://: Meilisearch
	_ "github.com/sheaf-dev/sheaf/shared/vectors/embedded"   // --vectors embedded
)
