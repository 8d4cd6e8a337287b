package vault

import (
	"slices"
	"strings"
	"time"
)

// Summary is what the catalog says of the whole vault in a few numbers:
// what get_vault_info reports. The indexer stores it with every catalog
// manifest, so that a cold stateless handler can answer get_vault_info
// from one small read, before (or without) loading the catalog.
type Summary struct {
	Notes             int       `json:"notes"`
	Attachments       int       `json:"attachments"`
	IndexedAt         time.Time `json:"indexed_at"`
	PendingDirectives int       `json:"pending_directives"` // "> [!ai]" callouts not done
	HasIndex          bool      `json:"has_index"`          // a note index.md, in any case
	Unindexed         int       `json:"unindexed"`          // Markdown files a problem kept out of the catalog
	ProblemCount      int       `json:"problem_count"`
	Problems          []Problem `json:"problems,omitempty"` // the first SummaryProblems, by path
}

// SummaryProblems is how many problems a Summary lists: as many as
// get_vault_info shows.
const SummaryProblems = 50

// Summary summarises the catalog: one pass over its notes, for the
// pending directives, and a lookup of index.md in the name indexes (built
// first if need be: the indexer summarises after every save, and a lookup
// that misses without them scans every path).
func (c *Catalog) Summary() Summary {
	c.ensure(names)
	_, hasIndex := c.Note("index.md")
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := Summary{
		Notes: len(c.notes), Attachments: len(c.atts), IndexedAt: c.indexedAt,
		HasIndex: hasIndex, ProblemCount: len(c.problems),
	}
	for _, n := range c.notes {
		for _, d := range n.Directives {
			if !d.Done {
				s.PendingDirectives++
			}
		}
	}
	for p, why := range c.problems {
		if _, ok := c.notes[p]; !ok && IsNotePath(p) {
			s.Unindexed++
		}
		s.Problems = append(s.Problems, Problem{Path: p, Reason: why})
	}
	slices.SortFunc(s.Problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	s.Problems = slices.Clip(s.Problems[:min(len(s.Problems), SummaryProblems)])
	if len(s.Problems) == 0 {
		s.Problems = nil
	}
	return s
}
