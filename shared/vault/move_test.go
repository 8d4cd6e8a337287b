package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// textVault is a vault held as texts, for move tests.
type textVault map[string]string

func (v textVault) catalog() *Catalog {
	c := NewCatalog()
	for p, text := range v {
		if IsNotePath(p) {
			c.Upsert(Parse(p, []byte(text)).Note)
		} else {
			c.UpsertAttachment(Attachment{Path: p})
		}
	}
	return c
}

// move applies a MovePlan to the texts and returns the vault after it.
func (v textVault) move(t *testing.T, from, to string) (textVault, []LinkChange) {
	t.Helper()
	c := v.catalog()
	plan, err := PlanMove(c, from, to)
	if err != nil {
		t.Fatalf("PlanMove(%s, %s): %v", from, to, err)
	}
	out := textVault{}
	for p, text := range v {
		out[p] = text
	}
	var all []LinkChange
	for _, src := range plan.Sources() {
		text, changes, _, err := plan.Rewrite(src, []byte(v[src]))
		if err != nil {
			t.Fatalf("Rewrite(%s): %v", src, err)
		}
		if text != nil {
			out[src] = string(text)
		}
		all = append(all, changes...)
	}
	out[to] = out[from]
	delete(out, from)
	return out, all
}

// targets lists where every link of every note points: note -> link index -> path.
func (v textVault) targets() map[string][]string {
	c := v.catalog()
	out := map[string][]string{}
	for p := range v {
		if !IsNotePath(p) {
			continue
		}
		for _, rl := range c.Outgoing(p) {
			out[p] = append(out[p], rl.Path)
		}
	}
	return out
}

// checkMove moves from to to and checks that no link changed what it
// points to (links to from now point to to), and that only link targets
// changed in the texts.
func checkMove(t *testing.T, v textVault, from, to string) []LinkChange {
	t.Helper()
	before := v.targets()
	after, changes := v.move(t, from, to)
	got := after.targets()
	for p, ts := range before {
		np := p
		if p == from {
			np = to
		}
		for i, want := range ts {
			if want == from {
				want = to
			}
			if want == "" {
				continue // unresolved before: may resolve now
			}
			if i >= len(got[np]) || got[np][i] != want {
				t.Errorf("move %s -> %s: link %d of %s points to %q, want %q\n%s", from, to, i, np, at(got[np], i), want, after[np])
			}
		}
	}
	return changes
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<missing>"
}

func TestMoveEverySpelling(t *testing.T) {
	v := textVault{
		"Garden/Compost.md": "---\naliases: [Compost heap]\n---\n# Compost\n\n## Bays\n\nbay text ^bay1\n\nSelf: [[Compost#Bays]], [[#Bays]], [me](Compost.md), [up](../index.md)\n",
		"index.md": strings.Join([]string{
			"[[Compost]]", "[[Compost|the heap]]", "[[Garden/Compost]]", "[[Garden/Compost.md]]",
			"[[/Garden/Compost]]", "[[Compost#Bays]]", "[[Compost#^bay1|bay]]", "![[Compost]]",
			"[[Compost heap]]", "[[compost]]", "[x](Garden/Compost.md)", "[y](Garden/Compost.md#Bays \"title\")",
			"[z](<Garden/Compost.md>)", "![e](Garden/Compost.md)", "[r][ref]", "[[Elsewhere]]",
			"| [[Compost\\|table]] |", "`[[Compost]] in code`", "[[./Garden/Compost]]",
			"", "[ref]: Garden/Compost.md",
		}, "\n") + "\n",
		"Garden/Beds.md":     "[[Compost]] and [rel](Compost.md) and [up](../index.md) and [[../Garden/Compost]]\n",
		"Other/Elsewhere.md": "nothing\n",
	}
	after, changes := v.move(t, "Garden/Compost.md", "Archive/Old heap.md")
	wantIndex := strings.Join([]string{
		"[[Old heap]]", "[[Old heap|the heap]]", "[[Archive/Old heap]]", "[[Archive/Old heap.md]]",
		"[[/Archive/Old heap]]", "[[Old heap#Bays]]", "[[Old heap#^bay1|bay]]", "![[Old heap]]",
		"[[Compost heap]]", "[[Old heap]]", "[x](Archive/Old%20heap.md)", "[y](Archive/Old%20heap.md#Bays \"title\")",
		"[z](<Archive/Old heap.md>)", "![e](Archive/Old%20heap.md)", "[r][ref]", "[[Elsewhere]]",
		"| [[Old heap\\|table]] |", "`[[Compost]] in code`", "[[./Archive/Old heap]]",
		"", "[ref]: Archive/Old%20heap.md",
	}, "\n") + "\n"
	if after["index.md"] != wantIndex {
		t.Errorf("index.md:\n got %q\nwant %q", after["index.md"], wantIndex)
	}
	if want := "[[Old heap]] and [rel](../Archive/Old%20heap.md) and [up](../index.md) and [[../Archive/Old heap]]\n"; after["Garden/Beds.md"] != want {
		t.Errorf("Beds:\n got %q\nwant %q", after["Garden/Beds.md"], want)
	}
	if want := "---\naliases: [Compost heap]\n---\n# Compost\n\n## Bays\n\nbay text ^bay1\n\nSelf: [[Old heap#Bays]], [[#Bays]], [me](Old%20heap.md), [up](../index.md)\n"; after["Archive/Old heap.md"] != want {
		t.Errorf("moved note:\n got %q\nwant %q", after["Archive/Old heap.md"], want)
	}
	if len(changes) < 20 {
		t.Errorf("%d changes reported", len(changes))
	}
	for _, c := range changes {
		if c.Old == c.New || c.Target == "" {
			t.Errorf("change %+v", c)
		}
	}
	checkMove(t, v, "Garden/Compost.md", "Archive/Old heap.md")
}

