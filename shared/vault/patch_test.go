package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

func mustPatch(t *testing.T, src string, tg PatchTarget, op PatchOp, content string) string {
	t.Helper()
	out, err := PatchSection([]byte(src), tg, op, content)
	if err != nil {
		t.Fatalf("PatchSection(%v, %s): %v", tg, op, err)
	}
	return string(out)
}

func heading(path ...string) PatchTarget { return PatchTarget{HeadingPath: path} }

func TestPatchHeadingOps(t *testing.T) {
	src := "# A\n\nintro\n\n## B\n\nb text\n\n## C\nc\n"
	for _, tt := range []struct {
		op   PatchOp
		path []string
		want string
	}{
		{OpReplace, []string{"B"}, "# A\n\nintro\n\n## B\n\nnew\n\n## C\nc\n"},
		{OpAppend, []string{"B"}, "# A\n\nintro\n\n## B\n\nb text\nnew\n\n## C\nc\n"},
		{OpPrepend, []string{"B"}, "# A\n\nintro\n\n## B\n\nnew\nb text\n\n## C\nc\n"},
		{OpInsertBefore, []string{"B"}, "# A\n\nintro\n\nnew\n## B\n\nb text\n\n## C\nc\n"},
		{OpInsertAfter, []string{"B"}, "# A\n\nintro\n\n## B\n\nb text\n\nnew\n## C\nc\n"},
		{OpAppend, []string{"C"}, "# A\n\nintro\n\n## B\n\nb text\n\n## C\nc\nnew\n"},
		{OpInsertAfter, []string{"C"}, "# A\n\nintro\n\n## B\n\nb text\n\n## C\nc\nnew\n"},
		// A's section holds B and C: replace drops them, append goes last.
		{OpReplace, []string{"A"}, "# A\n\nnew\n"},
		{OpAppend, []string{"A"}, "# A\n\nintro\n\n## B\n\nb text\n\n## C\nc\nnew\n"},
		{OpReplace, []string{"A", "C"}, "# A\n\nintro\n\n## B\n\nb text\n\n## C\nnew\n"},
		{OpReplace, []string{"#c"}, "# A\n\nintro\n\n## B\n\nb text\n\n## C\nnew\n"},
		{OpReplace, []string{" ## b "}, "# A\n\nintro\n\n## B\n\nnew\n\n## C\nc\n"},
	} {
		if got := mustPatch(t, src, heading(tt.path...), tt.op, "new"); got != tt.want {
			t.Errorf("%s %v:\n got %q\nwant %q", tt.op, tt.path, got, tt.want)
		}
	}
}

func TestPatchHeadingTargets(t *testing.T) {
	src, err := os.ReadFile("testdata/edit/awkward.md")
	if err != nil {
		t.Fatal(err)
	}
	notFound := [][]string{
		{"Not a heading (in a fence)"}, {"Not a heading (indented code)"}, {"A heading in a quote"},
		{"Plan 🌱", "Notes", "Risks"}, {"Nope"}, {"Budget", "Risks"},
	}
	for _, p := range notFound {
		_, err := PatchSection(src, heading(p...), OpReplace, "x")
		var me *MatchError
		if !errors.Is(err, ErrTargetNotFound) || !errors.As(err, &me) || me.Matches != 0 {
			t.Errorf("%v: %v, want target not found", p, err)
		}
	}
	_, err = PatchSection(src, heading("Risks"), OpReplace, "x")
	var me *MatchError
	if !errors.Is(err, ErrNotUnique) || !errors.As(err, &me) || me.Matches != 2 ||
		strings.Join(me.Candidates, "|") != "Plan 🌱 > Risks (#risks)|Notes > Risks (#risks-1)" {
		t.Errorf("Risks: %v (%+v), want two candidates", err, me)
	}
	for _, tt := range []struct {
		path []string
		want string // a line the section must hold
	}{
		{[]string{"Plan 🌱", "Risks"}, "The plan's risks."},
		{[]string{"plan 🌱", "risks"}, "The plan's risks."},
		{[]string{"Notes", "Risks"}, "The notes' risks"},
		{[]string{"Weather: rain & frost!"}, "Too much rain."},
		{[]string{"Plan 🌱", "Weather: rain & frost!"}, "Too much rain."},
		{[]string{"Setext heading"}, "Under the setext heading."},
		{[]string{"Second setext"}, "- item one"},
		{[]string{"Trailing"}, "Last section"},
	} {
		out, err := PatchSection(src, heading(tt.path...), OpReplace, "REPLACED")
		if err != nil {
			t.Errorf("%v: %v", tt.path, err)
			continue
		}
		if bytes.Contains(out, []byte(tt.want)) || !bytes.Contains(out, []byte("REPLACED\n")) {
			t.Errorf("%v: replace kept %q or lost the content:\n%s", tt.path, tt.want, out)
		}
	}
}

