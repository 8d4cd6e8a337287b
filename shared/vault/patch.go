package vault

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// PatchOp is what PatchSection does at its target.
type PatchOp string

// The patch operations.
const (
	// OpReplace replaces the target's content: a section's text under its
	// heading (sub-sections included; the heading stays), a block's text
	// (its ^id stays), a frontmatter key's value.
	OpReplace PatchOp = "replace"
	// OpAppend adds at the end of the content: after a section's last
	// non-blank line, after a block, after a list value's last item.
	OpAppend PatchOp = "append"
	// OpPrepend adds at the start of the content: right under a section's
	// heading, before a block, before a list value's first item.
	OpPrepend PatchOp = "prepend"
	// OpInsertBefore adds before the target: before a section's heading line
	// or before a block.
	OpInsertBefore PatchOp = "insert_before"
	// OpInsertAfter adds after the target: after the whole section (before
	// the next heading of its level or above) or after a block.
	OpInsertAfter PatchOp = "insert_after"
)

// PatchTarget names what PatchSection edits: exactly one of its fields.
type PatchTarget struct {
	// HeadingPath is a heading's title, optionally preceded by titles of
	// headings it sits under, outermost first: ["Plan", "Risks"] is the
	// "Risks" heading right under "Plan" or, when there is none, anywhere
	// under it. Titles compare as read_outline shows them, exactly first,
	// else ignoring case and repeated spaces; ["#id"] is the heading whose
	// anchor id is id.
	HeadingPath []string
	// Block is a block id, with or without its '^'.
	Block string
	// FrontmatterKey is a top-level key of the YAML frontmatter.
	FrontmatterKey string
}

