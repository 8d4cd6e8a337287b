package vaultgen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// noteRand is note i's own random stream.
func (p *plan) noteRand(i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(p.opt.Seed), 1<<40|uint64(i)))
}

// drawTopic appends a note's four topic words, the first draws of its
// random stream: about 8% of its prose repeats them.
func (p *plan) drawTopic(r *rand.Rand, topic []string) []string {
	for range 4 {
		topic = append(topic, p.vocab[200+r.IntN(1800)])
	}
	return topic
}

// noteGen writes one note at a time; each worker owns one.
type noteGen struct {
	p   *plan
	buf bytes.Buffer

	// Per note:
	i      int
	r      *rand.Rand
	words  *rand.Zipf
	topic  []string
	inline map[int][]string // sentence index -> snippets to weave in
	blocks map[int][]string // paragraph index -> blocks to put before it
	links  int
}

// epoch is the newest modification time a generated note gets.
var epoch = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// write generates note i, writes it (and its attachment, if any) under dir
// and adds to st.
func (g *noteGen) write(dir string, i int, st *Stats) error {
	p := g.p
	np := &p.notes[i]
	g.i = i
	g.r = p.noteRand(i)
	g.words = rand.NewZipf(g.r, 1.07, 2, uint64(len(p.vocab)-1))
	g.topic = p.drawTopic(g.r, g.topic[:0])
	g.inline = make(map[int][]string)
	g.blocks = make(map[int][]string)
	g.links = 0
	g.buf.Reset()
	r := g.r

	// Tags: 1-5 distinct, Zipf over the tag set; some in frontmatter.
	tagZipf := rand.NewZipf(r, 1.3, 1, uint64(len(p.tags)-1))
	var tags []string
	for want := 1 + r.IntN(5); len(tags) < want; {
		if t := p.tags[tagZipf.Uint64()]; !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	fmTags, inlineTags := []string(nil), tags
	if np.fm {
		split := len(tags)
		if r.IntN(10) < 3 {
			split = len(tags) / 2
		}
		fmTags, inlineTags = tags[:split], tags[split:]
	}

	// Plan the body: inline snippets land on sentences, blocks between paragraphs.
	estSentences := max(1, np.size/90)
	estParas := max(1, estSentences/3)
	at := func() int { return r.IntN(estSentences) }
	atPara := func() int { return r.IntN(estParas) }
	for range 3 + r.IntN(13) {
		if link, ok := g.link(); ok {
			s := at()
			g.inline[s] = append(g.inline[s], link)
		} else {
			k := atPara()
			g.blocks[k] = append(g.blocks[k], g.noteEmbed())
		}
	}
	for _, t := range inlineTags {
		s := at()
		g.inline[s] = append(g.inline[s], "#"+t)
	}
	if r.IntN(100) < 3 {
		for range 1 + r.IntN(2) {
			s := at()
			g.inline[s] = append(g.inline[s], "@"+mentionHandles[r.IntN(len(mentionHandles))])
		}
	}
	if r.IntN(100) < 2 {
		s := at()
		g.inline[s] = append(g.inline[s], strings.ToLower(p.word(r))+"@example.org")
	}
	if r.IntN(100) < 5 {
		s := at()
		g.inline[s] = append(g.inline[s], "`[[Not A Link]] #not-a-tag`")
	}
	if r.IntN(100) < 15 {
		k := atPara()
		g.blocks[k] = append(g.blocks[k], g.codeBlock())
	}
	if r.IntN(100) < 20 {
		k := atPara()
		g.blocks[k] = append(g.blocks[k], g.list())
	}
	if r.IntN(100) < 2 {
		k := atPara()
		g.blocks[k] = append(g.blocks[k], g.directive(false))
	}
	if r.IntN(200) == 0 {
		k := atPara()
		g.blocks[k] = append(g.blocks[k], g.directive(true))
	}
	if r.IntN(100) < 5 {
		k := atPara()
		g.blocks[k] = append(g.blocks[k], g.callout())
	}
	if r.IntN(100) < 2 {
		k := atPara()
		g.blocks[k] = append(g.blocks[k], g.cjk())
	}
	var att string
	var attData []byte
	if n := p.opt.AttachmentsEvery; n > 0 && i%n == n-1 {
		att, attData = attachment(i, i/n%3)
		k := atPara()
		g.blocks[k] = append(g.blocks[k], "![["+att+"]]")
		g.links++
	}

	if np.fm {
		g.frontmatter(np, fmTags)
	}
	g.body(np)

	file := filepath.Join(dir, filepath.FromSlash(np.path()))
	if err := os.WriteFile(file, g.buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("vaultgen: %w", err)
	}
	mtime := epoch.Add(-time.Duration(r.IntN(700*24*3600)) * time.Second)
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		return fmt.Errorf("vaultgen: %w", err)
	}
	if att != "" {
		file := filepath.Join(dir, AttachmentDir, att)
		if err := os.WriteFile(file, attData, 0o644); err != nil {
			return fmt.Errorf("vaultgen: %w", err)
		}
		if err := os.Chtimes(file, mtime, mtime); err != nil {
			return fmt.Errorf("vaultgen: %w", err)
		}
	}
	st.Notes++
	st.Bytes += g.buf.Len()
	st.Links += g.links
	st.Tags += len(tags)
	return nil
}

