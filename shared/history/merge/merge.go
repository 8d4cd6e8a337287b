// Package merge three-way merges Markdown notes: the version a writer
// read (base), what was written since (ours: the note now) and the
// writer's own change (theirs).
//
// The merge knows a note's parts:
//   - YAML frontmatter merges key by key: keys changed by one side take
//     that side's value, keys changed differently by both are a conflict.
//   - The body is cut into sections at ATX headings (outside code fences).
//     Sections are matched across the three versions by heading, a heading
//     one side renamed matched by its place (or by its text when sections
//     were added around it); each matched section merges on its own, its
//     heading and its lines separately, so a heading renamed by one side
//     and the section edited by the other merge cleanly, and no change
//     reaches into a neighbouring section. Sections added, removed or
//     reordered merge as lines.
//   - Lines merge by their edits against base: edits of one side apply;
//     edits of both that overlap are a conflict unless equal; insertions
//     by both at one place (appends at the end, items added to one list)
//     keep both, ours first.
//
// Line endings (LF, CRLF) and a missing final newline are merged as
// properties of the note: a side that changed them wins. The merge never
// panics and is deterministic; when ours equals base the result is theirs,
// byte for byte, and the other way round.
package merge

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Result is a merge's outcome: the merged text, or the conflicts.
type Result struct {
	Text      []byte     // the merged note; nil when there are conflicts
	Conflicts []Conflict // empty when the merge is clean
}

// Clean reports whether the merge has no conflict.
func (r Result) Clean() bool { return len(r.Conflicts) == 0 }

// Conflict is one part both sides changed differently.
type Conflict struct {
	// Where is "frontmatter" (Key names the key), "section" (Section
	// names it: its heading's text, "" before the first heading) or
	// "note" (line endings).
	Where   string `json:"where"`
	Key     string `json:"key,omitempty"`
	Section string `json:"section,omitempty"`
	// Line is the 1-based line of base where the conflicting part starts
	// (0 for frontmatter keys and the note's properties).
	Line   int    `json:"line,omitempty"`
	Base   string `json:"base"`
	Ours   string `json:"ours"`
	Theirs string `json:"theirs"`
}

// Merge merges ours and theirs, both made from base.
func Merge(base, ours, theirs []byte) Result {
	switch {
	case bytes.Equal(ours, base):
		return Result{Text: clone(theirs)}
	case bytes.Equal(theirs, base), bytes.Equal(ours, theirs):
		return Result{Text: clone(ours)}
	}
	b, o, t := string(base), string(ours), string(theirs)
	var conflicts []Conflict

	// Line endings: normalised to LF when the sides differ.
	crlf := false
	if sb, so, st := eol(b), eol(o), eol(t); sb != so || sb != st {
		style, ok := pick(sb, so, st)
		if !ok {
			conflicts = append(conflicts, Conflict{Where: "note", Key: "line endings", Base: sb, Ours: so, Theirs: st})
		}
		crlf = style == "crlf"
		b, o, t = toLF(b), toLF(o), toLF(t)
	}
	// A missing final newline: merged as a property.
	// A missing final newline: merged as a property, and given back only
	// when the merged text ends with a line that lacked it.
	final, _ := pick(endsLine(b), endsLine(o), endsLine(t)) // two-valued: never a conflict
	lacked := map[string]bool{}
	for _, s := range []string{b, o, t} {
		if !endsLine(s) {
			lacked[s[strings.LastIndexByte(s, '\n')+1:]+"\n"] = true
		}
	}
	b, o, t = withNewline(b), withNewline(o), withNewline(t)

	bl, ol, tl := splitLines(b), splitLines(o), splitLines(t)
	var out []string
	bf, bbody, okB := splitFrontmatter(bl)
	of, obody, okO := splitFrontmatter(ol)
	tf, tbody, okT := splitFrontmatter(tl)
	if okB && okO && okT && (bf.present || of.present || tf.present) {
		fm, cs := mergeFrontmatter(bf, of, tf)
		conflicts = append(conflicts, cs...)
		out = fm.lines()
		body, cs := mergeBody(bbody, obody, tbody, len(bl)-len(bbody), bf.present && of.present && tf.present)
		conflicts = append(conflicts, cs...)
		out = append(out, body...)
	} else {
		body, cs := mergeBody(bl, ol, tl, 0, false)
		conflicts = append(conflicts, cs...)
		out = body
	}
	if len(conflicts) > 0 {
		return Result{Conflicts: conflicts}
	}
	text := strings.Join(out, "")
	if !final && len(out) > 0 && lacked[out[len(out)-1]] {
		text = strings.TrimSuffix(text, "\n")
	}
	if crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	return Result{Text: []byte(text)}
}

