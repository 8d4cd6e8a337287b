package qdrant

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	good := []struct {
		in   string
		want Config
	}{
		{"qdrant://localhost", Config{Addr: "localhost:6334"}},
		{"qdrant://localhost:6334/", Config{Addr: "localhost:6334"}},
		{"qdrants://q.example.com:443?api_key=k%2By+z&collection=sheaf-v1",
			Config{Addr: "q.example.com:443", TLS: true, APIKey: "k+y z", Collection: "sheaf-v1"}},
		{"qdrant://[::1]:7000?collection=a.b_c-1", Config{Addr: "[::1]:7000", Collection: "a.b_c-1"}},
		{"qdrant://10.0.0.1:6334?api_key=", Config{Addr: "10.0.0.1:6334"}},
	}
	for _, g := range good {
		got, err := ParseURL(g.in)
		if err != nil || got != g.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", g.in, got, err, g.want)
		}
	}
	bad := []string{
		"", "localhost:6334", "http://localhost:6334", "qdrant:localhost", "qdrant://", "qdrant://:6334",
		"qdrant://h:0", "qdrant://h:65536", "qdrant://h:port", "qdrant://h:", "qdrant://user:pw@h",
		"qdrant://h/path", "qdrant://h#frag", "qdrant://h?collection=a/b", "qdrant://h?collection=",
		"qdrant://h?collection=-a", "qdrant://h?collection=a..b", "qdrant://h?colection=a",
		"qdrant://h?api_key=a&api_key=b", "qdrant://h?x=%zz", "qdrant://h?api_key=%ff", "qdrant://h?api_key=a%0Ab", "qdrant://h?collection=" + strings.Repeat("a", 256),
	}
	for _, in := range bad {
		if c, err := ParseURL(in); err == nil {
			t.Errorf("ParseURL(%q) = %+v, want an error", in, c)
		}
	}
	_, err := ParseURL("http://h?api_key=secret")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error leaks the API key: %v", err)
	}
}

// FuzzParseURL: no panics, and an accepted URL's Config survives a round
// trip through its canonical URL and opens.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"qdrant://localhost:6334", "qdrants://h?api_key=k&collection=c", "qdrant://[::1]", "qdrant://h:1/?collection=a-b.c",
		"qdrant://%31:2", "qdrant://h?api_key=%ff", "qdrants://ü:9", "qdrant://h?;", "qdrant://h:6334?collection=a&collection=a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseURL(s)
		if err != nil {
			return
		}
		scheme := Scheme
		if c.TLS {
			scheme = TLSScheme
		}
		q := url.Values{}
		if c.APIKey != "" {
			q.Set("api_key", c.APIKey)
		}
		if c.Collection != "" {
			q.Set("collection", c.Collection)
		}
		canon := scheme + "://" + c.Addr + "?" + q.Encode()
		again, err := ParseURL(canon)
		if err != nil || again != c {
			t.Fatalf("ParseURL(%q) = %+v; its canonical form %q gives %+v, %v", s, c, canon, again, err)
		}
		if c.Collection == "" {
			c.Collection = "c"
		}
		ix, err := Open(ctx, c)
		if err != nil {
			t.Fatalf("Open(%+v) of a parsed URL: %v", c, err)
		}
		ix.Close()
	})
}
