package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// The LLM tools read the vault and ask a model; nothing is written. They
// are not idempotent: a model may answer differently each time.

// --- lint_semantic ---------------------------------------------------------

// Semantic finding kinds.
var semanticKinds = []string{"contradiction", "stale-claim", "missing-concept", "data-gap", "open-question", "suggested-source"}

const (
	lintSemanticBudget = 48_000 // bytes of note text shown to the model
	lintSemanticPer    = 1_500  // bytes per note at most
	maxSemanticFinds   = 50
)

// LintSemanticIn is lint_semantic's input.
type LintSemanticIn struct {
	VaultArg
	PathPrefix string `json:"path_prefix,omitempty" jsonschema:"Only examine notes whose path starts with this plain string."`
	MaxNotes   int    `json:"max_notes,omitempty" jsonschema:"How many notes to examine at most (the best-linked first, then the most recently modified); the text shown to the model is also capped at about 48 KB." schema:"minimum=1,maximum=200,default=40"`
}

// SemanticFinding is one advisory finding of lint_semantic.
type SemanticFinding struct {
	Kind       string   `json:"kind" jsonschema:"contradiction, stale-claim, missing-concept, data-gap, open-question or suggested-source" schema:"enum=contradiction|stale-claim|missing-concept|data-gap|open-question|suggested-source"`
	Paths      []string `json:"paths" jsonschema:"the examined notes the finding is about (validated to exist)"`
	Message    string   `json:"message"`
	Suggestion string   `json:"suggestion,omitempty"`
	Concept    string   `json:"concept,omitempty" jsonschema:"missing-concept: the concept that lacks its own page (no note of that name exists)"`
}

// Examined says how much of the vault an LLM tool looked at.
type Examined struct {
	Notes      int  `json:"notes" jsonschema:"notes shown to the model"`
	TotalNotes int  `json:"totalNotes" jsonschema:"notes in scope"`
	Bytes      int  `json:"bytes" jsonschema:"bytes of note text shown to the model"`
	Complete   bool `json:"complete" jsonschema:"every note in scope was shown in full"`
}

// LintSemanticOut is lint_semantic's result.
type LintSemanticOut struct {
	Coverage
	Findings []SemanticFinding `json:"findings"`
	Examined Examined          `json:"examined"`
	Dropped  int               `json:"dropped" jsonschema:"model findings rejected by validation (unknown kind, no valid path, a concept page that already exists, ...)"`
	Model    string            `json:"model"`
}

// --- suggest_tags ----------------------------------------------------------

const (
	suggestTagsPer  = 800 // bytes of each note shown
	maxTagsPerNote  = 5
	maxVaultTagsFed = 150
)

// SuggestTagsIn is suggest_tags' input.
type SuggestTagsIn struct {
	VaultArg
	Limit int `json:"limit,omitempty" jsonschema:"How many flagged notes to handle in this call (sorted by path)." schema:"minimum=1,maximum=50,default=20"`
}

// TagSuggestion is one note's suggested tags; nothing is applied.
type TagSuggestion struct {
	Path          string   `json:"path"`
	SuggestedTags []string `json:"suggestedTags" jsonschema:"normalised tags, the vault's existing tags preferred"`
	NewTags       []string `json:"newTags,omitempty" jsonschema:"the suggested tags no note carries yet"`
	Rationale     string   `json:"rationale"`
}

// SuggestTagsOut is suggest_tags' result.
type SuggestTagsOut struct {
	Coverage
	Items    []TagSuggestion `json:"items"`
	Flagged  int             `json:"flagged" jsonschema:"notes lint flags untagged-note or missing-required-tag"`
	Examined int             `json:"examined" jsonschema:"flagged notes shown to the model in this call"`
	Model    string          `json:"model"`
}