func clone(b []byte) []byte { return append([]byte{}, b...) }

// pick merges a property three ways; ok is false when both sides changed
// it differently (ours is returned then).
func pick[T comparable](b, o, t T) (T, bool) {
	switch {
	case o == b:
		return t, true
	case t == b, o == t:
		return o, true
	}
	return o, false
}

// eol is a text's line-ending style: "lf", "crlf", "mixed" or "" (none).
func eol(s string) string {
	n := strings.Count(s, "\n")
	cr := strings.Count(s, "\r\n")
	switch {
	case n == 0:
		return ""
	case cr == 0:
		return "lf"
	case cr == n:
		return "crlf"
	}
	return "mixed"
}

func toLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

func endsLine(s string) bool { return s == "" || strings.HasSuffix(s, "\n") }

func withNewline(s string) string {
	if endsLine(s) {
		return s
	}
	return s + "\n"
}

// mergeBody merges the sections of three bodies; offset is the number of
// lines before base's body (for conflicts' line numbers); anchored says
// whether text all three kept precedes them (see mergeLines).
func mergeBody(base, ours, theirs []string, offset int, anchored bool) ([]string, []Conflict) {
	bs, os, ts := splitSections(base), splitSections(ours), splitSections(theirs)
	bTok := make([]string, len(bs))
	for i := range bs {
		bTok[i] = "b" + itoa(i)
	}
	oTok, tTok := align(bs, os, "o"), align(bs, ts, "t")
	oSec, tSec := sectionsByToken(os, oTok), sectionsByToken(ts, tTok)
	// Line offsets of base's sections.
	starts := make([]int, len(bs)+1)
	for i, s := range bs {
		starts[i+1] = starts[i] + lineCount(s.lines(), -1)
	}
	var out []string
	var conflicts []Conflict
	report := func(hs []hunk, first int, at func(int) int) {
		for _, h := range hs {
			line := at(h.baseLine)
			conflicts = append(conflicts, Conflict{
				Where: "section", Section: bs[sectionAt(starts, line-offset, first)].title(), Line: line + 1,
				Base: strings.Join(h.base, ""), Ours: strings.Join(h.ours, ""), Theirs: strings.Join(h.theirs, ""),
			})
		}
	}
	stable := func(i int) {
		b, o, t := bs[i], oSec[bTok[i]], tSec[bTok[i]]
		if b.heading != "" || o.heading != "" || t.heading != "" {
			h, ok := pick(b.heading, o.heading, t.heading)
			if !ok {
				lead := strings.Count(b.heading, "\n") - 1 // the blank lines before it
				conflicts = append(conflicts, Conflict{Where: "section", Section: b.title(), Line: offset + starts[i] + lead + 1,
					Base: b.heading, Ours: o.heading, Theirs: t.heading})
			}
			if h != "" {
				out = append(out, h)
			}
		}
		head := strings.Count(b.heading, "\n")
		// A heading all three have anchors the body's start.
		lines, hs := mergeLines(b.body, o.body, t.body, b.heading != "" && o.heading != "" && t.heading != "" || anchored)
		report(hs, i, func(l int) int { return offset + starts[i] + head + lineCount(b.body, l) })
		out = append(out, lines...)
	}
	groups := groupEdits(edits(bTok, oTok), edits(bTok, tTok))
	pos := 0
	for _, g := range groups {
		for ; pos < g.s; pos++ {
			stable(pos)
		}
		pos = g.e
		var bl, ol, tl []string
		for _, s := range bs[g.s:g.e] {
			bl = append(bl, s.lines()...)
		}
		for _, tok := range sideText(bTok, oTok, g.s, g.e, g.ours) {
			ol = append(ol, oSec[tok].lines()...)
		}
		for _, tok := range sideText(bTok, tTok, g.s, g.e, g.theirs) {
			tl = append(tl, tSec[tok].lines()...)
		}
		// Sections before the group were kept by all three (stable).
		lines, hs := mergeLines(bl, ol, tl, g.s > 0 && len(bs[g.s-1].lines()) > 0 || g.s == 0 && anchored)
		first := g.s
		report(hs, first, func(l int) int { return offset + starts[first] + lineCount(bl, l) })
		out = append(out, lines...)
	}
	for ; pos < len(bs); pos++ {
		stable(pos)
	}
	return out, conflicts
}

