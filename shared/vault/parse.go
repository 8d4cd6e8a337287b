package vault

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// Parsed is one parsed note: its metadata, its text after the frontmatter
// and its passages.
type Parsed struct {
	Note     Note
	Body     string // the file text without the frontmatter block
	Passages []Passage
}

// maxFrontmatter bounds the YAML decoded: decoding a mapping is quadratic
// in its number of keys.
const maxFrontmatter = 64 << 10

var (
	// mdParser parses notes that open with a closed frontmatter block;
	// plainParser parses all others, so that an unclosed "---" is a
	// thematic break rather than a frontmatter block swallowing the note.
	mdParser    = newParser(true)
	plainParser = newParser(false)
)

func newParser(withFrontmatter bool) parser.Parser {
	blocks := parser.DefaultBlockParsers()
	if withFrontmatter {
		blocks = append(blocks, util.Prioritized(frontmatterBlock{}, 0))
	}
	return parser.NewParser(
		parser.WithBlockParsers(blocks...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(), obsidianInlineParsers()...)...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
}

// Parse extracts a note's metadata, body and passages from its bytes.
// It never fails: invalid UTF-8 is replaced with U+FFFD, a bad YAML block
// sets Note.FrontmatterError, and anything else is parsed as well as it
// can be. Size, Modified, Hash and ETag are left for the caller.
func Parse(path string, src []byte) (p *Parsed) {
	defer func() {
		if r := recover(); r != nil {
			// Defence in depth: a parser bug must not take down the indexer.
			p = &Parsed{Note: Note{Path: path, Name: NameOf(path), Title: NameOf(path)}, Body: strings.ToValidUTF8(string(src), "\uFFFD")}
			p.Note.FrontmatterError = fmt.Sprintf("parse failed: %v", r)
		}
	}()
	return parse(path, src, nil)
}

// Body is Parse's Body without the Markdown parse: the text after the
// frontmatter block, for a caller that needs nothing else of the note.
func Body(src []byte) string {
	src = cleanSource(src)
	return string(src[frontmatterEnd(src):])
}

// cleanSource is src as Parse reads it: invalid UTF-8 replaced with
// U+FFFD, a leading byte-order mark dropped.
func cleanSource(src []byte) []byte {
	if !utf8.Valid(src) {
		src = []byte(strings.ToValidUTF8(string(src), "\uFFFD"))
	}
	return bytes.TrimPrefix(src, []byte("\uFEFF"))
}

// parse is Parse; with spans non-nil it also records where the note's
// headings, block ids and links lie in src (see ParseSpans).
func parse(path string, src []byte, spans *Spans) *Parsed {
	src = cleanSource(src)

	x := &extractor{
		src:   src,
		lines: newLineIndex(src),
		ids:   newHeadingIDs(),
		seen:  map[string]bool{},
		spans: spans,
	}
	x.note.Path = path
	x.note.Name = NameOf(path)
	bodyStart := frontmatterEnd(src)
	if spans != nil {
		spans.BodyStart = bodyStart
	}

	// The goldmark parse works on a copy with CRLF turned into " \n" and
	// %%comments%% blanked out: offsets and line numbers stay those of src.
	x.work = bytes.Clone(src)
	for i := bodyStart; i+1 < len(x.work); i++ {
		if x.work[i] == '\r' && x.work[i+1] == '\n' {
			x.work[i] = ' '
		}
	}
	maskComments(x.work, bodyStart)
	limitNesting(x.work, bodyStart)
	limitOpeners(x.work, bodyStart)

	pc := parser.NewContext(parser.WithIDs(x.ids))
	p := plainParser
	if bodyStart > 0 {
		p = mdParser
	}
	doc := p.Parse(text.NewReader(x.work), parser.WithContext(pc))
	switch {
	case bodyStart > maxFrontmatter:
		x.note.FrontmatterError = fmt.Sprintf("frontmatter is larger than %d KiB", maxFrontmatter>>10)
	case bodyStart > 0:
		if data := frontmatterYAML(pc); data != nil {
			x.frontmatter(data)
		}
	}
	x.pc = pc
	x.walk(doc)
	if x.note.Title == "" {
		x.note.Title = x.note.Name
	}
	return &Parsed{
		Note:     x.note,
		Body:     string(src[bodyStart:]),
		Passages: splitPassages(src, bodyStart, x.sections, x.lines),
	}
}

// extractor collects a note's metadata from its goldmark AST.
type extractor struct {
	src, work []byte // the text and its parse copy (same offsets)
	lines     lineIndex
	ids       *headingIDs
	pc        parser.Context
	note      Note
	seen      map[string]bool // tags already added
	sections  []sectionHead   // top-level headings, in order
	spans     *Spans          // nil unless ParseSpans asked for them
}

func (x *extractor) addTag(t string) {
	t = NormalizeTag(t)
	if !namedTag(t) {
		return // digits alone: not a tag in Obsidian (#1984, frontmatter tags: [42]), nor here
	}
	if !x.seen[t] {
		x.seen[t] = true
		x.note.Tags = append(x.note.Tags, t)
	}
}

// line returns the 1-based line of a node, falling back to its ancestors.
func (x *extractor) line(n ast.Node) int {
	for ; n != nil; n = n.Parent() {
		if pos := n.Pos(); pos >= 0 {
			return x.lines.line(pos)
		}
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return x.lines.line(n.Lines().At(0).Start)
		}
	}
	return 1
}