func TestMoveKeepsOtherLinks(t *testing.T) {
	v := textVault{
		"a/Plan.md":    "plan a\n",
		"b/Note.md":    "[[Plan]] is a/Plan; [[Note]] is me\n",
		"c/Idea.md":    "idea\n",
		"d/Other.md":   "[[Idea]] [[Idea#h]] [i](../c/Idea.md)\n",
		"e/Moving.md":  "[[Idea]] here too, [rel](../c/Idea.md), [[./Sibling]]\n",
		"e/Sibling.md": "sibling\n",
	}
	// Moving a note to d/Idea.md makes [[Idea]] ambiguous: links to c/Idea
	// get a longer spelling; the moved note's own relative links follow it.
	after, _ := v.move(t, "e/Moving.md", "x/y/Idea.md")
	if got := after["d/Other.md"]; got != "[[c/Idea]] [[c/Idea#h]] [i](../c/Idea.md)\n" {
		t.Errorf("Other: %q", got)
	}
	if got := after["x/y/Idea.md"]; got != "[[c/Idea]] here too, [rel](../../c/Idea.md), [[../../e/Sibling]]\n" {
		t.Errorf("moved: %q", got)
	}
	checkMove(t, v, "e/Moving.md", "x/y/Idea.md")
	// Into a folder that already has a note of the same name elsewhere.
	checkMove(t, v, "c/Idea.md", "b/Plan.md")
	checkMove(t, v, "a/Plan.md", "Plan.md")
}

func TestMoveRefuses(t *testing.T) {
	v := textVault{"a.md": "[[b]]\n", "b.md": "x\n"}
	if _, err := PlanMove(v.catalog(), "a.md", "b.md"); !errors.Is(err, ErrBadEdit) {
		t.Errorf("onto an existing note: %v", err)
	}
	if _, err := PlanMove(v.catalog(), "zz.md", "q.md"); !errors.Is(err, ErrTargetNotFound) {
		t.Errorf("missing note: %v", err)
	}
	// A wikilink cannot hold '#' or '|'; the Markdown link can.
	v = textVault{"a.md": "[[b]] [m](b.md)\n", "b.md": "x\n"}
	c := v.catalog()
	plan, err := PlanMove(c, "b.md", "c#d.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := plan.Rewrite("a.md", []byte(v["a.md"])); !errors.Is(err, ErrBadEdit) {
		t.Errorf("a wikilink to a name with '#': %v", err)
	}
}

// TestMoveSampleVault moves every note of the sample vault to three places
// (a rename in place, another folder, and a name another note has) and
// checks that no link anywhere changes what it points to.
func TestMoveSampleVault(t *testing.T) {
	v := textVault{}
	root := "../../infra/sample-vault"
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = norm.NFC.String(filepath.ToSlash(rel))
		if IsHidden(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if IsNotePath(rel) && Check(data) == ErrBinary {
			return nil
		}
		v[rel] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for p := range v {
		if IsNotePath(p) {
			notes = append(notes, p)
		}
	}
	slices.Sort(notes)
	total, step := 0, 1
	if testing.Short() {
		step = 5 // a sample of the notes under -short (the race run)
	}
	for i, from := range notes {
		if i%step != 0 {
			continue
		}
		name := NameOf(from)
		for _, to := range []string{
			filepath.ToSlash(filepath.Join(filepath.Dir(from), name+" renamed.md")),
			"Moved/Deep/" + name + ".md",
			"Elsewhere/" + NameOf(notes[(i+1)%len(notes)]) + ".md",
		} {
			if _, exists := v[to]; exists || to == from {
				continue
			}
			t.Run(fmt.Sprintf("%s->%s", from, to), func(t *testing.T) {
				total += len(checkMove(t, v, from, to))
			})
		}
	}
	if total < 200/step {
		t.Errorf("only %d links rewritten over all moves", total)
	}
}
