package vectors_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vectors"
	"github.com/sheaf-dev/sheaf/shared/vectors/embedded"
	"github.com/sheaf-dev/sheaf/shared/vectors/qdrant"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	d := vectors.Defaults{Name: "sheaf-v", APIKey: "k"}
	for _, u := range []string{"embedded:", "embedded:" + filepath.Join(t.TempDir(), "vectors.bin")} {
		ix, err := vectors.Open(ctx, u, d)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if _, ok := ix.(*embedded.Index); !ok {
			t.Errorf("%s opened a %T", u, ix)
		}
		ix.Close()
	}
	ix, err := vectors.Open(ctx, "qdrant://127.0.0.1:1?collection=notes", d)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.(*qdrant.Index); !ok {
		t.Errorf("qdrant opened a %T", ix)
	}
	ix.Close()
	for u, want := range map[string]string{
		"milvus://h":                   "cannot open milvus: vector indexes (it can open: embedded, qdrant, qdrants)",
		"embedded:/v.bin?sync=no":      "without host or parameters",
		"qdrant://h?colour=blue":       `unknown URL parameter "colour"`,
		"qdrant://h/path":              "only host, port and parameters",
		"qdrants://h?collection=a b c": "collection",
	} {
		if _, err := vectors.Open(ctx, u, d); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", u, err, want)
		}
	}
}