func (x *extractor) walk(doc ast.Node) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			x.heading(n, n.Parent() == doc)
		case *ast.Blockquote:
			x.directive(n)
		case *ast.Link:
			x.markdownLink(n, string(n.Destination), false)
		case *ast.Image:
			x.markdownLink(n, string(n.Destination), true)
		case *wikilinkNode:
			x.note.Links = append(x.note.Links, Link{
				Kind: KindWikilink, Embed: n.Embed, Target: n.Target, Key: LinkKey(n.Target),
				Heading: n.Heading, Block: n.Block, Display: n.Alias, Line: x.line(n),
			})
			x.spanWikilink(n)
		case *tagNode:
			x.addTag(n.Name)
		case *mentionNode:
			line := x.line(n)
			x.note.Mentions = append(x.note.Mentions, Mention{
				Handle:  norm.NFC.String(strings.ToLower(n.Handle)),
				Line:    line,
				Context: mentionContext(x.lines.text(x.src, line), x.lines.start(line), n.Pos()),
			})
		case *blockIDNode:
			x.note.Blocks = append(x.note.Blocks, Block{ID: n.ID, Line: x.line(n)})
			x.spanBlock(n)
		case *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock, *ast.CodeSpan:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}

// maxContext bounds a mention's context: a longer line is cut to about
// this many bytes on each side of the mention.
const maxContext = 240

// mentionContext returns the trimmed line holding a mention at offset pos,
// cut around the mention when the line is very long.
func mentionContext(line []byte, lineStart, pos int) string {
	if len(line) > 2*maxContext && pos >= lineStart {
		at := pos - lineStart
		from, to := max(at-maxContext, 0), min(at+maxContext, len(line))
		for from > 0 && !utf8.RuneStart(line[from]) {
			from--
		}
		for to < len(line) && !utf8.RuneStart(line[to]) {
			to++
		}
		line = line[from:to]
	}
	return strings.TrimSpace(string(line))
}

func (x *extractor) heading(n *ast.Heading, top bool) {
	title := plainText(n, x.work)
	id := string(x.pc.IDs().Generate([]byte(title), ast.KindHeading))
	n.SetAttributeString("id", []byte(id))
	h := Heading{Level: n.Level, Title: title, ID: id, Line: x.line(n)}
	x.note.Headings = append(x.note.Headings, h)
	x.spanHeading(n, top)
	if h.Level == 1 && x.note.Title == "" && title != "" {
		x.note.Title = title // frontmatter titles are decoded before the walk
	}
	if top {
		x.sections = append(x.sections, sectionHead{start: x.lines.start(h.Line), level: h.Level, title: title, id: id})
	}
}

