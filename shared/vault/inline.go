package vault

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Obsidian's inline syntax as goldmark inline parsers. Each parser consumes
// its syntax into a leaf node; goldmark never runs inline parsers inside code
// spans, code blocks, HTML blocks or link destinations, so none of these
// nodes can appear there. Parse walks the resulting AST.

var (
	kindWikilink = ast.NewNodeKind("ObsidianWikilink")
	kindTag      = ast.NewNodeKind("ObsidianTag")
	kindMention  = ast.NewNodeKind("ObsidianMention")
	kindBlockID  = ast.NewNodeKind("ObsidianBlockID")
)

// obsidianInlineParsers are added to goldmark's defaults. The wikilink
// parser must run before goldmark's link parser (priority 200).
func obsidianInlineParsers() []util.PrioritizedValue {
	return []util.PrioritizedValue{
		util.Prioritized(wikilinkParser{}, 150),
		util.Prioritized(tagParser{}, 600),
		util.Prioritized(mentionParser{}, 600),
		util.Prioritized(blockIDParser{}, 600),
	}
}

// wikilinkNode is [[target#heading|alias]], [[target#^block]] or an embed
// ![[...]], as written (trimmed).
type wikilinkNode struct {
	ast.BaseInline
	Embed   bool
	Target  string
	Heading string
	Block   string
	Alias   string
	Len     int // bytes of source the link spans, from its Pos
}

func (n *wikilinkNode) Kind() ast.NodeKind { return kindWikilink }

func (n *wikilinkNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Target": n.Target, "Heading": n.Heading, "Block": n.Block, "Alias": n.Alias}, nil)
}

// display is the text Obsidian shows for the link: the alias, else
// "target > heading".
func (n *wikilinkNode) display() string {
	if n.Alias != "" {
		return n.Alias
	}
	parts := make([]string, 0, 2)
	if n.Target != "" {
		parts = append(parts, n.Target)
	}
	if n.Heading != "" {
		parts = append(parts, n.Heading)
	}
	if n.Block != "" {
		parts = append(parts, "^"+n.Block)
	}
	return strings.Join(parts, " > ")
}

type wikilinkParser struct{}

func (wikilinkParser) Trigger() []byte { return []byte{'[', '!'} }

