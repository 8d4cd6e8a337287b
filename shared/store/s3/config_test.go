package s3

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/testbin"
)

func TestParseURL(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want Config
	}{
		{"s3://bucket", Config{Bucket: "bucket"}},
		{"s3://bucket/", Config{Bucket: "bucket"}},
		{"s3://bucket/some/prefix/", Config{Bucket: "bucket", Prefix: "some/prefix"}},
		{"s3://bucket/some/prefix?endpoint=http://127.0.0.1:7070&path_style=true&region=us-east-1",
			Config{Bucket: "bucket", Prefix: "some/prefix", Endpoint: "http://127.0.0.1:7070", PathStyle: true, Region: "us-east-1"}},
		{"s3://my.bucket-1/v?region=eu-west-3&path_style=0", Config{Bucket: "my.bucket-1", Prefix: "v", Region: "eu-west-3"}},
		{"s3://Legacy_Bucket/my%20vault/Caf%C3%A9", Config{Bucket: "Legacy_Bucket", Prefix: "my vault/Caf\u00e9"}},
		{"s3://b/Cafe%CC%81", Config{Bucket: "b", Prefix: "Caf\u00e9"}}, // NFD prefix -> NFC
		{"s3://b/a+b?endpoint=https%3A%2F%2Fs3.example.com%3A9000", Config{Bucket: "b", Prefix: "a+b", Endpoint: "https://s3.example.com:9000"}},
	} {
		got, err := ParseURL(tt.url)
		if err != nil || got != tt.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tt.url, got, err, tt.want)
			continue
		}
		if back, err := ParseURL(got.URL()); err != nil || back != got {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", got.URL(), back, err, got)
		}
	}
}

func TestParseURLRefuses(t *testing.T) {
	for _, u := range []string{
		"", "bucket/prefix", "file:///tmp/vault", "S4://bucket", "s3:bucket", "s3://", "s3:///prefix",
		"s3://key:secret@bucket/p", "s3://bucket:9000/p", "s3://bucket/p#frag", "s3://bucket/p#",
		"s3://bu cket/p", "s3://bucket/../x", "s3://bucket//x", "s3://bucket/a/./b", "s3://bucket/%2e%2e/x",
		"s3://bucket/a%00b", "s3://bucket/a%5Cb", "s3://[::1]/p", "s3://bucket/p?%zz",
		"s3://bucket?unknown=1", "s3://bucket?Region=us-east-1", "s3://bucket?region=us-east-1&region=eu-west-1",
		"s3://bucket?region=", "s3://bucket?region=US%20East", "s3://bucket?path_style=maybe",
		"s3://bucket?endpoint=", "s3://bucket?endpoint=127.0.0.1:7070", "s3://bucket?endpoint=ftp://host",
		"s3://bucket?endpoint=http://", "s3://bucket?endpoint=http://u:p@host", "s3://bucket?endpoint=http://host/%3Fq%3D1%23f",
	} {
		if c, err := ParseURL(u); err == nil {
			t.Errorf("ParseURL(%q) = %+v, want an error", u, c)
		}
	}
	for _, u := range []string{"s3://key:verysecret@bucket/p", "s3://key:verysecret@bucket:x/p", "s3://bucket?endpoint=http://u:verysecret@host"} {
		if _, err := ParseURL(u); err == nil || strings.Contains(err.Error(), "verysecret") {
			t.Errorf("ParseURL(%q): error %v shows the secret", u, err)
		}
	}
}

