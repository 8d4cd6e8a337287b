package vault

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Edit is one find-and-replace of ApplyEdits.
type Edit struct {
	Find    string `json:"find"`
	Replace string `json:"replace"`
}

// EditError is an edit whose find did not match exactly once. It wraps
// ErrNotUnique, whether it matched nowhere or several times.
type EditError struct {
	Index   int // 0-based position of the edit in the call
	Matches int // how many times its find matched (overlaps counted)
}

func (e *EditError) Error() string {
	return fmt.Sprintf("edit %d: find matches %d times, not exactly once", e.Index, e.Matches)
}

func (e *EditError) Unwrap() error { return ErrNotUnique }

// ApplyEdits applies the edits in order, each to the text the previous one
// left: every find must occur exactly once (overlapping occurrences count
// separately), else nothing is applied and the error is an *EditError. An
// empty find is ErrBadEdit. In a note whose lines end in CRLF, a find
// written with bare line breaks that does not occur as written is looked
// for with CRLF, and the replace's line breaks become CRLF, unless the
// find occurs as written with bare line breaks of its own.
func ApplyEdits(src []byte, edits []Edit) ([]byte, error) {
	out := src
	crlf := lineEnding(src) == "\r\n"
	for i, e := range edits {
		if e.Find == "" {
			return nil, fmt.Errorf("%w: edit %d has an empty find", ErrBadEdit, i)
		}
		if crlf {
			switch {
			case !bytes.Contains(out, []byte(e.Find)):
				e.Find, e.Replace = toCRLF(e.Find), toCRLF(e.Replace)
			case !bareLF(e.Find):
				e.Replace = toCRLF(e.Replace)
			}
			// A find with bare line breaks that occurs as written works on
			// the bytes as they are ("\nLine" after a "\r"): its replace
			// is kept as written.
		}
		find := []byte(e.Find)
		at := bytes.Index(out, find)
		if at < 0 {
			return nil, &EditError{Index: i, Matches: 0}
		}
		if n := countOverlapping(out, find, at); n != 1 {
			return nil, &EditError{Index: i, Matches: n}
		}
		next := make([]byte, 0, len(out)-len(find)+len(e.Replace))
		next = append(next, out[:at]...)
		next = append(next, e.Replace...)
		out = append(next, out[at+len(find):]...)
	}
	return out, nil
}

// bareLF reports whether s holds a line feed not preceded by a carriage
// return.
func bareLF(s string) bool {
	for i := range len(s) {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			return true
		}
	}
	return false
}

// toCRLF ends every line of s with CRLF.
func toCRLF(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// countOverlapping counts the occurrences of find in s, the first at first.
func countOverlapping(s, find []byte, first int) int {
	n := 0
	for at := first; at >= 0; {
		n++
		next := bytes.Index(s[at+1:], find)
		if next < 0 {
			break
		}
		at += 1 + next
	}
	return n
}

// ErrAlreadyDone is CompleteDirective's answer for a directive already
// marked done at that line.
var ErrAlreadyDone = errors.New("directive already done")

// CompleteDirective flips the pending "> [!ai]" directive whose marker is
// on 1-based line to "> [!ai-done]", changing nothing else. With title
// non-empty the directive must also have that title. No pending directive
// there is a *MatchError (ErrTargetNotFound); a done one there is
// ErrAlreadyDone.
func CompleteDirective(src []byte, line int, title string) ([]byte, error) {
	p, _ := ParseSpans("", src)
	what := fmt.Sprintf("directive at line %d", line)
	for _, d := range p.Note.Directives {
		if d.Line != line {
			continue
		}
		if title != "" && strings.TrimSpace(title) != d.Title {
			return nil, &MatchError{What: what, Hint: fmt.Sprintf("its title is %q, not %q: the note changed, list the directives again", d.Title, title)}
		}
		if d.Done {
			return nil, ErrAlreadyDone
		}
		s, e := lineBounds(src, line)
		m := markerRE().FindIndex(src[s:e])
		if m == nil {
			break
		}
		at := s + m[1] - 1 // the ']' closing "[!ai"
		out := make([]byte, 0, len(src)+5)
		out = append(out, src[:at]...)
		out = append(out, "-done"...)
		return append(out, src[at:]...), nil
	}
	return nil, &MatchError{What: what, Hint: "no pending [!ai] directive starts there: the note changed, list the directives again"}
}

// markerRE is a directive's marker on its line.
var markerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\[!ai\]`) }) // compiled on first use

// lineBounds is the byte range of a 1-based line of src, without its line
// ending; (len, len) past the end.
func lineBounds(src []byte, line int) (int, int) {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return len(src), len(src)
		}
		off += i + 1
	}
	end := len(src)
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		end = off + i
	}
	return off, end
}
