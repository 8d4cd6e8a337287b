package embedded

import (
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/textindextest"
)

func TestConformanceMemory(t *testing.T) {
	textindextest.Run(t, func(t *testing.T) textindex.Index {
		ix, err := Open("")
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}

func TestConformanceFile(t *testing.T) {
	textindextest.Run(t, func(t *testing.T) textindex.Index {
		ix, err := Open(filepath.Join(t.TempDir(), "index.db"))
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}