func TestURLOmitsKeys(t *testing.T) {
	c := Config{Bucket: "b", Prefix: "p", AccessKey: "AKIA", SecretKey: "shh"}
	if u := c.URL(); strings.Contains(u, "AKIA") || strings.Contains(u, "shh") || u != "s3://b/p" {
		t.Errorf("URL() = %q", u)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"s3://bucket/some/prefix?endpoint=http://127.0.0.1:7070&path_style=true&region=us-east-1",
		"s3://b/my%20vault/Cafe%CC%81", "s3://b?region=x&region=y", "s3://b/%2e%2e", "s3://a:b@c/d#e",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		c, err := ParseURL(u)
		if err != nil {
			return
		}
		if c.Bucket == "" || c.AccessKey != "" || c.SecretKey != "" {
			t.Fatalf("ParseURL(%q) = %+v", u, c)
		}
		if c.Prefix != "" {
			if p, err := store.CleanPath(c.Prefix); err != nil || p != c.Prefix {
				t.Fatalf("ParseURL(%q): prefix %q is not clean", u, c.Prefix)
			}
		}
		back, err := ParseURL(c.URL())
		if err != nil || back != c {
			t.Fatalf("ParseURL(%q) = %+v; its URL %q reads back as %+v, %v", u, c, c.URL(), back, err)
		}
	})
}

func FuzzPath(f *testing.F) {
	for _, s := range [][2]string{
		{"vault", "vault/a.md"}, {"", "a/b.md"}, {"v", "v/Cafe\u0301/x.md"}, {"v", "v/./a.md"},
		{"v", "v/"}, {"v/", "v/x/"}, {"", "\xff"}, {"a", "ab/c"}, {"", "../x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, prefix, key string) {
		s := New(nil, "bucket", prefix)
		p, ok := s.Path(key)
		if !ok {
			return
		}
		if c, err := store.CleanPath(p); err != nil || c != p || !utf8.ValidString(p) {
			t.Fatalf("Path(%q) = %q, not a clean path", key, p)
		}
		// The key is the path's key up to normalisation, and the path's own
		// key maps back to it.
		if norm.NFC.String(s.Key(p)) != norm.NFC.String(key) {
			t.Fatalf("prefix %q: Path(%q) = %q, whose key is %q", prefix, key, p, s.Key(p))
		}
		if back, ok := s.Path(s.Key(p)); !ok || back != p {
			t.Fatalf("prefix %q: Path(Key(%q)) = %q, %v", prefix, p, back, ok)
		}
	})
}

func TestSharedPrefix(t *testing.T) {
	for seg, want := range map[string]string{
		"plain.md":              "plain.md",
		"\u65E5\u672C\u8A9E.md": "\u65E5\u672C\u8A9E.md", // no decomposition
		"Caf\u00e9.md":          "Ca",
		"\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac": "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9", // ends in ά
		"\u00e9t\u00e9": "",
		"\uD55C\uAE00":  "", // Hangul syllables decompose
	} {
		if got := sharedPrefix(seg); got != want {
			t.Errorf("sharedPrefix(%q) = %q, want %q", seg, got, want)
		}
	}
	for p, want := range map[string]bool{"a/b.md": true, "\u65E5/\u672C.md": true, "Caf\u00e9": false} {
		if plain(p) != want {
			t.Errorf("plain(%q) = %v", p, !want)
		}
	}
}

func FuzzSharedPrefix(f *testing.F) {
	for _, s := range []string{"Caf\u00e9", "Cafe\u0301", "\u1E09x", "a\u0323\u0302b", "\uD55C", "\xff\u00e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		seg := norm.NFC.String(s)
		pre := sharedPrefix(seg)
		for _, form := range []string{seg, norm.NFD.String(seg)} {
			if !strings.HasPrefix(form, pre) {
				t.Fatalf("sharedPrefix(%q) = %q, not a prefix of %q", seg, pre, form)
			}
		}
		if plain(seg) != (norm.NFD.String(seg) == seg) {
			t.Fatalf("plain(%q) wrong", seg)
		}
	})
}

// TestOpenTimeout: a server that accepts connections and never answers
// fails calls after the timeout (and the SDK's retries), never hangs them.
func TestOpenTimeout(t *testing.T) {
	c, err := ParseURL("s3://b/p?endpoint=" + testbin.Silent(t) + "&path_style=true&region=us-east-1&timeout=200ms")
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 200*time.Millisecond {
		t.Fatalf("Timeout %v", c.Timeout)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "a")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "b")
	st, err := Open(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 9*time.Second)
	defer cancel()
	if _, err := st.Stat(ctx, "a.md"); err == nil || ctx.Err() != nil {
		t.Errorf("Stat against a silent server: %v (context: %v)", err, ctx.Err())
	}
}
