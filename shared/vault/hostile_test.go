package vault

import (
	"strings"
	"testing"
)

// hostileInputs are inputs on which goldmark's inline parsing is quadratic
// without limitOpeners; BenchmarkParseHostile keeps each under a second.
var hostileInputs = map[string]string{
	"md-links-1MB-one-line": strings.Repeat("[a](", 1<<20/4),
	"md-links-1MB-lines":    strings.Repeat("[a](\n", 1<<20/5),
	"md-links-60KB-paras":   strings.Repeat(strings.Repeat("[a](", 15000)+"\n\n", 16),
	"md-links-1KB-paras":    strings.Repeat(strings.Repeat("[a](", 250)+"\n\n", 1000),
	"emphasis-1MB":          strings.Repeat("*a_", 1<<20/3),
	"brackets-1MB":          strings.Repeat("[[[", 1<<20/3),
	"wikilink-openers-1MB":  strings.Repeat("[[a|", 1<<20/4),
	"backticks-1MB":         strings.Repeat("`a``", 1<<20/4),
	"angles-1MB":            strings.Repeat("<a", 1<<20/2),
	"tags-1MB":              strings.Repeat("#a ", 1<<20/3),
}

func BenchmarkParseHostile(b *testing.B) {
	for name, src := range hostileInputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				Parse("hostile.md", []byte(src))
			}
		})
	}
}

func TestLimitOpeners(t *testing.T) {
	// A real paragraph with many links keeps every one of them.
	var b strings.Builder
	for i := range 200 {
		b.WriteString("see [[Note ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("]] and ")
	}
	if n := len(Parse("a.md", []byte(b.String())).Note.Links); n != 200 {
		t.Errorf("a paragraph with 200 links: %d links", n)
	}
	// A paragraph with thousands of unclosed openers is parsed as plain
	// text, so it cannot stall the indexer; the paragraphs around it keep
	// their links and tags.
	src := "[[Before]] #kept\n\n" + strings.Repeat("[a](", 5000) + " #inside\n\n[[After]]\n"
	n := Parse("b.md", []byte(src)).Note
	var targets []string
	for _, l := range n.Links {
		targets = append(targets, l.Target)
	}
	if strings.Join(targets, ",") != "Before,After" {
		t.Errorf("links around a hostile paragraph: %v", targets)
	}
	if strings.Join(n.Tags, ",") != "kept,inside" {
		t.Errorf("tags: %v", n.Tags)
	}
}
