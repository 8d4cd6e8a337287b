package merge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestCorpus merges every case in testdata/corpus: base.md, ours.md and
// theirs.md, expecting want.md (and want-swapped.md, or want.md again,
// with ours and theirs swapped), or the conflicts listed in conflicts.txt,
// one per line: "frontmatter KEY" or "section TITLE LINE".
func TestCorpus(t *testing.T) {
	dirs, err := filepath.Glob("testdata/corpus/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			read := func(name string) ([]byte, bool) {
				b, err := os.ReadFile(filepath.Join(dir, name))
				return b, err == nil
			}
			base, _ := read("base.md")
			ours, _ := read("ours.md")
			theirs, _ := read("theirs.md")
			want, clean := read("want.md")
			swapped, ok := read("want-swapped.md")
			if !ok {
				swapped = want
			}
			wantConflicts, _ := read("conflicts.txt")
			check := func(what string, r Result, want []byte) {
				t.Helper()
				if clean {
					if !r.Clean() {
						t.Fatalf("%s: conflicts %s, want a clean merge", what, describe(r.Conflicts))
					}
					if !bytes.Equal(r.Text, want) {
						t.Errorf("%s:\n got %q\nwant %q", what, r.Text, want)
					}
					return
				}
				if r.Clean() {
					t.Fatalf("%s: clean merge %q, want conflicts %q", what, r.Text, wantConflicts)
				}
				if r.Text != nil {
					t.Errorf("%s: text %q next to conflicts", what, r.Text)
				}
				if got := describe(r.Conflicts); got != string(wantConflicts) {
					t.Errorf("%s: conflicts\n%s\nwant\n%s", what, got, wantConflicts)
				}
			}
			check("merge", Merge(base, ours, theirs), want)
			check("swapped", Merge(base, theirs, ours), swapped)
		})
	}
}

func describe(cs []Conflict) string {
	var b strings.Builder
	for _, c := range cs {
		switch c.Where {
		case "frontmatter":
			fmt.Fprintf(&b, "frontmatter %s\n", c.Key)
		case "section":
			fmt.Fprintf(&b, "section %s %d\n", c.Section, c.Line)
		default:
			fmt.Fprintf(&b, "%s %s\n", c.Where, c.Key)
		}
	}
	return b.String()
}

// TestConflictHunks: a conflict carries each side's text of the part.
func TestConflictHunks(t *testing.T) {
	base := "# A\n\none\ntwo\nthree\n"
	r := Merge([]byte(base), []byte(strings.Replace(base, "two", "ours", 1)), []byte(strings.Replace(base, "two", "theirs", 1)))
	if len(r.Conflicts) != 1 {
		t.Fatalf("conflicts %+v", r.Conflicts)
	}
	c := r.Conflicts[0]
	if c.Base != "two\n" || c.Ours != "ours\n" || c.Theirs != "theirs\n" || c.Line != 4 || c.Section != "A" {
		t.Errorf("conflict %+v", c)
	}
}

// TestAppendersLoseNoLine is the property behind on_conflict merge: N
// writers racing to append distinct lines to one note, each
// compare-and-swap failure resolved by merging its change into the note
// as it is now, lose no line and write none twice.
func TestAppendersLoseNoLine(t *testing.T) {
	for _, start := range []string{"", "# Log\n", "---\nstatus: open\n---\n# Log\n\n- seed\n", "# Log\r\n\r\n- seed\r\n", "# Log\n\n- no newline"} {
		t.Run(strconv.Quote(start), func(t *testing.T) {
			const writers, each = 8, 40
			var mu sync.Mutex
			note, version := []byte(start), 0
			read := func() ([]byte, int) {
				mu.Lock()
				defer mu.Unlock()
				return note, version
			}
			cas := func(want int, data []byte) bool {
				mu.Lock()
				defer mu.Unlock()
				if version != want {
					return false
				}
				note, version = data, version+1
				return true
			}
			var wg sync.WaitGroup
			var failures sync.Map
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						line := fmt.Sprintf("- writer %d item %d", w, i)
						base, v := read()
						mine := appendLine(base, line)
						for try := 0; !cas(v, mine); try++ {
							if try > 1000 {
								failures.Store(line, "too many tries")
								return
							}
							cur, cv := read()
							r := Merge(base, cur, mine)
							if !r.Clean() {
								failures.Store(line, describe(r.Conflicts))
								return
							}
							base, v, mine = cur, cv, r.Text
						}
					}
				}()
			}
			wg.Wait()
			failures.Range(func(k, v any) bool {
				t.Errorf("%s: %s", k, v)
				return true
			})
			final := string(note)
			for w := range writers {
				for i := range each {
					line := fmt.Sprintf("- writer %d item %d", w, i)
					if n := strings.Count(final, line+"\n") + strings.Count(final, line+"\r\n"); n != 1 && !strings.HasSuffix(final, line) {
						t.Errorf("%q appears %d times", line, n)
					}
				}
			}
			if !strings.HasPrefix(final, strings.TrimSuffix(start, "- no newline")) {
				t.Errorf("the note's start changed: %q", final[:min(len(final), 80)])
			}
		})
	}
}

