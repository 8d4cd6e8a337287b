package diff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	a := "# Plan\n\none\ntwo\nthree\n"
	b := "# Plan\n\none\n2\nthree\nfour"
	u := Diff("plan.md@1", "plan.md@2", []byte(a), []byte(b), Options{})
	want := "--- plan.md@1\n+++ plan.md@2\n@@ -1,5 +1,6 @@\n # Plan\n \n one\n-two\n+2\n three\n+four\n\\ No newline at end of file\n"
	if u.Text != want {
		t.Errorf("Text\n%q\nwant\n%q", u.Text, want)
	}
	if u.Hunks != 1 || u.Shown != 1 || u.Added != 2 || u.Removed != 1 || u.Truncated() || u.Cut {
		t.Errorf("%+v", u)
	}
	if e := Diff("a", "b", []byte(a), []byte(a), Options{}); e.Text != "" || e.Hunks != 0 {
		t.Errorf("equal texts: %+v", e)
	}
}

// far returns a note of n paragraphs and a copy with every tenth changed.
func far(n int) (string, string) {
	var a, b strings.Builder
	for i := range n {
		fmt.Fprintf(&a, "line %d of the note, with some words\n", i)
		if i%10 == 5 {
			fmt.Fprintf(&b, "line %d CHANGED\n", i)
		} else {
			fmt.Fprintf(&b, "line %d of the note, with some words\n", i)
		}
	}
	return a.String(), b.String()
}

// TestBudgetPages: pages of whole hunks, each within its budget, together
// make the whole diff.
func TestBudgetPages(t *testing.T) {
	a, b := far(200)
	whole := Diff("a", "b", []byte(a), []byte(b), Options{})
	if whole.Hunks != 20 {
		t.Fatalf("%d hunks, want 20", whole.Hunks)
	}
	header := "--- a\n+++ b\n"
	var joined strings.Builder
	joined.WriteString(header)
	skip, pages := 0, 0
	for {
		p := Diff("a", "b", []byte(a), []byte(b), Options{Budget: 1000, Skip: skip})
		pages++
		if len(p.Text) > 1000 || p.Shown == 0 || p.Cut {
			t.Fatalf("page %d: %d bytes, %d hunks, cut %v", pages, len(p.Text), p.Shown, p.Cut)
		}
		if p.Hunks != 20 || p.Added != whole.Added || p.Removed != whole.Removed {
			t.Errorf("page %d describes the whole diff as %+v", pages, p)
		}
		joined.WriteString(strings.TrimPrefix(p.Text, header))
		if !p.Truncated() {
			break
		}
		if p.NextHunk != skip+p.Shown {
			t.Fatalf("NextHunk %d after %d+%d", p.NextHunk, skip, p.Shown)
		}
		skip = p.NextHunk
	}
	if joined.String() != whole.Text || pages < 3 {
		t.Errorf("%d pages joined differ from the whole diff", pages)
	}
}

// TestBudgetCutsOneBigHunk: a hunk bigger than the budget is cut at a line.
func TestBudgetCutsOneBigHunk(t *testing.T) {
	a := strings.Repeat("old line\n", 500)
	b := strings.Repeat("new line\n", 500)
	u := Diff("a", "b", []byte(a), []byte(b), Options{Budget: 2000})
	if !u.Cut || u.Shown != 1 || u.Truncated() || len(u.Text) > 2000 {
		t.Fatalf("%+v, %d bytes", u, len(u.Text))
	}
	if !strings.HasSuffix(u.Text, " more lines\n") || !strings.Contains(u.Text, "@@ -1,500 +1,500 @@\n") {
		t.Errorf("cut hunk:\n%s", u.Text[len(u.Text)-200:])
	}
}

// TestApplies: the whole diff, applied to the old text, gives the new.
func TestApplies(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"# H", "- item", "text", "", "naïve 日本", "x\r"}
	gen := func() string {
		var sb strings.Builder
		for range rng.IntN(30) {
			sb.WriteString(words[rng.IntN(len(words))] + "\n")
		}
		if rng.IntN(3) == 0 {
			sb.WriteString("no newline")
		}
		return sb.String()
	}
	for range 500 {
		a, b := gen(), gen()
		u := Diff("a", "b", []byte(a), []byte(b), Options{})
		if a == b {
			continue
		}
		got, err := apply(u.Text, a)
		if err != nil || got != b {
			t.Fatalf("applying\n%s\nto %q: %q, %v; want %q", u.Text, a, got, err, b)
		}
	}
}

// apply applies a unified diff as patch(1) would, strictly: every context
// and removed line must match.
func apply(diff, old string) (string, error) {
	src := strings.SplitAfter(old, "\n")
	if src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0
	var last *string // the last line written, for "\ No newline"
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "":
		case strings.HasPrefix(l, "@@ -"):
			f := strings.Fields(l)
			start, _ := strconv.Atoi(strings.SplitN(f[1][1:], ",", 2)[0])
			if strings.HasSuffix(f[1], ",0") {
				start++ // "-N,0": insert after line N
			}
			for pos < start-1 {
				out = append(out, src[pos])
				pos++
			}
			last = nil
		case l[0] == ' ' || l[0] == '-':
			if pos >= len(src) || strings.TrimSuffix(src[pos], "\n") != strings.TrimSuffix(l[1:], "\n") {
				return "", fmt.Errorf("line %d: %q does not match %q", pos+1, l, src[min(pos, len(src)-1)])
			}
			if l[0] == ' ' {
				out = append(out, src[pos])
				last = &out[len(out)-1]
			} else {
				last = nil
			}
			pos++
		case l[0] == '+':
			out = append(out, l[1:])
			last = &out[len(out)-1]
		case strings.HasPrefix(l, "\\ No newline"):
			if last != nil {
				*last = strings.TrimSuffix(*last, "\n")
			}
		default:
			return "", errors.New("bad line " + strconv.Quote(l))
		}
	}
	return strings.Join(append(out, src[pos:]...), ""), nil
}

func FuzzDiff(f *testing.F) {
	f.Add("a\nb\n", "a\nc\n", 0)
	f.Add("", "x", 50)
	f.Add("x\r\ny", "x\ny\n", 1)
	f.Fuzz(func(t *testing.T, a, b string, budget int) {
		u := Diff("a", "b", []byte(a), []byte(b), Options{})
		if (a == b) != (u.Text == "") {
			t.Fatalf("equal %v, text %q", a == b, u.Text)
		}
		if a != b {
			if got, err := apply(u.Text, a); err != nil || got != b {
				t.Fatalf("applying %q to %q: %q, %v", u.Text, a, got, err)
			}
		}
		budget = budget%4096 + 4096 // the headers and a cut hunk's marker fit
		p := Diff("a", "b", []byte(a), []byte(b), Options{Budget: budget})
		if len(p.Text) > budget {
			t.Fatalf("%d bytes over a budget of %d", len(p.Text), budget)
		}
	})
}