// schemeRE matches a URL scheme such as "https:", "mailto:" or "obsidian:".
var schemeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*:`) }) // compiled on first use

// markdownLink records [text](dest) or ![alt](dest) when dest is local.
func (x *extractor) markdownLink(n ast.Node, dest string, embed bool) {
	dest = strings.TrimSpace(dest)
	if dest == "" || dest[0] == '#' || strings.HasPrefix(dest, "//") || schemeRE().MatchString(dest) {
		return
	}
	target, frag, _ := strings.Cut(dest, "#")
	l := Link{Kind: KindMarkdown, Embed: embed, Target: unescapePath(target), Display: plainText(n, x.work), Line: x.line(n)}
	if frag = unescapePath(frag); strings.HasPrefix(frag, "^") {
		l.Block = frag[1:]
	} else {
		l.Heading = frag
	}
	l.Key = LinkKey(l.Target)
	x.note.Links = append(x.note.Links, l)
	x.spanMarkdownLink(n, dest)
}

func unescapePath(s string) string {
	if u, err := url.PathUnescape(s); err == nil && utf8.ValidString(u) {
		return u
	}
	return s
}

// calloutRE matches the first line of a callout: type, fold marker, title.
var calloutRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[!([A-Za-z0-9_-]+)\]([+-]?)(.*)$`) }) // compiled on first use

// directive records a "> [!ai]" or "> [!ai-done]" callout.
func (x *extractor) directive(q *ast.Blockquote) {
	para, ok := q.FirstChild().(*ast.Paragraph)
	if !ok || para.Lines().Len() == 0 {
		return
	}
	first := para.Lines().At(0)
	m := calloutRE().FindSubmatch(bytes.TrimRight(x.work[first.Start:first.Stop], " \t\r\n"))
	if m == nil {
		return
	}
	kind := strings.ToLower(string(m[1]))
	if kind != "ai" && kind != "ai-done" {
		return
	}
	line := x.lines.line(first.Start)
	depth := 1
	for p := q.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == ast.KindBlockquote {
			depth++
		}
	}
	last := x.lastLine(q)
	body := make([]string, 0, last-line)
	for l := line + 1; l <= last; l++ {
		body = append(body, stripQuote(string(x.lines.text(x.src, l)), depth))
	}
	x.note.Directives = append(x.note.Directives, Directive{
		Line:  line,
		Title: strings.TrimSpace(string(m[3])),
		Body:  strings.TrimSpace(strings.Join(body, "\n")),
		Done:  kind == "ai-done",
	})
}

// lastLine is the last line of a blockquote: its last content line, then
// any following lines that still carry a '>' marker (closing fences,
// empty quote lines).
func (x *extractor) lastLine(q ast.Node) int {
	last := x.line(q)
	_ = ast.Walk(q, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && n.Type() == ast.TypeBlock {
			if lines := n.Lines(); lines.Len() > 0 {
				last = max(last, x.lines.line(max(lines.At(lines.Len()-1).Stop-1, 0)))
			}
		}
		return ast.WalkContinue, nil
	})
	for last < x.lines.count() && bytes.HasPrefix(bytes.TrimLeft(x.lines.text(x.work, last+1), " \t"), []byte(">")) {
		last++
	}
	return last
}

// stripQuote removes depth levels of '>' markers from a blockquote line.
func stripQuote(s string, depth int) string {
	s = strings.TrimRight(s, "\r")
	for range depth {
		t := strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(t, ">") {
			break
		}
		s = t[1:]
		if strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t") {
			s = s[1:]
		}
	}
	return s
}

// plainText renders a node's inline content as plain text: emphasis and
// markup dropped, wikilinks shown as Obsidian shows them, escapes and
// entities resolved.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	writePlain(&b, n, src)
	return strings.TrimSpace(strings.ReplaceAll(b.String(), "\x00", ""))
}

