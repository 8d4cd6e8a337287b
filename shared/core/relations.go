package core

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Two graph views of one note: suggest_links (names of other notes written
// in its prose but not linked) and note_relations (Lithos' lithos_related:
// links, derived_from_ids provenance and typed frontmatter edges).

// minSuggestName is the shortest name (in characters) suggest_links looks for.
const minSuggestName = 4

// LinkSuggestion is a note whose name is written, unlinked, in another.
type LinkSuggestion struct {
	TargetPath string `json:"targetPath" jsonschema:"the note that could be linked to"`
	Name       string `json:"name" jsonschema:"the name or alias found, as that note spells it"`
	Count      int    `json:"count" jsonschema:"how many times it occurs in the prose"`
}

// SuggestLinks implements suggest_links.
func (s *Core) SuggestLinks(ctx context.Context, in notePathIn) (*Paged[LinkSuggestion], error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	n, err := catalogNote(cat, in.Path)
	if err != nil {
		return nil, err
	}
	ln, err := loadNote(ctx, v, n.Path)
	if err != nil {
		return nil, err
	}
	linked := map[string]bool{n.Path: true}
	for _, l := range cat.Outgoing(n.Path) {
		if l.Path != "" {
			linked[l.Path] = true
		}
	}

	// Every name and alias, by folded key, with the notes it names.
	type named struct {
		spelling string
		paths    []string
	}
	byKey := map[string]*named{}
	var order []string
	for _, o := range cat.Notes() {
		for _, name := range append([]string{o.Name}, o.Aliases...) {
			name = strings.TrimSpace(norm.NFC.String(name))
			if utf8.RuneCountInString(name) < minSuggestName {
				continue
			}
			key := string(vault.FoldCase(nil, []byte(name)))
			e := byKey[key]
			if e == nil {
				e = &named{spelling: name}
				byKey[key] = e
				order = append(order, key)
			}
			if !slices.Contains(e.paths, o.Path) {
				e.paths = append(e.paths, o.Path)
			}
		}
	}
	var names, targets []string
	for _, key := range order {
		if e := byKey[key]; len(e.paths) == 1 && !linked[e.paths[0]] {
			names = append(names, e.spelling)
			targets = append(targets, e.paths[0])
		}
	}

	counts := vault.NewNameMatcher(names).Count(vault.Prose([]byte(ln.text)))
	all := []LinkSuggestion{}
	for i, c := range counts {
		if c > 0 {
			all = append(all, LinkSuggestion{TargetPath: targets[i], Name: names[i], Count: c})
		}
	}
	slices.SortFunc(all, func(a, b LinkSuggestion) int {
		return cmp.Or(b.Count-a.Count, strings.Compare(a.TargetPath, b.TargetPath), strings.Compare(a.Name, b.Name))
	})
	items, total := page(all, in.Page)
	return &Paged[LinkSuggestion]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}

// The sections of note_relations, in the order they are reported.
var relationSections = []string{"links", "provenance", "edges"}

type noteRelationsIn struct {
	VaultArg
	ID      string   `json:"id,omitempty" jsonschema:"The note's frontmatter id, or an unambiguous prefix of at least 6 characters. Send id or path." schema:"minLength=1"`
	Path    string   `json:"path,omitempty" jsonschema:"Vault-relative path of the note (\".md\" may be omitted). Send id or path." schema:"minLength=1"`
	Include []string `json:"include,omitempty" jsonschema:"Sections to fill: any of links, provenance, edges (default all three). Unknown values are ignored." schema:"maxItems=10"`
	Depth   int      `json:"depth,omitempty" jsonschema:"Hops to follow for links and provenance, 1-3; edges are always one hop." schema:"minimum=1,maximum=3,default=1"`
}

// RelatedNote is a note in a relation, with how many hops away it is.
type RelatedNote struct {
	ID    string `json:"id,omitempty"`
	Path  string `json:"path"`
	Title string `json:"title"`
	Depth int    `json:"depth" jsonschema:"hops from the note asked about"`
}

// RelationEdge is a typed edge from frontmatter relations.
type RelationEdge struct {
	Type  string `json:"type"`
	ID    string `json:"id,omitempty"`
	Path  string `json:"path"`
	Title string `json:"title"`
}

// UnresolvedEdge is an outgoing typed edge whose target names no note.
type UnresolvedEdge struct {
	Type   string `json:"type"`
	Target string `json:"target" jsonschema:"as written in the frontmatter"`
}

type relationLinks struct {
	Outgoing []RelatedNote `json:"outgoing"`
	Incoming []RelatedNote `json:"incoming"`
}

type relationProvenance struct {
	Sources           []RelatedNote `json:"sources" jsonschema:"the notes its derived_from_ids name (and theirs, with depth)"`
	Derived           []RelatedNote `json:"derived" jsonschema:"the notes whose derived_from_ids name it (and theirs, with depth)"`
	UnresolvedSources []string      `json:"unresolved_sources" jsonschema:"derived_from_ids that no note has"`
}

type relationEdges struct {
	Outgoing   []RelationEdge   `json:"outgoing"`
	Incoming   []RelationEdge   `json:"incoming"`
	Unresolved []UnresolvedEdge `json:"unresolved,omitempty"`
}

type noteRelationsOut struct {
	Coverage
	ID         string              `json:"id,omitempty"`
	Path       string              `json:"path"`
	Included   []string            `json:"included"`
	Links      *relationLinks      `json:"links,omitempty"`
	Provenance *relationProvenance `json:"provenance,omitempty"`
	Edges      *relationEdges      `json:"edges,omitempty"`
	RelatedIDs []string            `json:"related_ids" jsonschema:"every related note of the included sections, by id (by path when it has none), sorted, without the note itself"`
}

// NoteRelations implements note_relations.
func (s *Core) NoteRelations(ctx context.Context, in noteRelationsIn) (*noteRelationsOut, error) {
	if (in.ID != "") == (in.Path != "") {
		if in.Path == "" {
			return nil, newError(KindArgsInvalid, nil, "Send id or path to say which note.")
		}
		return nil, newError(KindArgsInvalid, nil, "Send either id or path, not both.")
	}
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	path := in.Path
	if in.ID != "" {
		if path, err = noteByID(cat, in.ID); err != nil {
			return nil, err
		}
	}
	n, err := catalogNote(cat, path)
	if err != nil {
		return nil, err
	}
	depth := min(max(in.Depth, 1), 3)
	out := &noteRelationsOut{ID: n.ID, Path: n.Path, Included: []string{}}
	for _, sec := range relationSections {
		if in.Include == nil || slices.Contains(in.Include, sec) {
			out.Included = append(out.Included, sec)
		}
	}
	var notes []vault.Note // every note, loaded once when a section needs them
	all := func() []vault.Note {
		if notes == nil {
			notes = cat.Notes()
		}
		return notes
	}
	related := map[string]bool{}
	relate := func(ns ...RelatedNote) {
		for _, r := range ns {
			related[cmp.Or(r.ID, r.Path)] = true
		}
	}
	for _, sec := range out.Included {
		switch sec {
		case "links":
			out.Links = &relationLinks{
				Outgoing: walkRelated(cat, n.Path, depth, func(p string) []string {
					var next []string
					for _, l := range cat.Outgoing(p) {
						if l.Path != "" && !l.Attachment {
							next = append(next, l.Path)
						}
					}
					return next
				}),
				Incoming: walkRelated(cat, n.Path, depth, func(p string) []string {
					var next []string
					for _, b := range cat.Backlinks(p) {
						next = append(next, b.Source)
					}
					return next
				}),
			}
			relate(out.Links.Outgoing...)
			relate(out.Links.Incoming...)
		case "provenance":
			out.Provenance = provenanceOf(cat, n, depth, all())
			relate(out.Provenance.Sources...)
			relate(out.Provenance.Derived...)
		case "edges":
			out.Edges = edgesOf(cat, n, all())
			for _, e := range slices.Concat(out.Edges.Outgoing, out.Edges.Incoming) {
				related[cmp.Or(e.ID, e.Path)] = true
			}
		}
	}
	delete(related, n.Path)
	if n.ID != "" {
		delete(related, n.ID)
	}
	out.RelatedIDs = []string{}
	for id := range related {
		out.RelatedIDs = append(out.RelatedIDs, id)
	}
	slices.Sort(out.RelatedIDs)
	return out, nil
}

// walkRelated follows next breadth-first from start for up to depth hops
// and returns every note reached (start excluded), nearest first.
func walkRelated(cat *vault.Catalog, start string, depth int, next func(string) []string) []RelatedNote {
	seen := map[string]bool{start: true}
	out := []RelatedNote{}
	frontier := []string{start}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var level []RelatedNote
		var following []string
		for _, p := range frontier {
			for _, q := range next(p) {
				if seen[q] {
					continue
				}
				seen[q] = true
				if n, ok := cat.Note(q); ok {
					level = append(level, RelatedNote{ID: n.ID, Path: n.Path, Title: n.Title, Depth: d})
					following = append(following, q)
				}
			}
		}
		slices.SortFunc(level, func(a, b RelatedNote) int { return strings.Compare(a.Path, b.Path) })
		out = append(out, level...)
		frontier = following
	}
	return out
}