// checkOnlySection patches heading i of src (by its full path) and checks
// that the bytes outside its section's text are untouched.
func checkOnlySection(t *testing.T, name string, src []byte) (patched, ambiguous int) {
	t.Helper()
	_, sp := ParseSpans(name, src)
	eol := lineEnding(src)
	var stack []int
	for i, h := range sp.Headings {
		if !h.Top {
			continue
		}
		for len(stack) > 0 && sp.Headings[stack[len(stack)-1]].Level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, i)
		var path []string
		for _, k := range stack {
			path = append(path, sp.Headings[k].Title)
		}
		if strings.TrimSpace(h.Title) == "" {
			continue // an empty heading has no title to name it by
		}
		_, body, end := sectionOf(src, sp, i)
		coreS, coreE := blankRuns(src, body, end)
		if coreS == coreE {
			coreS, coreE = body, body
		}
		marker := "MARKER-" + h.ID + eol
		out, err := PatchSection(src, heading(path...), OpReplace, "MARKER-"+h.ID)
		var me *MatchError
		if errors.As(err, &me) && me.Matches > 1 {
			// Duplicate titles under the same parents: the id tells them apart.
			ambiguous++
			out, err = PatchSection(src, heading("#"+h.ID), OpReplace, "MARKER-"+h.ID)
		}
		if err != nil {
			t.Errorf("%s: %v: %v", name, path, err)
			continue
		}
		patched++
		prefix, suffix := string(src[:coreS]), string(src[coreE:])
		if coreS > 0 && src[coreS-1] != '\n' {
			prefix += eol // the heading was the file's last line
		}
		want := prefix + marker + suffix
		if next := i + 1; coreE == end && end < len(src) && startsHeading(sp, end) && needsGap(sp, end) {
			want = prefix + marker + eol + suffix // a setext heading keeps its own line
			_ = next
		}
		if string(out) != want {
			t.Errorf("%s: %v: more than the section changed:\n got %q\nwant %q", name, path, clipStr(out), clipStr([]byte(want)))
		}
	}
	return patched, ambiguous
}

func clipStr(b []byte) string {
	if len(b) > 400 {
		return string(b[:200]) + " … " + string(b[len(b)-200:])
	}
	return string(b)
}

// TestPatchRoundTripSample patches every heading of every note of the
// sample vault and the awkward fixture: only that section changes.
func TestPatchRoundTripSample(t *testing.T) {
	var files []string
	_ = filepath.WalkDir("../../infra/sample-vault", func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel("../../infra/sample-vault", p)
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && !IsHidden(filepath.ToSlash(rel)) {
			files = append(files, p)
		}
		return nil
	})
	files = append(files, "testdata/edit/awkward.md")
	total, amb := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if Check(src) != nil {
			continue
		}
		p, a := checkOnlySection(t, f, src)
		total, amb = total+p, amb+a
		if testing.Short() {
			continue
		}
		crlf := bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n"))
		checkOnlySection(t, f+" (CRLF)", crlf)
	}
	t.Logf("patched %d sections, %d of them by id (duplicate titles under the same parents)", total, amb)
	if total < 100 || amb < 2 {
		t.Errorf("patched %d sections (%d ambiguous): the sample vault has more", total, amb)
	}
}

