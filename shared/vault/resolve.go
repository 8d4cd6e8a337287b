package vault

import (
	"path"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Resolution is where a link points. Path "" with no Candidates means
// unresolved; Path "" with two or more Candidates (sorted) means ambiguous.
// Attachment reports that Path is a non-Markdown file.
type Resolution struct {
	Path       string   `json:"path,omitempty"`
	Attachment bool     `json:"attachment,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
}

// Resolved reports whether the link points at exactly one file.
func (r Resolution) Resolved() bool { return r.Path != "" }

// Ambiguous reports whether several files matched and none was chosen.
func (r Resolution) Ambiguous() bool { return r.Path == "" && len(r.Candidates) >= 2 }

// ResolvedLink is an outgoing link with where it points.
type ResolvedLink struct {
	Link
	Resolution
}

// Backlink is one link, in Source, that resolves to the note asked about.
type Backlink struct {
	Source string `json:"source"`
	Link   Link   `json:"link"`
}

// Resolve says where the link l, written in the note at from, points.
//
// The steps, first unique match wins: an empty target is the note itself;
// Markdown links and "./" or "../" targets are tried relative to the source
// note's folder; then the exact vault path (case- and NFC-insensitive, with
// or without ".md"; attachments keep their extension); then a path suffix
// ("sub/Note" matches "a/sub/Note.md"); then the file name; then a note
// alias. In the path steps, when case or normalisation variants collide
// ("README.md" and "readme.md"), the one spelled exactly as written wins.
// When no step finds exactly one file, the first step that found several is
// reported as ambiguous with all its candidates; none is picked.
func (c *Catalog) Resolve(from string, l Link) Resolution {
	c.rlock(names)
	defer c.mu.RUnlock()
	return c.resolve(norm.NFC.String(from), l)
}

// ResolveTarget resolves a wikilink-style target (no "#heading" part)
// written in the note at from.
func (c *Catalog) ResolveTarget(from, target string) Resolution {
	return c.Resolve(from, Link{Kind: KindWikilink, Target: target, Key: LinkKey(target)})
}

func (c *Catalog) resolve(from string, l Link) Resolution {
	target := strings.TrimSpace(norm.NFC.String(l.Target))
	if target == "" {
		if from == "" {
			return Resolution{}
		}
		return Resolution{Path: from}
	}
	var ambiguous []string
	// try returns a resolution when the step's candidates settle it.
	try := func(notes, atts []string, exact string) (Resolution, bool) {
		switch len(notes) + len(atts) {
		case 0:
			return Resolution{}, false
		case 1:
			if len(notes) == 1 {
				return Resolution{Path: notes[0]}, true
			}
			return Resolution{Path: atts[0], Attachment: true}, true
		}
		if exact != "" {
			if r, ok := exactCase(notes, atts, exact); ok {
				return r, true
			}
		}
		if ambiguous == nil {
			ambiguous = slices.Concat(notes, atts)
			slices.Sort(ambiguous)
		}
		return Resolution{}, false
	}

	relative := strings.HasPrefix(target, "./") || strings.HasPrefix(target, "../")
	if (l.Kind == KindMarkdown || relative) && !strings.HasPrefix(target, "/") {
		rel := path.Join(path.Dir(from), target)
		k := LinkKey(rel)
		// Stay inside the vault, and keep the file name as written ("x/.."
		// or "x/" name no file): Backlinks finds links by that name.
		if rel != ".." && !strings.HasPrefix(rel, "../") && lastSegment(k) == lastSegment(linkKey(l)) {
			if r, ok := try(keys(c.pathKeys[k]), keys(c.attKeys[k]), rel); ok {
				return r
			}
		}
	}

	key := linkKey(l)
	if key == "" {
		return Resolution{Candidates: ambiguous}
	}
	if r, ok := try(keys(c.pathKeys[key]), keys(c.attKeys[key]), trimLeadingDots(target)); ok {
		return r
	}
	base := lastSegment(key)
	if base != key {
		suffix := "/" + key
		match := func(s *set) []string {
			var out []string
			for p := range s.all {
				if strings.HasSuffix(LinkKey(p), suffix) {
					out = append(out, p)
				}
			}
			return out
		}
		if r, ok := try(match(c.bases[base]), match(c.attBases[base]), ""); ok {
			return r
		}
	} else if r, ok := try(keys(c.bases[key]), keys(c.attBases[key]), ""); ok {
		return r
	}
	if r, ok := try(keys(c.aliases[key]), nil, ""); ok {
		return r
	}
	return Resolution{Candidates: ambiguous}
}

// exactCase picks, among case- or normalisation-variant paths, the one
// spelled exactly as the target (with or without ".md" for notes).
func exactCase(notes, atts []string, exact string) (Resolution, bool) {
	var r Resolution
	n := 0
	for _, p := range notes {
		if p == exact || p == exact+".md" {
			r, n = Resolution{Path: p}, n+1
		}
	}
	for _, p := range atts {
		if p == exact {
			r, n = Resolution{Path: p, Attachment: true}, n+1
		}
	}
	return r, n == 1
}

// trimLeadingDots removes the leading "./" and "/" that LinkKey ignores.
func trimLeadingDots(t string) string {
	for {
		switch {
		case strings.HasPrefix(t, "./"):
			t = t[2:]
		case strings.HasPrefix(t, "/"):
			t = t[1:]
		default:
			return t
		}
	}
}

// keys returns the members of s (unsorted).
func keys(s *set) []string {
	if s.len() == 0 {
		return nil
	}
	out := make([]string, 0, s.len())
	for p := range s.all {
		out = append(out, p)
	}
	return out
}

// Outgoing returns the links out of the note at path, in document order,
// each with its resolution.
func (c *Catalog) Outgoing(p string) []ResolvedLink {
	c.rlock(names)
	defer c.mu.RUnlock()
	n := c.lookup(p)
	if n == nil {
		return nil
	}
	out := make([]ResolvedLink, 0, len(n.Links))
	for _, l := range n.Links {
		out = append(out, ResolvedLink{Link: l, Resolution: c.resolve(n.Path, l)})
	}
	return out
}

// Backlinks returns every link, in any note including the target itself,
// that resolves to path (a note or an attachment), sorted by source then
// line. It looks only at notes with a link whose last key segment could
// name the target, never at the whole vault.
func (c *Catalog) Backlinks(p string) []Backlink {
	c.rlock(names | links)
	defer c.mu.RUnlock()
	return c.backlinks(p)
}

// Inbound is what the links into one note say of it.
type Inbound struct {
	Sources int      // how many other notes link to it
	Anchors []string // the display text of their links that have one; shared, not to be modified
}

// Inbound returns the links into the note p from other notes, as
// Backlinks finds them. The question lane asks it of every note it ranks,
// and resolving a hub's thousands of backlinks takes milliseconds, so each
// answer is kept until the catalog next changes.
func (c *Catalog) Inbound(p string) Inbound {
	c.rlock(names | links)
	defer c.mu.RUnlock()
	c.inboundMu.Lock()
	if c.inboundAt != c.gen || c.inbound == nil || len(c.inbound) >= maxInbound {
		c.inboundAt, c.inbound = c.gen, map[string]Inbound{}
	}
	in, ok := c.inbound[p]
	c.inboundMu.Unlock()
	if ok {
		return in
	}
	// As Backlinks, without building, sorting and copying every backlink:
	// the anchors only, in Backlinks' order.
	type shown struct {
		src  string
		line int
		text string
	}
	seen := map[string]bool{}
	var anchors []shown
	self := c.eachBacklink(p, func(src string, l *Link) {
		seen[src] = true
		if l.Display != "" {
			anchors = append(anchors, shown{src, l.Line, l.Display})
		}
	})
	delete(seen, self)
	slices.SortStableFunc(anchors, func(a, b shown) int { return bySourceLine(a.src, a.line, b.src, b.line) })
	for _, a := range anchors {
		if a.src != self {
			in.Anchors = append(in.Anchors, a.text)
		}
	}
	in.Sources = len(seen)
	c.inboundMu.Lock()
	if c.inboundAt == c.gen { // mu is held shared: gen cannot have moved
		c.inbound[p] = in
	}
	c.inboundMu.Unlock()
	return in
}

// maxInbound bounds the answers Inbound keeps; past it, it starts again
// empty.
const maxInbound = 1 << 14

func (c *Catalog) backlinks(p string) []Backlink {
	var out []Backlink
	c.eachBacklink(p, func(src string, l *Link) { out = append(out, Backlink{Source: src, Link: *l}) })
	slices.SortStableFunc(out, func(a, b Backlink) int { return bySourceLine(a.Source, a.Link.Line, b.Source, b.Link.Line) })
	return out
}

// bySourceLine orders backlinks by their source, then by line.
func bySourceLine(aSrc string, aLine int, bSrc string, bLine int) int {
	if c := strings.Compare(aSrc, bSrc); c != 0 {
		return c
	}
	return aLine - bLine
}

// eachBacklink calls fn with every link that resolves to the note or
// attachment p, and its source, each source's links in their order, the
// sources in no order; it returns p as the catalog spells it ("" when
// there is no such note or attachment). mu is held.
func (c *Catalog) eachBacklink(p string, fn func(src string, l *Link)) string {
	p = norm.NFC.String(p)
	var self *Note
	segs := map[string]bool{}
	if n := c.lookup(p); n != nil {
		self, p = n, n.Path
		segs[lastSegment(LinkKey(p))] = true
		for _, a := range n.Aliases {
			if k := LinkKey(a); k != "" {
				segs[lastSegment(k)] = true
			}
		}
	} else if _, ok := c.atts[p]; ok {
		segs[lastSegment(LinkKey(p))] = true
	} else {
		return ""
	}
	sources := map[string]struct{}{}
	if self != nil {
		sources[p] = struct{}{} // same-note [[#heading]] links
	}
	for s := range segs {
		for src := range c.linkSegs[s].all {
			sources[src] = struct{}{}
		}
	}
	for src := range sources {
		links := c.notes[src].Links
		for i := range links {
			l := &links[i]
			var hit bool
			if strings.TrimSpace(l.Target) == "" {
				hit = src == p
			} else {
				hit = segs[lastSegment(linkKey(*l))] && c.resolve(src, *l).Path == p
			}
			if hit {
				fn(src, l)
			}
		}
	}
	return p
}
