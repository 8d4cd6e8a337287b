package store

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestCleanPathAccepts(t *testing.T) {
	long := strings.Repeat("a", MaxSegment)
	tests := []struct{ in, want string }{
		{"a.md", "a.md"},
		{"notes/a.md", "notes/a.md"},
		{"./notes/a.md", "notes/a.md"},
		{".obsidian/app.json", ".obsidian/app.json"},
		{".sheaf/leases/x", ".sheaf/leases/x"},
		{"Wait... what.md", "Wait... what.md"},
		{"a..b/c.md", "a..b/c.md"},
		{"...", "..."},
		{"%2e%2e%2e", "%2e%2e%2e"},
		{"100%/x.md", "100%/x.md"},
		{"my notes/🌱 ideas.md", "my notes/🌱 ideas.md"},
		{"Cafe\u0301.md", "Caf\u00e9.md"},                    // NFD -> NFC
		{"re\u0301sume\u0301/x.md", "r\u00e9sum\u00e9/x.md"}, // NFD folder
		{"\u212a.md", "K.md"},                                // Kelvin sign is a singleton
		{"日本語/ノート.md", "日本語/ノート.md"},
		{"notes/c:d.md", "notes/c:d.md"}, // a colon after the first segment is no drive
		{"1:2.md", "1:2.md"},
		{long, long},
		{strings.Repeat(long+"/", 3) + "x", strings.Repeat(long+"/", 3) + "x"},
	}
	for _, tt := range tests {
		got, err := CleanPath(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestCleanPathRejects(t *testing.T) {
	tests := []string{
		"",
		"Home\ufffd.md", // what encoding/json makes of "Home\ud83d.md"
		"\ufffd/a.md",
		"\xff.md",
		"a/\xc3",
		"a\x00b",
		"a\tb.md",
		"a\nb.md",
		"a\x7fb.md",
		"a\u0085b.md", // C1 control
		"a\\b.md",
		"a\\..\\b",
		"..\\x.md",
		"/etc/passwd",
		"/",
		"//server/share/x.md",
		"C:",
		"c:/x.md",
		"C:x.md",
		"a:b/c.md",
		"./C:/x.md",
		"..",
		"../x.md",
		"a/../../b",
		"a/..",
		"a/./b",
		".",
		"./",
		"././a",
		".//a",
		"a//b",
		"a/",
		"a/b/",
		"%2e%2e/x",
		"a/%2E%2e/b",
		"a/.%2e/b",
		"a/%2e/b",
		strings.Repeat("a", MaxSegment+1),
		strings.Repeat("a/", MaxPath/2) + "b",
		strings.Repeat(strings.Repeat("a", MaxSegment)+"/", 4) + "x",
		strings.Repeat("é", MaxPath), // 2 bytes each
		strings.Repeat("x", 10*MaxPath),
	}
	for _, in := range tests {
		got, err := CleanPath(in)
		if !errors.Is(err, ErrPathInvalid) {
			t.Errorf("CleanPath(%q) = %q, %v; want ErrPathInvalid", in, got, err)
		}
	}
}

func TestCleanPathErrorQuotes(t *testing.T) {
	_, err := CleanPath("a/../b")
	if err == nil || !strings.Contains(err.Error(), `"a/../b"`) || !strings.Contains(err.Error(), `".."`) {
		t.Fatalf("error %v should quote the path and say why", err)
	}
}

func TestCleanDir(t *testing.T) {
	ok := []struct{ in, want string }{
		{"", ""},
		{".", ""},
		{"./", ""},
		{"notes", "notes"},
		{"notes/", "notes"},
		{"./notes/", "notes"},
		{".sheaf/", ".sheaf"},
		{"a/b\u0307/", "a/\u1e03"},
	}
	for _, tt := range ok {
		got, err := CleanDir(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("CleanDir(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"/", "//", "a//", "../", "a/../", "/etc/", "a\\b/", "..", "a//b"} {
		if got, err := CleanDir(in); !errors.Is(err, ErrPathInvalid) {
			t.Errorf("CleanDir(%q) = %q, %v; want ErrPathInvalid", in, got, err)
		} else if !strings.Contains(err.Error(), `"`+strings.ReplaceAll(in, `\`, `\\`)+`"`) {
			t.Errorf("CleanDir(%q) error %q should quote the original", in, err)
		}
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{
		"a.md", "./a/b.md", "../x", "a/../b", "/etc/passwd", "C:/x", "a\\b",
		"a\x00b", "Cafe\u0301.md", "%2e%2e/x", "a//b", "a/", "\u212a", "🌱/x.md",
		"\xff", ".//x", "./", "\u0387.md", "Home\ufffd.md",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := CleanPath(in)
		if err != nil {
			if !errors.Is(err, ErrPathInvalid) {
				t.Fatalf("CleanPath(%q) error %v does not wrap ErrPathInvalid", in, err)
			}
			return
		}
		checkClean(t, in, got)
		if again, err := CleanPath(got); err != nil || again != got {
			t.Fatalf("CleanPath(%q) = %q, but CleanPath(%q) = %q, %v", in, got, got, again, err)
		}
		if d, err := CleanDir(got); err != nil || d != got {
			t.Fatalf("CleanDir(%q) = %q, %v; want it unchanged", got, d, err)
		}
	})
}

func checkClean(t *testing.T, in, got string) {
	t.Helper()
	switch {
	case got == "":
		t.Fatalf("CleanPath(%q) accepted an empty result", in)
	case strings.ContainsRune(got, utf8.RuneError):
		t.Fatalf("CleanPath(%q) = %q keeps U+FFFD", in, got)
	case !utf8.ValidString(got):
		t.Fatalf("CleanPath(%q) = %q: invalid UTF-8", in, got)
	case !norm.NFC.IsNormalString(got):
		t.Fatalf("CleanPath(%q) = %q: not NFC", in, got)
	case strings.ContainsAny(got, "\\\x00"):
		t.Fatalf("CleanPath(%q) = %q: backslash or NUL", in, got)
	case got[0] == '/':
		t.Fatalf("CleanPath(%q) = %q: absolute", in, got)
	case len(got) > MaxPath:
		t.Fatalf("CleanPath(%q) = %q: too long", in, got)
	}
	for seg := range strings.SplitSeq(got, "/") {
		if seg == "" || seg == "." || seg == ".." || len(seg) > MaxSegment {
			t.Fatalf("CleanPath(%q) = %q: bad segment %q", in, got, seg)
		}
	}
}