func TestPatchBlock(t *testing.T) {
	src := "# T\n\nfirst para ^p1\n\n- item one ^i1\n- item two\n\n> quoted ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\n\nend\n"
	for _, tt := range []struct {
		id      string
		op      PatchOp
		content string
		want    string
	}{
		{"p1", OpReplace, "new para", "# T\n\nnew para ^p1\n\n- item one ^i1\n- item two\n\n> quoted ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\n\nend\n"},
		{"^p1", OpReplace, "new ^p1", "# T\n\nnew ^p1\n\n- item one ^i1\n- item two\n\n> quoted ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\n\nend\n"},
		{"p1", OpAppend, "after", "# T\n\nfirst para ^p1\n\nafter\n\n- item one ^i1\n- item two\n\n> quoted ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\n\nend\n"},
		{"p1", OpPrepend, "before", "# T\n\nbefore\n\nfirst para ^p1\n\n- item one ^i1\n- item two\n\n> quoted ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\n\nend\n"},
		{"i1", OpReplace, "first item", "# T\n\nfirst para ^p1\n\n- first item ^i1\n- item two\n\n> quoted ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\n\nend\n"},
		{"i1", OpInsertAfter, "- inserted", "# T\n\nfirst para ^p1\n\n- item one ^i1\n- inserted\n- item two\n\n> quoted ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\n\nend\n"},
		{"q1", OpReplace, "two\nlines", "# T\n\nfirst para ^p1\n\n- item one ^i1\n- item two\n\n> two\n> lines ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\n\nend\n"},
		{"t1", OpReplace, "| b |\n|---|", "# T\n\nfirst para ^p1\n\n- item one ^i1\n- item two\n\n> quoted ^q1\n\n| b |\n|---|\n\n^t1\n\nend\n"},
		{"t1", OpAppend, "after table", "# T\n\nfirst para ^p1\n\n- item one ^i1\n- item two\n\n> quoted ^q1\n\n| a |\n|---|\n| 1 |\n\n^t1\nafter table\n\nend\n"},
	} {
		if got := mustPatch(t, src, PatchTarget{Block: tt.id}, tt.op, tt.content); got != tt.want {
			t.Errorf("%s %s:\n got %q\nwant %q", tt.id, tt.op, got, tt.want)
		}
	}
	for _, id := range []string{"nope", "p"} {
		if _, err := PatchSection([]byte(src), PatchTarget{Block: id}, OpReplace, "x"); !errors.Is(err, ErrTargetNotFound) {
			t.Errorf("block %s: %v, want not found", id, err)
		}
	}
	if _, err := PatchSection([]byte(src), PatchTarget{Block: "p1"}, OpReplace, "two\n\nparas"); !errors.Is(err, ErrBadEdit) {
		t.Errorf("two paragraphs into a block: %v, want ErrBadEdit", err)
	}
	dup := "a ^x\n\nb ^x\n"
	if _, err := PatchSection([]byte(dup), PatchTarget{Block: "x"}, OpReplace, "y"); !errors.Is(err, ErrNotUnique) {
		t.Errorf("duplicate block ids: %v, want not unique", err)
	}
}

