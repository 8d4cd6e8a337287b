// Package diff makes unified diffs of notes sized to a byte budget: whole
// hunks in order until the next would not fit, so that a tool answer is
// never cut mid-line, says how many hunks it left out, and can go on from
// there (Options.Skip).
package diff

import (
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// DefaultContext is the number of unchanged lines around each change.
const DefaultContext = 3

// Options shape a diff.
type Options struct {
	Context int // lines of context; 0: DefaultContext; < 0: none
	// Budget is the most bytes of Text; 0: no limit. The headers always
	// fit; a single hunk bigger than the budget is cut at a line and ends
	// with a "\ ... N more lines" marker line.
	Budget int
	// Skip leaves out the first Skip hunks (a page's NextHunk).
	Skip int
}

// Unified is a unified diff, or the part of it that fits.
type Unified struct {
	Text    string // "--- from\n+++ to\n" and the hunks shown; "" when the texts are equal
	Hunks   int    // hunks in the whole diff
	Shown   int    // hunks in Text (a cut one counted)
	Added   int    // lines added, whole diff
	Removed int    // lines removed, whole diff
	// NextHunk is the Skip that continues after Text; 0 when Text ends
	// the diff.
	NextHunk int
	// Cut reports that the last hunk shown is cut.
	Cut bool
}

// Truncated reports whether hunks were left out after Text.
func (u Unified) Truncated() bool { return u.NextHunk > 0 }

// Diff returns the unified diff from → to, labelled fromLabel and toLabel.
func Diff(fromLabel, toLabel string, from, to []byte, opts Options) Unified {
	a, b := string(from), string(to)
	ctx := opts.Context
	switch {
	case ctx == 0:
		ctx = DefaultContext
	case ctx < 0:
		ctx = 0
	}
	var u Unified
	if a == b {
		return u
	}
	full, err := udiff.ToUnifiedDiff(fromLabel, toLabel, a, udiff.Lines(a, b), ctx)
	if err != nil || len(full.Hunks) == 0 {
		return u // cannot happen: the edits come from Lines on the same text
	}
	u.Hunks = len(full.Hunks)
	for _, h := range full.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				u.Added++
			case udiff.Delete:
				u.Removed++
			}
		}
	}
	var sb strings.Builder
	sb.WriteString("--- " + fromLabel + "\n+++ " + toLabel + "\n")
	skip := max(0, opts.Skip)
	for i := skip; i < len(full.Hunks); i++ {
		text := hunkText(fromLabel, toLabel, full.Hunks[i])
		if opts.Budget > 0 && sb.Len()+len(text) > opts.Budget {
			if u.Shown == 0 {
				sb.WriteString(cut(text, opts.Budget-sb.Len()))
				u.Shown, u.Cut = 1, true
				i++
			}
			if i < len(full.Hunks) {
				u.NextHunk = i
			}
			break
		}
		sb.WriteString(text)
		u.Shown++
	}
	if u.Shown > 0 {
		u.Text = sb.String()
	}
	return u
}

// hunkText formats one hunk without the file headers.
func hunkText(fromLabel, toLabel string, h *udiff.Hunk) string {
	one := udiff.UnifiedDiff{From: fromLabel, To: toLabel, Hunks: []*udiff.Hunk{h}}
	s := one.String()
	// Drop "--- from\n+++ to\n".
	for range 2 {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s
}

// cut keeps the whole lines of text that fit in n bytes with a marker
// line saying how many lines follow (at least the hunk's header line).
func cut(text string, n int) string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var sb strings.Builder
	for i, l := range lines {
		marker := "\\ ... " + strconv.Itoa(len(lines)-i) + " more lines\n"
		if i > 0 && sb.Len()+len(l)+len("\\ ... 0000000 more lines\n") > n {
			sb.WriteString(marker)
			return sb.String()
		}
		sb.WriteString(l)
	}
	return sb.String()
}
