package vault

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestApplyEdits(t *testing.T) {
	src := []byte("alpha beta gamma\nbeta again\naaa\n")
	out, err := ApplyEdits(src, []Edit{{"alpha", "ALPHA"}, {"gamma\nbeta", "G\nB"}, {"ALPHA", "first"}})
	if err != nil || string(out) != "first beta G\nB again\naaa\n" {
		t.Errorf("sequential edits: %q, %v", out, err)
	}
	// A CRLF note stays CRLF: the replace's line breaks follow it, and a
	// find written with bare ones is found.
	crlf := []byte("---\r\ntitle: T\r\n---\r\nLine a1\r\nLine a2\r\n")
	out, err = ApplyEdits(crlf, []Edit{{"Line a1", "X1\nX2"}, {"X2\nLine a2", "Y"}})
	if err != nil || string(out) != "---\r\ntitle: T\r\n---\r\nX1\r\nY\r\n" {
		t.Errorf("CRLF: %q, %v", out, err)
	}
	// A find with a bare line break that occurs as written (the LF of a
	// CRLF) keeps its replace as written: no stray CR.
	out, err = ApplyEdits([]byte("a\r\nLine\r\nb\r\n"), []Edit{{"\nLine", "\nOther"}})
	if err != nil || string(out) != "a\r\nOther\r\nb\r\n" {
		t.Errorf("bare LF find in a CRLF note: %q, %v", out, err)
	}
	for _, tt := range []struct {
		edits   []Edit
		index   int
		matches int
	}{
		{[]Edit{{"beta", "x"}}, 0, 2},
		{[]Edit{{"alpha", "x"}, {"nowhere", "y"}}, 1, 0},
		{[]Edit{{"aa", "b"}}, 0, 2}, // overlapping occurrences in "aaa"
		{[]Edit{{"alpha", "beta"}, {"alpha", "z"}}, 1, 0},
	} {
		_, err := ApplyEdits(src, tt.edits)
		var ee *EditError
		if !errors.As(err, &ee) || !errors.Is(err, ErrNotUnique) || ee.Index != tt.index || ee.Matches != tt.matches {
			t.Errorf("%v: %v, want edit %d matching %d times", tt.edits, err, tt.index, tt.matches)
		}
	}
	if _, err := ApplyEdits(src, []Edit{{"", "x"}}); !errors.Is(err, ErrBadEdit) {
		t.Errorf("empty find: %v", err)
	}
	if string(src) != "alpha beta gamma\nbeta again\naaa\n" {
		t.Errorf("ApplyEdits changed its input: %q", src)
	}
}

func TestCompleteDirective(t *testing.T) {
	src := "# Tasks\n\n> [!ai] Summarise\n> body\n\n> [!AI]+ Shout\n\n> [!ai-done] Old\n\n`> [!ai] code`\n"
	out, err := CompleteDirective([]byte(src), 3, "")
	if err != nil || string(out) != strings.Replace(src, "> [!ai] Summarise", "> [!ai-done] Summarise", 1) {
		t.Errorf("line 3: %q, %v", out, err)
	}
	out, err = CompleteDirective([]byte(src), 6, "Shout")
	if err != nil || !strings.Contains(string(out), "> [!AI-done]+ Shout\n") {
		t.Errorf("line 6: %q, %v", out, err)
	}
	if _, err := CompleteDirective([]byte(src), 8, ""); !errors.Is(err, ErrAlreadyDone) {
		t.Errorf("done directive: %v", err)
	}
	for _, line := range []int{1, 4, 10, 99} {
		if _, err := CompleteDirective([]byte(src), line, ""); !errors.Is(err, ErrTargetNotFound) {
			t.Errorf("line %d: %v, want not found", line, err)
		}
	}
	if _, err := CompleteDirective([]byte(src), 3, "Another title"); !errors.Is(err, ErrTargetNotFound) {
		t.Errorf("drifted title: %v", err)
	}
}

func TestAppendLedger(t *testing.T) {
	e := LedgerEntry{Date: time.Date(2026, 5, 29, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), Op: "Move", Title: "a.md ->\nb.md"}
	for _, tt := range []struct{ src, want string }{
		{"", "# Log\n\n- 2026-05-29 move: a.md -> b.md\n"},
		{"# Log\n\n- 2026-01-01 ingest: x", "# Log\n\n- 2026-01-01 ingest: x\n- 2026-05-29 move: a.md -> b.md\n"},
		{"# Log\r\n\r\n- 2026-01-01 ingest: x\r\n", "# Log\r\n\r\n- 2026-01-01 ingest: x\r\n- 2026-05-29 move: a.md -> b.md\r\n"},
	} {
		out := AppendLedger([]byte(tt.src), e)
		if string(out) != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.src, out, tt.want)
		}
		lg := ParseLedger(out)
		last := lg.Entries[len(lg.Entries)-1]
		if last.Date != "2026-05-29" || last.Op != "move" || last.Title != "a.md -> b.md" {
			t.Errorf("ParseLedger reads back %+v", last)
		}
	}
}
