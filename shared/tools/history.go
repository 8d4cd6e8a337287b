package tools

import "github.com/sheaf-dev/sheaf/shared/core"

// historyTools are the tools over the vault's note history
// (docs/history.md). Reading a note's past versions is a read of that note:
// a caller limited to some folders sees only the versions whose path it may
// see. restore_note writes one note (a propose-only caller's restore
// becomes a proposal); undo_transaction may write many, so it is never
// proposed and works on the whole vault.
func historyTools(c *core.Core) []Tool {
	return []Tool{
		define(Spec{
			Name:        "note_history",
			Title:       "List a note's versions",
			Description: "The versions of a note, newest first, each with its id, content hash, size, time, author (key:<id>, oauth:<sub>, local, or external for changes made outside Sheaf), tool, transaction_id and op (write, overwrite, append, edit, move, move-away, delete, restore, external). Follows moves: after the version that moved the note here come its versions at the old path. A deleted note keeps its history under its path. Paged: pass next_after as after. Read a version with read_note's version, compare two with diff_note, bring one back with restore_note.",
			Hints:       readOnly,
			Access:      reads(note("path")),
		}, c.NoteHistory),
		define(Spec{
			Name:        "diff_note",
			Title:       "Diff two versions of a note",
			Description: "Unified diff (3 lines of context) between two versions of a note (from and to, ids from note_history), or between a version and the note now (to omitted; a deleted note counts as empty). A diff too big for one answer shows whole hunks until the budget, with next_hunk to go on; hunks, added and removed always describe the whole diff.",
			Hints:       readOnly,
			Access:      reads(note("path")),
		}, c.DiffNote),
		define(Spec{
			Name:        "restore_note",
			Title:       "Restore a past version of a note",
			Description: "Make a past version (an id from note_history) the note's content again, as a new version: the versions since stay in its history, so a restore can itself be undone. A deleted or moved-away note is restored by its old path (created again). expected_hash (the note's content_hash now) makes it compare-and-swap: proposal-stale with current_hash if the note changed since you read it. Logged in log.md like every write.",
			Hints:       writeHints,
			Access:      edits(proposeQueue, note("path")),
		}, c.RestoreVersion),
		define(Spec{
			Name:        "undo_transaction",
			Title:       "Undo a transaction",
			Description: "Revert every change made with one transaction_id, as new versions: each note it changed gets back its content from before (a note it created is deleted, a note it deleted or moved away is created again, links a move rewrote are restored). If any of those notes was written since, nothing is written: proposal-stale listing the conflicting paths (conflicts). Run it with dry_run: true first to see the changes and conflicts without writing.",
			Hints:       writeHints,
			// It writes many notes, which a proposal pinned to one note's
			// base hash cannot hold; it needs the whole vault.
			Access: edits(proposeRefuse),
		}, c.UndoTransaction),
	}
}
