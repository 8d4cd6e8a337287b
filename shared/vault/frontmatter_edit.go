package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// patchFrontmatter edits the value of one top-level frontmatter key. Only
// the lines of that key change: the YAML around it (comments, order,
// quoting, blank lines) is kept byte for byte. content is a YAML value
// ("draft", "[a, b]", "42", a block list); replace sets it, append and
// prepend add items to a list value (content being one item or a list).
func patchFrontmatter(src []byte, sp *Spans, key string, op PatchOp, content string) ([]byte, error) {
	what := fmt.Sprintf("frontmatter key %q", key)
	if bom := []byte("\uFEFF"); bytes.HasPrefix(src, bom) && sp.BodyStart > len(bom) {
		// A byte-order mark before the opening line: edit what follows,
		// keep the mark.
		inner := *sp
		inner.BodyStart -= len(bom)
		out, err := patchFrontmatter(src[len(bom):], &inner, key, op, content)
		if err != nil {
			return nil, err
		}
		return append(append([]byte{}, bom...), out...), nil
	}
	if sp.BodyStart == 0 {
		return nil, &MatchError{What: what, Hint: "the note has no frontmatter"}
	}
	switch op {
	case OpReplace, OpAppend, OpPrepend:
	default:
		return nil, badEdit("a frontmatter key takes replace, append or prepend, not %s", op)
	}
	eol := lineEnding(src)
	// The YAML text lies between the opening line and the closing line.
	_, yStart := nextLine(src, 0)
	block := src[:sp.BodyStart]
	yEnd := bytes.LastIndexByte(bytes.TrimSuffix(block, []byte("\n")), '\n') + 1
	if yEnd < yStart {
		yEnd = yStart
	}
	y := src[yStart:yEnd]
	var doc yaml.Node
	if err := yaml.Unmarshal(y, &doc); err != nil {
		return nil, badEdit("the frontmatter is not valid YAML (%v): fix it with apply_edits", err)
	}
	if len(doc.Content) == 0 {
		return nil, &MatchError{What: what, Hint: "the frontmatter is empty"}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, badEdit("the frontmatter is not a YAML mapping")
	}
	if m.Style&yaml.FlowStyle != 0 {
		return nil, badEdit("the frontmatter is a flow mapping ({...}): edit it with apply_edits")
	}
	j := -1
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if j >= 0 {
				return nil, &MatchError{What: what, Matches: 2, Hint: "the key is repeated"}
			}
			j = i
		}
	}
	if j < 0 {
		var keys []string
		for i := 0; i+1 < len(m.Content); i += 2 {
			keys = append(keys, m.Content[i].Value)
		}
		return nil, &MatchError{What: what, Hint: "keys: " + strings.Join(keys, ", ")}
	}
	k, v := m.Content[j], m.Content[j+1]
	lines := yamlLines(y)
	first := k.Line
	next := len(lines) + 1
	if j+2 < len(m.Content) {
		next = m.Content[j+2].Line
	}
	last := next - 1
	for last > first {
		t := bytes.TrimSpace(y[lines[last-1].s:lines[last-1].e])
		indent := len(y[lines[last-1].s:lines[last-1].e]) - len(bytes.TrimLeft(y[lines[last-1].s:lines[last-1].e], " \t"))
		if len(t) == 0 || t[0] == '#' && indent <= k.Column-1 {
			last--
			continue
		}
		break
	}
	regionS, regionE := lines[first-1].s, lines[last-1].next // region: the key's lines

	valueSrc := strings.ReplaceAll(content, "\r\n", "\n")
	var newVal yaml.Node
	if strings.TrimSpace(valueSrc) == "" {
		newVal = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	} else {
		var vd yaml.Node
		dec := yaml.NewDecoder(strings.NewReader(valueSrc))
		if err := dec.Decode(&vd); err != nil {
			return nil, badEdit("content is not a YAML value: %v", err)
		}
		var more yaml.Node
		if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
			return nil, badEdit("content is more than one YAML value (a line of --- or ... starts another): send one value")
		}
		var plain any
		if err := vd.Decode(&plain); err != nil {
			return nil, badEdit("content is not a YAML value the frontmatter can hold: %v", err)
		}
		if len(vd.Content) == 0 {
			newVal = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		} else {
			newVal = *vd.Content[0]
		}
	}
	indent := strings.Repeat(" ", max(k.Column-1, 0))
	var repl string
	var rs, re int
	switch op {
	case OpReplace:
		bare := *k // its comments stay where they are in the source
		bare.HeadComment, bare.LineComment, bare.FootComment = "", "", ""
		pair := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{&bare, &newVal}}
		text, err := encodeYAML(pair)
		if err != nil {
			return nil, badEdit("cannot write the value: %v", err)
		}
		if c := v.LineComment; c != "" && strings.Count(text, "\n") == 1 && newVal.Kind != yaml.MappingNode {
			text = strings.TrimSuffix(text, "\n") + " " + c + "\n"
		}
		repl, rs, re = indentLines(text, indent), regionS, regionE
	default:
		if v.Kind != yaml.SequenceNode {
			return nil, badEdit("append and prepend add items to a list; %s holds %s: use replace", what, describeYAML(v))
		}
		items := []*yaml.Node{&newVal}
		if newVal.Kind == yaml.SequenceNode {
			items = newVal.Content
		}
		if len(items) == 0 {
			return src, nil
		}
		if v.Style&yaml.FlowStyle != 0 {
			flow := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: items}
			text, err := encodeYAML(flow)
			if err != nil {
				return nil, badEdit("cannot write the items: %v", err)
			}
			inner := strings.TrimSuffix(strings.TrimSpace(text), "]")
			inner = strings.TrimPrefix(inner, "[")
			region := y[regionS:regionE]
			open := bytes.IndexByte(region, '[')
			closeAt := bytes.LastIndexByte(region, ']')
			if open < 0 || closeAt < open {
				return nil, badEdit("cannot find the brackets of %s's list: edit it with apply_edits", key)
			}
			empty := len(bytes.TrimSpace(region[open+1:closeAt])) == 0
			switch {
			case empty:
				repl, rs, re = inner, regionS+open+1, regionS+closeAt
			case op == OpAppend:
				at := regionS + closeAt
				for at > regionS+open+1 && (y[at-1] == ' ' || y[at-1] == '\t') {
					at--
				}
				repl, rs, re = ", "+inner, at, at
			default:
				at := regionS + open + 1
				for at < regionS+closeAt && (y[at] == ' ' || y[at] == '\t') {
					at++
				}
				repl, rs, re = inner+", ", at, at
			}
		} else {
			block := &yaml.Node{Kind: yaml.SequenceNode, Content: items}
			text, err := encodeYAML(block)
			if err != nil {
				return nil, badEdit("cannot write the items: %v", err)
			}
			firstItem := v.Content[0]
			ln := lines[firstItem.Line-1]
			lineText := y[ln.s:ln.e]
			dash := len(lineText) - len(bytes.TrimLeft(lineText, " \t"))
			repl = indentLines(text, string(lineText[:dash]))
			if op == OpAppend {
				rs, re = regionE, regionE
			} else {
				rs, re = ln.s, ln.s
			}
		}
	}
	if eol != "\n" {
		repl = strings.ReplaceAll(repl, "\n", eol)
	}
	ny := splice(y, rs, re, repl)
	want := decodeYAML(&newVal)
	if op != OpReplace {
		add := []any{}
		for _, n := range items(&newVal) {
			add = append(add, decodeYAML(n))
		}
		old, _ := decodeYAML(v).([]any)
		if op == OpAppend {
			want = append(append([]any{}, old...), add...)
		} else {
			want = append(add, old...)
		}
	}
	if err := sameOtherKeys(y, ny, key, want); err != nil {
		return nil, err
	}
	var before, after any
	if yaml.Unmarshal(y, &before) == nil {
		if err := yaml.Unmarshal(ny, &after); err != nil {
			return nil, badEdit("the content would make the frontmatter unreadable (%v): nothing written", err)
		}
	}
	out := splice(src, yStart, yEnd, string(ny))
	fe := frontmatterEnd(out)
	if fe == 0 || !bytes.Equal(out[fe:], src[sp.BodyStart:]) {
		return nil, badEdit("the value would end the frontmatter block early")
	}
	if fe > maxFrontmatter && sp.BodyStart <= maxFrontmatter {
		return nil, badEdit("the frontmatter would grow past %d KiB, which Sheaf does not read: nothing written", maxFrontmatter>>10)
	}
	return out, nil
}

