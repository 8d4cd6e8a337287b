package vault

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// frontmatterBlock is the goldmark block parser that takes a note's
// opening frontmatter block (a line of three or more dashes, the YAML, the
// same line again) out of the Markdown and keeps its YAML in the parser
// context (see frontmatterYAML). Parse only uses it on notes whose block
// is closed (frontmatterEnd).
type frontmatterBlock struct{}

// frontmatterKey holds the block's YAML in the parser context.
var frontmatterKey = parser.NewContextKey()

// frontmatterNode is the block while it is parsed.
type frontmatterNode struct {
	ast.BaseBlock
	delim int          // the opening line's length
	yaml  text.Segment // the lines between the delimiters
}

var frontmatterKind = ast.NewNodeKind("Frontmatter")

// Kind implements ast.Node.
func (n *frontmatterNode) Kind() ast.NodeKind { return frontmatterKind }

// Dump implements ast.Node.
func (n *frontmatterNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// frontmatterYAML returns the YAML of the block the parse found, or nil.
func frontmatterYAML(pc parser.Context) []byte {
	b, _ := pc.Get(frontmatterKey).([]byte)
	return b
}

// Trigger implements parser.BlockParser.
func (frontmatterBlock) Trigger() []byte { return []byte{'-'} }

// Open implements parser.BlockParser: only the note's first line opens.
func (frontmatterBlock) Open(_ ast.Node, r text.Reader, _ parser.Context) (ast.Node, parser.State) {
	if line, _ := r.Position(); line > 1 {
		return nil, parser.NoChildren
	}
	line, seg := r.PeekLine()
	n := delimLen(trimEOL(line))
	if n == 0 {
		return nil, parser.NoChildren
	}
	return &frontmatterNode{delim: n, yaml: text.NewSegment(seg.Stop, seg.Stop)}, parser.NoChildren
}

// Continue implements parser.BlockParser: lines up to the closing one.
func (frontmatterBlock) Continue(node ast.Node, r text.Reader, _ parser.Context) parser.State {
	n := node.(*frontmatterNode)
	line, seg := r.PeekLine()
	if delimLen(trimEOL(line)) == n.delim {
		r.Advance(seg.Len())
		return parser.Close
	}
	n.yaml.Stop = seg.Stop
	return parser.Continue | parser.NoChildren
}

// Close implements parser.BlockParser: the YAML is kept, the node dropped.
func (frontmatterBlock) Close(node ast.Node, r text.Reader, pc parser.Context) {
	n := node.(*frontmatterNode)
	pc.Set(frontmatterKey, n.yaml.Value(r.Source()))
	node.Parent().RemoveChild(node.Parent(), node)
}

// CanInterruptParagraph implements parser.BlockParser.
func (frontmatterBlock) CanInterruptParagraph() bool { return false }

// CanAcceptIndentedLine implements parser.BlockParser.
func (frontmatterBlock) CanAcceptIndentedLine() bool { return false }

// trimEOL drops a line's ending.
func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	return line
}
