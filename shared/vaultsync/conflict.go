package vaultsync

import (
	"os"
	"path"
	"strings"
	"time"
)

// ConflictName is the name of the copy that keeps one side's version of p
// when both sides changed it: "Note.md" becomes
// "Note.conflict-HOST-20260102-150405.md" (UTC), next to it. host names the
// machine that found the conflict.
func ConflictName(p, host string, at time.Time) string {
	dir, name := path.Split(p)
	ext := path.Ext(name)
	if ext == name { // ".md" alone, or no extension at all
		ext = ""
	}
	base := strings.TrimSuffix(name, ext)
	return dir + base + ".conflict-" + hostLabel(host) + "-" + at.UTC().Format("20060102-150405") + ext
}

// hostLabel makes a host name safe in a file name: letters, digits and
// dashes, at most 32 of them; "host" when nothing is left.
func hostLabel(h string) string {
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i]
	}
	var b strings.Builder
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		if b.Len() >= 32 {
			break
		}
	}
	if s := strings.Trim(b.String(), "-"); s != "" {
		return s
	}
	return "host"
}

// Hostname is this machine's short name, for conflict copies.
func Hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "host"
	}
	return hostLabel(h)
}
