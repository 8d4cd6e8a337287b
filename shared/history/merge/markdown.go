package merge

import (
	"strings"
)

// frontmatter is a note split at its YAML frontmatter: the opening and
// closing delimiter lines and the blocks of its top-level keys.
type frontmatter struct {
	present     bool
	open, close string
	blocks      []keyBlock // in order; key "" is text before the first key
}

type keyBlock struct {
	key  string
	text string
}

// splitFrontmatter splits lines into frontmatter and body. ok is false when
// the frontmatter cannot be split into top-level key blocks (a key twice,
// no closing line): the caller then merges it as lines.
func splitFrontmatter(lines []string) (fm frontmatter, body []string, ok bool) {
	if len(lines) == 0 || strings.TrimRight(lines[0], "\r\n") != "---" {
		return fm, lines, true
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], "\r\n"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return fm, lines, true // not frontmatter: a thematic break
	}
	fm = frontmatter{present: true, open: lines[0], close: lines[end]}
	seen := map[string]bool{}
	for _, l := range lines[1:end] {
		if k, isKey := keyOf(l); isKey {
			if seen[k] {
				return fm, lines[end+1:], false
			}
			seen[k] = true
			fm.blocks = append(fm.blocks, keyBlock{key: k, text: l})
			continue
		}
		if len(fm.blocks) == 0 {
			fm.blocks = append(fm.blocks, keyBlock{})
		}
		fm.blocks[len(fm.blocks)-1].text += l
	}
	return fm, lines[end+1:], true
}

// keyOf returns the key of a top-level YAML mapping line ("title: x",
// "'a b': c"); false for continuation lines, list items and comments.
func keyOf(line string) (string, bool) {
	if line == "" || strings.ContainsRune(" \t-#\r\n", rune(line[0])) {
		return "", false
	}
	i := strings.Index(line, ":")
	if i <= 0 {
		return "", false
	}
	if rest := line[i+1:]; rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r' && rest[0] != '\n' {
		return "", false // "http://..." on a continuation, not a key
	}
	k := strings.Trim(strings.TrimSpace(line[:i]), `"'`)
	return k, k != ""
}

func (fm frontmatter) block(key string) (string, bool) {
	for _, b := range fm.blocks {
		if b.key == key {
			return b.text, true
		}
	}
	return "", false
}

func (fm frontmatter) lines() []string {
	if !fm.present {
		return nil
	}
	var text strings.Builder
	text.WriteString(fm.open)
	for _, b := range fm.blocks {
		text.WriteString(b.text)
	}
	text.WriteString(fm.close)
	return splitLines(text.String())
}

// mergeFrontmatter merges key by key: a key one side changed (added,
// edited, removed) takes that side's block; a key both changed differently
// is a conflict. Keys keep ours' order; keys only theirs added follow the
// key they follow in theirs.
func mergeFrontmatter(base, ours, theirs frontmatter) (frontmatter, []Conflict) {
	out := frontmatter{present: ours.present || theirs.present, open: ours.open, close: ours.close}
	if !ours.present {
		out.open, out.close = theirs.open, theirs.close
	}
	var conflicts []Conflict
	result := map[string]*string{}
	keys := map[string]bool{}
	for _, fm := range []frontmatter{base, ours, theirs} {
		for _, b := range fm.blocks {
			keys[b.key] = true
		}
	}
	for k := range keys {
		b, inB := base.block(k)
		o, inO := ours.block(k)
		t, inT := theirs.block(k)
		var r string
		var keep bool
		switch {
		case inO == inB && o == b:
			r, keep = t, inT
		case inT == inB && t == b, inO == inT && o == t:
			r, keep = o, inO
		default:
			conflicts = append(conflicts, Conflict{Where: "frontmatter", Key: k, Base: b, Ours: o, Theirs: t})
			r, keep = o, inO
		}
		if keep {
			result[k] = &r
		}
	}
	placed := map[string]bool{}
	for _, b := range ours.blocks {
		if r := result[b.key]; r != nil {
			out.blocks = append(out.blocks, keyBlock{b.key, *r})
			placed[b.key] = true
		}
	}
	for i, b := range theirs.blocks {
		r := result[b.key]
		if r == nil || placed[b.key] {
			continue
		}
		at := 0 // after the nearest key before it in theirs that is placed
		for j := i - 1; j >= 0; j-- {
			if k := theirs.blocks[j].key; placed[k] {
				for n, ob := range out.blocks {
					if ob.key == k {
						at = n + 1
					}
				}
				break
			}
		}
		out.blocks = append(out.blocks[:at], append([]keyBlock{{b.key, *r}}, out.blocks[at:]...)...)
		placed[b.key] = true
	}
	if len(out.blocks) == 0 && !(ours.present && theirs.present) {
		out.present = false
	}
	return out, conflicts
}

// section is a heading line and the lines up to the next heading; the
// first section of a body has no heading (the text before any).
type section struct {
	heading string   // the heading line, after the blank lines before it; "" for the preamble
	body    []string // the lines after it
}

func (s section) title() string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(s.heading), "#"))
}

func (s section) lines() []string {
	if s.heading == "" {
		return s.body
	}
	return append([]string{s.heading}, s.body...)
}

// splitSections cuts a body at its ATX headings outside fenced code.
func splitSections(lines []string) []section {
	out := []section{{}}
	fence := ""
	for _, l := range lines {
		t := strings.TrimRight(l, "\r\n")
		trim := strings.TrimLeft(t, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trim, fence) && strings.TrimSpace(strings.TrimLeft(trim, fence[:1])) == "" {
				fence = ""
			}
		case strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~"):
			fence = trim[:3]
		case len(t)-len(trim) < 4 && isHeading(trim):
			// The blank lines before a heading go with it: a section
			// added after another brings its separating blank line.
			prev := &out[len(out)-1]
			n := len(prev.body)
			for n > 0 && strings.TrimSpace(prev.body[n-1]) == "" {
				n--
			}
			lead := strings.Join(prev.body[n:], "")
			prev.body = prev.body[:n]
			out = append(out, section{heading: lead + l})
			continue
		}
		last := &out[len(out)-1]
		last.body = append(last.body, l)
	}
	return out
}

func isHeading(t string) bool {
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(t) || t[n] == ' ' || t[n] == '\t')
}
