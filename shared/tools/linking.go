package tools

import "github.com/sheaf-dev/sheaf/shared/core"

func linkTools(c *core.Core) []Tool {
	out := define(Spec{
		Name:        "list_outgoing_links",
		Title:       "List a note's outgoing links",
		Description: "The wikilinks, embeds and Markdown links out of a note, resolved or not: {target, displayText, kind, heading, block, line, resolvedPath, candidates}. resolvedPath is null when the link is unresolved (a candidate to fix) or ambiguous (candidates lists the notes it could mean). Paginated.",
		Hints:       readOnly,
		Access:      reads(note("path")),
		Core:        true,
	}, c.ListOutgoingLinks)
	back := define(Spec{
		Name:        "list_backlinks",
		Title:       "List a note's backlinks",
		Description: "Every link in the vault that resolves to this note, by any spelling (path, name, alias, Markdown link): {sourcePath, sourceName, displayText, kind, line}. Paginated.",
		Hints:       readOnly,
		Access:      reads(note("path")),
		Core:        true,
	}, c.ListBacklinks)
	graph := define(Spec{
		Name:        "link_graph",
		Title:       "Local link graph",
		Description: "The link subgraph around a note: breadth-first to depth hops (default 1, capped at 5), following outbound links and inbound backlinks. Returns {center, depth, nodes, edges}.",
		Hints:       readOnly,
		Access:      reads(note("path")),
		Core:        true,
	}, c.LinkGraph)
	return []Tool{out, back, graph}
}

func relationTools(c *core.Core) []Tool {
	suggest := define(Spec{
		Name:        "suggest_links",
		Title:       "Suggest links from unlinked mentions",
		Description: "Unlinked mentions in a note: other notes' names and aliases that appear in its prose (case-insensitive, whole words; never in code, links, URLs or frontmatter) but are not linked from it yet. Names shared by two or more notes and names under 4 characters are skipped. Paginated {targetPath, name, count}, most mentioned first.",
		Hints:       readOnly,
		Access:      reads(note("path")),
	}, c.SuggestLinks)
	related := define(Spec{
		Name:        "note_relations",
		Title:       "A note's relations",
		Description: "What a note is related to, in one view: wiki links (outgoing and incoming), provenance (frontmatter derived_from_ids: sources, notes derived from it, unresolved source ids) and typed edges (frontmatter `relations: {supports: [\"[[X]]\"]}`, both directions). Name the note by id (or a >=6-character prefix) or path. include picks sections (default all); depth 1-3 follows links and provenance further. related_ids lists every related note's id (its path when it has none).",
		Hints:       readOnly,
		Access:      reads(note("path")),
	}, c.NoteRelations)
	return []Tool{suggest, related}
}

func referenceTools(c *core.Core) []Tool {
	t := define(Spec{
		Name:        "find_references",
		Title:       "Find where a value or a note is mentioned",
		Description: "Finds every place a value or a note is mentioned, across all notes.",
		Hints:       readOnly,
		Access:      reads(note("path")),
		Core:        true,
	}, c.FindReferences)
	return []Tool{t}
}
