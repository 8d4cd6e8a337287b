package local

// The adapters the tests open by URL, as a main imports them.
import (
	_ "github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	_ "github.com/sheaf-dev/sheaf/shared/textindex/meili"
	_ "github.com/sheaf-dev/sheaf/shared/vectors/embedded"
)