// appendLine adds a line at the end, as an append tool does (with the
// note's line ending; a last line without newline gets one first).
func appendLine(note []byte, line string) []byte {
	nl := "\n"
	if bytes.Contains(note, []byte("\r\n")) {
		nl = "\r\n"
	}
	out := slices.Clone(note)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, nl...)
	}
	return append(out, line+nl...)
}

// TestRandomEdits merges random line edits of random notes and checks what
// must hold whatever the edits: no panic; identities; the same outcome,
// clean or not, with the sides swapped; and, when only one side touched a
// line of base, that side's lines survive.
func TestRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"# H1", "## Plan", "## Risks", "- item", "text", "", "---", "key: v", "```", "naïve 日本", "\r"}
	gen := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[rng.IntN(len(words))] + strconv.Itoa(rng.IntN(3))
		}
		return out
	}
	mutate := func(lines []string) []string {
		out := slices.Clone(lines)
		for range 1 + rng.IntN(3) {
			switch i := rng.IntN(len(out) + 1); rng.IntN(3) {
			case 0:
				out = slices.Insert(out, i, gen(1+rng.IntN(2))...)
			case 1:
				if i < len(out) {
					out = slices.Delete(out, i, i+1)
				}
			default:
				if i < len(out) {
					out[i] = gen(1)[0]
				}
			}
		}
		return out
	}
	join := func(l []string) []byte { return []byte(strings.Join(l, "\n") + "\n") }
	for range 3000 {
		b := gen(rng.IntN(12))
		o, th := mutate(b), mutate(b)
		checkProperties(t, join(b), join(o), join(th))
	}
}

func checkProperties(t *testing.T, base, ours, theirs []byte) {
	t.Helper()
	r := Merge(base, ours, theirs)
	s := Merge(base, theirs, ours)
	if r.Clean() != s.Clean() {
		t.Fatalf("clean %v one way, %v the other:\nbase %q\nours %q\ntheirs %q", r.Clean(), s.Clean(), base, ours, theirs)
	}
	if r.Clean() {
		rl, sl := sortedLines(r.Text), sortedLines(s.Text)
		if !slices.Equal(rl, sl) {
			t.Fatalf("the two ways hold different lines:\n%q\n%q\nbase %q\nours %q\ntheirs %q", r.Text, s.Text, base, ours, theirs)
		}
	} else if r.Text != nil {
		t.Fatalf("conflicts and text")
	}
	if got := Merge(base, base, theirs); !bytes.Equal(got.Text, theirs) || !got.Clean() {
		t.Fatalf("ours == base: %q, want theirs %q", got.Text, theirs)
	}
	if got := Merge(base, ours, base); !bytes.Equal(got.Text, ours) || !got.Clean() {
		t.Fatalf("theirs == base: %q, want ours %q", got.Text, ours)
	}
	if got := Merge(base, ours, ours); !bytes.Equal(got.Text, ours) || !got.Clean() {
		t.Fatalf("ours == theirs: %q, want %q", got.Text, ours)
	}
}

func FuzzMerge(f *testing.F) {
	dirs, _ := filepath.Glob("testdata/corpus/*")
	for _, dir := range dirs {
		b, _ := os.ReadFile(filepath.Join(dir, "base.md"))
		o, _ := os.ReadFile(filepath.Join(dir, "ours.md"))
		th, _ := os.ReadFile(filepath.Join(dir, "theirs.md"))
		f.Add(b, o, th)
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		if len(base)+len(ours)+len(theirs) > 1<<14 {
			return
		}
		checkProperties(t, base, ours, theirs)
	})
}

// sortedLines is text's lines without their endings, sorted: the two ways
// of a clean merge may order insertions differently, and so place a
// missing final newline after a different line.
func sortedLines(text []byte) []string {
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r") // a stray CR at the end is no line ending
	}
	slices.Sort(lines)
	return lines
}