func (g *noteGen) frontmatter(np *notePlan, tags []string) {
	r, b := g.r, &g.buf
	b.WriteString("---\ntitle: " + strconv.Quote(np.name) + "\n")
	switch r.IntN(3) {
	case 0: // flow list
		b.WriteString("tags: [" + strings.Join(tags, ", ") + "]\n")
	case 1: // block list
		b.WriteString("tags:\n")
		for _, t := range tags {
			b.WriteString("  - " + t + "\n")
		}
	default: // comma-separated string
		b.WriteString("tags: " + strings.Join(tags, ", ") + "\n")
	}
	if len(np.aliases) > 0 {
		b.WriteString("aliases:\n")
		for _, a := range np.aliases {
			b.WriteString("  - " + strconv.Quote(a) + "\n")
		}
	}
	if r.IntN(7) < 3 { // ~30% of all notes
		fmt.Fprintf(b, "id: %08x-%04x-4%03x-%04x-%012x\n",
			r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), 0x8000|r.IntN(1<<14), r.Uint64()&(1<<48-1))
	}
	if r.IntN(10) < 6 {
		b.WriteString("author: " + strconv.Quote(authors[r.IntN(len(authors))]) + "\n")
	}
	created := epoch.AddDate(0, 0, -700-r.IntN(700))
	b.WriteString("created: " + created.Format("2006-01-02") + "\n")
	if r.IntN(5) == 0 {
		b.WriteString("status: " + []string{"draft", "active", "done"}[r.IntN(3)] + "\n")
		fmt.Fprintf(b, "priority: %d\n", 1+r.IntN(3))
	}
	b.WriteString("---\n")
}

// body writes the note's prose until it reaches the planned size, then
// anything planned that has not found a place yet.
func (g *noteGen) body(np *notePlan) {
	r, b := g.r, &g.buf
	if r.IntN(10) < 6 {
		b.WriteString("\n# " + np.name + "\n")
	}
	start := b.Len()
	sentence, para, heading, lastHeading := 0, 0, 0, start
	for b.Len()-start < np.size {
		if heading < np.headings && b.Len()-lastHeading >= 600 {
			g.heading(heading)
			heading++
			lastHeading = b.Len()
		}
		for _, blk := range g.blocks[para] {
			b.WriteString("\n" + blk + "\n")
		}
		delete(g.blocks, para)
		b.WriteByte('\n')
		for n := range 2 + r.IntN(4) {
			if n > 0 {
				b.WriteByte(' ')
			}
			g.sentence(sentence)
			sentence++
		}
		if para == 0 && np.block != "" {
			b.WriteString(" ^" + np.block)
		}
		b.WriteByte('\n')
		para++
	}
	for ; heading < np.headings; heading++ {
		g.heading(heading)
		b.WriteByte('\n')
		g.sentence(-1)
		b.WriteByte('\n')
	}
	// Leftovers, in a stable order.
	var rest []string
	for _, k := range sortedKeys(g.inline) {
		rest = append(rest, g.inline[k]...)
	}
	if len(rest) > 0 {
		b.WriteString("\nSee also: " + strings.Join(rest, " ") + "\n")
	}
	for _, k := range sortedKeys(g.blocks) {
		for _, blk := range g.blocks[k] {
			b.WriteString("\n" + blk + "\n")
		}
	}
}

func sortedKeys(m map[int][]string) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (g *noteGen) heading(k int) {
	level := 2
	if k > 0 && g.r.IntN(3) == 0 {
		level = 3
	}
	g.buf.WriteString("\n" + strings.Repeat("#", level) + " " + g.p.headingTitle(g.i, k) + "\n")
}

// sentence writes one sentence and the inline snippets planned for it.
func (g *noteGen) sentence(idx int) {
	r, b := g.r, &g.buf
	n := 6 + r.IntN(13)
	snippets := g.inline[idx]
	delete(g.inline, idx)
	for w := range n {
		if w > 0 {
			if r.IntN(12) == 0 {
				b.WriteByte(',')
			}
			b.WriteByte(' ')
		}
		var word string
		switch x := r.IntN(100); {
		case x == 0:
			word = emoji[r.IntN(len(emoji))]
		case x < 9:
			word = g.topic[r.IntN(len(g.topic))]
		default:
			word = g.p.vocab[g.words.Uint64()]
		}
		if w == 0 {
			word = titleCase(word)
		}
		b.WriteString(word)
		if len(snippets) > 0 && r.IntN(n) < 2 {
			b.WriteString(" " + snippets[0])
			snippets = snippets[1:]
		}
	}
	for _, s := range snippets {
		b.WriteString(" " + s)
	}
	b.WriteString([]string{".", ".", ".", ".", "?", "!"}[r.IntN(6)])
}

