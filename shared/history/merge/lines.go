package merge

import (
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// splitLines splits text after each '\n'; the last line may lack one.
func splitLines(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// edit replaces base[s:e] by one side's lines r[rs:re].
type edit struct {
	s, e   int
	rs, re int
}

func edits(base, side []string) []edit {
	ds := lcs.DiffLines(base, side)
	out := make([]edit, len(ds))
	for i, d := range ds {
		out[i] = edit{d.Start, d.End, d.ReplStart, d.ReplEnd}
	}
	return out
}

// group is a run of edits from both sides that touch one another, over
// base[s:e]; ours and theirs are each side's text for that range.
type group struct {
	s, e          int
	ours, theirs  []edit
	oursTouched   bool
	theirsTouched bool
}

// touches reports whether two edits cannot both apply independently: their
// base ranges overlap, or both insert at one point, or one inserts strictly
// inside the other's range.
func touches(a, b edit) bool {
	switch {
	case a.s == a.e && b.s == b.e:
		return a.s == b.s
	case a.s == a.e:
		return b.s < a.s && a.s < b.e
	case b.s == b.e:
		return a.s < b.s && b.s < a.e
	}
	return a.s < b.e && b.s < a.e
}

// groupEdits merges two sorted edit lists into groups of touching edits,
// in base order. A group with edits of one side only applies cleanly.
func groupEdits(ours, theirs []edit) []group {
	type tagged struct {
		edit
		theirs bool
	}
	all := make([]tagged, 0, len(ours)+len(theirs))
	for _, e := range ours {
		all = append(all, tagged{e, false})
	}
	for _, e := range theirs {
		all = append(all, tagged{e, true})
	}
	// By start; at one start, insertions first (they go before a
	// replacement starting there).
	slices.SortStableFunc(all, func(a, b tagged) int {
		if a.s != b.s {
			return a.s - b.s
		}
		return (a.e - a.s) - (b.e - b.s)
	})
	var out []group
	for _, t := range all {
		if n := len(out); n > 0 {
			g := &out[n-1]
			hit := false
			for _, o := range append(slices.Clone(g.ours), g.theirs...) {
				if touches(o, t.edit) {
					hit = true
					break
				}
			}
			if hit {
				g.s, g.e = min(g.s, t.s), max(g.e, t.e)
				if t.theirs {
					g.theirs = append(g.theirs, t.edit)
				} else {
					g.ours = append(g.ours, t.edit)
				}
				continue
			}
		}
		g := group{s: t.s, e: t.e}
		if t.theirs {
			g.theirs = []edit{t.edit}
		} else {
			g.ours = []edit{t.edit}
		}
		out = append(out, g)
	}
	return out
}

// sideText is what one side made of base[s:e], given its edits inside.
func sideText(base, side []string, s, e int, es []edit) []string {
	var out []string
	pos := s
	for _, d := range es {
		out = append(out, base[pos:d.s]...)
		out = append(out, side[d.rs:d.re]...)
		pos = d.e
	}
	return append(out, base[pos:e]...)
}

// hunk is a conflicting part of a line merge.
type hunk struct {
	baseLine           int // 0-based index in base of the first line
	base, ours, theirs []string
}

// mergeLines three-way merges lines. Edits of one side apply; edits of
// both sides that touch are resolved when equal, kept both when both only
// insert at one point next to a line both kept (ours first; one that
// contains the other wins), and are a conflict otherwise. anchored says
// whether text both kept precedes base (a heading, the frontmatter): an
// insertion by both at the start is then next to it.
func mergeLines(base, ours, theirs []string, anchored bool) ([]string, []hunk) {
	oe, te := edits(base, ours), edits(base, theirs)
	covered := make([]bool, len(base))
	for _, e := range append(slices.Clone(oe), te...) {
		for i := e.s; i < e.e; i++ {
			covered[i] = true
		}
	}
	kept := func(i int) bool {
		if i < 0 {
			return anchored
		}
		return i < len(base) && !covered[i]
	}
	groups := groupEdits(oe, te)
	var out []string
	var conflicts []hunk
	pos := 0
	for _, g := range groups {
		out = append(out, base[pos:g.s]...)
		pos = g.e
		o := sideText(base, ours, g.s, g.e, g.ours)
		t := sideText(base, theirs, g.s, g.e, g.theirs)
		switch {
		case len(g.theirs) == 0 || slices.Equal(o, t):
			out = append(out, o...)
		case len(g.ours) == 0:
			out = append(out, t...)
		case g.s == g.e && (kept(g.s-1) || kept(g.s)):
			out = append(out, union(o, t)...)
		default:
			conflicts = append(conflicts, hunk{baseLine: g.s, base: base[g.s:g.e], ours: o, theirs: t})
			out = append(out, o...)
		}
	}
	return append(out, base[pos:]...), conflicts
}

// union keeps two insertions at one point: one that holds the other
// (as a prefix or suffix) alone, else ours then theirs.
func union(o, t []string) []string {
	switch {
	case hasPrefix(o, t) || hasSuffix(o, t):
		return o
	case hasPrefix(t, o) || hasSuffix(t, o):
		return t
	}
	return append(slices.Clone(o), t...)
}

func hasPrefix(s, p []string) bool { return len(p) <= len(s) && slices.Equal(s[:len(p)], p) }
func hasSuffix(s, p []string) bool { return len(p) <= len(s) && slices.Equal(s[len(s)-len(p):], p) }
