package config

import (
	"errors"
	"strings"
	"testing"
)

func TestOpenQdrant(t *testing.T) {
	addr, conns := countingListener(t)
	for _, bad := range []string{"", "embedded", "milvus://x", "http://" + addr} {
		_, err := (&Config{Vectors: bad}).OpenQdrant(t.Context(), "v")
		if err == nil || !strings.Contains(err.Error(), "want embedded or qdrant://") {
			t.Errorf("--vectors %q: %v", bad, err)
		}
	}
	c := &Config{Vectors: "qdrants://" + addr + "?collection=notes", VectorsKey: "k"}
	ix, err := c.OpenQdrant(t.Context(), "v")
	switch {
	case !hasQdrant:
		if !errors.Is(err, ErrNoQdrant) || !strings.Contains(err.Error(), "rebuild without -tags sheaf_noqdrant") {
			t.Errorf("a build without Qdrant: %v", err)
		}
	case err != nil:
		t.Fatal(err)
	default:
		ix.Close()
		if _, err := (&Config{Vectors: "qdrant://" + addr + "/path"}).OpenQdrant(t.Context(), "v"); err == nil || !strings.Contains(err.Error(), "--vectors") {
			t.Errorf("a path in the URL: %v", err)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("OpenQdrant made %d connections", n)
	}
}