func writePlain(b *strings.Builder, n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(src)
			if bytes.IndexByte(v, '\\') >= 0 || bytes.IndexByte(v, '&') >= 0 {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			b.Write(v)
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if t, ok := t.(*ast.Text); ok {
					b.Write(t.Segment.Value(src))
				}
			}
		case *ast.AutoLink:
			b.Write(c.Label(src))
		case *ast.RawHTML, *blockIDNode:
		case *wikilinkNode:
			b.WriteString(c.display())
		case *tagNode:
			b.WriteString("#" + c.Name)
		case *mentionNode:
			b.WriteString("@" + c.Handle)
		default:
			writePlain(b, c, src)
		}
	}
}

// frontmatterEnd returns the offset just past a frontmatter block at the
// start of src, or 0 when there is none. It follows the rule of
// go.abhg.dev/goldmark/frontmatter: an opening line of three or more '-'
// and a closing line of exactly as many. An unclosed block is no block.
func frontmatterEnd(src []byte) int {
	line, off := nextLine(src, 0)
	n := delimLen(line)
	if n == 0 {
		return 0
	}
	for off < len(src) {
		line, off = nextLine(src, off)
		if delimLen(line) == n {
			return off
		}
	}
	return 0
}

// nextLine returns the line starting at off (without its line ending) and
// the offset of the next line.
func nextLine(src []byte, off int) ([]byte, int) {
	end := bytes.IndexByte(src[off:], '\n')
	if end < 0 {
		return src[off:], len(src)
	}
	return src[off : off+end], off + end + 1
}

func delimLen(line []byte) int {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) < 3 || len(bytes.TrimLeft(line, "-")) > 0 {
		return 0
	}
	return len(line)
}

// frontmatter decodes the YAML block into Note fields.
func (x *extractor) frontmatter(data []byte) {
	var raw any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		x.note.FrontmatterError = err.Error()
		return
	}
	if raw == nil {
		return
	}
	fm, ok := jsonValue(raw, 0).(map[string]any)
	if !ok {
		x.note.FrontmatterError = "frontmatter is not a YAML mapping"
		return
	}
	n := &x.note
	n.Frontmatter = fm
	n.Title = scalarString(fm["title"])
	n.ID = scalarString(fm["id"])
	n.Author = strings.Join(stringList(fm["author"]), ", ")
	n.SourceURL = scalarString(fm["source_url"])
	n.Aliases = append(stringList(fm["aliases"]), stringList(fm["alias"])...)
	n.Entities = stringList(fm["entities"])
	n.DerivedFromIDs = stringList(fm["derived_from_ids"])
	for _, key := range []string{"tags", "tag"} {
		for _, t := range stringList(fm[key]) {
			for _, f := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
				x.addTag(f)
			}
		}
	}
}

// maxDepth bounds the nesting of frontmatter values kept.
const maxDepth = 64

// jsonValue turns a decoded YAML value into one encoding/json accepts:
// string-keyed maps, slices, strings, numbers, bools and nil, with times as
// RFC 3339 strings and non-finite floats as strings.
func jsonValue(v any, depth int) any {
	if depth > maxDepth {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = jsonValue(e, depth+1)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonValue(e, depth+1)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = jsonValue(e, depth+1)
		}
		return s
	case time.Time:
		return v.Format(time.RFC3339)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		return v
	case nil, string, bool, int, int64, uint64:
		return v
	case []byte:
		return string(v)
	default:
		return fmt.Sprint(v)
	}
}

// scalarString returns a frontmatter scalar as a trimmed string, or "".
func scalarString(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case int, int64, uint64, bool:
		return fmt.Sprint(v)
	}
	return ""
}

