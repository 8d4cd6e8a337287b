package vault

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// NameOf returns the file name of a vault path without its ".md" suffix
// (any case): NameOf("a/b/Note.md") == "Note".
func NameOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[i+1:]
	}
	return trimMD(path)
}

// IsNotePath reports whether p names a Markdown note: it ends in ".md" (any
// case) and no segment of it is hidden.
func IsNotePath(p string) bool {
	return hasMDSuffix(p) && !IsHidden(p)
}

// IsHidden reports whether any segment of the slash-separated path p starts
// with '.', like ".obsidian/app.json", ".sheaf/catalog" or "a/.trash/b.md".
func IsHidden(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// LinkKey normalises a link target for matching against note paths, names
// and aliases: NFC, trimmed, lower-cased, leading "./" and "/" removed and a
// trailing ".md" (any case) removed. Backslashes are kept as they are.
func LinkKey(target string) string {
	s := strings.TrimSpace(target)
	for {
		switch {
		case strings.HasPrefix(s, "./"):
			s = s[2:]
		case strings.HasPrefix(s, "/"):
			s = s[1:]
		default:
			s = trimMD(s)
			return norm.NFC.String(strings.ToLower(norm.NFC.String(s)))
		}
	}
}

func hasMDSuffix(s string) bool {
	return len(s) >= 3 && strings.EqualFold(s[len(s)-3:], ".md")
}

func trimMD(s string) string {
	if hasMDSuffix(s) {
		return s[:len(s)-3]
	}
	return s
}
