package vault

import (
	"cmp"
	"fmt"
	"math/bits"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Lint rule names.
const (
	RuleAmbiguousLink      = "ambiguous-link"         // a link several notes match
	RuleDeprecatedTag      = "deprecated-tag"         // schema: a tag listed under lint.tags.deprecated
	RuleFrontmatter        = "unreadable-frontmatter" // YAML Sheaf cannot read: its tags, aliases and title are not used
	RuleLintConfig         = "lint-config"            // schema: index.md's lint block is malformed
	RuleMissingRequiredTag = "missing-required-tag"   // schema: none of lint.tags.required
	RuleNoInbound          = "no-inbound"             // links out, nothing links in (hubs exempt)
	RuleOrphanNote         = "orphan-note"            // no links in or out
	RuleOrphanTag          = "orphan-tag"             // a tag only one note carries
	RuleTagTypo            = "tag-typo"               // a one-note tag close to a popular one
	RuleUnknownTag         = "unknown-tag"            // schema: not in lint.tags.allowed
	RuleUnresolvedLink     = "unresolved-link"        // a link that points at nothing
	RuleUntaggedNote       = "untagged-note"          // a note without tags
)

// LintRules lists every rule Lint knows, sorted.
var LintRules = []string{
	RuleAmbiguousLink, RuleDeprecatedTag, RuleLintConfig, RuleMissingRequiredTag,
	RuleNoInbound, RuleOrphanNote, RuleOrphanTag, RuleTagTypo, RuleUnknownTag,
	RuleFrontmatter, RuleUnresolvedLink, RuleUntaggedNote,
}

// Finding severities.
const (
	SeverityError   = "error"   // the lint configuration itself is broken
	SeverityWarning = "warning" // something is wrong and should be fixed
	SeverityInfo    = "info"    // worth a look; often intended
)

var severityOf = map[string]string{
	RuleAmbiguousLink:      SeverityWarning,
	RuleDeprecatedTag:      SeverityWarning,
	RuleFrontmatter:        SeverityWarning,
	RuleLintConfig:         SeverityError,
	RuleMissingRequiredTag: SeverityWarning,
	RuleNoInbound:          SeverityInfo,
	RuleOrphanNote:         SeverityWarning,
	RuleOrphanTag:          SeverityInfo,
	RuleTagTypo:            SeverityWarning,
	RuleUnknownTag:         SeverityWarning,
	RuleUnresolvedLink:     SeverityWarning,
	RuleUntaggedNote:       SeverityInfo,
}

// Finding is one lint result. Every finding carries a suggestion.
type Finding struct {
	Rule       string `json:"rule"`
	Severity   string `json:"severity"`
	Path       string `json:"path"`
	Line       int    `json:"line,omitempty"` // 1-based; 0 when the finding is about the whole note
	Message    string `json:"message"`
	Suggestion string `json:"suggestion"`
}

// Lint runs the named rules (all of them when none is named; unknown names
// are ignored) over the catalog and returns the findings sorted by rule,
// path, line and message. It reads the catalog only and is deterministic.
//
// Links count for the graph rules when they resolve to another note
// (attachments and self-links do not). no-inbound exempts hubs: any note
// named "index", and AGENTS.md and log.md at the vault root. The schema
// rules run only when index.md's frontmatter has a lint block (see
// ParseLintSchema).
func Lint(c *Catalog, rules ...string) []Finding {
	l := &linter{c: c, want: map[string]bool{}}
	if len(rules) == 0 {
		rules = LintRules
	}
	for _, r := range rules {
		l.want[r] = true
	}
	for _, n := range c.Notes() {
		if !IsHidden(n.Path) {
			l.notes = append(l.notes, n)
		}
	}
	l.frontmatter()
	l.links()
	l.graph()
	l.tags()
	l.schema()
	slices.SortFunc(l.found, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Rule, b.Rule), strings.Compare(a.Path, b.Path),
			cmp.Compare(a.Line, b.Line), strings.Compare(a.Message, b.Message))
	})
	return l.found
}

type linter struct {
	c     *Catalog
	want  map[string]bool
	notes []Note // sorted by path
	found []Finding

	outN, inN map[string][]string // resolved note-to-note links, deduplicated
	owners    map[string][]string // explicit tag -> notes carrying it, sorted
	names     *nearIndex          // note names and aliases, for unresolved links
	files     *nearIndex          // attachment file names
}