// stringList reads a frontmatter value that may be a list or one scalar,
// dropping empty entries.
func stringList(v any) []string {
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	var out []string
	for _, item := range items {
		if s := scalarString(item); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// maskComments blanks %%Obsidian comments%% in b from offset from on,
// keeping line breaks so offsets and line numbers do not move. Comments
// may span lines; an unclosed one runs to the end, as in Obsidian. "%%"
// inside fenced code or a code span opens nothing. A line left with no
// text is blanked with spaces; elsewhere comments become NUL bytes, which
// goldmark treats as text, so "%%x%% #tag" does not turn into an indented
// code block.
func maskComments(b []byte, from int) {
	if !bytes.Contains(b[from:], []byte("%%")) {
		return
	}
	var fence fenceState
	inComment := false
	for off := from; off < len(b); {
		line, next := nextLine(b, off)
		off = next
		if !inComment && fence.code(line) {
			continue
		}
		masked := inComment
		for i := 0; i < len(line); {
			if inComment {
				j := bytes.Index(line[i:], []byte("%%"))
				if j < 0 {
					fillBytes(line[i:], 0)
					break
				}
				fillBytes(line[i:i+j+2], 0)
				i += j + 2
				inComment = false
				continue
			}
			switch {
			case line[i] == '`':
				i = skipCodeSpan(line, i)
			case line[i] == '%' && i+1 < len(line) && line[i+1] == '%':
				fillBytes(line[i:i+2], 0)
				i += 2
				inComment, masked = true, true
			default:
				i++
			}
		}
		if masked && len(bytes.Trim(line, "\x00 \t\r")) == 0 {
			fillBytes(line, ' ')
		}
	}
}

// maxPrefix bounds the container markers (quotes, list bullets,
// indentation) goldmark sees at the start of a line: its block parsing is
// quadratic in nesting depth, so "> > > ..." a hundred thousand deep would
// take minutes. Markers beyond the bound are blanked in the parse copy.
const maxPrefix = 256

func limitNesting(b []byte, from int) {
	for off := from; off < len(b); {
		line, next := nextLine(b, off)
		off = next
		n := 0
		for n < len(line) && strings.IndexByte(" \t>-*+", line[n]) >= 0 {
			n++
		}
		if n > maxPrefix {
			fillBytes(line[maxPrefix:n], ' ')
		}
	}
}

// maxOpeners bounds the link and emphasis openers ('[', '(', '<', '*', '_')
// goldmark sees in one paragraph: its inline parsing is quadratic in
// them (each closer scans back over the openers left), so a megabyte of
// "[a](" or "*a_" would take minutes. Two things count less, as goldmark
// parses them: each list item is a paragraph of its own, and a '[' closed
// on its line at a depth of at most two (a [[wikilink]] or [a link]) is
// no opener left. So a map of content, hundreds of [[links]] in one list
// or one run of lines, keeps them. In a paragraph (a run of non-blank
// lines, or one list item) with more, the link and emphasis delimiters
// are blanked in the parse copy: it still yields its tags and mentions,
// but no links.
const maxOpeners = 1024

func limitOpeners(b []byte, from int) {
	start, openers := -1, 0 // the current paragraph
	flush := func(end int) {
		if start >= 0 && openers > maxOpeners {
			for i := start; i < end; i++ {
				switch b[i] {
				case '[', ']', '(', ')', '<', '>', '*', '_', '!':
					b[i] = ' '
				}
			}
		}
		start, openers = -1, 0
	}
	for off := from; off < len(b); {
		line, next := nextLine(b, off)
		switch {
		case len(bytes.TrimSpace(line)) == 0:
			flush(off)
		case listItem(line):
			flush(off)
			start = off
		case start < 0:
			start = off
		}
		if len(bytes.TrimSpace(line)) > 0 {
			openers += openersOf(line)
		}
		off = next
	}
	flush(len(b))
}

// listItem reports whether line starts a list item ("- ", "* ", "+ ",
// "1. ", "1) ", indented or not).
func listItem(line []byte) bool {
	l := bytes.TrimLeft(line, " \t")
	if len(l) >= 2 && (l[0] == '-' || l[0] == '*' || l[0] == '+') && (l[1] == ' ' || l[1] == '\t') {
		return true
	}
	i := 0
	for i < len(l) && i < 9 && '0' <= l[i] && l[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(l) && (l[i] == '.' || l[i] == ')') && (l[i+1] == ' ' || l[i+1] == '\t')
}

// openersOf counts the openers of one line for limitOpeners: every '(',
// '<', '*' and '_', and every '[' but those closed on the line at a depth
// of at most two. An escaped bracket is no bracket.
func openersOf(line []byte) int {
	n, depth, open := 0, 0, 0 // open: '[' at depth <= 2 not yet closed
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '\\':
			i++ // the next byte is escaped
		case '(', '<', '*', '_':
			n++
		case '[':
			depth++
			if depth > 2 {
				n++
			} else {
				open++
			}
		case ']':
			if depth > 0 {
				if depth <= 2 {
					open--
				}
				depth--
			}
		}
	}
	return n + open
}

func fillBytes(b []byte, c byte) {
	for i := range b {
		b[i] = c
	}
}

// skipCodeSpan returns the offset after the code span opening at line[i],
// or after the backtick run if the span does not close on this line.
func skipCodeSpan(line []byte, i int) int {
	n := 0
	for i+n < len(line) && line[i+n] == '`' {
		n++
	}
	for j := i + n; j < len(line); {
		if line[j] != '`' {
			j++
			continue
		}
		m := 0
		for j+m < len(line) && line[j+m] == '`' {
			m++
		}
		if m == n {
			return j + m
		}
		j += m
	}
	return i + n
}

// fenceState tracks fenced code blocks line by line.
type fenceState struct {
	char byte // '`' or '~' while inside a fence, else 0
	n    int  // length of the opening fence
}

// code reports whether line is part of a fenced code block (fence lines
// included) and advances the state. Indentation is not checked, so fences
// inside list items count too.
func (f *fenceState) code(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	if f.char != 0 {
		if n := runLen(t, f.char); n >= f.n && len(bytes.TrimSpace(t[n:])) == 0 {
			f.char = 0
		}
		return true
	}
	if len(t) == 0 || (t[0] != '`' && t[0] != '~') {
		return false
	}
	if n := runLen(t, t[0]); n >= 3 {
		f.char, f.n = t[0], n
		return true
	}
	return false
}

func runLen(b []byte, c byte) int {
	n := 0
	for n < len(b) && b[n] == c {
		n++
	}
	return n
}

// lineIndex maps byte offsets to 1-based line numbers.
type lineIndex []int // offsets of line starts; lineIndex[0] == 0

func newLineIndex(src []byte) lineIndex {
	starts := make(lineIndex, 1, bytes.Count(src, []byte("\n"))+1)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// count is the number of lines (a final line ending opens an empty line).
func (li lineIndex) count() int { return len(li) }

// line returns the 1-based line holding offset off.
func (li lineIndex) line(off int) int {
	return sort.Search(len(li), func(i int) bool { return li[i] > off })
}

// start returns the offset of a 1-based line.
func (li lineIndex) start(line int) int {
	return li[min(max(line, 1), len(li))-1]
}

// text returns a 1-based line of src without its line ending.
func (li lineIndex) text(src []byte, line int) []byte {
	if line < 1 || line > len(li) {
		return nil
	}
	end := len(src)
	if line < len(li) {
		end = li[line] - 1
	}
	return bytes.TrimSuffix(src[li[line-1]:end], []byte("\r"))
}

// DescriptionKeys are the frontmatter keys whose values describe a note in
// words of its writer's choosing (the conventions of Obsidian Publish and
// of static-site generators); the text index searches them (any case of
// the key: Description, KEYWORDS).
var DescriptionKeys = []string{"description", "summary", "keywords", "subtitle", "excerpt", "abstract"}

// Description returns the text values of n's DescriptionKeys, in that
// order; values that are not text (maps, lists of maps) are left out.
func (n *Note) Description() []string {
	if len(n.Frontmatter) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(n.Frontmatter))
	var out []string
	for _, dk := range DescriptionKeys {
		for _, k := range keys {
			if strings.EqualFold(k, dk) {
				out = append(out, stringList(n.Frontmatter[k])...)
			}
		}
	}
	return out
}
