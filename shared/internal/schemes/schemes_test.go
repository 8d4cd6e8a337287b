package schemes

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[func() int]("test", "tests")
	r.Register("b", func() int { return 2 })
	r.Register("a", func() int { return 1 })
	if got := r.Schemes(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Schemes = %v, want [a b]", got)
	}
	if o, ok := r.Lookup("b"); !ok || o() != 2 {
		t.Fatal("Lookup(b) did not find the opener registered for b")
	}
	if _, ok := r.Lookup("c"); ok {
		t.Fatal("Lookup(c) found an opener that was never registered")
	}
	err := r.Unknown("--test", "c://x", "c")
	if want := `--test "c://x": this program cannot open c: tests (it can open: a, b)`; err.Error() != want {
		t.Errorf("Unknown = %q, want %q", err.Error(), want)
	}
	if u, o, err := r.Resolve("--test", "b://host/path?x=1"); err != nil || u.Host != "host" || o() != 2 {
		t.Errorf("Resolve(b://host/path) = %v, %v: want b's opener and the parsed URL", u, err)
	}
	var unknown *UnknownError
	if _, _, err := r.Resolve("--test", "c://user:secret@x"); !errors.As(err, &unknown) || strings.Contains(err.Error(), "secret") {
		t.Errorf("Resolve(c://...) = %v: want an *UnknownError without the password", err)
	}
	for _, bad := range []string{"", "no-scheme", "://x", "%zz"} {
		if _, _, err := r.Resolve("--test", bad); err == nil || errors.As(err, &unknown) {
			t.Errorf("Resolve(%q) = %v: want a not-a-URL error", bad, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a scheme twice did not panic")
		}
	}()
	r.Register("a", func() int { return 3 })
}