// LintSemantic implements lint_semantic.
func (s *Core) LintSemantic(ctx context.Context, in LintSemanticIn) (*LintSemanticOut, error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if v.LLM == nil {
		return nil, llmNotConfigured("lint_semantic")
	}
	notes := semanticScope(cat, in.PathPrefix)
	out := &LintSemanticOut{Findings: []SemanticFinding{}, Model: v.LLM.Model(), Examined: Examined{TotalNotes: len(notes)}}
	nonce := newNonce()
	var doc strings.Builder
	var shown []PageRef
	complete := true
	for _, n := range notes {
		if len(shown) >= in.MaxNotes || out.Examined.Bytes >= lintSemanticBudget {
			complete = false
			break
		}
		per := min(lintSemanticPer, lintSemanticBudget-out.Examined.Bytes)
		text, cut, ok := noteExcerpt(ctx, v, n.Path, per)
		if !ok {
			continue
		}
		complete = complete && !cut
		fmt.Fprintf(&doc, "<<<NOTE-%s path=%s title=%s tags=%s modified=%s>>>\n%s\n<<<END-%s>>>\n\n", nonce,
			jsonString(n.Path), jsonString(n.Title), jsonString(strings.Join(n.Tags, ",")), n.Modified.UTC().Format(time.DateOnly), text, nonce)
		out.Examined.Bytes += len(text)
		shown = append(shown, PageRef{Path: n.Path, Title: n.Title})
	}
	out.Examined.Notes, out.Examined.Complete = len(shown), complete && len(shown) == len(notes)
	if len(shown) == 0 {
		return out, nil
	}
	system := `You review a personal wiki for problems a link checker cannot see. Report, at most 30 findings:
- contradiction: two or more notes state incompatible facts (give every note involved in "paths");
- stale-claim: a claim that is likely out of date (old dates, "currently", superseded plans);
- missing-concept: an important concept used across notes that has no page of its own ("concept": its name);
- data-gap: information a note promises or clearly needs but lacks;
- open-question: a question the wiki raises but cannot answer yet;
- suggested-source: a source (book, paper, site, person) worth ingesting next, and why.
Only use the notes shown. Paths must be copied exactly from the path= attribute. Be specific and brief.
` + dataRule + `
Reply with one JSON object and nothing else:
{"findings": [{"kind": "contradiction|stale-claim|missing-concept|data-gap|open-question|suggested-source", "paths": ["<note path>"], "message": "<what is wrong>", "suggestion": "<what to do>", "concept": "<missing-concept only>"}]}`
	var reply struct {
		Findings []struct {
			Kind       string   `json:"kind"`
			Paths      []string `json:"paths"`
			Message    string   `json:"message"`
			Suggestion string   `json:"suggestion"`
			Concept    string   `json:"concept"`
		} `json:"findings"`
	}
	msgs := []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: "The notes:\n\n" + doc.String()}}
	_, err = askJSON(ctx, v.LLM, msgs, 3000, func(b []byte) error {
		reply.Findings = nil
		if err := strictDecode(b, &reply); err != nil {
			return err
		}
		if reply.Findings == nil {
			return errors.New(`it has no "findings" array`)
		}
		return nil
	})
	if errors.Is(err, errBadReply) {
		return nil, newError(KindInternal, nil, "the model did not reply with the findings JSON, twice; try again or use another model")
	}
	if err != nil {
		return nil, llmError(err)
	}
	m := newPageMatcher(shown)
	for _, f := range reply.Findings {
		sf, ok := validFinding(cat, m, f.Kind, f.Paths, f.Message, f.Suggestion, f.Concept)
		if !ok || len(out.Findings) >= maxSemanticFinds {
			out.Dropped++
			continue
		}
		out.Findings = append(out.Findings, sf)
	}
	return out, nil
}

// semanticScope lists the visible notes under prefix, the best-linked
// first, then the most recently modified, then by path.
func semanticScope(cat *vault.Catalog, prefix string) []vault.Note {
	var notes []vault.Note
	deg := map[string]int{}
	for _, n := range cat.Notes() {
		if vault.IsHidden(n.Path) || !strings.HasPrefix(n.Path, prefix) {
			continue
		}
		notes = append(notes, n)
		deg[n.Path] = inDegree(cat, n.Path)
	}
	sort.SliceStable(notes, func(i, j int) bool {
		a, b := notes[i], notes[j]
		if deg[a.Path] != deg[b.Path] {
			return deg[a.Path] > deg[b.Path]
		}
		if !a.Modified.Equal(b.Modified) {
			return a.Modified.After(b.Modified)
		}
		return a.Path < b.Path
	})
	return notes
}