func (wikilinkParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, _ := block.PeekLine()
	embed := len(line) > 0 && line[0] == '!'
	open := 2
	if embed {
		open = 3
	}
	if !bytes.HasPrefix(line, []byte("[[")) && !(embed && bytes.HasPrefix(line[1:], []byte("[["))) {
		return nil
	}
	// Stop at the next "[[" so that a line of many unclosed brackets
	// stays linear.
	rest := line[open:]
	if next := bytes.Index(rest, []byte("[[")); next >= 0 {
		rest = rest[:next+1]
	}
	end := bytes.Index(rest, []byte("]]"))
	if end < 0 {
		return nil
	}
	inner := line[open : open+end]
	if len(bytes.TrimSpace(inner)) == 0 {
		return nil
	}
	n := &wikilinkNode{Embed: embed}
	target := string(inner)
	if i := strings.IndexByte(target, '|'); i >= 0 {
		n.Alias = strings.TrimSpace(target[i+1:])
		target = strings.TrimSuffix(target[:i], `\`) // [[a\|b]] inside tables
	}
	if i := strings.IndexByte(target, '#'); i >= 0 {
		frag := strings.TrimSpace(target[i+1:])
		target = target[:i]
		if strings.HasPrefix(frag, "^") {
			n.Block = strings.TrimSpace(frag[1:])
		} else {
			n.Heading = frag
		}
	}
	n.Target = strings.TrimSpace(target)
	n.Len = open + end + 2
	block.Advance(n.Len)
	return n
}

// tagNode is an inline #tag; Name is as written, without '#'.
type tagNode struct {
	ast.BaseInline
	Name string
}

func (n *tagNode) Kind() ast.NodeKind { return kindTag }

func (n *tagNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Name": n.Name}, nil)
}

type tagParser struct{}

func (tagParser) Trigger() []byte { return []byte{'#'} }

func (tagParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	prev := block.PrecendingCharacter()
	if prev != '_' && isWordRune(prev) || prev == '&' || prev == '#' {
		return nil
	}
	line, seg := block.PeekLine()
	name, ok := tagName(line[1:])
	if !ok || inURL(block.Source(), seg.Start) {
		return nil
	}
	block.Advance(1 + len(name))
	return &tagNode{Name: string(name)}
}

// tagName returns the tag at the start of b (after the '#'): letters,
// digits, marks, '_', '-', '/' and emoji, trailing '/' trimmed, with at
// least one letter, mark or emoji.
func tagName(b []byte) ([]byte, bool) {
	end, named := 0, false
	for end < len(b) {
		r, size := utf8.DecodeRune(b[end:])
		if !isTagRune(r) {
			break
		}
		named = named || namesTag(r)
		end += size
	}
	name := bytes.TrimRight(b[:end], "/")
	return name, named && len(name) > 0
}

// namesTag reports whether r makes a tag a name rather than a number: a tag
// needs at least one rune that is not a digit, '_', '-' or '/'.
func namesTag(r rune) bool {
	return !unicode.IsNumber(r) && r != '_' && r != '-' && r != '/'
}

// namedTag reports whether tag holds a rune that names it (see namesTag).
func namedTag(tag string) bool {
	return strings.ContainsFunc(tag, namesTag)
}

func isTagRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) ||
		r == '_' || r == '-' || r == '/' || isEmoji(r)
}

// isEmoji accepts pictographs and the joiners and modifiers of emoji
// sequences (variation selectors are marks already).
func isEmoji(r rune) bool {
	return r >= 0x80 && (unicode.Is(unicode.So, r) || r == 0x200D || (r >= 0x1F3FB && r <= 0x1F3FF))
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// inURL reports whether offset pos of src sits inside a bare URL, that is,
// the run of non-space characters before it contains "://" or starts with
// "www.".
func inURL(src []byte, pos int) bool {
	const maxURL = 512
	start := pos
	for start > 0 && pos-start < maxURL {
		c := src[start-1]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == '<' || c == '[' || c == '"' || c == '\'' {
			break
		}
		start--
	}
	word := src[start:pos]
	return bytes.Contains(word, []byte("://")) || bytes.HasPrefix(word, []byte("www."))
}

// mentionNode is an @handle; Handle is as written, without '@'.
type mentionNode struct {
	ast.BaseInline
	Handle string
}

func (n *mentionNode) Kind() ast.NodeKind { return kindMention }

func (n *mentionNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Handle": n.Handle}, nil)
}

type mentionParser struct{}

func (mentionParser) Trigger() []byte { return []byte{'@'} }

func (mentionParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	prev := block.PrecendingCharacter()
	if isWordRune(prev) || prev == '.' {
		return nil
	}
	line, seg := block.PeekLine()
	end := 1
	for end < len(line) {
		r, size := utf8.DecodeRune(line[end:])
		if !isWordRune(r) && r != '-' {
			break
		}
		end += size
	}
	handle := bytes.TrimRight(line[1:end], "-")
	if len(handle) == 0 || inURL(block.Source(), seg.Start) {
		return nil
	}
	block.Advance(1 + len(handle))
	return &mentionNode{Handle: string(handle)}
}

// blockIDNode is a "^block-id" at the end of a paragraph line.
type blockIDNode struct {
	ast.BaseInline
	ID string
}

func (n *blockIDNode) Kind() ast.NodeKind { return kindBlockID }

func (n *blockIDNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"ID": n.ID}, nil)
}

type blockIDParser struct{}

func (blockIDParser) Trigger() []byte { return []byte{'^'} }

func (blockIDParser) Parse(parent ast.Node, block text.Reader, _ parser.Context) ast.Node {
	if k := parent.Kind(); k != ast.KindParagraph && k != ast.KindTextBlock {
		return nil
	}
	if prev := block.PrecendingCharacter(); prev != ' ' && prev != '\t' && prev != '\n' {
		return nil
	}
	line, _ := block.PeekLine()
	end := 1
	for end < len(line) && isBlockIDByte(line[end]) {
		end++
	}
	if end == 1 {
		return nil
	}
	for _, c := range line[end:] {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return nil
		}
	}
	block.Advance(end)
	return &blockIDNode{ID: string(line[1:end])}
}

func isBlockIDByte(c byte) bool {
	return c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
