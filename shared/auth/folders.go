package auth

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/unicode/norm"
)

// AlwaysDenied are the folder names no caller may reach through a tool, at
// any depth: Sheaf's own objects (keys, proposals, leases), the editor's
// settings, version control and the trash.
var AlwaysDenied = []string{".sheaf", ".obsidian", ".git", ".trash"}

// Denied reports whether p (vault-relative, slash-separated) lies in one of
// the AlwaysDenied folders.
func Denied(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if slices.Contains(AlwaysDenied, seg) {
			return true
		}
	}
	return false
}

// MaxFolderRules bounds an allowlist, so a hostile key file or token claim
// cannot make every path check slow.
const MaxFolderRules = 64

// maxRuleLen bounds one rule.
const maxRuleLen = 512

// rule is one allowlist entry.
type rule struct {
	pattern string
	allow   bool
	base    string // the literal folder the pattern starts with; "" for the vault root
}

// Folders is a folder allowlist: glob rules over vault-relative paths,
// evaluated in order, the last matching rule winning. A rule is a
// doublestar glob ("Projects/**", "Journal/2026-*.md", "**/public/*");
// a leading "!" makes it a denial ("!Projects/secret/**"); a trailing "/"
// means the folder and everything in it ("Projects/" is "Projects/**").
// A path no rule matches is denied, unless the first rule is a denial: a
// list that starts with "!" starts from the whole vault. AlwaysDenied
// folders are denied whatever the rules say.
//
// The nil *Folders and an empty list allow the whole vault. A Folders is
// immutable and safe for concurrent use.
type Folders struct {
	rules []rule
	src   []string
}

// ParseFolders reads allowlist rules (see Folders). It rejects rules that
// are empty, absolute, climb out of the vault ("..") or are not valid
// globs, and lists longer than MaxFolderRules.
func ParseFolders(rules []string) (*Folders, error) {
	if len(rules) > MaxFolderRules {
		return nil, fmt.Errorf("folder allowlist: %d rules, at most %d", len(rules), MaxFolderRules)
	}
	f := &Folders{}
	for _, raw := range rules {
		r, err := parseRule(raw)
		if err != nil {
			return nil, fmt.Errorf("folder allowlist: rule %q: %w", raw, err)
		}
		f.rules = append(f.rules, r)
		f.src = append(f.src, raw)
	}
	return f, nil
}

func parseRule(raw string) (rule, error) {
	s := strings.TrimSpace(raw)
	r := rule{allow: true}
	if rest, ok := strings.CutPrefix(s, "!"); ok {
		r.allow, s = false, strings.TrimSpace(rest)
	}
	switch {
	case len(s) > maxRuleLen:
		return r, fmt.Errorf("longer than %d bytes", maxRuleLen)
	case s == "":
		return r, errors.New("empty")
	case strings.HasPrefix(s, "/") || strings.Contains(s, "\\"):
		return r, errors.New("must be vault-relative with forward slashes")
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return r, errors.New("not valid UTF-8 text")
	}
	s = norm.NFC.String(s)
	if strings.HasSuffix(s, "/") {
		s += "**"
	}
	for seg := range strings.SplitSeq(s, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return r, errors.New(`has an empty, "." or ".." segment`)
		}
	}
	if !doublestar.ValidatePattern(s) {
		return r, errors.New("not a valid glob")
	}
	r.pattern = s
	base, _ := doublestar.SplitPattern(s)
	if base == "." || strings.ContainsAny(base, `\{[*?`) {
		base = "" // starts with a wildcard, or escapes we do not unpick: anywhere
	} else if !hasMeta(s) {
		base = parentDir(s) // an exact path: its folder
	}
	r.base = base
	return r, nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[{\`) }

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// Rules returns the rules as written.
func (f *Folders) Rules() []string {
	if f == nil {
		return nil
	}
	return slices.Clone(f.src)
}

// Limited reports whether f restricts anything beyond AlwaysDenied.
func (f *Folders) Limited() bool { return f != nil && len(f.rules) > 0 }

// Allows reports whether the file at p (vault-relative, NFC, as
// store.CleanPath returns it) is visible under f.
func (f *Folders) Allows(p string) bool {
	if Denied(p) {
		return false
	}
	if !f.Limited() {
		return true
	}
	ok := !f.rules[0].allow
	for _, r := range f.rules {
		if doublestar.MatchUnvalidated(r.pattern, p) {
			ok = r.allow
		}
	}
	return ok
}

// probe stands for "any file" inside a folder: no rule names it literally.
const probe = "\x00"

// ShowsFolder reports whether the folder dir is visible under f: it holds
// visible files (going by the rules, not by what exists), or it leads to a
// folder an allow rule names. dir "" is the vault root, always shown.
func (f *Folders) ShowsFolder(dir string) bool {
	dir = strings.Trim(dir, "/")
	switch {
	case dir == "":
		return true
	case Denied(dir):
		return false
	case !f.Limited():
		return true
	case f.Allows(dir + "/" + probe):
		return true
	}
	for _, r := range f.rules {
		if r.allow && (r.base == dir || strings.HasPrefix(r.base, dir+"/")) {
			return true
		}
	}
	return false
}

// Reaches reports whether some path under the folder dir could be visible
// under f, for folder arguments ("list under this folder"). It errs towards
// true: the caller's view hides what the rules deny anyway, so this only
// decides between an empty answer and folder-not-allowed.
func (f *Folders) Reaches(dir string) bool {
	dir = strings.Trim(dir, "/")
	switch {
	case Denied(dir):
		return false
	case dir == "" || !f.Limited() || !f.rules[0].allow:
		return true
	}
	for _, r := range f.rules {
		if !r.allow {
			continue
		}
		switch {
		case r.base == "" || r.base == dir || strings.HasPrefix(r.base, dir+"/"):
			return true // the rule's folder is dir or below it
		case strings.HasPrefix(dir, r.base+"/") && descends(r.pattern, dir):
			return true // dir is inside the rule's folder and the rule reaches into it
		}
	}
	return false
}

// descends reports whether pattern may match a path strictly inside dir.
func descends(pattern, dir string) bool {
	if strings.Contains(pattern, "**") || strings.ContainsAny(pattern, "{\\") {
		return true // any depth, or alternatives that may hold slashes: assume so
	}
	ps, ds := strings.Split(pattern, "/"), strings.Split(dir, "/")
	if len(ps) <= len(ds) {
		return false
	}
	return doublestar.MatchUnvalidated(strings.Join(ps[:len(ds)], "/"), dir)
}

// String is the rules, comma-separated.
func (f *Folders) String() string {
	if !f.Limited() {
		return "(whole vault)"
	}
	return strings.Join(f.src, ", ")
}
