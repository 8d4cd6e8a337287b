package vault

import (
	"bytes"
	"strings"
	"testing"
)

var editSeeds = []string{
	"# A\n\ntext ^b1\n\n## B\n[[x#h|y]] ![[z]] [m](a%20b.md#c) [r][1]\n\n[1]: <q r.md>\n",
	"---\ntags: [a]\nlist:\n  - x\n---\nT\n===\n\n> [!ai] do\n> it\n",
	"```\n# not\n```\n# yes\n\n- item ^i\n\n| t |\n\n^tb\n",
	"\uFEFF# BOM\n\xff\xfe\n## x\r\nline\r\n",
	"[[a\\|b]] | [[ spaced ]] [x](<a b.md> \"t\") ![i](./p.png)",
}

// FuzzParseSpans checks that every span lies in the source and spells what
// Parse read there.
func FuzzParseSpans(f *testing.F) {
	for _, s := range editSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, sp := ParseSpans("f.md", src)
		n := p.Note
		if len(sp.Headings) != len(n.Headings) || len(sp.Links) != len(n.Links) || len(sp.Blocks) != len(n.Blocks) {
			t.Fatalf("spans %d/%d/%d, note %d/%d/%d", len(sp.Headings), len(sp.Links), len(sp.Blocks), len(n.Headings), len(n.Links), len(n.Blocks))
		}
		in := func(what string, s, e int) {
			if s < 0 || e < s || e > len(src) {
				t.Fatalf("%s span [%d, %d) outside %d bytes", what, s, e, len(src))
			}
		}
		in("body", sp.BodyStart, sp.BodyStart)
		for _, h := range sp.Headings {
			in("heading", h.Start, h.End)
		}
		for _, b := range sp.Blocks {
			if b.Start >= 0 {
				in("block", b.Start, b.End)
				in("block marker", b.Marker, b.End)
				in("block after", b.End, b.After)
			}
		}
		if !bytes.Equal(bytes.ToValidUTF8(src, nil), src) {
			return // targets hold U+FFFD in the note, raw bytes in src
		}
		for i, l := range sp.Links {
			if l.TargetStart < 0 {
				continue
			}
			in("link target", l.TargetStart, l.TargetEnd)
			raw := string(src[l.TargetStart:l.TargetEnd])
			got := strings.TrimSpace(raw)
			if l.Kind == KindMarkdown {
				got = unescapePath(got)
			}
			if got != n.Links[i].Target {
				t.Fatalf("link %d: span spells %q, the link's target is %q", i, raw, n.Links[i].Target)
			}
		}
	})
}

// FuzzPatchSection patches every heading of a random note: either a clean
// refusal, or a note whose bytes before the section are untouched and whose
// other headings all remain.
func FuzzPatchSection(f *testing.F) {
	for _, s := range editSeeds {
		f.Add([]byte(s), uint8(0), "new text")
	}
	ops := []PatchOp{OpReplace, OpAppend, OpPrepend, OpInsertBefore, OpInsertAfter}
	f.Fuzz(func(t *testing.T, src []byte, op uint8, content string) {
		_, sp := ParseSpans("f.md", src)
		for i, h := range sp.Headings {
			if !h.Top {
				continue
			}
			o := ops[int(op)%len(ops)]
			out, err := PatchSection(src, PatchTarget{HeadingPath: []string{"#" + h.ID}}, o, content)
			if err != nil {
				continue
			}
			start, _, _ := sectionOf(src, sp, i)
			if o != OpInsertBefore && !bytes.Equal(out[:start], src[:start]) {
				t.Fatalf("%s of %q changed bytes before its section", o, h.Title)
			}
			if o == OpInsertBefore && !bytes.HasPrefix(out, src[:start]) {
				t.Fatalf("insert_before %q changed bytes before it", h.Title)
			}
		}
		for _, b := range sp.Blocks {
			_, _ = PatchSection(src, PatchTarget{Block: b.ID}, ops[int(op)%len(ops)], content)
		}
		_, _ = PatchSection(src, PatchTarget{FrontmatterKey: "tags"}, OpAppend, content)
		_, _ = PatchSection(src, PatchTarget{FrontmatterKey: "tags"}, OpReplace, content)
	})
}

// FuzzMoveRewrite rewrites a random note for a move: no panic, and a
// result keeps every link.
func FuzzMoveRewrite(f *testing.F) {
	for _, s := range editSeeds {
		f.Add(s + " [[Target]] [t](../b/Target.md) [[b/Target#h]]")
	}
	v := textVault{"b/Target.md": "t\n", "c/Other.md": "o\n", "Target.md.png": ""}
	f.Fuzz(func(t *testing.T, text string) {
		v := textVault{"a/Src.md": text, "b/Target.md": v["b/Target.md"], "c/Other.md": v["c/Other.md"]}
		plan, err := PlanMove(v.catalog(), "b/Target.md", "c/New (name).md")
		if err != nil {
			t.Fatal(err)
		}
		out, _, _, err := plan.Rewrite("a/Src.md", []byte(text))
		if err != nil || out == nil {
			return
		}
		if a, b := len(Parse("a/Src.md", []byte(text)).Note.Links), len(Parse("a/Src.md", out).Note.Links); a != b {
			t.Fatalf("%d links became %d", a, b)
		}
	})
}