// foldID is the form ids are compared in, as the Catalog compares them.
func foldID(id string) string {
	return norm.NFC.String(strings.ToLower(norm.NFC.String(strings.TrimSpace(id))))
}

// notesWithID returns the paths of the notes whose id is exactly id (case-
// insensitively); a prefix is not enough for provenance.
func notesWithID(cat *vault.Catalog, id string) []string {
	var out []string
	for _, m := range cat.ByID(id) {
		if foldID(m.ID) == foldID(id) {
			out = append(out, m.Path)
		}
	}
	return out
}

// provenanceOf follows derived_from_ids both ways: up to the sources a note
// names, down to the notes that name it.
func provenanceOf(cat *vault.Catalog, n vault.Note, depth int, notes []vault.Note) *relationProvenance {
	derivedFrom := map[string][]string{} // folded source id -> derived note paths
	for _, o := range notes {
		for _, id := range o.DerivedFromIDs {
			if k := foldID(id); k != "" && !slices.Contains(derivedFrom[k], o.Path) {
				derivedFrom[k] = append(derivedFrom[k], o.Path)
			}
		}
	}
	pr := &relationProvenance{UnresolvedSources: []string{}}
	pr.Sources = walkRelated(cat, n.Path, depth, func(p string) []string {
		m, _ := cat.Note(p)
		var next []string
		for _, id := range m.DerivedFromIDs {
			found := notesWithID(cat, id)
			if len(found) == 0 && !slices.Contains(pr.UnresolvedSources, id) {
				pr.UnresolvedSources = append(pr.UnresolvedSources, id)
			}
			next = append(next, found...)
		}
		return next
	})
	pr.Derived = walkRelated(cat, n.Path, depth, func(p string) []string {
		m, _ := cat.Note(p)
		if k := foldID(m.ID); k != "" {
			return derivedFrom[k]
		}
		return nil
	})
	return pr
}

