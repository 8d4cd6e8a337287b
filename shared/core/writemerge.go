package core

// on_conflict: "merge" (write_note overwrite, apply_edits, patch_section):
// when expected_hash names an older version that history still holds, the
// caller's change, made from that version (base), is three-way merged with
// what was written since (the note now) by shared/history/merge. A clean
// merge is written, compare-and-swap on the note as read (a write landing
// meanwhile makes it merge again), and recorded with both parents; an
// unclean one is proposal-stale with the conflicting parts, and nothing is
// written.

import (
	"context"
	"errors"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/history/merge"
)

// ConflictArg is the on_conflict argument of the writes that can merge.
type ConflictArg struct {
	OnConflict string `json:"on_conflict,omitempty" jsonschema:"What to do when the note changed since expected_hash: fail (default) answers proposal-stale with current_hash; merge three-way merges your change (made from the version expected_hash names) with what was written since, by sections and frontmatter keys: a clean merge is written (merged: true, parents), conflicting changes are proposal-stale with the conflicting parts (conflicts) and nothing is written." schema:"enum=fail|merge,default=fail"`
}

// MergeInfo is what a write says of a merge it made.
type MergeInfo struct {
	Merged  bool     `json:"merged,omitempty" jsonschema:"the note had changed since expected_hash: your change was merged with what was written since"`
	Parents []string `json:"parents,omitempty" jsonschema:"a merged write's parents, version ids (note_history): the note as it was, then the version your change was made from"`
}

// mergeRetries bounds the merges of one call that lost the race to
// another write (each retry merges again with the newer note).
const mergeRetries = 64

// findRetries bounds the looks for a merge's base version that another
// process has written but not recorded yet.
const findRetries = 6

// mutateOn is mutate, merging when a.OnConflict is merge.
func (v *Vault) mutateOn(ctx context.Context, a ConflictArg, path, expected string, op history.Op, change func(c *current) ([]byte, error)) (*current, []byte, MergeInfo, error) {
	if a.OnConflict != "merge" || expected == "" {
		prev, _, data, err := v.mutate(ctx, path, expected, op, change)
		return prev, data, MergeInfo{}, err
	}
	expected = strings.ToLower(strings.TrimSpace(expected))
	for attempt := 0; ; attempt++ {
		c, err := v.readForWrite(ctx, path)
		if err != nil {
			return nil, nil, MergeInfo{}, err
		}
		var next []byte
		var base history.Version
		if c.hash == expected {
			if next, err = change(c); err != nil {
				return nil, nil, MergeInfo{}, err
			}
		} else {
			if next, base, err = v.mergeWith(ctx, c, expected, change); err != nil {
				return nil, nil, MergeInfo{}, err
			}
		}
		ch := v.change(ctx, path, op, next, c)
		ch.Merged = base.ID
		_, ver, err := v.putVersion(ctx, c, ch)
		switch {
		case err == nil:
			mi := MergeInfo{}
			if base.ID != "" {
				mi = MergeInfo{Merged: true, Parents: []string{ver.Parent, base.ID}}
			}
			return c, next, mi, nil
		case !errors.Is(err, errStale):
			return nil, nil, MergeInfo{}, err
		case attempt == mergeRetries:
			return nil, nil, MergeInfo{}, staleError(c.path, expected, v.currentHash(ctx, c.path))
		}
		if err := jitter(ctx, attempt); err != nil {
			return nil, nil, MergeInfo{}, err
		}
	}
}

// mergeWith merges the caller's change, made from the version whose hash
// is expected, with the note as read (c).
func (v *Vault) mergeWith(ctx context.Context, c *current, expected string, change func(c *current) ([]byte, error)) ([]byte, history.Version, error) {
	fail := func(reason, msg string) *Error {
		return newError(KindProposalStale, map[string]any{"argument": "expected_hash", "reason": reason, "current_hash": c.hash, "expected_hash": expected},
			"%s changed since you read it (content_hash is now %s) and %s: nothing was written. Read it again and redo your change on the new text.", c.path, c.hash, msg)
	}
	if v.History == nil {
		return nil, history.Version{}, fail("hash-mismatch", "this vault keeps no history to merge with")
	}
	// Another writer may have written the note and not recorded it yet.
	// Writers hold the path's locks (this process's, and the history's
	// lock across processes where it has one) from the write until its
	// version is recorded, so taking them once waits for those writes; a
	// history without a lock across processes is looked at again a few
	// times before saying it does not hold the version.
	bv, err := v.History.Find(ctx, c.path, expected)
	if errors.Is(err, history.ErrNotFound) {
		v.lockPaths(c.path)()
		bv, err = v.History.Find(ctx, c.path, expected)
	}
	for attempt := 0; errors.Is(err, history.ErrNotFound) && attempt < findRetries; attempt++ {
		if jerr := jitter(ctx, attempt); jerr != nil {
			return nil, history.Version{}, jerr
		}
		bv, err = v.History.Find(ctx, c.path, expected)
	}
	if err != nil {
		if errors.Is(err, history.ErrNotFound) {
			return nil, history.Version{}, fail("hash-mismatch", "history holds no version with your expected_hash to merge from")
		}
		return nil, history.Version{}, err
	}
	base, _, err := v.History.Read(ctx, c.path, bv.ID)
	if err != nil {
		return nil, history.Version{}, err
	}
	theirs, err := change(&current{path: c.path, data: base, obj: c.obj, hash: expected})
	if err != nil {
		return nil, history.Version{}, err
	}
	res := merge.Merge(base, c.data, theirs)
	if !res.Clean() {
		e := fail("merge-conflict", "your change conflicts with what was written since (conflicts)")
		e.Fields["conflicts"] = res.Conflicts
		return nil, history.Version{}, e
	}
	if err := v.tooBig("result", len(res.Text)); err != nil {
		return nil, history.Version{}, err
	}
	return res.Text, bv, nil
}
