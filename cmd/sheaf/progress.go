package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress reports an index pass: a bar on a terminal, otherwise a plain
// line every few seconds. Rates count from the start of the pass.
type progress struct {
	w       io.Writer
	start   time.Time
	bar     *progressbar.ProgressBar // on a terminal
	every   time.Duration            // plain lines: at most one per every
	printed time.Time
	done    int
	total   int
}

// newProgress starts reporting on w (stderr) now.
func newProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now(), every: 2 * time.Second}
	if isTerminal(w) {
		p.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("indexing"), progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("notes"), progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	return p
}

// update is the indexer's progress callback.
func (p *progress) update(done, total int) {
	if p.bar != nil {
		if total != p.total {
			p.bar.ChangeMax(total)
		}
		p.done, p.total = done, total
		_ = p.bar.Set(done)
		return
	}
	p.done, p.total = done, total
	if now := time.Now(); now.Sub(p.printed) >= p.every && done < total {
		p.printed = now
		fmt.Fprintln(p.w, p.line(now))
	}
}

// line is the plain report: count, and the rate once a second has passed.
func (p *progress) line(now time.Time) string {
	s := fmt.Sprintf("indexing: %d/%d notes", p.done, p.total)
	if el := now.Sub(p.start); el >= time.Second {
		s += fmt.Sprintf(", %.0f notes/s", float64(p.done)/el.Seconds())
	}
	return s
}

// finish clears the bar.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