// link returns a wikilink or Markdown link to a Zipf-chosen note (or, 5% of
// the time, to a note that does not exist). ok is false when the caller
// should write a block-level note embed instead.
func (g *noteGen) link() (string, bool) {
	p, r := g.p, g.r
	if r.IntN(100) < 3 {
		return "", false
	}
	g.links++
	if r.IntN(100) < 5 {
		// Note names never contain digits, so this never resolves.
		return fmt.Sprintf("[[Someday %s %d]]", titleCase(p.word(r)), r.IntN(1000)), true
	}
	j := g.target()
	t := &p.notes[j]
	if r.IntN(10) == 0 {
		return "[" + g.words2() + "](" + relPath(p.notes[g.i].dir, t.path()) + ")", true
	}
	ref := t.name
	if t.dup {
		ref = t.dir + "/" + t.name
	}
	if len(t.aliases) > 0 && r.IntN(3) == 0 {
		ref = t.aliases[r.IntN(len(t.aliases))]
	}
	switch x := r.IntN(100); {
	case x < 10 && t.headings > 0:
		ref += "#" + p.headingTitle(j, r.IntN(t.headings))
	case x < 13 && t.block != "":
		ref += "#^" + t.block
	}
	if r.IntN(100) < 15 {
		ref += "|" + g.words2()
	}
	return "[[" + ref + "]]", true
}

// noteEmbed is a block-level ![[note]] transclusion.
func (g *noteGen) noteEmbed() string {
	g.links++
	t := &g.p.notes[g.target()]
	if t.dup {
		return "![[" + t.dir + "/" + t.name + "]]"
	}
	return "![[" + t.name + "]]"
}

// target picks a link target other than the note itself, Zipf over hubs.
func (g *noteGen) target() int {
	n := len(g.p.notes)
	if n == 1 {
		return 0
	}
	z := rand.NewZipf(g.r, 1.1, 4, uint64(n-1))
	j := g.p.hubs[z.Uint64()]
	if j == g.i {
		j = (j + 1) % n
	}
	return j
}

func (g *noteGen) words2() string {
	return g.p.vocab[g.words.Uint64()] + " " + g.p.vocab[g.words.Uint64()]
}

func (g *noteGen) codeBlock() string {
	r := g.r
	lang := languages[r.IntN(len(languages))]
	return "```" + lang + "\n" +
		"// see [[Fake Link In Code]] and [fake](nowhere.md)\n" +
		"x := \"#not-a-tag\" // ping @nobody\n" +
		"print(\"" + g.words2() + "\")\n" +
		"```"
}

func (g *noteGen) list() string {
	r := g.r
	var lines []string
	for range 2 + r.IntN(5) {
		prefix := "- "
		if r.IntN(3) == 0 {
			prefix = []string{"- [ ] ", "- [x] "}[r.IntN(2)]
		}
		lines = append(lines, prefix+titleCase(g.words2()))
	}
	return strings.Join(lines, "\n")
}

func (g *noteGen) directive(done bool) string {
	kind := "ai"
	if done {
		kind = "ai-done"
	}
	s := "> [!" + kind + "] " + titleCase(g.words2()) + "\n> Please " + g.words2() + " and " + g.words2() + "."
	if g.r.IntN(2) == 0 {
		s += "\n> Then tell @" + mentionHandles[g.r.IntN(len(mentionHandles))] + "."
	}
	return s
}

func (g *noteGen) callout() string {
	kind := calloutKinds[g.r.IntN(len(calloutKinds))]
	return "> [!" + kind + "]\n> " + titleCase(g.words2()) + " " + g.words2() + "."
}

func (g *noteGen) cjk() string {
	var b strings.Builder
	for range 1 + g.r.IntN(3) {
		b.WriteString(cjkSentences[g.r.IntN(len(cjkSentences))])
	}
	return b.String()
}

// relPath is the Markdown link from a note in folder from to the note at
// vault path to, with spaces written as %20.
func relPath(from, to string) string {
	up := ""
	for from != "" && from != "." && !strings.HasPrefix(to, from+"/") {
		up += "../"
		from = path.Dir(from)
		if from == "." {
			from = ""
		}
	}
	if from != "" {
		to = strings.TrimPrefix(to, from+"/")
	}
	return strings.ReplaceAll(up+to, " ", "%20")
}
