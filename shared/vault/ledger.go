package vault

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"time"
)

// LedgerEntry is one entry of the log.md activity ledger.
type LedgerEntry struct {
	Date  string `json:"date"`  // YYYY-MM-DD
	Op    string `json:"op"`    // lower-cased: ingest, compile, query, lint, ...
	Title string `json:"title"` // what the operation was about
	Line  int    `json:"line"`  // 1-based line in log.md
}

// Ledger is a parsed log.md.
type Ledger struct {
	Entries []LedgerEntry // in file order
	// Skipped counts the non-blank lines outside the frontmatter that are
	// not entries, leaving out headings ("# Log", "## March" are structure)
	// unless they are shaped like an entry with an impossible date.
	Skipped int
}

// ledgerLine matches one entry. The date may be bracketed; the line may be
// a list item ("- ", "* ", "+ ") or a heading; op and title are separated
// by ':' or '|'. For example:
//
//	"- 2026-01-15 ingest: Extension service soil guide"
//	"- [2026-01-15] ingest: Extension service soil guide"
//	"## [2026-01-15] ingest | Extension service soil guide"
var ledgerLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^ {0,3}(?:[-*+]\s+|#{1,6}\s+)?(?:\[(\d{4}-\d{2}-\d{2})\]|(\d{4}-\d{2}-\d{2}))\s+(\p{L}[\p{L}\p{N}_-]*)\s*[:|]\s*(.*\S)\s*$`)
})

// headingLine matches an ATX heading.
var headingLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}#{1,6}(?:\s|$)`) }) // compiled on first use

// ParseLedger parses log.md. It never fails: lines that are not entries
// are counted in Skipped, and an entry whose date is not a real calendar
// day is not an entry.
func ParseLedger(src []byte) Ledger {
	text := strings.ToValidUTF8(string(bytes.TrimPrefix(src, []byte("\uFEFF"))), "\uFFFD")
	lines := strings.Split(text, "\n")
	start := 0
	if len(lines) > 0 && strings.TrimRight(lines[0], " \t\r") == "---" {
		for i := 1; i < len(lines); i++ {
			if l := strings.TrimRight(lines[i], " \t\r"); l == "---" || l == "..." {
				start = i + 1
				break
			}
		}
	}
	var lg Ledger
	for i := start; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := ledgerLine().FindStringSubmatch(line)
		if m == nil {
			if !headingLine().MatchString(line) {
				lg.Skipped++
			}
			continue
		}
		date := m[1] + m[2]
		if _, err := time.Parse(time.DateOnly, date); err != nil {
			lg.Skipped++ // shaped like an entry, but no such day
			continue
		}
		lg.Entries = append(lg.Entries, LedgerEntry{Date: date, Op: strings.ToLower(m[3]), Title: m[4], Line: i + 1})
	}
	return lg
}

// UncompiledSources returns the notes under the source prefixes that no
// page has digested yet, sorted: no note outside the prefixes links to
// them (by any resolved link, wikilink or Markdown) or names their id in
// its derived_from_ids. A prefix is a folder ("sources" means
// "sources/") unless it ends in ".md".
func UncompiledSources(c *Catalog, prefixes []string) []string {
	var dirs []string
	for _, p := range prefixes {
		p = strings.TrimLeft(strings.TrimSpace(p), "/")
		if p == "" {
			continue
		}
		if !strings.HasSuffix(p, "/") && !hasMDSuffix(p) {
			p += "/"
		}
		dirs = append(dirs, p)
	}
	isSource := func(p string) bool {
		for _, d := range dirs {
			if strings.HasPrefix(p, d) {
				return true
			}
		}
		return false
	}
	notes := c.Notes()
	derived := map[string]bool{}
	for _, n := range notes {
		if !isSource(n.Path) {
			for _, id := range n.DerivedFromIDs {
				derived[foldKey(strings.TrimSpace(id))] = true
			}
		}
	}
	out := []string{}
next:
	for _, n := range notes {
		if !isSource(n.Path) || IsHidden(n.Path) {
			continue
		}
		if id := foldKey(strings.TrimSpace(n.ID)); id != "" && derived[id] {
			continue
		}
		for _, b := range c.Backlinks(n.Path) {
			if !isSource(b.Source) {
				continue next
			}
		}
		out = append(out, n.Path)
	}
	return out
}