func (l *linter) add(rule, p string, line int, msg, suggestion string) {
	if l.want[rule] {
		l.found = append(l.found, Finding{Rule: rule, Severity: severityOf[rule], Path: p, Line: line, Message: msg, Suggestion: suggestion})
	}
}

// links resolves every link once: it reports unresolved and ambiguous
// links and records the note graph the other rules use.
func (l *linter) links() {
	l.outN, l.inN = map[string][]string{}, map[string][]string{}
	for _, n := range l.notes {
		for _, link := range n.Links {
			r := l.c.Resolve(n.Path, link)
			switch {
			case r.Resolved():
				if !r.Attachment && r.Path != n.Path {
					l.outN[n.Path] = append(l.outN[n.Path], r.Path)
					l.inN[r.Path] = append(l.inN[r.Path], n.Path)
				}
			case r.Ambiguous():
				l.ambiguous(n.Path, link, r.Candidates)
			default:
				l.unresolved(n.Path, link)
			}
		}
	}
	for _, m := range []map[string][]string{l.outN, l.inN} {
		for k, v := range m {
			slices.Sort(v)
			m[k] = slices.Compact(v)
		}
	}
}

// written renders a link roughly as it was written.
func written(link Link) string {
	t := link.Target
	if link.Heading != "" {
		t += "#" + link.Heading
	} else if link.Block != "" {
		t += "#^" + link.Block
	}
	bang := ""
	if link.Embed {
		bang = "!"
	}
	if link.Kind == KindMarkdown {
		return fmt.Sprintf("%s[%s](%s)", bang, link.Display, t)
	}
	return bang + "[[" + t + "]]"
}

func (l *linter) ambiguous(from string, link Link, cands []string) {
	if !l.want[RuleAmbiguousLink] {
		return
	}
	var opts []string
	for _, p := range cands[:min(len(cands), 5)] {
		opts = append(opts, "[["+strings.TrimSuffix(p, ".md")+"]]")
	}
	more := ""
	if len(cands) > 5 {
		more = fmt.Sprintf(" (or one of %d more)", len(cands)-5)
	}
	l.add(RuleAmbiguousLink, from, link.Line,
		fmt.Sprintf("%s is ambiguous: %d files match (%s)", written(link), len(cands), strings.Join(cands[:min(len(cands), 5)], ", ")),
		"qualify the link with a path: "+strings.Join(opts, " or ")+more)
}

func (l *linter) unresolved(from string, link Link) {
	if !l.want[RuleUnresolvedLink] {
		return
	}
	name := path.Base(strings.TrimSpace(link.Target))
	isFile := isFileName(name)
	var near string
	if isFile {
		if l.files == nil {
			l.files = l.fileIndex()
		}
		near = l.files.nearest(name)
	} else {
		if l.names == nil {
			l.names = l.nameIndex()
		}
		near = l.names.nearest(trimMD(name))
	}
	var suggestion string
	switch {
	case near != "" && isFile:
		suggestion = fmt.Sprintf("did you mean %s[[%s]]? Otherwise add the file %q or remove the link", bang(link), near, name)
	case near != "":
		suggestion = fmt.Sprintf("did you mean [[%s]]? Otherwise create the note %q or remove the link", near, trimMD(name))
	case isFile:
		suggestion = fmt.Sprintf("add the file %q or fix the link", name)
	default:
		suggestion = fmt.Sprintf("create it: write the note %q, or remove the link", trimMD(name)+".md")
	}
	what := "note"
	if isFile {
		what = "file"
	}
	l.add(RuleUnresolvedLink, from, link.Line, fmt.Sprintf("%s points at no %s", written(link), what), suggestion)
}

