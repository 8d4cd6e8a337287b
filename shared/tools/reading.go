package tools

import "github.com/sheaf-dev/sheaf/shared/core"

func vaultTools(c *core.Core) []Tool {
	t := define(Spec{
		Name:        "get_vault_info",
		Title:       "Vault info",
		Description: "Vault root, note count, index time, the AGENTS.md brief and immutable prefixes, plus what you can do (capabilities) and whether work is waiting or indexing is still running (liveness). Call it first on connect.",
		Hints:       readOnly,
		Access:      reads(),
		Core:        true,
	}, c.VaultInfo)
	return []Tool{t}
}

func noteTools(c *core.Core) []Tool {
	list := define(Spec{
		Name:        "list_notes",
		Title:       "List notes",
		Description: "List notes in the vault, optionally under a folder and filtered by tags, author, modification time, title, content, frontmatter metadata or entities. Paginated: {items, total, offset, limit}. Every item carries its provenance from the catalog: updated_at, is_stale (its frontmatter expires_at is past), and source_url, derived_from_ids and expires_at when the note has them; include: [\"metadata\"] adds its frontmatter as metadata.",
		Hints:       readOnly,
		Access:      reads(folder("path")),
		Core:        true,
	}, c.ListNotes)
	read := define(Spec{
		Name:        "read_note",
		Title:       "Read a note",
		Description: "Read one note by vault-relative path or by frontmatter id (or an unambiguous prefix of at least 6 characters): content, frontmatter, tags, resolved outgoing links, stat and content_hash (pass it back to writes for compare-and-swap). max_length cuts the content at a paragraph or sentence boundary and sets truncated.",
		Hints:       readOnly,
		Access:      reads(note("path")),
		Core:        true,
	}, c.ReadNote)
	outline := define(Spec{
		Name:        "read_outline",
		Title:       "Read a note's outline",
		Description: "The note's heading outline as {level, title, id, line}; id is the rendered heading anchor. Much cheaper than read_note when you only need structure.",
		Hints:       readOnly,
		Access:      reads(note("path")),
		Core:        true,
	}, c.ReadOutline)
	return []Tool{list, read, outline}
}

func attachmentTools(c *core.Core) []Tool {
	list := define(Spec{
		Name:        "list_attachments",
		Title:       "List attachments",
		Description: "List the non-Markdown files in the vault (images, PDFs, data) as {path, size, mimeType}: how to find out which referenced files exist. Paginated.",
		Hints:       readOnly,
		Access:      reads(folder("path")),
	}, c.ListAttachments)
	read := define(Spec{
		Name:        "read_attachment",
		Title:       "Read an attachment",
		Description: "Read one non-Markdown file (image, PDF, data) as base64, after read_note shows a reference to it. A file too big for one answer comes in pages (offset, next_offset); files over the server's cap are rejected to protect the context window.",
		Hints:       readOnly,
		Access:      reads(note("path")),
	}, c.ReadAttachment)
	return []Tool{list, read}
}

func tagTools(c *core.Core) []Tool {
	tags := define(Spec{
		Name:        "list_tags",
		Title:       "List tags",
		Description: "Every tag in the vault (frontmatter and inline #tags, nested tags with their ancestors) with how many notes carry it. Paginated: {items: [{tag, count}], total}.",
		Hints:       readOnly,
		Access:      reads(),
		Core:        true,
	}, c.ListTags)
	byTag := define(Spec{
		Name:        "notes_by_tag",
		Title:       "Notes by tag",
		Description: "The notes carrying a tag or any nested descendant of it. Paginated note summaries. Every item carries its provenance from the catalog: updated_at, is_stale (its frontmatter expires_at is past), and source_url, derived_from_ids and expires_at when the note has them; include: [\"metadata\"] adds its frontmatter as metadata.",
		Hints:       readOnly,
		Access:      reads(),
		Core:        true,
	}, c.NotesByTag)
	folders := define(Spec{
		Name:        "list_folders",
		Title:       "List folders",
		Description: "All folder paths in the vault, empty ones too, excluding hidden folders such as .obsidian and .trash.",
		Hints:       readOnly,
		Access:      reads(folder("path")),
	}, c.ListFolders)
	return []Tool{tags, byTag, folders}
}
