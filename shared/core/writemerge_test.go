package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

const mergeBase = "---\ntitle: Plan\n---\n# Plan\n\n## Goals\n\nShip it.\n\n## Risks\n\nNone yet.\n"

func TestOnConflictMerge(t *testing.T) {
	s, v, dir := historyServer(t)
	ctx := context.Background()
	p := "Inbox/Plan.md"
	base, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: mergeBase})
	if err != nil {
		t.Fatal(err)
	}
	// Someone edits Goals; our change to Risks, made from base, merges.
	ours, err := s.PatchSection(ctx, patchIn{Path: p, HeadingPath: []string{"Plan", "Goals"}, Operation: "replace", Content: "Ship it on Friday.\n", ExpectedHash: base.ContentHash})
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, "fail (the default)", errOf(s.ApplyEdits(ctx, editsIn{Path: p, ExpectedHash: base.ContentHash, Edits: []vault.Edit{{Find: "None yet.", Replace: "Rain."}}})), KindProposalStale)
	out, err := s.ApplyEdits(ctx, editsIn{Path: p, ExpectedHash: base.ContentHash, ConflictArg: ConflictArg{"merge"}, Edits: []vault.Edit{{Find: "None yet.", Replace: "Rain."}}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(mergeBase, "Ship it.", "Ship it on Friday.", 1), "None yet.", "Rain.", 1)
	if got := readFile(t, dir, p); got != want || !out.Merged || len(out.Parents) != 2 {
		t.Fatalf("merged: %q %+v", got, out.MergeInfo)
	}
	vs := versions(t, v, p)
	if vs[0].Merged != out.Parents[1] || vs[0].Parent != out.Parents[0] || vs[1].Hash != ours.ContentHash || vs[2].Hash != base.ContentHash || vs[0].Merged != vs[2].ID {
		t.Errorf("parents %v, history:\n%s", out.Parents, describe(vs))
	}
	// A change to the same line conflicts: nothing written, the hunks said.
	before := readFile(t, dir, p)
	te := wantKind(t, "same line", errOf(s.WriteNote(ctx, WriteNoteIn{Path: p, Mode: "overwrite", ExpectedHash: base.ContentHash, ConflictArg: ConflictArg{"merge"},
		Content: strings.Replace(mergeBase, "Ship it.", "Ship it never.", 1)})), KindProposalStale)
	if te != nil && (te.Fields["reason"] != "merge-conflict" || te.Fields["conflicts"] == nil) {
		t.Errorf("conflict fields: %v", te.Fields)
	}
	if readFile(t, dir, p) != before {
		t.Error("a conflicting merge wrote")
	}
	// A hash history never held cannot be merged from.
	wantKind(t, "unknown base", errOf(s.WriteNote(ctx, WriteNoteIn{Path: p, Mode: "overwrite", ExpectedHash: strings.Repeat("a", 64), ConflictArg: ConflictArg{"merge"}, Content: "x"})), KindProposalStale)
	wantKind(t, "merge with create", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/New.md", ConflictArg: ConflictArg{"merge"}, Content: "x"})), KindArgsInvalid)
}

// Eight writers append their lines to one note, each from the version it
// read, with on_conflict merge: every line lands once.
func TestMergeRacingWriters(t *testing.T) {
	s, v, dir := historyServer(t)
	ctx := context.Background()
	p := "Inbox/Race.md"
	base, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# Race\n\n- start\n"})
	if err != nil {
		t.Fatal(err)
	}
	const writers, lines = 8, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*lines)
	for w := range writers {
		wg.Go(func() {
			hash, text := base.ContentHash, "# Race\n\n- start\n"
			for i := range lines {
				next := text + fmt.Sprintf("- writer %d line %d\n", w, i)
				out, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Mode: "overwrite", ExpectedHash: hash, ConflictArg: ConflictArg{"merge"}, Content: next})
				if err != nil {
					errs <- fmt.Errorf("writer %d line %d: %v", w, i, err)
					return
				}
				// Go on from what this writer wrote (not reading the note
				// again): a merged write's text is the merge, read back
				// from history by its hash.
				hash, text = out.ContentHash, next
				if out.Merged {
					ver, err := v.History.Find(ctx, p, hash)
					if err != nil {
						errs <- err
						return
					}
					data, _, err := v.History.Read(ctx, p, ver.ID)
					if err != nil {
						errs <- err
						return
					}
					text = string(data)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := readFile(t, dir, p)
	for w := range writers {
		for i := range lines {
			if n := strings.Count(got, fmt.Sprintf("- writer %d line %d\n", w, i)); n != 1 {
				t.Errorf("writer %d line %d is there %d times", w, i, n)
			}
		}
	}
	if !strings.HasPrefix(got, "# Race\n\n- start\n") {
		t.Errorf("the note: %q", got)
	}
	merged := 0
	for _, ver := range versions(t, v, p) {
		if ver.Merged != "" {
			merged++
		}
	}
	t.Logf("%d writes, %d merged", writers*lines, merged)
}
