package functions_test

// The tests here open cloud vaults with --search http://…, as the
// functions do: link the Meilisearch adapter as their mains do
// (functions/indexer/adapters.go, functions/mcp/adapters.go).
import _ "github.com/sheaf-dev/sheaf/shared/textindex/meili"