// validFinding checks one model finding: a known kind, a message, paths
// among the notes shown (a contradiction needs two), and a missing concept
// that really has no page.
func validFinding(cat *vault.Catalog, m *pageMatcher, kind string, paths []string, msg, sug, concept string) (SemanticFinding, bool) {
	kind = strings.ToLower(strings.TrimSpace(kind))
	msg = clipBytes(strings.TrimSpace(msg), 1000)
	if !slices.Contains(semanticKinds, kind) || msg == "" {
		return SemanticFinding{}, false
	}
	f := SemanticFinding{Kind: kind, Paths: []string{}, Message: msg, Suggestion: clipBytes(strings.TrimSpace(sug), 1000)}
	for _, p := range paths {
		if mp := m.match(p); mp != "" && !slices.Contains(f.Paths, mp) {
			f.Paths = append(f.Paths, mp)
		}
	}
	switch kind {
	case "contradiction":
		if len(f.Paths) < 2 {
			return f, false
		}
	case "stale-claim":
		if len(f.Paths) == 0 {
			return f, false
		}
	case "missing-concept":
		f.Concept = clipBytes(strings.TrimSpace(concept), 200)
		if f.Concept == "" || cat.ResolveTarget("", f.Concept).Resolved() {
			return f, false
		}
	}
	return f, true
}

// SuggestTags implements suggest_tags.
func (s *Core) SuggestTags(ctx context.Context, in SuggestTagsIn) (*SuggestTagsOut, error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if v.LLM == nil {
		return nil, llmNotConfigured("suggest_tags")
	}
	why := map[string]string{}
	var flagged []string
	for _, f := range vault.Lint(cat, vault.RuleUntaggedNote, vault.RuleMissingRequiredTag) {
		if _, seen := why[f.Path]; !seen {
			flagged = append(flagged, f.Path)
		}
		why[f.Path] += f.Message + " "
	}
	sort.Strings(flagged)
	out := &SuggestTagsOut{Items: []TagSuggestion{}, Flagged: len(flagged), Model: v.LLM.Model()}
	vocab := newTagVocab(cat)
	nonce := newNonce()
	var doc strings.Builder
	var shown []PageRef
	for _, p := range flagged {
		if len(shown) >= in.Limit {
			break
		}
		n, ok := cat.Note(p)
		if !ok {
			continue
		}
		text, _, ok := noteExcerpt(ctx, v, p, suggestTagsPer)
		if !ok {
			continue
		}
		fmt.Fprintf(&doc, "<<<NOTE-%s path=%s title=%s current_tags=%s lint=%s>>>\n%s\n<<<END-%s>>>\n\n", nonce,
			jsonString(p), jsonString(n.Title), jsonString(strings.Join(n.Tags, ",")), jsonString(strings.TrimSpace(why[p])), text, nonce)
		shown = append(shown, PageRef{Path: p, Title: n.Title})
	}
	out.Examined = len(shown)
	if len(shown) == 0 {
		return out, nil
	}
	system := `You suggest tags for notes in a personal wiki. For every note shown, suggest 1 to 5 tags.
Strongly prefer the vault's existing tags (listed below, most used first); invent a new tag only when none fits.
Tags are lower case, without '#', words joined with '-', nested with '/'.` + vocab.prompt() + `
Paths must be copied exactly from the path= attribute.
` + dataRule + `
Reply with one JSON object and nothing else:
{"suggestions": [{"path": "<note path>", "tags": ["<tag>"], "rationale": "<one sentence>"}]}`
	var reply struct {
		Suggestions []struct {
			Path      string   `json:"path"`
			Tags      []string `json:"tags"`
			Rationale string   `json:"rationale"`
		} `json:"suggestions"`
	}
	msgs := []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: "The notes:\n\n" + doc.String()}}
	_, err = askJSON(ctx, v.LLM, msgs, 2000, func(b []byte) error {
		reply.Suggestions = nil
		if err := strictDecode(b, &reply); err != nil {
			return err
		}
		if reply.Suggestions == nil {
			return errors.New(`it has no "suggestions" array`)
		}
		return nil
	})
	if errors.Is(err, errBadReply) {
		return nil, newError(KindInternal, nil, "the model did not reply with the suggestions JSON, twice; try again or use another model")
	}
	if err != nil {
		return nil, llmError(err)
	}
	m := newPageMatcher(shown)
	done := map[string]bool{}
	for _, sg := range reply.Suggestions {
		p := m.match(sg.Path)
		if p == "" || done[p] {
			continue
		}
		n, _ := cat.Note(p)
		ts := TagSuggestion{Path: p, SuggestedTags: []string{}, Rationale: clipBytes(strings.TrimSpace(sg.Rationale), 500)}
		for _, raw := range sg.Tags {
			t, known, ok := vocab.fit(raw)
			if !ok || slices.Contains(ts.SuggestedTags, t) || slices.Contains(n.Tags, t) || len(ts.SuggestedTags) >= maxTagsPerNote {
				continue
			}
			ts.SuggestedTags = append(ts.SuggestedTags, t)
			if !known {
				ts.NewTags = append(ts.NewTags, t)
			}
		}
		if len(ts.SuggestedTags) > 0 {
			done[p] = true
			out.Items = append(out.Items, ts)
		}
	}
	return out, nil
}

