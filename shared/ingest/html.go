package ingest

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// minArticleText is the least text (in bytes) the extracted main content
// must hold to be used instead of the whole body; reader views that find
// less than this have usually picked a caption or a cookie banner.
const minArticleText = 200

// htmlDocument converts an HTML page: charset decoded, main content
// extracted when it holds enough text, sanitised, then Markdown.
func htmlDocument(ctx context.Context, src Source, lim ConvertLimits) (doc *Document, err error) {
	defer func() {
		if r := recover(); r != nil { // a library bug must not take the server down
			doc, err = nil, &Error{Reason: ReasonUnreadable, Message: "The HTML could not be converted.", Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	ct := "text/html"
	if src.Charset != "" {
		ct += "; charset=" + src.Charset
	}
	r, err := charset.NewReader(bytes.NewReader(src.Body), ct)
	if err != nil {
		r = bytes.NewReader(src.Body)
	}
	root, err := html.Parse(r)
	if err != nil {
		if strings.Contains(err.Error(), "exceeds") { // x/net/html's bound on open elements
			return nil, &Error{Reason: ReasonDocumentTooComplex, Fields: map[string]any{"max_depth": maxHTMLDepth},
				Message: "The HTML nests elements too deep.", Err: err}
		}
		return nil, &Error{Reason: ReasonUnreadable, Message: "The HTML could not be parsed.", Err: err}
	}
	if d := depth(root, maxHTMLDepth+1); d > maxHTMLDepth {
		return nil, refuse(ReasonDocumentTooComplex, map[string]any{"max_depth": maxHTMLDepth},
			"The HTML nests elements more than %d deep.", maxHTMLDepth)
	}
	doc = &Document{Title: pageTitle(root)}
	content := root
	if countElements(root, lim.MaxHTMLElements+1) <= lim.MaxHTMLElements && ctx.Err() == nil {
		p := readability.NewParser()
		p.MaxElemsToParse = lim.MaxHTMLElements
		if art, err := p.ParseDocument(root, src.URL); err == nil && art.Node != nil {
			if textLen(art.Node) >= minArticleText {
				content = art.Node
				if doc.Title == "" {
					doc.Title = art.Title()
				}
				doc.Author = strings.TrimSpace(art.Byline())
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Reason: ReasonTimeout, Message: "The conversion was stopped.", Err: err, Retryable: true}
	}
	if content == root {
		removeAll(root, chromeTags)
	} else {
		removeAll(content, navTags)
	}
	sanitise(content, src.URL)
	md, err := htmlConverter().ConvertNode(content, converter.WithContext(ctx))
	if err != nil {
		return nil, &Error{Reason: ReasonUnreadable, Message: "The HTML could not be converted to Markdown.", Err: err}
	}
	doc.Markdown = string(md)
	return doc, nil
}

func htmlConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
}

// dropTags never carry readable text.
var dropTags = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Iframe: true, atom.Object: true,
	atom.Embed: true, atom.Form: true, atom.Button: true, atom.Input: true, atom.Select: true,
	atom.Textarea: true, atom.Svg: true, atom.Canvas: true, atom.Template: true, atom.Dialog: true,
	atom.Math: false, atom.Link: true, atom.Meta: true, atom.Frame: true, atom.Frameset: true,
}

// navTags are navigation, dropped from a reader view's article too.
var navTags = map[atom.Atom]bool{atom.Nav: true, atom.Menu: true}

// chromeTags are a page's navigation and furniture, dropped when the whole
// body is kept.
var chromeTags = map[atom.Atom]bool{
	atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true, atom.Menu: true,
}

func removeAll(n *html.Node, tags map[atom.Atom]bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && tags[c.DataAtom] {
			n.RemoveChild(c)
		} else {
			removeAll(c, tags)
		}
		c = next
	}
}

// sanitise drops what never belongs in a note: scripts and other active or
// binary elements, links to schemes other than http, https and mailto
// (their text stays), images that are not http(s) (data: URIs weigh
// megabytes); relative links and images are made absolute against base.
func sanitise(n *html.Node, base *url.URL) {
	removeAll(n, dropTags)
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if c.Type == html.ElementNode {
				switch c.DataAtom {
				case atom.A:
					setAttr(c, "href", safeURL(attr(c, "href"), base, true))
				case atom.Img:
					if src := safeURL(attr(c, "src"), base, false); src == "" {
						n.RemoveChild(c)
						c = next
						continue
					} else {
						setAttr(c, "src", src)
					}
				}
				dropEventAttrs(c)
			}
			walk(c)
			c = next
		}
	}
	walk(n)
}

// safeURL resolves raw against base and keeps it when it is http(s) (or
// mailto, for links); "" otherwise. An in-page anchor is dropped too: the
// note has no such anchor.
func safeURL(raw string, base *url.URL, link bool) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.HasPrefix(raw, "#") {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return ""
		}
		u.User = nil
		return u.String()
	case "mailto":
		if link {
			return u.String()
		}
	}
	return ""
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

// setAttr sets key to val, or removes it when val is "".
func setAttr(n *html.Node, key, val string) {
	out := n.Attr[:0]
	found := false
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			if val == "" || found {
				continue
			}
			a.Val, found = val, true
		}
		out = append(out, a)
	}
	n.Attr = out
	if !found && val != "" {
		n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
	}
}

func dropEventAttrs(n *html.Node) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if len(a.Key) > 2 && strings.EqualFold(a.Key[:2], "on") || strings.EqualFold(a.Key, "style") {
			continue
		}
		out = append(out, a)
	}
	n.Attr = out
}

// pageTitle is the page's og:title, else its <title>.
func pageTitle(root *html.Node) string {
	var title, og string
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Title:
				if title == "" {
					title = innerText(n)
				}
			case atom.Meta:
				if p := attr(n, "property"); strings.EqualFold(p, "og:title") && og == "" {
					og = attr(n, "content")
				}
			case atom.Body:
				return false // the head's done
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	walk(root)
	if strings.TrimSpace(og) != "" {
		return og
	}
	return title
}

func innerText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil && b.Len() < 4096; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// textLen counts the non-space text bytes under n, outside scripts and styles.
func textLen(n *html.Node) int {
	total := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			total += len(strings.TrimSpace(n.Data))
		case n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style || n.DataAtom == atom.Noscript):
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return total
}

// maxHTMLDepth bounds element nesting: every step after parsing walks the
// tree recursively. Real pages nest a few dozen deep.
const maxHTMLDepth = 512

// depth is the tree's depth, counted without recursion, stopping at stop.
func depth(root *html.Node, stop int) int {
	deepest, d := 0, 0
	n := root
	for n != nil {
		if d > deepest {
			deepest = d
			if deepest >= stop {
				return deepest
			}
		}
		if n.FirstChild != nil {
			n, d = n.FirstChild, d+1
			continue
		}
		for n != nil && n.NextSibling == nil {
			n, d = n.Parent, d-1
			if n == root || d < 0 {
				return deepest
			}
		}
		if n != nil {
			n = n.NextSibling
		}
	}
	return deepest
}

// countElements counts element nodes, stopping at stop.
func countElements(n *html.Node, stop int) int {
	count := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if count >= stop {
			return
		}
		if n.Type == html.ElementNode {
			count++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return count
}
