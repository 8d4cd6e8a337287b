// Package vault is Sheaf's note model: it parses Obsidian-style Markdown
// (frontmatter, #tags, [[wikilinks]], embeds, headings, block ids, callouts,
// @mentions), splits notes into heading-aware passages, resolves links and
// keeps the Catalog of every note's metadata and the link graph.
//
// The package does no I/O of its own: callers hand it bytes and paths.
package vault

import "time"

// Note is everything Sheaf knows about one Markdown file, short of its text.
// Path is vault-relative, NFC, with forward slashes and the ".md" suffix.
type Note struct {
	Path    string   `json:"path"`
	Name    string   `json:"name"`  // file name without ".md"
	Title   string   `json:"title"` // frontmatter title, else first H1, else Name
	ID      string   `json:"id,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	// Tags are lower-cased, NFC, without '#', deduplicated, in first-seen order;
	// frontmatter tags first, then inline ones. Nested tags are kept as written
	// ("a/b"); the Catalog expands ancestors.
	Tags           []string       `json:"tags,omitempty"`
	Author         string         `json:"author,omitempty"`
	Entities       []string       `json:"entities,omitempty"`
	DerivedFromIDs []string       `json:"derived_from_ids,omitempty"`
	SourceURL      string         `json:"source_url,omitempty"`
	Frontmatter    map[string]any `json:"frontmatter,omitempty"`
	// FrontmatterError is set when the YAML block could not be parsed; the
	// note is still indexed, with the block treated as body text.
	FrontmatterError string `json:"frontmatter_error,omitempty"`

	Headings   []Heading   `json:"headings,omitempty"`
	Links      []Link      `json:"links,omitempty"`
	Blocks     []Block     `json:"blocks,omitempty"`
	Directives []Directive `json:"directives,omitempty"`
	Mentions   []Mention   `json:"mentions,omitempty"`

	// Set by the indexer from the store, not by Parse.
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
	Hash     string    `json:"hash,omitempty"` // hex SHA-256 of the file's bytes
	ETag     string    `json:"etag,omitempty"`
}

// Heading is one ATX or setext heading.
type Heading struct {
	Level int    `json:"level"`
	Title string `json:"title"` // plain text of the heading
	ID    string `json:"id"`    // the rendered anchor (see HeadingID)
	Line  int    `json:"line"`  // 1-based line in the file
}

// Link kinds.
const (
	KindWikilink = "wikilink"
	KindMarkdown = "markdown"
)

// Link is one outgoing link, stored as written and resolved at query time.
type Link struct {
	Kind    string `json:"kind"`              // KindWikilink or KindMarkdown
	Embed   bool   `json:"embed,omitempty"`   // ![[...]] or ![](...)
	Target  string `json:"target"`            // as written, heading/block split off, %-decoded for Markdown links
	Key     string `json:"key"`               // LinkKey(Target)
	Heading string `json:"heading,omitempty"` // from target#heading
	Block   string `json:"block,omitempty"`   // from target#^block
	Display string `json:"display,omitempty"` // alias after '|' or the Markdown link text
	Line    int    `json:"line"`
}

// Block is a block id ("^id" at the end of a paragraph or list item).
type Block struct {
	ID   string `json:"id"`
	Line int    `json:"line"`
}

// Directive is a "> [!ai]" (pending) or "> [!ai-done]" (done) callout.
type Directive struct {
	Line  int    `json:"line"` // line of the "[!ai]" marker
	Title string `json:"title"`
	Body  string `json:"body"`
	Done  bool   `json:"done"`
}

// Mention is an @handle in prose (not an e-mail address, not in code).
type Mention struct {
	Handle  string `json:"handle"` // lower-cased, without '@'
	Line    int    `json:"line"`
	Context string `json:"context"` // the trimmed source line
}

// Passage is a heading-aware chunk of a note: one section, split further at
// paragraph boundaries when long. Passages are the unit of section search,
// embeddings and quotes.
type Passage struct {
	Ordinal     int      `json:"ordinal"`      // 0-based position in the note
	HeadingPath []string `json:"heading_path"` // titles from the top level down; empty before the first heading
	HeadingID   string   `json:"heading_id,omitempty"`
	StartLine   int      `json:"start_line"` // 1-based, inclusive
	EndLine     int      `json:"end_line"`   // 1-based, inclusive
	Text        string   `json:"text"`       // the passage's Markdown source
	Hash        string   `json:"hash"`       // hex SHA-256 of Text (embeddings are keyed by it)
}

// Heading returns the passage's innermost heading title, or "".
func (p Passage) Heading() string {
	if len(p.HeadingPath) == 0 {
		return ""
	}
	return p.HeadingPath[len(p.HeadingPath)-1]
}