func (t PatchTarget) String() string {
	switch {
	case len(t.HeadingPath) > 0:
		return "heading " + strings.Join(quoteAll(t.HeadingPath), " > ")
	case t.Block != "":
		return "block ^" + strings.TrimPrefix(t.Block, "^")
	default:
		return fmt.Sprintf("frontmatter key %q", t.FrontmatterKey)
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Errors of the editors; test with errors.Is.
var (
	// ErrTargetNotFound: no heading, block id, frontmatter key or directive
	// matches. Nothing is ever created in its place.
	ErrTargetNotFound = errors.New("target not found")
	// ErrNotUnique: several targets (or find strings) match.
	ErrNotUnique = errors.New("target not unique")
	// ErrBadEdit: the edit cannot be made as asked (an operation a target
	// does not support, content that would break the note's structure).
	ErrBadEdit = errors.New("edit refused")
)

// MatchError is an ErrTargetNotFound or ErrNotUnique with how many targets
// matched and, for headings, the full paths of the candidates.
type MatchError struct {
	What       string   // what was looked for
	Matches    int      // 0: not found
	Candidates []string // e.g. every matching heading's full path
	Hint       string   // what to do about it
}

func (e *MatchError) Error() string {
	var msg string
	if e.Matches == 0 {
		msg = e.What + " not found"
	} else {
		msg = fmt.Sprintf("%s matches %d times", e.What, e.Matches)
	}
	if len(e.Candidates) > 0 {
		msg += ": " + strings.Join(e.Candidates, "; ")
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *MatchError) Unwrap() error {
	if e.Matches == 0 {
		return ErrTargetNotFound
	}
	return ErrNotUnique
}

func badEdit(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadEdit, fmt.Sprintf(format, args...))
}

// PatchSection edits one target of the note src (a section by heading path,
// a block by id, or a frontmatter value) and returns the new text. Every byte
// outside the target's own range is kept as it was, and the note's other
// headings (and, for frontmatter, its other keys) must come out the same:
// content that would turn a neighbouring line into a heading, or merge into
// one, is refused with ErrBadEdit. A target that does not match is a
// *MatchError (ErrTargetNotFound, or ErrNotUnique with the candidates).
// Inserted content takes the note's line endings (CRLF or LF) and ends with
// one. src must be valid UTF-8.
func PatchSection(src []byte, t PatchTarget, op PatchOp, content string) ([]byte, error) {
	n := 0
	if len(t.HeadingPath) > 0 {
		n++
	}
	if t.Block != "" {
		n++
	}
	if t.FrontmatterKey != "" {
		n++
	}
	if n != 1 {
		return nil, badEdit("name exactly one target: a heading path, a block id or a frontmatter key")
	}
	switch op {
	case OpReplace, OpAppend, OpPrepend, OpInsertBefore, OpInsertAfter:
	default:
		return nil, badEdit("unknown operation %q", op)
	}
	_, sp := ParseSpans("", src)
	content = withLineEndings(content, lineEnding(src))
	var out []byte
	var err error
	switch {
	case len(t.HeadingPath) > 0:
		out, err = patchHeading(src, sp, t.HeadingPath, op, content)
	case t.Block != "":
		out, err = patchBlock(src, sp, strings.TrimPrefix(strings.TrimSpace(t.Block), "^"), op, content)
	default:
		return patchFrontmatter(src, sp, t.FrontmatterKey, op, content)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// lineEnding is "\r\n" when most of src's lines end so, else "\n".
func lineEnding(src []byte) string {
	crlf := bytes.Count(src, []byte("\r\n"))
	if crlf > 0 && crlf*2 >= bytes.Count(src, []byte("\n")) {
		return "\r\n"
	}
	return "\n"
}

// withLineEndings rewrites content's line endings to eol and ends it with
// one (empty content stays empty).
func withLineEndings(content, eol string) string {
	if content == "" {
		return ""
	}
	content = strings.ReplaceAll(content, "\r\n", "\n")
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	if eol != "\n" {
		content = strings.ReplaceAll(content, "\n", eol)
	}
	return content
}

// sectionOf is the byte range of a top heading's section: from its first
// line to the next top heading of its level or above (or the end).
func sectionOf(src []byte, sp *Spans, i int) (start, bodyStart, end int) {
	h := sp.Headings[i]
	end = len(src)
	for _, g := range sp.Headings[i+1:] {
		if g.Top && g.Level <= h.Level {
			end = g.Start
			break
		}
	}
	return h.Start, h.End, end
}

// foldTitle is the loose form of a heading title: NFC, lower-cased, white
// space collapsed, a leading "#" run (a pasted "## Title") dropped.
func foldTitle(s string) string {
	s = strings.TrimLeft(strings.TrimSpace(s), "#")
	return strings.Join(strings.Fields(strings.ToLower(norm.NFC.String(s))), " ")
}

// findHeading returns the index in sp.Headings of the one top heading that
// path names.
func findHeading(sp *Spans, path []string) (int, error) {
	what := "heading " + strings.Join(quoteAll(path), " > ")
	if len(path) == 1 && strings.TrimSpace(path[0]) == "#" {
		// "#": the heading whose id is empty (a title of no letters, GitHub's
		// anchor ""; the next ones are "#-1", "#-2").
		for i, h := range sp.Headings {
			if h.Top && h.ID == "" {
				return i, nil
			}
		}
		return -1, &MatchError{What: what, Hint: "no heading has an empty id: read_outline lists the note's headings and ids"}
	}
	for _, p := range path {
		if foldTitle(p) == "" {
			return -1, badEdit("heading path element %q is empty", p)
		}
	}
	// ancestors[i] is the titles of the top headings enclosing heading i.
	type cand struct {
		i     int
		chain []string // titles from the outermost down, the heading's last
	}
	var all []cand
	var stack []int
	for i, h := range sp.Headings {
		if !h.Top {
			continue
		}
		for len(stack) > 0 && sp.Headings[stack[len(stack)-1]].Level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, i)
		chain := make([]string, len(stack))
		for j, k := range stack {
			chain[j] = sp.Headings[k].Title
		}
		all = append(all, cand{i, chain})
	}
	// A path names the headings whose chain of titles ends with it
	// (["Plan", "Risks"]: Risks right under Plan); failing those, the ones
	// whose chain holds it in order (Risks anywhere under Plan).
	match := func(eq func(a, b string) bool) []cand {
		var exact, loose []cand
		for _, c := range all {
			if !eq(c.chain[len(c.chain)-1], path[len(path)-1]) {
				continue
			}
			k := 0
			for _, t := range c.chain[:len(c.chain)-1] {
				if k < len(path)-1 && eq(t, path[k]) {
					k++
				}
			}
			if k < len(path)-1 {
				continue
			}
			loose = append(loose, c)
			tail := c.chain[max(len(c.chain)-len(path), 0):]
			if len(tail) == len(path) {
				same := true
				for j := range path {
					same = same && eq(tail[j], path[j])
				}
				if same {
					exact = append(exact, c)
				}
			}
		}
		if len(exact) > 0 {
			return exact
		}
		return loose
	}
	var found []cand
	if last := strings.TrimSpace(path[len(path)-1]); len(path) == 1 && len(last) > 1 && last[0] == '#' && last[1] != '#' && last[1] != ' ' {
		// "#anchor": the heading's id as read_outline gives it (unique).
		for _, c := range all {
			if "#"+sp.Headings[c.i].ID == last {
				found = append(found, c)
			}
		}
	}
	if len(found) == 0 {
		found = match(func(a, b string) bool { return a == strings.TrimSpace(b) })
	}
	if len(found) == 0 {
		found = match(func(a, b string) bool { return foldTitle(a) == foldTitle(b) })
	}
	switch len(found) {
	case 1:
		return found[0].i, nil
	case 0:
		e := &MatchError{What: what}
		for _, h := range sp.Headings {
			if !h.Top && foldTitle(h.Title) == foldTitle(path[len(path)-1]) {
				e.Hint = "a heading of that title is inside a quote or list, where it starts no section"
			}
		}
		if e.Hint == "" {
			e.Hint = "read_outline lists the note's headings"
		}
		return -1, e
	default:
		e := &MatchError{What: what, Matches: len(found), Hint: "add the title of a heading above it to the path, or send one candidate's #id as the path"}
		for _, c := range found {
			e.Candidates = append(e.Candidates, strings.Join(c.chain, " > ")+" (#"+sp.Headings[c.i].ID+")")
		}
		return -1, e
	}
}

// blankRuns splits body [s, e) into leading blank lines, the core and
// trailing blank lines, returning the core's bounds.
func blankRuns(src []byte, s, e int) (coreStart, coreEnd int) {
	coreStart = s
	for off := s; off < e; {
		line, next := nextLine(src[:e], off)
		if len(bytes.TrimSpace(line)) != 0 {
			break
		}
		off = next
		coreStart = off
	}
	coreEnd = e
	for coreEnd > coreStart {
		// The line ending at coreEnd: walk back to its start.
		ls := bytes.LastIndexByte(src[coreStart:coreEnd-1], '\n')
		lineStart := coreStart
		if ls >= 0 {
			lineStart = coreStart + ls + 1
		}
		if len(bytes.TrimSpace(src[lineStart:coreEnd])) != 0 {
			break
		}
		coreEnd = lineStart
	}
	return coreStart, coreEnd
}

// splice replaces src[s:e] with repl.
func splice(src []byte, s, e int, repl string) []byte {
	out := make([]byte, 0, len(src)-(e-s)+len(repl))
	out = append(out, src[:s]...)
	out = append(out, repl...)
	return append(out, src[e:]...)
}

// atLineStart makes text inserted at off begin on a line of its own.
func atLineStart(src []byte, off int, text, eol string) string {
	if off > 0 && src[off-1] != '\n' && text != "" {
		return eol + text
	}
	return text
}

func patchHeading(src []byte, sp *Spans, path []string, op PatchOp, content string) ([]byte, error) {
	i, err := findHeading(sp, path)
	if err != nil {
		return nil, err
	}
	eol := lineEnding(src)
	start, body, end := sectionOf(src, sp, i)
	coreS, coreE := blankRuns(src, body, end)
	var s, e int
	var repl string
	switch op {
	case OpReplace:
		s, e, repl = coreS, coreE, content
		if coreS == coreE { // a blank body: keep its blank lines after the new text
			s, e = body, body
		}
	case OpAppend:
		s, e, repl = coreE, coreE, content
		if coreS == coreE {
			s, e = body, body
		}
	case OpPrepend:
		s, e, repl = coreS, coreS, content
		if coreS == coreE {
			s, e = body, body
		}
	case OpInsertBefore:
		s, e, repl = start, start, content
	case OpInsertAfter:
		s, e, repl = end, end, content
	}
	repl = atLineStart(src, s, repl, eol)
	if repl != "" && e < len(src) && startsHeading(sp, e) && !isBlankLine(src, e) && !strings.HasSuffix(repl, eol+eol) && needsGap(sp, e) {
		repl += eol // keep the next heading a heading (a setext one would swallow the line)
	}
	out := splice(src, s, e, repl)
	if err := sameHeadingsOutside(sp, out, s, e, len(repl)); err != nil {
		return nil, err
	}
	return out, nil
}

// startsHeading reports whether a top heading starts at off.
func startsHeading(sp *Spans, off int) bool {
	for _, h := range sp.Headings {
		if h.Start == off {
			return true
		}
	}
	return false
}

// needsGap reports whether the heading at off is a setext heading, whose
// text a line right before it would join.
func needsGap(sp *Spans, off int) bool {
	for _, h := range sp.Headings {
		if h.Start == off {
			return h.Setext
		}
	}
	return false
}

func isBlankLine(src []byte, off int) bool {
	line, _ := nextLine(src, off)
	return len(bytes.TrimSpace(line)) == 0
}

// sameHeadingsOutside checks that replacing [s, e) of the note spanned by
// a with n bytes, giving out, left every
// heading outside the edited range where it was, with the same level and
// title, and added none outside it.
func sameHeadingsOutside(a *Spans, out []byte, s, e, n int) error {
	_, b := ParseSpans("", out)
	shift := n - (e - s)
	type key struct {
		level int
		title string
		start int
	}
	var before, after []key
	for _, h := range a.Headings {
		switch {
		case h.Start >= s && h.End <= e && h.Start < e:
			// inside the replaced range
		case h.Start >= e:
			before = append(before, key{h.Level, h.Title, h.Start + shift})
		default:
			before = append(before, key{h.Level, h.Title, h.Start})
		}
	}
	for _, h := range b.Headings {
		if !(h.Start >= s && h.End <= s+n && h.Start < s+n) {
			after = append(after, key{h.Level, h.Title, h.Start})
		}
	}
	if len(before) != len(after) {
		return badEdit("the content would change the note's other headings (%d outside the edit, %d after it): separate it with a blank line", len(before), len(after))
	}
	for i := range before {
		if before[i] != after[i] {
			return badEdit("the content would change the heading %q: separate it with a blank line", before[i].title)
		}
	}
	return nil
}

// findBlock returns the one block with this id (exact, else ignoring case).
func findBlock(sp *Spans, id string) (BlockSpan, error) {
	if id == "" {
		return BlockSpan{}, badEdit("the block id is empty")
	}
	var found []BlockSpan
	for _, eq := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		strings.EqualFold,
	} {
		for _, b := range sp.Blocks {
			if eq(b.ID, id) {
				found = append(found, b)
			}
		}
		if len(found) > 0 {
			break
		}
	}
	what := "block ^" + id
	switch {
	case len(found) == 0:
		return BlockSpan{}, &MatchError{What: what, Hint: "block ids are written as ^id at the end of a paragraph or list item"}
	case len(found) > 1:
		e := &MatchError{What: what, Matches: len(found), Hint: "the note repeats this block id"}
		for _, b := range found {
			e.Candidates = append(e.Candidates, fmt.Sprintf("line %d", b.Line))
		}
		return BlockSpan{}, e
	case found[0].Start < 0:
		return BlockSpan{}, &MatchError{What: what, Hint: "its text could not be located"}
	}
	return found[0], nil
}

// continuation is the prefix a block's continuation lines need: its first
// line's container markers ("> ", list bullets) with bullets turned into
// spaces.
func continuation(src []byte, start int) string {
	ls := bytes.LastIndexByte(src[:start], '\n') + 1
	prefix := []byte(string(src[ls:start]))
	for i, c := range prefix {
		if c != '>' && c != ' ' && c != '\t' {
			prefix[i] = ' '
		}
	}
	return string(prefix)
}

func patchBlock(src []byte, sp *Spans, id string, op PatchOp, content string) ([]byte, error) {
	b, err := findBlock(sp, id)
	if err != nil {
		return nil, err
	}
	eol := lineEnding(src)
	text := string(src[b.Start:b.Marker]) // the block's text, without its id
	lineStart := bytes.LastIndexByte(src[:b.Start], '\n') + 1
	try := func(gap string) ([]byte, string, error) {
		var out []byte
		want := text
		switch op {
		case OpReplace:
			body := strings.TrimRight(content, "\r\n")
			body = strings.TrimSuffix(strings.TrimRight(body, " \t"), "^"+b.ID)
			body = strings.TrimRight(body, " \t")
			if body == "" {
				return nil, "", badEdit("replacing a block needs some text (delete it with apply_edits)")
			}
			if !b.Lines && strings.Contains(body, eol+eol) || !b.Lines && strings.Contains(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
				return nil, "", badEdit("a block is one paragraph: text with blank lines would leave ^%s on its last paragraph only", b.ID)
			}
			if !b.Lines {
				body = strings.ReplaceAll(body, eol, eol+continuation(src, b.Start))
			}
			want = body
			out = splice(src, b.Start, b.Marker, body)
		case OpAppend, OpInsertAfter:
			at := b.After
			out = splice(src, at, at, atLineStart(src, at, gap+content, eol))
		case OpPrepend, OpInsertBefore:
			out = splice(src, lineStart, lineStart, content+gap)
		}
		return out, want, nil
	}
	var lastErr error
	for _, gap := range []string{"", eol} {
		out, want, err := try(gap)
		if err != nil {
			return nil, err
		}
		if err := sameBlock(out, b.ID, want); err != nil {
			lastErr = err
			continue
		}
		return out, nil
	}
	return nil, lastErr
}

// sameBlock checks that out still has exactly one block id, with the text want.
func sameBlock(out []byte, id, want string) error {
	_, sp := ParseSpans("", out)
	n := 0
	var got string
	ends := false
	for _, b := range sp.Blocks {
		if b.ID == id && b.Start >= 0 {
			n++
			got = string(out[b.Start:b.Marker])
			// The id must end its block, not sit inside a longer paragraph.
			ends = strings.TrimSpace(string(out[b.Marker:b.End])) == "^"+id || b.Lines
		}
	}
	if n != 1 || got != want || !ends {
		return badEdit("the content would merge into block ^%s: separate it with a blank line", id)
	}
	return nil
}
