package core

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// maintVault writes notes to a temporary folder and serves them, with the
// catalog filled by parsing as the indexer would.
func maintVault(t *testing.T, notes map[string]string, immutable ...string) (*Core, *vault.Catalog) {
	t.Helper()
	dir := t.TempDir()
	cat := vault.NewCatalog()
	for p, src := range notes {
		indexertest.WriteAt(t, dir, p, src, time.Time{})
		cat.Upsert(vault.Parse(p, []byte(src)).Note)
	}
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(&Vault{ID: "test", Store: st, Catalogs: LiveCatalog{C: cat}, ImmutablePaths: immutable})
	if err != nil {
		t.Fatal(err)
	}
	return s, cat
}

var maintNotes = map[string]string{
	"index.md":            "---\ntags: [hub]\n---\n[[A]] [[Missing]] [[sources/S1]]\n",
	"A.md":                "#topic [[index]]\n",
	"B.md":                "#topic\n",
	"C.md":                "no tags, no links\n",
	"sources/S1.md":       "---\nid: s-1\n---\ncaptured\n",
	"sources/S2.md":       "captured too\n",
	"clips/K.md":          "clipped\n",
	"log.md":              "# Log\n\n- 2026-01-02 ingest: S1\n- 2026-01-02 compile: A\n## [2026-03-01] Query | What now\nnot an entry\n- [2026-02-01] ingest: S2\n",
	".obsidian/hidden.md": "[[Nowhere]]\n",
}

func TestLintTool(t *testing.T) {
	s, cat := maintVault(t, maintNotes)
	ctx := t.Context()
	all, err := s.Lint(ctx, LintIn{Page: Page{Limit: 500}})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != len(all.Items) || all.Counts[vault.RuleUnresolvedLink] != 1 || all.Counts[vault.RuleOrphanNote] != 5 {
		t.Fatalf("lint: %+v", all)
	}
	sum := 0
	for _, n := range all.Counts {
		sum += n
	}
	if sum != all.Total {
		t.Errorf("counts add up to %d, total %d", sum, all.Total)
	}

	some, err := s.Lint(ctx, LintIn{Rules: []string{vault.RuleOrphanNote, vault.RuleUnresolvedLink}, Page: Page{Limit: 2, Offset: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, f := range all.Items {
		if f.Rule == vault.RuleOrphanNote {
			orphans = append(orphans, f.Path)
		}
	}
	if want := []string{"B.md", "C.md", "clips/K.md", "log.md", "sources/S2.md"}; !slices.Equal(orphans, want) {
		t.Errorf("orphans %v, want %v", orphans, want)
	}
	if some.Total != 6 || len(some.Items) != 2 || some.Items[0].Path != "C.md" || len(some.Counts) != 2 {
		t.Errorf("filtered page: %+v", some)
	}

	// The cached run follows the catalog.
	cat.Upsert(vault.Parse("D.md", []byte("[[Also missing]]\n")).Note)
	again, _ := s.Lint(ctx, LintIn{Rules: []string{vault.RuleUnresolvedLink}, Page: Page{Limit: 50}})
	if again.Total != 2 {
		t.Errorf("after an edit: %+v", again)
	}

	empty, _ := maintVault(t, map[string]string{})
	res, err := empty.Lint(ctx, LintIn{Page: Page{Limit: 50}})
	if err != nil || res.Items == nil || res.Total != 0 {
		t.Errorf("empty vault: %+v %v", res, err)
	}
}

func TestWikiHealth(t *testing.T) {
	s, _ := maintVault(t, maintNotes)
	h, err := s.WikiHealth(t.Context(), HealthIn{})
	if err != nil {
		t.Fatal(err)
	}
	// 8 notes; orphans B, C, clips/K, log, sources/S2; warnings: those 5 and
	// [[Missing]]; tagged: index, A, B.
	want := HealthOut{NoteCount: 8, Orphans: 5, LintWarnings: 6, LinkHealth: 1 - 5.0/8, LintCleanliness: 1 - 6.0/8, TagCoverage: 3.0 / 8}
	want.Score = 33 // round(100 * (0.375 + 0.25 + 0.375) / 3)
	if !reflect.DeepEqual(*h, want) {
		t.Errorf("health %+v, want %+v", *h, want)
	}

	empty, _ := maintVault(t, map[string]string{})
	if h, _ := empty.WikiHealth(t.Context(), HealthIn{}); h.Score != 100 || h.NoteCount != 0 {
		t.Errorf("empty vault: %+v", h)
	}
	// Many warnings per note clamp lintCleanliness at 0.
	bad, _ := maintVault(t, map[string]string{"x.md": "[[a]] [[b]] [[c]]"})
	if h, _ := bad.WikiHealth(t.Context(), HealthIn{}); h.LintCleanliness != 0 || h.Score != 0 {
		t.Errorf("clamped: %+v", h)
	}
}

func TestRecentActivity(t *testing.T) {
	s, _ := maintVault(t, maintNotes)
	ctx := t.Context()
	got, err := s.RecentActivity(ctx, recentActivityIn{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	want := []vault.LedgerEntry{
		{Date: "2026-03-01", Op: "query", Title: "What now", Line: 5},
		{Date: "2026-02-01", Op: "ingest", Title: "S2", Line: 7},
		{Date: "2026-01-02", Op: "compile", Title: "A", Line: 4},
		{Date: "2026-01-02", Op: "ingest", Title: "S1", Line: 3},
	}
	if !slices.Equal(got.Entries, want) || got.Total != 4 || got.SkippedLines != 1 {
		t.Errorf("recent: %+v", got)
	}
	if !slices.Equal(got.UncompiledSources, []string{"sources/S2.md"}) {
		t.Errorf("uncompiled %v", got.UncompiledSources)
	}

	got, _ = s.RecentActivity(ctx, recentActivityIn{Since: "2026-01-03", Op: "INGEST", Limit: 20})
	if len(got.Entries) != 1 || got.Entries[0].Title != "S2" || got.Total != 1 {
		t.Errorf("since+op: %+v", got)
	}
	got, _ = s.RecentActivity(ctx, recentActivityIn{Limit: 1})
	if len(got.Entries) != 1 || got.Total != 4 {
		t.Errorf("limit: %+v", got)
	}
	for _, bad := range []string{"yesterday", "2026-02-30", "2026-1-2"} {
		if _, err := s.RecentActivity(ctx, recentActivityIn{Since: bad, Limit: 20}); kindOfErr(err) != KindArgsInvalid {
			t.Errorf("since %q: %v", bad, err)
		}
	}

	// Immutable prefixes name the source folders; no log.md is no entries.
	notes := map[string]string{"clips/K.md": "x", "sources/S.md": "y"}
	s2, _ := maintVault(t, notes, "clips/")
	got, err = s2.RecentActivity(ctx, recentActivityIn{Limit: 20})
	if err != nil || got.Entries == nil || len(got.Entries) != 0 || !slices.Equal(got.UncompiledSources, []string{"clips/K.md"}) {
		t.Errorf("no log: %+v %v", got, err)
	}
}
