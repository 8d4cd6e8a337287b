package ingest

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, fetch, canon string }{
		{"HTTP://Example.COM:80/a/./b/../c?b=2&a=1#frag", "http://Example.COM:80/a/./b/../c?b=2&a=1", "http://example.com/a/c?a=1&b=2"},
		{"https://example.com:443", "https://example.com:443", "https://example.com/"},
		{"https://example.com:8443/x", "https://example.com:8443/x", "https://example.com:8443/x"},
		{"https://example.com/p?utm_source=x&utm_medium=y&id=3&fbclid=z&GCLID=1", "", "https://example.com/p?id=3"},
		{"https://example.com/p?utm_source=x", "", "https://example.com/p"},
		{"https://example.com/p?", "", "https://example.com/p"},
		{"https://example.com/%7euser/%2f%41", "", "https://example.com/~user/%2FA"},
		{"https://Bücher.example/straße", "", "https://xn--bcher-kva.example/stra%C3%9Fe"},
		{"https://example.com./", "", "https://example.com/"},
		{"http://[2001:DB8::1]:80/", "", "http://[2001:db8::1]/"},
		{"https://example.com/a?z=1&a=2&z=0", "", "https://example.com/a?a=2&z=1&z=0"},
		{"  https://example.com/a  ", "https://example.com/a", "https://example.com/a"},
	} {
		f, cu, err := ParseURL(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if c.fetch != "" && f.String() != c.fetch {
			t.Errorf("%q: fetch %q, want %q", c.in, f, c.fetch)
		}
		if cu.String() != c.canon {
			t.Errorf("%q: canonical %q, want %q", c.in, cu, c.canon)
		}
	}
}

func TestParseURLRefuses(t *testing.T) {
	for in, want := range map[string]Reason{
		"":                           ReasonURLInvalid,
		"example.com/page":           ReasonURLInvalid,
		"/relative":                  ReasonURLInvalid,
		"ftp://example.com/x":        ReasonSchemeNotAllowed,
		"file:///etc/passwd":         ReasonSchemeNotAllowed,
		"javascript:alert(1)":        ReasonSchemeNotAllowed,
		"gopher://example.com":       ReasonSchemeNotAllowed,
		"http://user:pw@example.com": ReasonCredentialsInURL,
		"http://user@example.com":    ReasonCredentialsInURL,
		"http:///nohost":             ReasonURLInvalid,
		"http://example.com:99999/":  ReasonURLInvalid,
		"http://exa mple.com/":       ReasonURLInvalid,
		"http://example.com/\x00":    ReasonURLInvalid,
		"https://" + strings.Repeat("a", MaxURLBytes): ReasonURLInvalid,
	} {
		if _, _, err := ParseURL(in); ReasonOf(err) != want {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
}

// FuzzParseURL: never panics; a canonical URL is http(s), bounded, and its
// own canonical form.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"https://example.com/a?b=1#c", "HTTP://EX.com:80/%7e/../x?utm_a=1&z&a=", "http://[::1]:0/", "https://xn--bcher-kva.example/", "http://a/b/c/./../../g", "https://ex.com/%zz?%zz=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		_, c, err := ParseURL(in)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("%q: error without a reason: %v", in, err)
			}
			return
		}
		s := c.String()
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			t.Fatalf("%q: canonical %q is not http(s)", in, s)
		}
		if len(s) > 4*MaxURLBytes {
			t.Fatalf("%q: canonical is %d bytes", in, len(s))
		}
		_, c2, err := ParseURL(s)
		if err != nil {
			t.Fatalf("%q: canonical %q refused: %v", in, s, err)
		}
		if c2.String() != s {
			t.Fatalf("%q: canonical %q is not stable: %q", in, s, c2)
		}
	})
}
