package vault

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Clone returns an independent copy of the Catalog: changes to either do
// not show in the other. Notes are shared (they are read-only); the
// indexes are rebuilt, so it costs about as much as loading a snapshot.
func (c *Catalog) Clone() *Catalog {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ptrs := make([]*Note, 0, len(c.notes))
	for _, n := range c.notes {
		ptrs = append(ptrs, n)
	}
	d := loadCatalog(ptrs, len(c.atts))
	for _, a := range c.atts {
		d.upsertAttachmentLocked(a)
	}
	for p, why := range c.problems {
		d.problems[p] = why
	}
	d.gen, d.indexedAt = c.gen, c.indexedAt
	return d
}

// MovePlan is what moving one note means for the links of the vault: which
// notes may need rewriting, and how each of their links must be spelled
// afterwards so that it points where it pointed before.
//
// A link that resolved to the moved note is rewritten to its new path in
// the link's own form: a file name stays a file name, a path a path, a
// relative path is recomputed from the linking note's folder, ".md" and
// percent-encoding are kept as written, and a "#heading", "#^block",
// "|alias", embed "!" or Markdown title is left untouched. When that form
// would be ambiguous or point elsewhere after the move, the link gets the
// shortest path suffix that is unique, up to the full path. A link to
// another note that the move would make ambiguous or redirect (a new file
// of the same name) is rewritten the same way, to keep pointing at its own
// note; so is any relative link in the moved note itself. Links that did
// not resolve before are left as written (Rewrite reports those that
// resolve after).
type MovePlan struct {
	From, To      string
	before, after *Catalog
	sources       []string
}

// PlanMove plans moving the note at from to to, given the current Catalog
// (which must hold from and must not hold to). It does not change c.
func PlanMove(c *Catalog, from, to string) (*MovePlan, error) {
	from, to = norm.NFC.String(from), norm.NFC.String(to)
	n, ok := c.Note(from)
	if !ok || n.Path != from {
		return nil, fmt.Errorf("%w: no note %q in the catalog", ErrTargetNotFound, from)
	}
	if _, ok := c.Note(to); ok && !strings.EqualFold(from, to) {
		return nil, fmt.Errorf("%w: a note %q exists", ErrBadEdit, to)
	}
	after := c.Clone()
	after.Remove(from)
	moved := n
	moved.Path, moved.Name = to, NameOf(to)
	after.Upsert(moved)

	// Only links whose last key segment names the old or the new file, or
	// an alias of the note, can resolve differently after the move; and the
	// moved note's own relative links.
	segs := map[string]bool{lastSegment(LinkKey(from)): true, lastSegment(LinkKey(to)): true}
	for _, a := range n.Aliases {
		if k := LinkKey(a); k != "" {
			segs[lastSegment(k)] = true
		}
	}
	src := map[string]bool{from: true}
	c.rlock(names | links)
	for s := range segs {
		for p := range c.linkSegs[s].all {
			src[p] = true
		}
	}
	c.mu.RUnlock()
	p := &MovePlan{From: from, To: to, before: c, after: after}
	for s := range src {
		p.sources = append(p.sources, s)
	}
	slices.Sort(p.sources)
	return p, nil
}

// Sources returns the notes, by their current paths, whose links Rewrite
// may change (the moved note itself is From).
func (p *MovePlan) Sources() []string { return p.sources }

// LinkChange is one link Rewrite changed.
type LinkChange struct {
	Line int    `json:"line"`
	Old  string `json:"old" jsonschema:"the link as it was written"`
	New  string `json:"new" jsonschema:"the link as it is written now"`
	// Target is the note (or attachment) the link points to, before and
	// after: the moved note's new path, or another note kept in place.
	Target string `json:"target"`
}

// LinkNotice is a link that did not resolve before the move and does now.
type LinkNotice struct {
	Line   int    `json:"line"`
	Link   string `json:"link" jsonschema:"the link as written"`
	Target string `json:"target" jsonschema:"where it points after the move"`
}

