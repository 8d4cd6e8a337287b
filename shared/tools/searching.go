package tools

import (
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
)

func searchTools(c *core.Core) []Tool {
	t := define(Spec{
		Name:        "search",
		Title:       "Search notes",
		Description: "Full-text search across note titles, aliases, headings, tags and bodies (BM25). Results come best first: {path, title, snippet, score}; score is the BM25 rank, lower (more negative) is better. Filters (tags, author, path_prefix, entities) scope the ranking. Agents asking in sentences should pass match: \"any\". mode semantic ranks by meaning (cosine, higher is better) and hybrid fuses BM25 with it (0-1, higher is better); both need an embeddings provider. mode graph follows wiki-links. Every hit carries its provenance from the catalog: updated_at, is_stale (its frontmatter expires_at is past), and source_url, derived_from_ids and expires_at when the note has them; include: [\"metadata\"] adds its frontmatter as metadata.",
		Hints:       readOnly,
		Access:      reads(),
		Core:        true,
	}, c.Search)
	return []Tool{t}
}

func searchReadTools(c *core.Core) []Tool {
	t := define(Spec{
		Name:        "search_and_read",
		Title:       "Search and read notes",
		Description: "Search a vault and return the top-k full notes in one call, instead of a search followed by read_note. Ranking is any-term BM25 (stopwords dropped, title and heading matches weighted up), the lane for questions in sentences, fused with semantic (vector) ranking when an embeddings provider is configured; quotes, OR, NOT or a leading - switch to search's query language (BM25 only). mode=note (default) returns each note's frontmatter and body; mode=section returns the heading section each hit matched. Every item carries chunk_id, the chunk it was ranked by, or its first when it was found by its name (pass it to record_retrieval_feedback). k is at most 20. The result is held under the server's byte budget, shared across the notes returned in rank order (each gets an equal share of what is left, so what a short note leaves goes to the ones after it): a note over its share is cut and marked truncated: true with size_bytes (its full size); fetch it whole with read_note. Anything that still does not fit comes back with next_cursor: repeat the same call plus cursor until it is null. An item that cannot be returned is a per-item error with its rank. A cursor is bound to the caller, the tool and these exact arguments, and expires. response_format=concise returns {path, rank, score, body, content_hash, chunk_id} per note, without frontmatter; size_bytes and truncated appear only on a truncated item, and section_resolved only when false. In the detailed format every item also carries updated_at and is_stale, and source_url, derived_from_ids and expires_at when the note has them.",
		Hints:       hints{readOnly: true},
		Access:      reads(),
		Core:        true,
	}, c.SearchAndRead)
	return []Tool{t, feedbackTool(c)}
}

func feedbackTool(c *core.Core) Tool {
	return define(Spec{
		Name:        "record_retrieval_feedback",
		Title:       "Record retrieval feedback",
		Description: "Record whether a retrieved chunk was useful: pass the chunk_id of a search_and_read item, useful true or false, and optionally the query and a short note. Each call is stored as its own record in the vault's .sheaf/feedback/ folder, to evaluate and tune retrieval. Returns {recorded: true, chunk_id}.",
		Hints:       hints{},
		Access:      access{scope: auth.ScopeRead, paths: []pathArg{{"chunk_id", argChunk}}, own: true},
	}, c.RecordRetrievalFeedback)
}

func semanticTools(c *core.Core) []Tool {
	// The tools read the vault (and write only derived state): read-only,
	// closed-world, like search.
	paid := readOnly
	return []Tool{
		define(Spec{
			Name:        "semantic_search",
			Title:       "Semantic search",
			Description: "Vector search: finds notes by meaning, not just keyword overlap, by embedding the query and ranking notes by cosine similarity of their best passage or of their name (title and aliases). Use search for exact terms, semantic_search for \"notes about X\". hybrid: true fuses vector and BM25 ranking (weighted score fusion). Returns the same {path, title, snippet, score} page shape as search; score is the cosine similarity, or the fused score (0-1) in hybrid mode: higher is better. Changed notes are re-embedded before the query. Requires an embeddings provider; without one the error kind is unsupported (not configured). Every hit carries its provenance from the catalog: updated_at, is_stale (its frontmatter expires_at is past), and source_url, derived_from_ids and expires_at when the note has them; include: [\"metadata\"] adds its frontmatter as metadata.",
			Hints:       paid,
			Access:      reads(),
			Paid:        true,
			Needs:       Needs{Embeddings: true},
		}, c.SemanticSearch),
		define(Spec{
			Name:        "related_notes",
			Title:       "Related notes",
			Description: "Notes semantically nearest to a given note that it is not already linked to (either direction): a meaning-based \"suggest links\". Returns {path, title, snippet, score} (cosine of the note's mean passage vector with each other note's nearest passage or name), the note itself and already-linked notes excluded. Requires an embeddings provider.",
			Hints:       paid,
			Access:      reads(note("path")),
			Paid:        true,
			Needs:       Needs{Embeddings: true},
		}, c.RelatedNotes),
		define(Spec{
			Name:        "find_duplicates",
			Title:       "Find near-duplicate notes",
			Description: "Near-duplicate pages: every pair of notes whose embeddings (the mean of each note's passage vectors) reach a cosine threshold (default 0.9), highest similarity first. Merge candidates for a health pass. Compares every pair: fine up to a few thousand notes. Requires an embeddings provider.",
			Hints:       paid,
			Access:      reads(),
			Paid:        true,
			Needs:       Needs{Embeddings: true},
		}, c.FindDuplicates),
		define(Spec{
			Name:        "topic_map",
			Title:       "Topic map",
			Description: "Cluster the vault by embedding similarity into topics (notes joined when their mean passage vectors reach threshold, default 0.85; clusters are the connected components) and flag clusters with no hub page, so you can create an index note that threads them into the graph. Returns {clusters, missingHubs}; each cluster is {notes, size, hasHub, sharedTags}; hasHub means a member is linked to by at least two others. Requires an embeddings provider.",
			Hints:       paid,
			Access:      reads(),
			Paid:        true,
			Needs:       Needs{Embeddings: true},
		}, c.TopicMap),
		define(Spec{
			Name:        "reindex_embeddings",
			Title:       "Reindex embeddings",
			Description: "Force a reconcile of the semantic index: re-embeds new and changed notes (only passages whose text changed go to the provider) and prunes deleted ones. Rarely needed: semantic tools do this before every query. Returns {notes, passages}: how many were (re)embedded. Requires an embeddings provider.",
			Hints:       paid,
			Access:      access{scope: auth.ScopeAdmin, whole: true, own: true},
			Paid:        true,
			Needs:       Needs{Embeddings: true},
		}, c.ReindexEmbeddings),
	}
}
