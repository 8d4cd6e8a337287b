package embedcache

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/embed"
)

func TestCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c", "vectors.bin")
	fake := embed.NewFake(8)
	opened := 0
	open := func() (embed.Embedder, error) { opened++; return fake, nil }
	c, err := Open(path, "m", 8, open)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fake.Embed(ctx, []string{"a", "b", "c"})
	got, err := c.Embed(ctx, []string{"a", "b"})
	if err != nil || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) || c.Misses != 2 {
		t.Fatalf("first: %v %v misses %d", got, err, c.Misses)
	}
	got, _ = c.Embed(ctx, []string{"b", "c", "a"})
	if !slices.Equal(got[0], want[1]) || !slices.Equal(got[1], want[2]) || !slices.Equal(got[2], want[0]) || c.Misses != 3 {
		t.Fatalf("second: %v misses %d", got, c.Misses)
	}
	c.Close()
	// A torn last entry is dropped; what was whole is kept.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("torn"))
	f.Close()
	c, err = Open(path, "m", 8, open)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, _ := c.Embed(ctx, []string{"c", "a", "b"}); !slices.Equal(got[0], want[2]) || c.Misses != 0 {
		t.Fatalf("reopened: %v misses %d", got, c.Misses)
	}
	if opened != 1 {
		t.Errorf("the wrapped embedder was opened %d times, want 1 (no miss after reopening)", opened)
	}
	// Another model misses.
	o, _ := Open(path, "other", 8, open)
	defer o.Close()
	if _, err := o.Embed(ctx, []string{"a"}); err != nil || o.Misses != 1 {
		t.Errorf("other model: %v misses %d", err, o.Misses)
	}
}
