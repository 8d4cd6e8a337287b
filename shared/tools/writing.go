package tools

import "github.com/sheaf-dev/sheaf/shared/core"

func writeTools(c *core.Core) []Tool {
	return []Tool{
		define(Spec{
			Name:        "write_note",
			Title:       "Write a note",
			Description: "Create, overwrite or append to a Markdown note. mode create (default) makes a new note and fails with note-exists if one is there; overwrite replaces the whole note and needs expected_hash, the content_hash read_note returned; append adds content on a new line at the end (expected_hash optional; idempotency_key makes a retried append land once). A note that changed since expected_hash is not written: proposal-stale with current_hash. Notes under the vault's immutable prefixes (get_vault_info.immutablePaths) can only be created. Every write is logged in log.md, and this server's search and lists show it when the call returns (index.state). Every write is kept in the note's history (note_history; transaction_id groups calls for undo_transaction); with on_conflict: \"merge\", an overwrite made from an older version is merged with what was written since instead of failing.",
			Hints:       writeHints,
			Access:      edits(proposeQueue, note("path")),
		}, c.WriteNote),
		define(Spec{
			Name:        "apply_edits",
			Title:       "Apply find-and-replace edits",
			Description: "Surgical edits to one note: each edit's find must occur exactly once in the note (as left by the edits before it), or the whole call changes nothing and fails with edit-not-unique, saying which edit matched how many times (matches). Safer than rewriting a note: a concurrent change elsewhere in the note does not conflict. expected_hash (read_note's content_hash) makes the call fail with proposal-stale if the note changed at all, unless on_conflict: \"merge\" merges the edits (made on that version) with what was written since.",
			Hints:       writeHints,
			Access:      edits(proposeQueue, note("path")),
		}, c.ApplyEdits),
		define(Spec{
			Name:        "patch_section",
			Title:       "Patch a section",
			Description: "Edit one part of a note, everything else kept byte for byte: a section by heading path (heading_path: [\"Plan\", \"Risks\"] is the Risks heading under Plan; a heading's id from read_outline as [\"#risks-1\"] picks one of several alike), a block by its ^id, or a frontmatter key's value (content is then a YAML value). operation: replace (the section's text under its heading, the block's text, the key's value), append or prepend (at the end or start of it; for a frontmatter list, items), insert_before or insert_after (around the whole section or block). A target that does not match is target-not-found and nothing is written: a missing heading is never created; several matches are edit-not-unique with candidates.",
			Hints:       writeHints,
			Access:      edits(proposeQueue, note("path")),
		}, c.PatchSection),
		define(Spec{
			Name:        "delete_note",
			Title:       "Delete a note",
			Description: "Delete a note: it moves to the vault's trash (.sheaf/trash/<time>/<path>, restorable with `sheaf restore` or by moving the file back) and leaves the vault's lists, search and graph. Needs confirm: true (else confirmation-required). expected_hash makes it fail with proposal-stale if the note changed since read. Links to it are left as they are (lint reports them).",
			Hints:       idempotentWrites,
			Access:      edits(proposeQueue, note("path")),
		}, c.DeleteNote),
	}
}

func moveTools(c *core.Core) []Tool {
	return []Tool{define(Spec{
		Name:        "move_note",
		Title:       "Move or rename a note",
		Description: "Move or rename a note and rewrite every link that pointed to it, in every note, keeping each link's own form: a file-name link stays a file name, a path a path, a relative path is recomputed, and .md, percent-encoding, #heading, #^block, |alias, embeds and Markdown titles are kept; a link to another note that the new name would make ambiguous is lengthened to keep pointing there. Returns what it rewrote. Each note is rewritten whole or not at all, compare-and-swap on its content; the move itself is conditional on the note not changing (expected_hash: on the version you read). dry_run: true reports the rewrites without writing. Fails with note-exists if new_path is taken.",
		Hints:       idempotentWrites,
		// A move rewrites links in other notes, which a proposal pinned
		// to one note's base hash cannot hold.
		Access: edits(proposeRefuse, note("path"), note("new_path")),
	}, c.MoveNote)}
}

func pageTools(c *core.Core) []Tool {
	return []Tool{
		define(Spec{
			Name:        "complete_directive",
			Title:       "Complete a directive",
			Description: "Mark a pending > [!ai] directive done: the marker on its line becomes > [!ai-done] (nothing else changes) and any worker's lease on it is released. path and line as pending_directives or await_directives returned them; title, if given, must still match. A line that no longer holds that pending directive (the note changed) is target-not-found: list the directives again. Completing one already done succeeds with already_done: true.",
			Hints:       additiveOnce,
			Access:      edits(proposeQueue, note("path")),
		}, c.CompleteDirective),
		define(Spec{
			Name:        "file_page",
			Title:       "File an answer as a page",
			Description: "Bank an answer (from answer, or your own synthesis) as a new note: a title heading, your content, a Sources section linking every cited note (with its quote), and provenance in the frontmatter (question, derived_from paths, derived_from_ids of cited notes that have an id, filed_by and filed_at). Creates only: note-exists if path is taken. Cited notes must exist.",
			Hints:       additiveOnce,
			Access:      edits(proposeQueue, note("path")),
		}, c.FilePage),
	}
}