// sectionAt is the index of the base section holding body line l, at or
// after first.
func sectionAt(starts []int, l, first int) int {
	i := max(0, min(first, len(starts)-2))
	for i+1 < len(starts)-1 && starts[i+1] <= l {
		i++
	}
	return i
}

func sectionsByToken(ss []section, toks []string) map[string]section {
	m := make(map[string]section, len(ss))
	for i, s := range ss {
		m[toks[i]] = s
	}
	return m
}

// align names side's sections by the base section each is: by heading
// text in order, then, among the headings that differ between two
// matched ones, by place when as many were replaced as there were, else
// by the most similar body. Others get names of their own (prefix + index).
func align(base, side []section, prefix string) []string {
	toks := make([]string, len(side))
	for i := range side {
		toks[i] = prefix + itoa(i)
	}
	bt, st := titles(base), titles(side)
	ds := lcs.DiffLines(bt, st)
	// Matched runs between the diffs.
	pb, ps := 0, 0
	for _, d := range append(ds, lcs.Diff{Start: len(bt), End: len(bt), ReplStart: len(st), ReplEnd: len(st)}) {
		for ; pb < d.Start; pb, ps = pb+1, ps+1 {
			toks[ps] = "b" + itoa(pb)
		}
		nb, ns := d.End-d.Start, d.ReplEnd-d.ReplStart
		if nb == ns {
			for k := range nb {
				toks[d.ReplStart+k] = "b" + itoa(d.Start+k)
			}
		} else {
			next := d.ReplStart
			for i := d.Start; i < d.End; i++ {
				best, at := 0.5, -1
				for j := next; j < d.ReplEnd; j++ {
					if sim := similarity(base[i].body, side[j].body); sim >= best {
						best, at = sim, j
					}
				}
				if at >= 0 {
					toks[at] = "b" + itoa(i)
					next = at + 1
				}
			}
		}
		pb, ps = d.End, d.ReplEnd
	}
	return toks
}

func titles(ss []section) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.title() + "\n"
	}
	return out
}

// similarity is the share of lines two bodies have in common (blank lines
// aside): 1 for equal bodies.
func similarity(a, b []string) float64 {
	count := map[string]int{}
	n := 0
	for _, l := range a {
		if strings.TrimSpace(l) != "" {
			count[l]++
			n++
		}
	}
	common, m := 0, 0
	for _, l := range b {
		if strings.TrimSpace(l) == "" {
			continue
		}
		m++
		if count[l] > 0 {
			count[l]--
			common++
		}
	}
	if n == 0 && m == 0 {
		return 1
	}
	return float64(common) / float64(max(n, m))
}

func itoa(i int) string { return strconv.Itoa(i) }

// lineCount is the number of lines in the first n tokens (all: n < 0); a
// token may hold several lines (a heading with the blank lines before it).
func lineCount(tokens []string, n int) int {
	if n < 0 || n > len(tokens) {
		n = len(tokens)
	}
	c := 0
	for _, t := range tokens[:n] {
		c += max(1, strings.Count(t, "\n"))
	}
	return c
}
