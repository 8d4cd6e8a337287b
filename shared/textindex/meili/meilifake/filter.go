package meilifake

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// filter is a parsed filter expression: an OR of ANDs of conditions and
// nested groups.
type filter interface {
	eval(doc map[string]any) bool
	fields(func(string))
}

type orFilter []filter
type andFilter []filter

// cond is `field op value` or `field IN [values]`.
type cond struct {
	field  string
	op     string // "=", "!=", ">", ">=", "<", "<=", "IN"
	values []value
}

// value is a filter literal: a string, and a number when it parses as one.
type value struct {
	s      string
	lower  string // s lower-cased, for comparisons
	num    float64
	isNum  bool
	quoted bool
}

func (f orFilter) eval(doc map[string]any) bool {
	for _, g := range f {
		if g.eval(doc) {
			return true
		}
	}
	return false
}

func (f andFilter) eval(doc map[string]any) bool {
	for _, g := range f {
		if !g.eval(doc) {
			return false
		}
	}
	return true
}

func (f orFilter) fields(fn func(string)) {
	for _, g := range f {
		g.fields(fn)
	}
}

func (f andFilter) fields(fn func(string)) {
	for _, g := range f {
		g.fields(fn)
	}
}

func (c cond) fields(fn func(string)) { fn(c.field) }

// eval compares the document's value(s) of c.field. Strings compare
// case-insensitively, as Meilisearch normalises facet values; a field
// holding an array matches when any element does.
func (c cond) eval(doc map[string]any) bool {
	switch x := doc[c.field].(type) {
	case nil:
		return false
	case []any:
		for _, v := range x {
			if c.match(v) {
				return true
			}
		}
		return false
	default:
		return c.match(x)
	}
}

// match compares one value of the document.
func (c cond) match(v any) bool {
	if s, ok := v.(string); ok {
		s = strings.ToLower(s)
		for _, want := range c.values {
			if compareString(s, c.op, want) {
				return true
			}
		}
		return false
	}
	for _, want := range c.values {
		if compare(v, c.op, want) {
			return true
		}
	}
	return false
}

// compareString compares a lower-cased document string.
func compareString(s, op string, want value) bool {
	switch op {
	case "=", "IN":
		return s == want.lower
	case "!=":
		return s != want.lower
	}
	return false // string ranges are not faked
}

func compare(v any, op string, want value) bool {
	if n, ok := v.(float64); ok {
		if !want.isNum {
			return false
		}
		switch op {
		case "=", "IN":
			return n == want.num
		case "!=":
			return n != want.num
		case ">":
			return n > want.num
		case ">=":
			return n >= want.num
		case "<":
			return n < want.num
		case "<=":
			return n <= want.num
		}
		return false
	}
	return false
}

// filterParser parses the subset of Meilisearch's filter language the
// adapter emits: conditions joined by AND / OR, parentheses, comparison
// operators and IN [...]; values quoted with " or ' (with Meilisearch's
// escaping rules) or bare words. Anything else is an error.
type filterParser struct {
	s   string
	pos int
}

func parseFilter(s string) (filter, error) {
	p := &filterParser{s: s}
	f, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, fmt.Errorf("unexpected %q at %d", p.rest(10), p.pos)
	}
	return f, nil
}

