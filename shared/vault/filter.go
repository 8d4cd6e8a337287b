package vault

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// TagCount is a tag and how many notes carry it or one of its descendants.
type TagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}

// NormalizeTag is the one form tags are stored, indexed and compared in
// everywhere (catalog, text index, vector index, filters): valid UTF-8,
// NFC, lower-cased, without leading '#'s or surrounding slashes and spaces.
func NormalizeTag(t string) string {
	t = strings.TrimSpace(strings.ToValidUTF8(t, "\uFFFD"))
	t = strings.Trim(strings.TrimLeft(t, "#"), "/ ")
	return norm.NFC.String(strings.ToLower(norm.NFC.String(t)))
}

// ExpandTags returns the tags with every ancestor of a nested tag ("a/b/c"
// gives "a/b/c", "a/b", "a"), normalised, deduplicated and sorted: a filter
// tag matches a note carrying it or a descendant when it is in this set.
func ExpandTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		t = NormalizeTag(t)
		for i := 0; i < len(t); i++ {
			if t[i] == '/' && i > 0 && t[i-1] != '/' {
				out = append(out, t[:i])
			}
		}
		if t != "" {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Tags returns every tag and every ancestor of a nested tag, with the number
// of notes carrying it or a descendant, sorted by tag. A non-empty prefix
// keeps the tags that start with it (case-insensitively, '#' optional).
func (c *Catalog) Tags(prefix string) []TagCount {
	prefix = strings.TrimPrefix(foldKey(strings.TrimSpace(prefix)), "#")
	c.rlock(facets)
	defer c.mu.RUnlock()
	var out []TagCount
	for t, s := range c.tags {
		if strings.HasPrefix(t, prefix) {
			out = append(out, TagCount{Tag: t, Count: s.len()})
		}
	}
	slices.SortFunc(out, func(a, b TagCount) int { return strings.Compare(a.Tag, b.Tag) })
	return out
}

// NotesByTag returns the notes carrying tag or any nested descendant of it
// ("project" also returns notes tagged "project/web"), sorted by path.
func (c *Catalog) NotesByTag(tag string) []Note {
	t := NormalizeTag(tag)
	if t == "" {
		return nil
	}
	c.rlock(facets)
	defer c.mu.RUnlock()
	return c.notesOf(c.tags[t])
}

// ListFilter selects notes for List. Zero fields do not filter.
type ListFilter struct {
	Folder        string // notes directly in this folder ("." or "/" is the root; "" does not filter)...
	Recursive     bool   // ...or anywhere below it
	PathPrefix    string // plain string prefix of the path
	Tags          []string
	Author        string
	Since         time.Time // Modified >= Since
	TitleContains string
	MetadataMatch map[string]any // frontmatter key -> JSON scalar; see ValidateMetadataMatch
	Entities      []string
	Paths         map[string]bool // restrict to these paths (true values); nil means all
}

// List returns the notes matching every field of f, sorted by path.
//
// Folder with Recursive lists the whole subtree; without, only the folder's
// own notes. Each tag matches itself or a descendant, and all must match.
// Author is compared case-insensitively, TitleContains is a case-insensitive
// substring. A MetadataMatch key matches when the frontmatter value equals
// the query value, or is a list containing it; matching is type-sensitive
// ("1" does not equal 1) and numbers compare by value. Entities must all be
// present exactly. Tags, metadata, entities and Paths are answered from
// inverted indexes, so a narrow filter never scans the vault. Invalid
// MetadataMatch values match nothing.
func (c *Catalog) List(f ListFilter) []Note {
	need := family(0)
	if len(f.Tags) > 0 || len(f.Entities) > 0 {
		need |= facets
	}
	if len(f.MetadataMatch) > 0 {
		need |= meta
	}
	c.rlock(need)
	defer c.mu.RUnlock()

	var sets []*set
	if f.Paths != nil {
		s := &set{}
		for p, ok := range f.Paths {
			if ok {
				s.add(norm.NFC.String(p))
			}
		}
		sets = append(sets, s)
	}
	for _, t := range f.Tags {
		sets = append(sets, c.tags[NormalizeTag(t)])
	}
	for k, v := range f.MetadataMatch {
		cv, ok := canonScalar(v)
		if !ok {
			return nil
		}
		sets = append(sets, c.meta[k][cv])
	}
	for _, e := range f.Entities {
		sets = append(sets, c.entities[norm.NFC.String(e)])
	}

	byFolder := f.Folder != ""
	folder := strings.Trim(norm.NFC.String(f.Folder), "/")
	if folder == "." {
		folder = ""
	}
	prefix := norm.NFC.String(f.PathPrefix)
	author := foldKey(strings.TrimSpace(f.Author))
	title := titleKey(f.TitleContains)
	keep := func(n *Note) bool {
		switch {
		case byFolder && folder != "" && f.Recursive && !strings.HasPrefix(n.Path, folder+"/"):
			return false
		case byFolder && !f.Recursive && dirOf(n.Path) != folder:
			return false
		case !strings.HasPrefix(n.Path, prefix):
			return false
		case author != "" && foldKey(strings.TrimSpace(n.Author)) != author:
			return false
		case !f.Since.IsZero() && n.Modified.Before(f.Since):
			return false
		case title != "" && !strings.Contains(titleKey(n.Title), title):
			return false
		}
		return true
	}

	var out []Note
	if len(sets) == 0 {
		for _, n := range c.notes {
			if keep(n) {
				out = append(out, *n)
			}
		}
		sortNotes(out)
		return out
	}
	smallest := 0
	for i, s := range sets {
		if s.len() < sets[smallest].len() {
			smallest = i
		}
	}
next:
	for p := range sets[smallest].all {
		n := c.notes[p]
		if n == nil || !keep(n) {
			continue
		}
		for i, s := range sets {
			if i != smallest && !s.has(p) {
				continue next
			}
		}
		out = append(out, *n)
	}
	sortNotes(out)
	return out
}

// dirOf is the folder of a vault path, "" at the root.
func dirOf(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// ValidateMetadataMatch rejects metadata_match values that are not JSON
// scalars (string, number, boolean): null, lists and objects.
func ValidateMetadataMatch(m map[string]any) error {
	for k, v := range m {
		if _, ok := canonScalar(v); !ok {
			kind := "a non-scalar value"
			switch v.(type) {
			case nil:
				kind = "null"
			case []any:
				kind = "a list"
			case map[string]any:
				kind = "an object"
			}
			return fmt.Errorf("metadata_match[%q] is %s; values must be strings, numbers or booleans", k, kind)
		}
	}
	return nil
}

// metaValues returns the canonical forms under which a frontmatter value is
// indexed: the value itself when scalar, each scalar element of a list.
func metaValues(v any) []string {
	if cv, ok := canonScalar(v); ok {
		return []string{cv}
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil
	}
	var out []string
	for i := range rv.Len() {
		if cv, ok := canonScalar(rv.Index(i).Interface()); ok {
			out = append(out, cv)
		}
	}
	return out
}

// canonScalar returns a type-tagged canonical form of a scalar: numbers of
// every Go type compare by value, strings by NFC text, and a string never
// equals a number or boolean.
func canonScalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return "s:" + norm.NFC.String(x), true
	case bool:
		return "b:" + strconv.FormatBool(x), true
	case int:
		return canonInt(int64(x)), true
	case int8:
		return canonInt(int64(x)), true
	case int16:
		return canonInt(int64(x)), true
	case int32:
		return canonInt(int64(x)), true
	case int64:
		return canonInt(x), true
	case uint:
		return canonUint(uint64(x)), true
	case uint8:
		return canonUint(uint64(x)), true
	case uint16:
		return canonUint(uint64(x)), true
	case uint32:
		return canonUint(uint64(x)), true
	case uint64:
		return canonUint(x), true
	case float32:
		return canonFloat(float64(x)), true
	case float64:
		return canonFloat(x), true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return canonInt(i), true
		}
		if f, err := x.Float64(); err == nil {
			return canonFloat(f), true
		}
		return "", false
	case time.Time:
		// As it reads back from JSON (a snapshot): an RFC 3339 string.
		return "s:" + x.Format(time.RFC3339Nano), true
	}
	return "", false
}

func canonInt(i int64) string { return "n:" + strconv.FormatInt(i, 10) }

func canonUint(u uint64) string {
	if u <= math.MaxInt64 {
		return canonInt(int64(u))
	}
	return "n:" + strconv.FormatUint(u, 10)
}

func canonFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return canonInt(int64(f))
	}
	return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
}

// titleKey is s case-folded in full (Unicode's case folding: ΣΗΜΕΊΩΣΗ and
// σημείωση, Straße and STRASSE compare equal), for title_contains.
func titleKey(s string) string {
	return norm.NFC.String(cases.Fold().String(norm.NFC.String(s)))
}