func items(n *yaml.Node) []*yaml.Node {
	if n.Kind == yaml.SequenceNode {
		return n.Content
	}
	return []*yaml.Node{n}
}

// describeYAML names the kind of a YAML value for messages.
func describeYAML(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "no value"
	}
	return fmt.Sprintf("the scalar %q", n.Value)
}

type yamlLine struct{ s, e, next int }

// yamlLines indexes the lines of y: content [s, e), next line at next.
func yamlLines(y []byte) []yamlLine {
	var out []yamlLine
	for off := 0; off < len(y); {
		line, next := nextLine(y, off)
		out = append(out, yamlLine{off, off + len(bytes.TrimSuffix(line, []byte("\r"))), next})
		off = next
	}
	return out
}

// encodeYAML renders a node as block YAML with two-space indentation.
func encodeYAML(n *yaml.Node) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// indentLines prefixes every non-empty line of text with indent.
func indentLines(text, indent string) string {
	if indent == "" {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if l != "" && l != "\n" {
			lines[i] = indent + l
		}
	}
	return strings.Join(lines, "")
}

func decodeYAML(n *yaml.Node) any {
	var v any
	_ = n.Decode(&v)
	return jsonValue(v, 0)
}

// sameOtherKeys checks that the edited YAML ny keeps every key of y but
// key with its value, in order, and that key now holds want.
func sameOtherKeys(y, ny []byte, key string, want any) error {
	var before, after yaml.Node
	if err := yaml.Unmarshal(y, &before); err != nil {
		return badEdit("the frontmatter does not parse: %v", err)
	}
	if err := yaml.Unmarshal(ny, &after); err != nil {
		return badEdit("the content would make the frontmatter invalid YAML: %v", err)
	}
	if len(after.Content) == 0 || after.Content[0].Kind != yaml.MappingNode {
		return badEdit("the content would make the frontmatter something other than a mapping")
	}
	bm, am := before.Content[0], after.Content[0]
	if len(bm.Content) != len(am.Content) {
		return badEdit("the content would add or remove frontmatter keys")
	}
	for i := 0; i+1 < len(bm.Content); i += 2 {
		if bm.Content[i].Value != am.Content[i].Value {
			return badEdit("the content would reorder or rename frontmatter keys")
		}
		got := decodeYAML(am.Content[i+1])
		if bm.Content[i].Value == key {
			if !reflect.DeepEqual(got, want) {
				return badEdit("the edit of %q did not come out as intended", key)
			}
			continue
		}
		if !reflect.DeepEqual(decodeYAML(bm.Content[i+1]), got) {
			return badEdit("the content would change frontmatter key %q", bm.Content[i].Value)
		}
	}
	return nil
}