// isFileName reports whether name ends in a short alphanumeric extension
// other than ".md", as attachment names do ("photo.jpg", not "v1.2 notes").
func isFileName(name string) bool {
	ext := path.Ext(name)
	if len(ext) < 2 || len(ext) > 8 || hasMDSuffix(name) {
		return false
	}
	for _, r := range ext[1:] {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

func bang(link Link) string {
	if link.Embed {
		return "!"
	}
	return ""
}

// linkText is how a wikilink to the note at p is best written: its name
// when that resolves to it, else its path without ".md".
func (l *linter) linkText(p string) string {
	if name := NameOf(p); l.c.ResolveTarget("", name).Path == p {
		return name
	}
	return strings.TrimSuffix(p, ".md")
}

func (l *linter) nameIndex() *nearIndex {
	ix := newNearIndex()
	for _, n := range l.notes {
		ix.add(NameOf(n.Path), l.linkText(n.Path))
		for _, a := range n.Aliases {
			if r := l.c.ResolveTarget("", a); r.Path == n.Path {
				ix.add(a, a)
			}
		}
	}
	return ix
}

func (l *linter) fileIndex() *nearIndex {
	ix := newNearIndex()
	for _, a := range l.c.Attachments() {
		if IsHidden(a.Path) {
			continue
		}
		label := path.Base(a.Path)
		if r := l.c.ResolveTarget("", label); r.Path != a.Path {
			label = a.Path
		}
		ix.add(path.Base(a.Path), label)
	}
	return ix
}

// isHub reports whether a note is exempt from no-inbound.
func isHub(p string) bool {
	name := strings.ToLower(NameOf(p))
	return name == "index" || (!strings.Contains(p, "/") && (name == "agents" || name == "log"))
}

func (l *linter) graph() {
	if !l.want[RuleOrphanNote] && !l.want[RuleNoInbound] {
		return
	}
	l.buildOwners()
	_, hasIndex := l.c.Note("index.md")
	for _, n := range l.notes {
		out, in := l.outN[n.Path], l.inN[n.Path]
		hub := ""
		if hasIndex && !strings.EqualFold(n.Path, "index.md") {
			hub = " or from [[index]]"
		}
		switch {
		case len(out) == 0 && len(in) == 0:
			l.add(RuleOrphanNote, n.Path, 0, "no links to or from other notes", l.orphanAdvice(n, hub))
		case len(in) == 0 && !isHub(n.Path):
			l.add(RuleNoInbound, n.Path, 0,
				fmt.Sprintf("links to %d note(s) but no note links here", len(out)),
				fmt.Sprintf("link to it from a note it points at, such as [[%s]]%s", l.linkText(out[0]), hub))
		}
	}
}

// orphanAdvice suggests where to link an orphan from: a connected note
// sharing its rarest tag.
func (l *linter) orphanAdvice(n Note, hub string) string {
	bestTag, best := "", ""
	for _, t := range explicitTags(n) {
		owners := l.owners[t]
		if best != "" && len(owners) >= len(l.owners[bestTag]) {
			continue
		}
		for _, p := range owners[:min(len(owners), 64)] {
			if p != n.Path && len(l.outN[p])+len(l.inN[p]) > 0 {
				bestTag, best = t, p
				break
			}
		}
	}
	if best != "" {
		return fmt.Sprintf("link it from a related note, such as [[%s]] (also tagged #%s)%s, or delete it if it is obsolete", l.linkText(best), bestTag, hub)
	}
	if hub != "" {
		return "link it from [[index]] or a related note, or delete it if it is obsolete"
	}
	return "link it from a related note, or delete it if it is obsolete"
}

// explicitTags returns the note's own tags, normalised and deduplicated.
func explicitTags(n Note) []string {
	var out []string
	for _, t := range n.Tags {
		if t = NormalizeTag(t); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (l *linter) buildOwners() {
	if l.owners != nil {
		return
	}
	l.owners = map[string][]string{}
	for _, n := range l.notes {
		for _, t := range explicitTags(n) {
			l.owners[t] = append(l.owners[t], n.Path)
		}
	}
}

// frontmatter runs unreadable-frontmatter: a note whose YAML block could
// not be read (invalid, repeated keys, too large) is indexed with the
// block as text, so the tags, aliases and title it declares count for
// nothing.
func (l *linter) frontmatter() {
	if !l.want[RuleFrontmatter] {
		return
	}
	for _, n := range l.notes {
		if n.FrontmatterError != "" {
			l.add(RuleFrontmatter, n.Path, 1, "the frontmatter cannot be read ("+n.FrontmatterError+"): its tags, aliases and title are not used",
				"fix the YAML between the --- lines (read_note shows it; apply_edits edits it)")
		}
	}
}

// tags runs tag-typo, orphan-tag and untagged-note.
func (l *linter) tags() {
	if !l.want[RuleTagTypo] && !l.want[RuleOrphanTag] && !l.want[RuleUntaggedNote] {
		return
	}
	l.buildOwners()
	counts := map[string]int{}
	for _, tc := range l.c.Tags("") {
		counts[tc.Tag] = tc.Count
	}
	popular := newNearIndex()
	variants := map[string][]string{} // variantKey -> tags used by >= 2 notes
	for t, n := range counts {
		if n >= 2 {
			k := variantKey(t)
			variants[k] = append(variants[k], t)
		}
		if n >= 3 {
			popular.add(t, t)
		}
	}
	// better orders candidate tags: more notes first, then by name.
	better := func(a, b string) bool {
		return counts[a] > counts[b] || (counts[a] == counts[b] && a < b)
	}
	var singles []string
	for t, owners := range l.owners {
		if counts[t] == 1 && len(owners) == 1 {
			singles = append(singles, t)
		}
	}
	slices.Sort(singles)
	for _, t := range singles {
		p := l.owners[t][0]
		likely := ""
		for _, v := range variants[variantKey(t)] {
			if v != t && !strings.HasPrefix(t, v+"/") && (likely == "" || better(v, likely)) {
				likely = v
			}
		}
		if likely == "" {
			likely = popular.nearestTag(t)
		}
		if likely != "" {
			l.add(RuleTagTypo, p, 0,
				fmt.Sprintf("#%s is used by this note only and looks like a typo of #%s (%d notes)", t, likely, counts[likely]),
				fmt.Sprintf("replace #%s with #%s", t, likely))
		} else {
			l.add(RuleOrphanTag, p, 0, fmt.Sprintf("#%s is used by this note only", t),
				fmt.Sprintf("use an existing tag instead, or tag related notes with #%s too; remove it if it is noise", t))
		}
	}
	if l.want[RuleUntaggedNote] {
		for _, n := range l.notes {
			if len(explicitTags(n)) == 0 && n.FrontmatterError == "" { // unreadable-frontmatter says why
				l.add(RuleUntaggedNote, n.Path, 0, "the note has no tags", l.tagAdvice(n))
			}
		}
	}
}

// tagAdvice suggests a tag for an untagged note: the one most of its
// linked notes carry.
func (l *linter) tagAdvice(n Note) string {
	seen := map[string]int{}
	linked := slices.Concat(l.outN[n.Path], l.inN[n.Path])
	slices.Sort(linked)
	for _, p := range slices.Compact(linked) {
		if nb, ok := l.c.Note(p); ok {
			for _, t := range explicitTags(nb) {
				seen[t]++
			}
		}
	}
	best := ""
	for t, k := range seen {
		if best == "" || k > seen[best] || (k == seen[best] && t < best) {
			best = t
		}
	}
	if best == "" {
		return "add a tag in the frontmatter (tags: [topic]) or inline (#topic)"
	}
	return fmt.Sprintf("add a tag, e.g. #%s (carried by %d of its linked notes)", best, seen[best])
}

// variantKey folds the spellings that tag-typo treats as the same tag:
// separators ('-', '_', '.', spaces) dropped and one plural 's' removed.
func variantKey(t string) string {
	k := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, t)
	if utf8.RuneCountInString(k) > 3 {
		k = strings.TrimSuffix(k, "s")
	}
	return k
}

// LintSchema is the optional `lint:` block of index.md's frontmatter:
//
//	lint:
//	  tags:
//	    allowed: [project, people, soil]   # every tag must be one of these or a nested descendant
//	    required: [project, people]        # every note must carry at least one (or a descendant)
//	    deprecated: {shed: tools, old: ""} # old tag -> replacement ("" means remove)
//
// Tags are normalised like note tags (lower case, no '#').
type LintSchema struct {
	Allowed    []string
	Required   []string
	Deprecated map[string]string
}

// ParseLintSchema reads the lint block from a note's frontmatter: nil, nil
// when there is none; an error describing the first problem when it is
// malformed.
func ParseLintSchema(fm map[string]any) (*LintSchema, error) {
	raw, ok := fm["lint"]
	if !ok || raw == nil {
		return nil, nil
	}
	lint, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("lint must be a mapping, got %s", yamlKind(raw))
	}
	s := &LintSchema{Deprecated: map[string]string{}}
	for k, v := range lint {
		if k != "tags" {
			return nil, fmt.Errorf("unknown key lint.%s (only lint.tags is defined)", k)
		}
		if v == nil {
			continue
		}
		tags, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("lint.tags must be a mapping, got %s", yamlKind(v))
		}
		for tk, tv := range tags {
			var err error
			switch tk {
			case "allowed":
				s.Allowed, err = tagList("lint.tags.allowed", tv)
			case "required":
				s.Required, err = tagList("lint.tags.required", tv)
			case "deprecated":
				err = s.deprecated(tv)
			default:
				err = fmt.Errorf("unknown key lint.tags.%s (allowed, required and deprecated are defined)", tk)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func (s *LintSchema) deprecated(v any) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("lint.tags.deprecated must map old tags to new ones, got %s", yamlKind(v))
	}
	for old, repl := range m {
		o := NormalizeTag(old)
		if o == "" {
			return fmt.Errorf("lint.tags.deprecated has an empty tag")
		}
		r := ""
		if repl != nil {
			str, ok := repl.(string)
			if !ok {
				return fmt.Errorf("lint.tags.deprecated.%s must be a tag, got %s", old, yamlKind(repl))
			}
			r = NormalizeTag(str)
		}
		s.Deprecated[o] = r
	}
	return nil
}

func tagList(key string, v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	var out []string
	for _, it := range items {
		str, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("%s must list tags, found %s", key, yamlKind(it))
		}
		if t := NormalizeTag(str); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func yamlKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// under reports whether tag t is one of set or a nested descendant of one.
func under(t string, set []string) (string, bool) {
	for _, s := range set {
		if t == s || strings.HasPrefix(t, s+"/") {
			return s, true
		}
	}
	return "", false
}

// deprecation returns the replacement of t under the deprecated map,
// descendants included ("old/x" becomes "new/x").
// The most specific deprecated ancestor wins.
func (s *LintSchema) deprecation(t string) (old, repl string, ok bool) {
	for o := t; o != ""; {
		if r, found := s.Deprecated[o]; found {
			if r != "" {
				r += t[len(o):]
			}
			return o, r, true
		}
		i := strings.LastIndexByte(o, '/')
		if i < 0 {
			break
		}
		o = o[:i]
	}
	return "", "", false
}

// schema runs the rules index.md's lint block declares.
func (l *linter) schema() {
	if !l.want[RuleLintConfig] && !l.want[RuleUnknownTag] && !l.want[RuleMissingRequiredTag] && !l.want[RuleDeprecatedTag] {
		return
	}
	idx, ok := l.c.Note("index.md")
	if !ok {
		return
	}
	s, err := ParseLintSchema(idx.Frontmatter)
	if err != nil {
		l.add(RuleLintConfig, idx.Path, 0, "the lint block in the frontmatter is invalid: "+err.Error(),
			"write it as lint: {tags: {allowed: [tag, ...], required: [tag, ...], deprecated: {old: new}}}")
		return
	}
	if s == nil {
		return
	}
	allowed := newNearIndex()
	for _, a := range s.Allowed {
		allowed.add(a, a)
	}
	for _, n := range l.notes {
		tags := explicitTags(n)
		for _, t := range tags {
			if old, repl, ok := s.deprecation(t); ok {
				msg := fmt.Sprintf("#%s is deprecated (lint.tags.deprecated in index.md)", t)
				if old != t {
					msg = fmt.Sprintf("#%s is deprecated with #%s (lint.tags.deprecated in index.md)", t, old)
				}
				sug := "remove #" + t
				if repl != "" {
					sug = fmt.Sprintf("replace #%s with #%s", t, repl)
				}
				l.add(RuleDeprecatedTag, n.Path, 0, msg, sug)
				continue
			}
			if len(s.Allowed) == 0 {
				continue
			}
			if _, ok := under(t, s.Allowed); !ok {
				sug := fmt.Sprintf("use an allowed tag, or add %s to lint.tags.allowed in index.md", t)
				if near := allowed.nearestTag(t); near != "" {
					sug = fmt.Sprintf("replace #%s with #%s, or add %s to lint.tags.allowed in index.md", t, near, t)
				}
				l.add(RuleUnknownTag, n.Path, 0, fmt.Sprintf("#%s is not in lint.tags.allowed of index.md", t), sug)
			}
		}
		if len(s.Required) == 0 {
			continue
		}
		has := false
		for _, t := range tags {
			if _, ok := under(t, s.Required); ok {
				has = true
				break
			}
		}
		if !has {
			list := "#" + strings.Join(s.Required, ", #")
			l.add(RuleMissingRequiredTag, n.Path, 0,
				"the note carries none of the required tags ("+list+")", "add one of "+list)
		}
	}
}

// nearIndex finds the closest known name to a misspelt one by edit
// distance over a loose form (case-folded, separators unified). Names are
// bucketed by length and carry a mask of the runes they hold, so a lookup
// computes distances only for names of similar length and letters. One
// index spends at most nearBudget units of work in all (a candidate costs
// one, a distance its length), so a huge vault with many broken links stays
// fast; once spent, lookups find nothing.
type nearIndex struct {
	byLen  map[int][]nearEntry
	budget int
	rows   distRows
}

type nearEntry struct {
	key   []rune
	mask  uint64
	label string
}

const nearBudget = 20_000_000

func newNearIndex() *nearIndex { return &nearIndex{byLen: map[int][]nearEntry{}, budget: nearBudget} }

func (ix *nearIndex) add(name, label string) {
	k := []rune(looseKey(name))
	if len(k) == 0 {
		return
	}
	ix.byLen[len(k)] = append(ix.byLen[len(k)], nearEntry{key: k, mask: runeMask(k), label: label})
}

// nearest returns the label of the closest name within a distance that
// grows with the name's length (0 up to 3 runes, 1 up to 6, 2 up to 12,
// else 3), or "". Ties go to the label that sorts first.
func (ix *nearIndex) nearest(name string) string {
	k := []rune(looseKey(name))
	return ix.search(k, nameSlack(len(k)))
}

func nameSlack(n int) int {
	switch {
	case n <= 3:
		return 0
	case n <= 6:
		return 1
	case n <= 12:
		return 2
	}
	return 3
}

// nearestTag is nearest for tags: distance 1 for tags of 3-4 runes, 2 for
// longer ones, never the tag itself nor one of its ancestors.
func (ix *nearIndex) nearestTag(t string) string {
	k := []rune(looseKey(t))
	slack := 2
	switch {
	case len(k) < 3:
		return ""
	case len(k) <= 4:
		slack = 1
	}
	return ix.search(k, slack, func(label string) bool { return label == t || strings.HasPrefix(t, label+"/") })
}

// search returns the best label within distance slack of k, passing over
// labels skip rejects.
func (ix *nearIndex) search(k []rune, slack int, skip ...func(string) bool) string {
	if len(k) == 0 {
		return ""
	}
	best, bestD := "", slack+1
	mask := runeMask(k)
	for n := len(k) - slack; n <= len(k)+slack; n++ {
	entries:
		for _, e := range ix.byLen[n] {
			if ix.budget <= 0 {
				return best
			}
			ix.budget--
			// Each edit adds at most one rune b lacks and removes at most
			// one: a cheap lower bound on the distance.
			if bits.OnesCount64(mask&^e.mask) > bestD || bits.OnesCount64(e.mask&^mask) > bestD {
				continue
			}
			ix.budget -= len(e.key)
			d := ix.rows.distance(k, e.key, bestD)
			if better := d < bestD || (d == bestD && best != "" && e.label < best); !better {
				continue
			}
			for _, f := range skip {
				if f(e.label) {
					continue entries
				}
			}
			best, bestD = e.label, d
		}
	}
	return best
}

// runeMask sets one of 64 bits for each distinct rune of k (bits may be
// shared, which only weakens the bound search derives from it).
func runeMask(k []rune) uint64 {
	var m uint64
	for _, r := range k {
		m |= 1 << (uint32(r) % 64)
	}
	return m
}

// looseKey is the form names are compared in: NFC, lower case, runs of
// spaces, '-' and '_' made one space, trimmed.
func looseKey(s string) string {
	s = norm.NFC.String(strings.ToLower(s))
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == '-' || r == '_' || unicode.IsSpace(r)
	}), " ")
}

// editDistance is the Levenshtein distance between a and b, or limit+1
// once it is certain to exceed limit.
func editDistance(a, b []rune, limit int) int {
	var rows distRows
	return rows.distance(a, b, limit)
}

// distRows is the scratch space of distance, reused across calls.
type distRows struct{ prev, cur []int }

// distance computes the distance only inside the diagonal band of width
// limit on either side, which is all that can stay within limit.
func (r *distRows) distance(a, b []rune, limit int) int {
	big := limit + 1
	if d := len(a) - len(b); d > limit || -d > limit {
		return big
	}
	n := len(b)
	if cap(r.prev) < n+1 {
		r.prev, r.cur = make([]int, n+1), make([]int, n+1)
	}
	prev, cur := r.prev[:n+1], r.cur[:n+1]
	for j := range prev {
		prev[j] = min(j, big)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-limit), min(n, i+limit)
		cur[lo-1] = big
		if lo == 1 {
			cur[0] = min(i, big)
		}
		rowMin := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost, big)
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if hi < n {
			cur[hi+1] = big
		}
		if rowMin > limit {
			return big
		}
		prev, cur = cur, prev
	}
	return prev[n]
}