// FilterValues parses a filter expression as the fake does and returns its
// literal values in order, unescaped: a test can check that a value the
// adapter quoted reaches Meilisearch unchanged.
func FilterValues(expr string) ([]string, error) {
	f, err := parseFilter(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(filter)
	walk = func(f filter) {
		switch x := f.(type) {
		case orFilter:
			for _, g := range x {
				walk(g)
			}
		case andFilter:
			for _, g := range x {
				walk(g)
			}
		case cond:
			for _, v := range x.values {
				out = append(out, v.s)
			}
		}
	}
	walk(f)
	return out, nil
}

func (p *filterParser) rest(n int) string {
	r := p.s[p.pos:]
	if len(r) > n {
		r = r[:n]
	}
	return r
}

func (p *filterParser) space() {
	for p.pos < len(p.s) {
		r, size := utf8.DecodeRuneInString(p.s[p.pos:])
		if !unicode.IsSpace(r) {
			return
		}
		p.pos += size
	}
}

// keyword consumes kw when it is the next word.
func (p *filterParser) keyword(kw string) bool {
	p.space()
	if !strings.HasPrefix(p.s[p.pos:], kw) {
		return false
	}
	end := p.pos + len(kw)
	if end < len(p.s) {
		if r, _ := utf8.DecodeRuneInString(p.s[end:]); isValueRune(r) {
			return false
		}
	}
	p.pos = end
	return true
}

func (p *filterParser) or() (filter, error) {
	var out orFilter
	for {
		f, err := p.and()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
		if !p.keyword("OR") {
			break
		}
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

func (p *filterParser) and() (filter, error) {
	var out andFilter
	for {
		f, err := p.unary()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
		if !p.keyword("AND") {
			break
		}
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

func (p *filterParser) unary() (filter, error) {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		p.pos++
		f, err := p.or()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ')' {
			return nil, fmt.Errorf("missing ) at %d", p.pos)
		}
		p.pos++
		return f, nil
	}
	return p.cond()
}

func (p *filterParser) cond() (filter, error) {
	field, err := p.word()
	if err != nil {
		return nil, err
	}
	if isKeyword(field) {
		return nil, fmt.Errorf("reserved keyword %q where a field was expected", field)
	}
	p.space()
	for _, op := range []string{">=", "<=", "!=", "=", ">", "<"} {
		if strings.HasPrefix(p.s[p.pos:], op) {
			p.pos += len(op)
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			return cond{field: field, op: op, values: []value{v}}, nil
		}
	}
	if !p.keyword("IN") {
		return nil, fmt.Errorf("unsupported operator at %q", p.rest(10))
	}
	p.space()
	if p.pos >= len(p.s) || p.s[p.pos] != '[' {
		return nil, errors.New("IN without [")
	}
	p.pos++
	c := cond{field: field, op: "IN"}
	for {
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ']' && len(c.values) == 0 {
			p.pos++
			return c, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		c.values = append(c.values, v)
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == ']' {
			p.pos++
			return c, nil
		}
		return nil, fmt.Errorf("unterminated IN list at %d", p.pos)
	}
}

func isValueRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || r == '_' || r == '-' || r == '.'
}

func isKeyword(w string) bool {
	switch w {
	case "AND", "OR", "IN", "NOT", "TO", "EXISTS", "IS", "NULL", "EMPTY", "CONTAINS", "STARTS", "WITH":
		return true
	}
	return false
}

// word reads a bare word (letters, digits, '_', '-', '.').
func (p *filterParser) word() (string, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.s) {
		r, size := utf8.DecodeRuneInString(p.s[p.pos:])
		if !isValueRune(r) {
			break
		}
		p.pos += size
	}
	if start == p.pos {
		return "", fmt.Errorf("expected a word at %q", p.rest(10))
	}
	return p.s[start:p.pos], nil
}

// value reads a quoted or bare value. Quoted values follow Meilisearch:
// the body runs to the first quote not preceded by a backslash escape, an
// escaped quote is unescaped, and then Rust-style escapes (\\, \n, \t,
// \u{..}, ...) are unescaped; a malformed escape is an error.
func (p *filterParser) value() (value, error) {
	p.space()
	if p.pos >= len(p.s) {
		return value{}, errors.New("missing value")
	}
	q := p.s[p.pos]
	if q != '"' && q != '\'' {
		w, err := p.word()
		if err != nil {
			return value{}, err
		}
		if isKeyword(w) {
			return value{}, fmt.Errorf("reserved keyword %q where a value was expected", w)
		}
		return newValue(w, false), nil
	}
	p.pos++
	start, escapedQuote := p.pos, false
	for {
		if p.pos >= len(p.s) {
			return value{}, fmt.Errorf("missing closing %c", q)
		}
		c := p.s[p.pos]
		if c == q {
			break
		}
		if c == '\\' {
			if p.pos+1 >= len(p.s) {
				return value{}, errors.New("malformed value: trailing backslash")
			}
			escapedQuote = escapedQuote || p.s[p.pos+1] == q
			p.pos += 2
			continue
		}
		p.pos++
	}
	body := p.s[start:p.pos]
	p.pos++
	if escapedQuote {
		body = strings.ReplaceAll(body, `\`+string(q), string(q))
	}
	s, err := unescape(body)
	if err != nil {
		return value{}, err
	}
	return newValue(s, true), nil
}

func newValue(s string, quoted bool) value {
	v := value{s: s, lower: strings.ToLower(s), quoted: quoted}
	if n, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		v.num, v.isNum = n, true
	}
	return v
}

// unescape resolves Rust-style escapes as Meilisearch's filter parser does
// after removing quote escapes.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i >= len(s) {
			return "", errors.New("malformed value: incomplete escape")
		}
		switch s[i] {
		case '\\', '"', '\'', '/':
			b.WriteByte(s[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+1 >= len(s) || s[i+1] != '{' {
				return "", errors.New("malformed value: bad \\u escape")
			}
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", errors.New("malformed value: bad \\u escape")
			}
			n, err := strconv.ParseUint(s[i+2:i+end], 16, 32)
			if err != nil || !utf8.ValidRune(rune(n)) {
				return "", errors.New("malformed value: bad \\u escape")
			}
			b.WriteRune(rune(n))
			i += end
		default:
			return "", fmt.Errorf("malformed value: unknown escape \\%c", s[i])
		}
	}
	return b.String(), nil
}
