package main

// The backends this function opens by URL: the s3:// vault (its site is
// in shared/config) and a Meilisearch index; Qdrant in adapters_qdrant.go.
// No folder vault and no embedded index: a function has no lasting disk.
import _ "github.com/sheaf-dev/sheaf/shared/textindex/meili" // --search http(s)://: Meilisearch