// Rewrite returns the text of the note at path (its path before the move)
// with its links respelled as the plan says, or nil when nothing needs to
// change, with the changes made and the unresolved links the move
// resolves. It fails with ErrBadEdit when a link cannot be kept pointing at
// its note in any spelling (a name a wikilink cannot hold, a link whose
// text could not be located); then nothing of the note should be written.
func (p *MovePlan) Rewrite(notePath string, src []byte) ([]byte, []LinkChange, []LinkNotice, error) {
	notePath = norm.NFC.String(notePath)
	after := notePath
	if notePath == p.From {
		after = p.To
	}
	_, sp := ParseSpans(notePath, src)
	type edit struct {
		s, e int
		text string
		ch   LinkChange
	}
	var edits []edit
	var notices []LinkNotice
	intended := make([]string, len(sp.Links)) // where each link must point after; "" keeps its resolution
	for i, ls := range sp.Links {
		rb := p.before.Resolve(notePath, ls.Link)
		ra := p.after.Resolve(after, ls.Link)
		want := rb.Path
		if want == p.From {
			want = p.To
		}
		if want == "" {
			if ra.Path != "" {
				notices = append(notices, LinkNotice{Line: ls.Line, Link: linkText(src, ls), Target: ra.Path})
			}
			continue
		}
		intended[i] = want
		// A relative link must stay relative: Markdown renderers (and
		// "./" wikilinks in Obsidian) resolve it from the note's folder only.
		relative := viaRelative(notePath, ls.Link, rb.Path)
		if ra.Path == want && (!relative || viaRelative(after, ls.Link, want)) {
			continue
		}
		if ls.TargetStart < 0 {
			return nil, nil, nil, fmt.Errorf("%w: line %d: cannot locate the link to %s", ErrBadEdit, ls.Line, want)
		}
		if strings.TrimSpace(ls.Target) == "" {
			continue // [[#heading]] in the note itself: it moves with it
		}
		text, err := p.respell(src, ls, notePath, after, rb.Path, want)
		if err != nil {
			return nil, nil, nil, err
		}
		old := linkText(src, ls)
		newLink := text // a reference definition's target
		if !ls.Reference && ls.Start >= 0 && ls.End > ls.Start && ls.TargetStart >= ls.Start && ls.TargetEnd <= ls.End {
			newLink = old[:ls.TargetStart-ls.Start] + text + old[ls.TargetEnd-ls.Start:]
		}
		edits = append(edits, edit{ls.TargetStart, ls.TargetEnd, text, LinkChange{Line: ls.Line, Old: old, New: newLink, Target: want}})
	}
	if len(edits) == 0 {
		return nil, nil, notices, nil
	}
	// A reference definition shared by several links is edited once.
	slices.SortFunc(edits, func(a, b edit) int { return cmp.Compare(a.s, b.s) })
	edits = slices.CompactFunc(edits, func(a, b edit) bool { return a.s == b.s && a.e == b.e && a.text == b.text })
	out := make([]byte, 0, len(src)+64)
	prev := 0
	var changes []LinkChange
	for _, e := range edits {
		if e.s < prev {
			return nil, nil, nil, fmt.Errorf("%w: line %d: two links overlap", ErrBadEdit, e.ch.Line)
		}
		out = append(out, src[prev:e.s]...)
		out = append(out, e.text...)
		prev = e.e
		changes = append(changes, e.ch)
	}
	out = append(out, src[prev:]...)
	// Check the result: the same links, each pointing where it must.
	np, nsp := ParseSpans(after, out)
	if len(nsp.Links) != len(sp.Links) {
		return nil, nil, nil, fmt.Errorf("%w: rewriting changed the number of links (%d, was %d)", ErrBadEdit, len(nsp.Links), len(sp.Links))
	}
	for i, l := range np.Note.Links {
		if intended[i] == "" {
			continue
		}
		if got := p.after.Resolve(after, l).Path; got != intended[i] {
			return nil, nil, nil, fmt.Errorf("%w: line %d: the rewritten link would point to %q, not %q", ErrBadEdit, l.Line, got, intended[i])
		}
		if viaRelative(notePath, sp.Links[i].Link, p.before.Resolve(notePath, sp.Links[i].Link).Path) && !viaRelative(after, l, intended[i]) {
			return nil, nil, nil, fmt.Errorf("%w: line %d: the relative link to %q would no longer be relative", ErrBadEdit, l.Line, intended[i])
		}
	}
	return out, changes, notices, nil
}

// viaRelative reports whether link l, written in the note at from,
// reaches target by the relative step of Resolve (from the note's folder).
func viaRelative(from string, l Link, target string) bool {
	t := strings.TrimSpace(norm.NFC.String(l.Target))
	rel := strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../")
	if target == "" || strings.HasPrefix(t, "/") || (l.Kind != KindMarkdown && !rel) {
		return false
	}
	return LinkKey(path.Join(path.Dir(from), t)) == LinkKey(target)
}