// edgeSpec is one typed edge as written in a note's frontmatter.
type edgeSpec struct{ typ, target string }

// relationsOf reads a note's frontmatter `relations` mapping: edge type ->
// one target or a list of them, each a "[[wikilink]]" or a plain note
// name, path or id. Other shapes are ignored. Types come sorted.
func relationsOf(n vault.Note) []edgeSpec {
	m, ok := n.Frontmatter["relations"].(map[string]any)
	if !ok {
		return nil
	}
	var out []edgeSpec
	for typ, v := range m {
		typ = strings.TrimSpace(typ)
		items, ok := v.([]any)
		if !ok {
			items = []any{v}
		}
		for _, item := range items {
			if s, ok := item.(string); ok && typ != "" && strings.TrimSpace(s) != "" {
				out = append(out, edgeSpec{typ, strings.TrimSpace(s)})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b edgeSpec) int { return strings.Compare(a.typ, b.typ) })
	return out
}

// resolveEdge finds the note an edge target names, from the note at from:
// a wikilink's target (display text, heading and block dropped) or the
// plain text, resolved as a link, else as a note id or unique id prefix.
func resolveEdge(cat *vault.Catalog, from, target string) (vault.Note, bool) {
	t := strings.TrimPrefix(target, "!")
	if strings.HasPrefix(t, "[[") && strings.HasSuffix(t, "]]") {
		t = t[2 : len(t)-2]
		t, _, _ = strings.Cut(t, "|")
		t, _, _ = strings.Cut(t, "#")
	} else {
		t = target
	}
	if t = strings.TrimSpace(t); t == "" {
		return vault.Note{}, false
	}
	if r := cat.ResolveTarget(from, t); r.Path != "" && !r.Attachment {
		return cat.Note(r.Path)
	}
	if ms := cat.ByID(t); len(ms) == 1 {
		return ms[0], true
	}
	return vault.Note{}, false
}

// edgesOf returns a note's typed edges, out of it and into it.
func edgesOf(cat *vault.Catalog, n vault.Note, notes []vault.Note) *relationEdges {
	ed := &relationEdges{Outgoing: []RelationEdge{}, Incoming: []RelationEdge{}}
	for _, e := range relationsOf(n) {
		if t, ok := resolveEdge(cat, n.Path, e.target); ok {
			ed.Outgoing = append(ed.Outgoing, RelationEdge{Type: e.typ, ID: t.ID, Path: t.Path, Title: t.Title})
		} else {
			ed.Unresolved = append(ed.Unresolved, UnresolvedEdge{Type: e.typ, Target: e.target})
		}
	}
	for _, o := range notes {
		if o.Path == n.Path {
			continue
		}
		for _, e := range relationsOf(o) {
			if t, ok := resolveEdge(cat, o.Path, e.target); ok && t.Path == n.Path {
				ed.Incoming = append(ed.Incoming, RelationEdge{Type: e.typ, ID: o.ID, Path: o.Path, Title: o.Title})
			}
		}
	}
	byTypePath := func(a, b RelationEdge) int {
		return cmp.Or(strings.Compare(a.Type, b.Type), strings.Compare(a.Path, b.Path))
	}
	slices.SortStableFunc(ed.Outgoing, byTypePath)
	slices.SortStableFunc(ed.Incoming, byTypePath)
	return ed
}