func TestPatchFrontmatter(t *testing.T) {
	src := "---\ntitle: Old   # keep me\ntags: [a, b]   # flow\naliases:\n  - One\n  - Two\n# a comment about status\nstatus: draft\nempty: []\n---\n\n# Body\n"
	for _, tt := range []struct {
		key     string
		op      PatchOp
		content string
		want    string
	}{
		{"title", OpReplace, "New title", "---\ntitle: New title # keep me\ntags: [a, b]   # flow\naliases:\n  - One\n  - Two\n# a comment about status\nstatus: draft\nempty: []\n---\n\n# Body\n"},
		{"tags", OpAppend, "c", "---\ntitle: Old   # keep me\ntags: [a, b, c]   # flow\naliases:\n  - One\n  - Two\n# a comment about status\nstatus: draft\nempty: []\n---\n\n# Body\n"},
		{"tags", OpPrepend, "[x, y]", "---\ntitle: Old   # keep me\ntags: [x, y, a, b]   # flow\naliases:\n  - One\n  - Two\n# a comment about status\nstatus: draft\nempty: []\n---\n\n# Body\n"},
		{"aliases", OpAppend, "Three", "---\ntitle: Old   # keep me\ntags: [a, b]   # flow\naliases:\n  - One\n  - Two\n  - Three\n# a comment about status\nstatus: draft\nempty: []\n---\n\n# Body\n"},
		{"aliases", OpPrepend, "Zero", "---\ntitle: Old   # keep me\ntags: [a, b]   # flow\naliases:\n  - Zero\n  - One\n  - Two\n# a comment about status\nstatus: draft\nempty: []\n---\n\n# Body\n"},
		{"status", OpReplace, "done", "---\ntitle: Old   # keep me\ntags: [a, b]   # flow\naliases:\n  - One\n  - Two\n# a comment about status\nstatus: done\nempty: []\n---\n\n# Body\n"},
		{"status", OpReplace, "[a, b]", "---\ntitle: Old   # keep me\ntags: [a, b]   # flow\naliases:\n  - One\n  - Two\n# a comment about status\nstatus: [a, b]\nempty: []\n---\n\n# Body\n"},
		{"empty", OpAppend, "first", "---\ntitle: Old   # keep me\ntags: [a, b]   # flow\naliases:\n  - One\n  - Two\n# a comment about status\nstatus: draft\nempty: [first]\n---\n\n# Body\n"},
		{"status", OpReplace, "needs: quoting", "---\ntitle: Old   # keep me\ntags: [a, b]   # flow\naliases:\n  - One\n  - Two\n# a comment about status\nstatus:\n  needs: quoting\nempty: []\n---\n\n# Body\n"},
	} {
		if got := mustPatch(t, src, PatchTarget{FrontmatterKey: tt.key}, tt.op, tt.content); got != tt.want {
			t.Errorf("%s %s %q:\n got %q\nwant %q", tt.key, tt.op, tt.content, got, tt.want)
		}
	}
	for _, tt := range []struct {
		src, key string
		op       PatchOp
		want     error
	}{
		{src, "missing", OpReplace, ErrTargetNotFound},
		{"# no frontmatter\n", "title", OpReplace, ErrTargetNotFound},
		{src, "title", OpAppend, ErrBadEdit},
		{src, "title", OpInsertAfter, ErrBadEdit},
		{"---\n{a: 1}\n---\n", "a", OpReplace, ErrBadEdit},
		{"---\na: [1\n---\n", "a", OpReplace, ErrBadEdit},
	} {
		if _, err := PatchSection([]byte(tt.src), PatchTarget{FrontmatterKey: tt.key}, tt.op, "v"); !errors.Is(err, tt.want) {
			t.Errorf("%q %s %s: %v, want %v", tt.src, tt.key, tt.op, err, tt.want)
		}
	}
	// Content that is more than one YAML value, or that would make the
	// frontmatter unreadable, is refused: nothing silently dropped.
	for _, content := range []string{"Real title\n---\nextra: dropped", "x\n...\nignored", "{a: 1, a: 2}"} {
		for _, op := range []PatchOp{OpReplace, OpAppend} {
			key := map[PatchOp]string{OpReplace: "title", OpAppend: "aliases"}[op]
			if out, err := PatchSection([]byte(src), PatchTarget{FrontmatterKey: key}, op, content); !errors.Is(err, ErrBadEdit) {
				t.Errorf("%s %s %q: %v, want ErrBadEdit\n%s", key, op, content, err, out)
			}
		}
	}
	// A value that would take the frontmatter past what the parser reads
	// is refused, even when the YAML alone stays under it.
	near := strings.Repeat("x", maxFrontmatter-len(src)+100)
	if _, err := PatchSection([]byte(src), PatchTarget{FrontmatterKey: "status"}, OpReplace, near[:maxFrontmatter-200]); err != nil {
		t.Errorf("a value that fits: %v", err)
	}
	// The YAML 2 bytes under the limit, the block with its --- lines over.
	yLen := strings.Index(src[4:], "---\n")
	if _, err := PatchSection([]byte(src), PatchTarget{FrontmatterKey: "status"}, OpReplace, strings.Repeat("x", maxFrontmatter-2-yLen+len("draft"))); !errors.Is(err, ErrBadEdit) {
		t.Errorf("a value past the limit with its delimiters: %v, want ErrBadEdit", err)
	}
	// A byte-order mark before the frontmatter is kept, the edit made.
	if got := mustPatch(t, "\uFEFF"+src, PatchTarget{FrontmatterKey: "status"}, OpReplace, "done"); got != "\uFEFF"+strings.Replace(src, "status: draft", "status: done", 1) {
		t.Errorf("BOM: %q", got)
	}
	crlfBOM := "\uFEFF" + strings.ReplaceAll(src, "\n", "\r\n")
	if got := mustPatch(t, crlfBOM, PatchTarget{FrontmatterKey: "tags"}, OpAppend, "c"); !strings.HasPrefix(got, "\uFEFF---\r\n") || !strings.Contains(got, "tags: [a, b, c]   # flow\r\n") {
		t.Errorf("BOM and CRLF: %q", got)
	}
	// CRLF notes stay CRLF.
	crlf := strings.ReplaceAll(src, "\n", "\r\n")
	got := mustPatch(t, crlf, PatchTarget{FrontmatterKey: "aliases"}, OpAppend, "Three")
	if !strings.Contains(got, "  - Two\r\n  - Three\r\n# a comment") || strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Errorf("CRLF append: %q", got)
	}
}

