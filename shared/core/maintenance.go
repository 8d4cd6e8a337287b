package core

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// The maintenance family: lint, wiki_health and recent_activity, the
// deterministic vault-hygiene tools.

// LintIn is lint's input.
type LintIn struct {
	VaultArg
	Page
	Rules []string `json:"rules,omitempty" jsonschema:"Only these rules; default all." schema:"minItems=1,itemEnum=ambiguous-link|deprecated-tag|lint-config|missing-required-tag|no-inbound|orphan-note|orphan-tag|tag-typo|unknown-tag|unresolved-link|untagged-note"`
}

// LintOut is lint's result: one page of findings, the total, and the
// number of findings of each rule (over all pages).
type LintOut struct {
	Coverage
	Items  []vault.Finding `json:"items" jsonschema:"findings sorted by rule, path, line; severity is error, warning or info"`
	Total  int             `json:"total"`
	Offset int             `json:"offset"`
	Limit  int             `json:"limit"`
	Counts map[string]int  `json:"counts" jsonschema:"findings per rule, over all pages"`
}

// HealthIn is wiki_health's input.
type HealthIn struct {
	VaultArg
}

// HealthOut is the wiki-health score and its parts.
type HealthOut struct {
	Coverage
	Score           int     `json:"score" jsonschema:"0-100: round(100 * mean(linkHealth, lintCleanliness, tagCoverage))"`
	NoteCount       int     `json:"noteCount"`
	LinkHealth      float64 `json:"linkHealth" jsonschema:"1 - orphans/noteCount"`
	LintCleanliness float64 `json:"lintCleanliness" jsonschema:"1 - lintWarnings/noteCount, clamped to [0, 1]"`
	TagCoverage     float64 `json:"tagCoverage" jsonschema:"fraction of notes with at least one tag"`
	Orphans         int     `json:"orphans" jsonschema:"orphan-note findings: notes with no links in or out"`
	LintWarnings    int     `json:"lintWarnings" jsonschema:"lint findings of severity warning"`
}

type recentActivityIn struct {
	VaultArg
	Since string `json:"since,omitempty" jsonschema:"Only entries on or after this day (YYYY-MM-DD)."`
	Op    string `json:"op,omitempty" jsonschema:"Only entries of this ledger op (ingest, compile, query, lint, ...; case-insensitive)." schema:"minLength=1,maxLength=64"`
	Limit int    `json:"limit,omitempty" jsonschema:"How many entries to return at most." schema:"minimum=1,maximum=200,default=20"`
}

type recentActivityOut struct {
	Coverage
	Entries           []vault.LedgerEntry `json:"entries" jsonschema:"newest first; for one day, later lines first"`
	Total             int                 `json:"total" jsonschema:"entries matching since and op, before limit"`
	SkippedLines      int                 `json:"skippedLines" jsonschema:"non-blank log.md lines that are not entries (headings aside)"`
	UncompiledSources []string            `json:"uncompiledSources" jsonschema:"source notes no page links to or derives from yet"`
}

// Lint implements lint.
func (s *Core) Lint(ctx context.Context, in LintIn) (*LintOut, error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	all := lintAll(cat)
	if len(in.Rules) > 0 {
		var some []vault.Finding
		for _, f := range all {
			if slices.Contains(in.Rules, f.Rule) {
				some = append(some, f)
			}
		}
		all = some
	}
	if all == nil {
		all = []vault.Finding{}
	}
	counts := map[string]int{}
	for _, f := range all {
		counts[f.Rule]++
	}
	items, total := page(all, in.Page)
	return &LintOut{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit, Counts: counts}, nil
}

// lintCache keeps the last full lint run, so paging through findings or
// asking wiki_health after lint costs nothing while the catalog stays
// unchanged. Findings are shared read-only.
var lintCache struct {
	sync.Mutex
	cat *vault.Catalog
	gen uint64
	all []vault.Finding
}

// lintAll returns every finding of every rule for the catalog.
func lintAll(cat *vault.Catalog) []vault.Finding {
	gen := cat.Generation()
	lintCache.Lock()
	if lintCache.cat == cat && lintCache.gen == gen {
		defer lintCache.Unlock()
		return lintCache.all
	}
	lintCache.Unlock()
	all := vault.Lint(cat)
	lintCache.Lock()
	lintCache.cat, lintCache.gen, lintCache.all = cat, gen, all
	lintCache.Unlock()
	return all
}

// WikiHealth implements wiki_health.
func (s *Core) WikiHealth(ctx context.Context, in HealthIn) (*HealthOut, error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	return health(cat), nil
}

// health scores a catalog. An empty vault scores 100: nothing is broken.
func health(cat *vault.Catalog) *HealthOut {
	out := &HealthOut{}
	tagged := 0
	for _, n := range cat.Notes() {
		if vault.IsHidden(n.Path) {
			continue
		}
		out.NoteCount++
		if len(n.Tags) > 0 {
			tagged++
		}
	}
	for _, f := range lintAll(cat) {
		if f.Rule == vault.RuleOrphanNote {
			out.Orphans++
		}
		if f.Severity == vault.SeverityWarning {
			out.LintWarnings++
		}
	}
	if out.NoteCount == 0 {
		out.Score, out.LinkHealth, out.LintCleanliness, out.TagCoverage = 100, 1, 1, 1
		return out
	}
	n := float64(out.NoteCount)
	out.LinkHealth = clamp01(1 - float64(out.Orphans)/n)
	out.LintCleanliness = clamp01(1 - float64(out.LintWarnings)/n)
	out.TagCoverage = float64(tagged) / n
	out.Score = int(math.Round(100 * (out.LinkHealth + out.LintCleanliness + out.TagCoverage) / 3))
	return out
}

func clamp01(x float64) float64 { return min(1, max(0, x)) }

// RecentActivity implements recent_activity.
func (s *Core) RecentActivity(ctx context.Context, in recentActivityIn) (*recentActivityOut, error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if in.Since != "" {
		if _, err := time.Parse(time.DateOnly, in.Since); err != nil {
			return nil, newError(KindArgsInvalid, nil, "since %q is not a date (YYYY-MM-DD)", in.Since)
		}
	}
	prefixes := v.ImmutablePaths
	if len(prefixes) == 0 {
		prefixes = []string{"sources/"}
	}
	out := &recentActivityOut{Entries: []vault.LedgerEntry{}, UncompiledSources: vault.UncompiledSources(cat, prefixes)}
	logNote, ok := cat.Note("log.md")
	if !ok {
		return out, nil
	}
	data, _, err := v.Store.Get(ctx, logNote.Path, v.maxNote())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return out, nil
	case errors.Is(err, store.ErrTooLarge):
		return nil, newError(KindUnsupported, map[string]any{"max_bytes": v.maxNote()},
			"%s is larger than this server's read limit of %d bytes", logNote.Path, v.maxNote())
	case err != nil:
		return nil, err
	}
	lg := vault.ParseLedger(data)
	out.SkippedLines = lg.Skipped
	var keep []vault.LedgerEntry
	for _, e := range lg.Entries {
		if e.Date >= in.Since && (in.Op == "" || strings.EqualFold(e.Op, in.Op)) {
			keep = append(keep, e)
		}
	}
	slices.SortFunc(keep, func(a, b vault.LedgerEntry) int {
		return cmp.Or(strings.Compare(b.Date, a.Date), cmp.Compare(b.Line, a.Line))
	})
	out.Total = len(keep)
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	if len(keep) > limit {
		keep = keep[:limit]
	}
	if keep != nil {
		out.Entries = keep
	}
	return out, nil
}