// linkText is the link as written, or its target when the whole link
// could not be located.
func linkText(src []byte, ls LinkSpan) string {
	if ls.Start >= 0 && ls.End > ls.Start && ls.End <= len(src) && !ls.Reference {
		return string(src[ls.Start:ls.End])
	}
	return ls.Raw(src)
}

// respell returns the new text for the target of link ls (written in the
// note at srcBefore, which will be at srcAfter) so that it points to want
// after the move; was is where it pointed before.
func (p *MovePlan) respell(src []byte, ls LinkSpan, srcBefore, srcAfter, was, want string) (string, error) {
	target := strings.TrimSpace(norm.NFC.String(ls.Target))
	isNote := IsNotePath(want)
	// ".md" is kept (in its case) when the link had it.
	ext := ""
	if isNote && hasMDSuffix(target) {
		ext = target[len(target)-3:]
	}
	bare := want
	if isNote {
		bare = trimMD(want)
	}
	segs := strings.Split(bare, "/")
	suffix := func(k int) string { return strings.Join(segs[len(segs)-k:], "/") + ext }

	// The form of the link as written.
	key := LinkKey(target)
	var first []string
	switch {
	case strings.HasPrefix(target, "./") || strings.HasPrefix(target, "../"):
		first = []string{relSpelling(path.Dir(srcAfter), bare+ext, strings.HasPrefix(target, "./"))}
	case strings.HasPrefix(target, "/"):
		first = []string{"/" + bare + ext}
	case ls.Kind == KindMarkdown && was != "" && LinkKey(path.Join(path.Dir(srcBefore), target)) == LinkKey(was):
		first = []string{relSpelling(path.Dir(srcAfter), bare+ext, false)}
	case strings.Contains(key, "/"):
		k := min(strings.Count(key, "/")+1, len(segs))
		if was != "" && key == LinkKey(was) {
			k = len(segs)
		}
		first = []string{suffix(k)}
	default:
		first = []string{suffix(1)}
	}
	cands := first
	for k := 1; k <= len(segs); k++ {
		cands = append(cands, suffix(k))
	}
	if ls.Kind == KindMarkdown {
		cands = append(cands, relSpelling(path.Dir(srcAfter), bare+ext, false))
	}
	relative := viaRelative(srcBefore, ls.Link, was)
	if relative {
		cands = first
	}
	for _, c := range cands {
		if ls.Kind == KindWikilink && strings.ContainsAny(c, "|#^[]") {
			continue
		}
		l := Link{Kind: ls.Kind, Target: c, Key: LinkKey(c)}
		if p.after.Resolve(srcAfter, l).Path == want && (!relative || viaRelative(srcAfter, l, want)) {
			return encodeTarget(src, ls, c), nil
		}
	}
	return "", fmt.Errorf("%w: line %d: no spelling of a %s link in %s points to %s", ErrBadEdit, ls.Line, ls.Kind, srcAfter, want)
}

// relSpelling is the path of target relative to the folder dir, with a
// leading "./" when dot is set and the path does not climb.
func relSpelling(dir, target string, dot bool) string {
	if dir == "." {
		dir = ""
	}
	from := []string{}
	if dir != "" {
		from = strings.Split(dir, "/")
	}
	to := strings.Split(target, "/")
	i := 0
	for i < len(from) && i < len(to)-1 && from[i] == to[i] {
		i++
	}
	var b strings.Builder
	for range len(from) - i {
		b.WriteString("../")
	}
	rest := strings.Join(to[i:], "/")
	if b.Len() == 0 && dot {
		return "./" + rest
	}
	return b.String() + rest
}

// encodeTarget writes a new target in the style of the old one: a
// Markdown destination percent-encoded like the original (spaces always,
// unless in <...>; non-ASCII when the original encoded it).
func encodeTarget(src []byte, ls LinkSpan, target string) string {
	if ls.Kind != KindMarkdown {
		return target
	}
	raw := ls.Raw(src)
	encoded := raw != ls.Target
	if ls.Angle && !encoded {
		return target
	}
	nonASCII := false
	for i := 0; i+2 < len(raw); i++ {
		if raw[i] == '%' && strings.IndexByte("89abcdefABCDEF", raw[i+1]) >= 0 {
			nonASCII = true
		}
	}
	var b strings.Builder
	for i := 0; i < len(target); i++ {
		c := target[i]
		switch {
		case c == ' ' || c == '%' || c == '(' || c == ')' || c == '<' || c == '>' || c == '#' || c == '?' || c == '\\' || c == '"' || c < 0x20:
			fmt.Fprintf(&b, "%%%02X", c)
		case c >= 0x80 && nonASCII:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