// tagVocab is the vault's tag vocabulary and index.md's lint schema.
type tagVocab struct {
	tags    []vault.TagCount  // most used first
	known   map[string]bool   // every tag and ancestor
	variant map[string]string // spelling-insensitive key -> existing tag
	schema  *vault.LintSchema // nil when index.md declares none
}

func newTagVocab(cat *vault.Catalog) *tagVocab {
	tv := &tagVocab{tags: cat.Tags(""), known: map[string]bool{}, variant: map[string]string{}}
	sort.SliceStable(tv.tags, func(i, j int) bool { return tv.tags[i].Count > tv.tags[j].Count })
	for _, tc := range tv.tags {
		tv.known[tc.Tag] = true
		if k := tagVariantKey(tc.Tag); tv.variant[k] == "" {
			tv.variant[k] = tc.Tag
		}
	}
	if idx, ok := cat.Note("index.md"); ok {
		if sch, err := vault.ParseLintSchema(idx.Frontmatter); err == nil {
			tv.schema = sch
		}
	}
	return tv
}

// prompt describes the vocabulary and schema to the model.
func (tv *tagVocab) prompt() string {
	var b strings.Builder
	var names []string
	for i, tc := range tv.tags {
		if i == maxVaultTagsFed {
			break
		}
		names = append(names, tc.Tag)
	}
	fmt.Fprintf(&b, "\nExisting tags: %s.", strings.Join(names, ", "))
	if tv.schema != nil {
		if len(tv.schema.Allowed) > 0 {
			fmt.Fprintf(&b, "\nOnly these tags (or nested tags under them) are allowed: %s.", strings.Join(tv.schema.Allowed, ", "))
		}
		if len(tv.schema.Required) > 0 {
			fmt.Fprintf(&b, "\nEvery note must carry at least one of: %s.", strings.Join(tv.schema.Required, ", "))
		}
	}
	return b.String()
}

// fit normalises a suggested tag and maps it onto the vocabulary: an
// existing tag spelled differently ("Soils", "#soil_") becomes that tag; a
// deprecated tag its replacement; a tag the schema does not allow, or that
// is not a valid tag, is refused. known reports an existing tag.
func (tv *tagVocab) fit(raw string) (tag string, known, ok bool) {
	t := vault.NormalizeTag(raw)
	t = strings.Join(strings.Fields(t), "-")
	if t == "" || len(t) > 64 || !validTag(t) {
		return "", false, false
	}
	if !tv.known[t] {
		if e := tv.variant[tagVariantKey(t)]; e != "" {
			t = e
		}
	}
	if tv.schema != nil {
		if repl, dep := tv.schema.Deprecated[t]; dep {
			if repl == "" {
				return "", false, false
			}
			t = repl
		}
		if len(tv.schema.Allowed) > 0 && !underAny(t, tv.schema.Allowed) {
			return "", false, false
		}
	}
	return t, tv.known[t], true
}

// validTag reports whether t can be written as an Obsidian #tag: letters,
// digits, '_', '-', '/' and emoji, not only digits, no empty segment.
func validTag(t string) bool {
	digits := true
	for _, r := range t {
		switch {
		case unicode.IsDigit(r):
		case unicode.IsLetter(r) || unicode.IsMark(r) || r == '_' || r == '-' || r == '/' || r > 0x2000 && unicode.IsSymbol(r):
			digits = false
		default:
			return false
		}
	}
	return !digits && !strings.Contains(t, "//") && !strings.HasPrefix(t, "/") && !strings.HasSuffix(t, "/")
}

// tagVariantKey folds spelling differences: separators and a plural s.
func tagVariantKey(t string) string {
	k := strings.NewReplacer("-", "", "_", "", " ", "").Replace(t)
	if len(k) > 3 && strings.HasSuffix(k, "s") && !strings.HasSuffix(k, "ss") {
		k = k[:len(k)-1]
	}
	return k
}

func underAny(t string, set []string) bool {
	for _, a := range set {
		if t == a || strings.HasPrefix(t, a+"/") {
			return true
		}
	}
	return false
}
