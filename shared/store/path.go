package store

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits on clean paths, in bytes of the NFC form.
const (
	MaxSegment = 255
	MaxPath    = 1024
)

// PathError is a path CleanPath refused; it wraps ErrPathInvalid.
type PathError struct {
	Path   string // as given
	Reason string // why, e.g. `contains a ".." segment`
}

func (e *PathError) Error() string {
	return fmt.Sprintf("%v: %q: %s", ErrPathInvalid, e.Path, e.Reason)
}

func (e *PathError) Unwrap() error { return ErrPathInvalid }

// CleanPath is the single gate for every object path that comes from outside
// (a tool argument, an event key). It returns the NFC-normalised,
// vault-relative, slash-separated form of p, or an error wrapping
// ErrPathInvalid that says why p was refused.
//
// Refused: the empty path, invalid UTF-8, U+FFFD (the replacement character
// a decoder puts where it lost one: a lone surrogate escape such as
// "\ud83d" in JSON, bytes of another encoding; the path would not be the
// one the client meant), control characters, backslashes,
// absolute paths (leading '/', "//host", drive letters such as "C:"), "." and
// ".." segments (and their %2e spellings), empty segments, a trailing '/',
// segments over MaxSegment bytes and paths over MaxPath bytes. One leading
// "./" is stripped.
func CleanPath(p string) (string, error) {
	return clean(p, p)
}

// CleanDir is CleanPath for folder prefixes: "" and "." (or "./") name the
// vault root and clean to "", and one trailing '/' is allowed and removed.
func CleanDir(p string) (string, error) {
	switch p {
	case "", ".", "./":
		return "", nil
	}
	q := p
	if len(q) > 1 && q[len(q)-1] == '/' {
		q = q[:len(q)-1]
	}
	return clean(q, p)
}

// clean validates p; orig is what the caller passed, quoted in errors.
func clean(p, orig string) (string, error) {
	bad := func(why string) (string, error) {
		return "", &PathError{Path: orig, Reason: why}
	}
	switch {
	case p == "":
		return bad("empty")
	case len(p) > 4*MaxPath: // bound the work before normalising
		return bad("too long")
	case !utf8.ValidString(p):
		return bad("not valid UTF-8")
	}
	p = norm.NFC.String(p)
	for _, r := range p {
		switch {
		case r == '\\':
			return bad("contains a backslash")
		case unicode.IsControl(r):
			return bad("contains a control character")
		case r == utf8.RuneError:
			return bad("contains U+FFFD, the replacement character: a character was lost on the way (a lone surrogate escape such as \\ud83d in JSON, or text in another encoding); send the path as valid UTF-8")
		}
	}
	if strings.HasPrefix(p, "./") {
		p = p[2:]
		if p == "" {
			return bad("empty")
		}
	}
	switch {
	case p[0] == '/':
		return bad("absolute")
	case len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]):
		return bad("starts with a drive letter")
	}
	if len(p) > MaxPath {
		return bad(fmt.Sprintf("longer than %d bytes", MaxPath))
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			if strings.HasSuffix(p, "/") {
				return bad("ends with '/'")
			}
			return bad("contains an empty segment")
		case isDotSegment(seg):
			return bad(fmt.Sprintf("contains a %q segment", seg))
		case len(seg) > MaxSegment:
			return bad(fmt.Sprintf("has a segment longer than %d bytes", MaxSegment))
		}
	}
	return p, nil
}

// isDotSegment reports whether seg is "." or "..", also when spelled with
// percent-encoded dots ("%2e%2E", ".%2e"); nothing is ever decoded.
func isDotSegment(seg string) bool {
	if len(seg) > 6 {
		return false
	}
	s := strings.ReplaceAll(strings.ToLower(seg), "%2e", ".")
	return s == "." || s == ".."
}

func isASCIILetter(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