func TestPatchKeepsNeighbours(t *testing.T) {
	// A line right before a setext heading would become its text.
	src := "## A\n```\ncode\n```\nSetext\n------\nb\n"
	out := mustPatch(t, src, heading("A"), OpAppend, "appended")
	if _, sp := ParseSpans("", []byte(out)); len(sp.Headings) != 2 || sp.Headings[1].Title != "Setext" || out != "## A\n```\ncode\n```\nappended\n\nSetext\n------\nb\n" {
		t.Errorf("append before a setext heading broke it: %q", out)
	}
	// Content that would underline the previous paragraph is refused.
	if _, err := PatchSection([]byte("# A\ntext\n"), heading("A"), OpAppend, "---"); !errors.Is(err, ErrBadEdit) {
		t.Errorf("a setext underline as content: %v, want ErrBadEdit", err)
	}
	// BOM and invalid UTF-8 elsewhere in the note are kept.
	src = "\uFEFF# A\n\xff\xfe bytes\n## B\nb\n"
	out = mustPatch(t, src, heading("B"), OpReplace, "new")
	if out != "\uFEFF# A\n\xff\xfe bytes\n## B\nnew\n" {
		t.Errorf("BOM/invalid bytes: %q", out)
	}
}

// TestPatchRoundTripGenerated patches every heading of every note of a
// generated vault: 150 notes (40 with -short), the 10k vault (82k
// sections, a minute or two) with SHEAF_TEST_10K=1.
func TestPatchRoundTripGenerated(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 40
	}
	if os.Getenv("SHEAF_TEST_10K") != "" {
		n = 10_000
	}
	dir := t.TempDir()
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: n, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	notes, total := 0, 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		k, _ := checkOnlySection(t, p, src)
		notes, total = notes+1, total+k
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d notes, %d sections patched", notes, total)
	if notes != n || total < 2*n {
		t.Errorf("%d notes, %d sections: too few", notes, total)
	}
}

// TestPatchHeadingOfNoLetters: headings whose titles keep no character of
// an anchor (emoji, punctuation) have GitHub's ids ("", "-1", "-2"), and
// each can be patched by it ("#" is the empty one); the candidates of an
// ambiguous title name those ids. A real "Heading" keeps its own anchor.
func TestPatchHeadingOfNoLetters(t *testing.T) {
	src := "# Top\n## 🎉\nfirst\n## 🎉\nsecond\n## !!!\nthird\n## Heading\nfourth\n"
	_, sp := ParseSpans("n.md", []byte(src))
	var ids []string
	for _, h := range sp.Headings {
		ids = append(ids, h.ID)
	}
	if strings.Join(ids, "|") != "top||-1|-2|heading" {
		t.Fatalf("ids %q", ids)
	}
	_, err := PatchSection([]byte(src), heading("🎉"), OpReplace, "x")
	var me *MatchError
	if !errors.As(err, &me) || strings.Join(me.Candidates, "|") != "Top > 🎉 (#)|Top > 🎉 (#-1)" {
		t.Fatalf("🎉: %v", err)
	}
	if got := mustPatch(t, src, heading("#"), OpReplace, "one"); got != strings.Replace(src, "first", "one", 1) {
		t.Errorf("#: %q", got)
	}
	if got := mustPatch(t, src, heading("#-1"), OpReplace, "two"); got != strings.Replace(src, "second", "two", 1) {
		t.Errorf("#-1: %q", got)
	}
	if got := mustPatch(t, src, heading("#heading"), OpReplace, "four"); got != strings.Replace(src, "fourth", "four", 1) {
		t.Errorf("#heading: %q", got)
	}
}
