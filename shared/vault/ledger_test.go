package vault

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseLedger(t *testing.T) {
	src := "\uFEFF---\ntitle: Log\n- 2020-01-01 fake: inside frontmatter\n---\n" + // lines 1-4
		"# Log\r\n" + // 5: structure
		"\n" + // 6
		"- 2026-01-15 ingest: Extension service soil guide\r\n" + // 7
		"- [2026-01-20] Compile: Soil handbook  \n" + // 8: op lower-cased, title trimmed
		"## [2026-02-03] ingest | Rainwater harvesting article\n" + // 9
		"* 2026-02-04 query: a | b: c\n" + // 10: title keeps its separators
		"2026-02-05 lint: bare line\n" + // 11
		"## March\n" + // 12: structure
		"- 2026-02-30 ingest: no such day\n" + // 13: skipped
		"- 2026-03-01 ingest:\n" + // 14: no title, skipped
		"- 2026-03-01: no op\n" + // 15: skipped
		"Prose between entries.\n" + // 16: skipped
		"- [2026-03-02 ingest: unbalanced\n" + // 17: skipped
		"  - 2026-03-03 compile: \xffbad utf8\n" // 18: indented list item, bad byte replaced
	lg := ParseLedger([]byte(src))
	want := []LedgerEntry{
		{Date: "2026-01-15", Op: "ingest", Title: "Extension service soil guide", Line: 7},
		{Date: "2026-01-20", Op: "compile", Title: "Soil handbook", Line: 8},
		{Date: "2026-02-03", Op: "ingest", Title: "Rainwater harvesting article", Line: 9},
		{Date: "2026-02-04", Op: "query", Title: "a | b: c", Line: 10},
		{Date: "2026-02-05", Op: "lint", Title: "bare line", Line: 11},
		{Date: "2026-03-03", Op: "compile", Title: "\uFFFDbad utf8", Line: 18},
	}
	if !slices.Equal(lg.Entries, want) {
		t.Errorf("entries:\n%+v\nwant:\n%+v", lg.Entries, want)
	}
	if lg.Skipped != 5 {
		t.Errorf("skipped %d, want 5", lg.Skipped)
	}
	if lg := ParseLedger(nil); len(lg.Entries) != 0 || lg.Skipped != 0 {
		t.Errorf("empty ledger: %+v", lg)
	}
	// An unclosed frontmatter block is text, not frontmatter.
	if lg := ParseLedger([]byte("---\n- 2026-01-01 a: b\n")); len(lg.Entries) != 1 || lg.Skipped != 1 {
		t.Errorf("unclosed frontmatter: %+v", lg)
	}
}

func FuzzParseLedger(f *testing.F) {
	f.Add([]byte("# Log\n- 2026-01-15 ingest: x\n## [2026-02-03] ingest | y\n"))
	f.Add([]byte("---\na: b\n---\n- [2026-13-01] op: z\r\n\xff"))
	f.Fuzz(func(t *testing.T, src []byte) {
		lg := ParseLedger(src)
		lines := strings.Count(string(src), "\n") + 1
		for _, e := range lg.Entries {
			if _, err := time.Parse(time.DateOnly, e.Date); err != nil {
				t.Errorf("bad date %q", e.Date)
			}
			if e.Op == "" || e.Title == "" || e.Line < 1 || e.Line > lines {
				t.Errorf("bad entry %+v", e)
			}
		}
		if len(lg.Entries)+lg.Skipped > lines {
			t.Errorf("%d entries and %d skipped lines in %d lines", len(lg.Entries), lg.Skipped, lines)
		}
	})
}

func TestUncompiledSources(t *testing.T) {
	c := lintCatalog(
		Note{Path: "sources/Linked.md"},
		Note{Path: "sources/Markdown linked.md"},
		Note{Path: "sources/Derived.md", ID: "ABC-123"},
		Note{Path: "sources/Only sources link here.md"},
		Note{Path: "sources/Self.md", Links: []Link{wl("Self", 1)}},
		Note{Path: "sources/deep/Nested.md"},
		Note{Path: "clips/Clip.md"},
		Note{Path: "sourcesque.md"}, // not under sources/
		Note{Path: "Page.md", DerivedFromIDs: []string{" abc-123 "}, Links: []Link{
			wl("Linked", 1),
			{Kind: KindMarkdown, Target: "sources/Markdown linked.md", Key: LinkKey("sources/Markdown linked.md"), Line: 2},
		}},
		Note{Path: "sources/Other.md", Links: []Link{wl("Only sources link here", 1)}},
	)
	got := UncompiledSources(c, []string{"/sources", "", "clips/"})
	want := []string{"clips/Clip.md", "sources/Only sources link here.md", "sources/Other.md", "sources/Self.md", "sources/deep/Nested.md"}
	if !slices.Equal(got, want) {
		t.Errorf("uncompiled %q, want %q", got, want)
	}
	if got := UncompiledSources(c, nil); got == nil || len(got) != 0 {
		t.Errorf("no prefixes: %q", got)
	}
}
