package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// explainArgs says, for a person, what is wrong with a tool's arguments
// that failed validation against schema: the argument by name (also
// returned as arg, "" when no one argument is at fault) and what it should
// be. It looks at the top level (where nearly every mistake is) and
// otherwise tidies the validator's own message, verr.
func explainArgs(schema *jsonschema.Schema, obj map[string]any, verr error) (msg, arg string) {
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, k := range sortedKeys(obj) {
		if _, ok := schema.Properties[k]; !ok {
			return fmt.Sprintf("Unknown argument %q. This tool takes: %s.%s", k, strings.Join(names, ", "), didYouMean(k, names)), k
		}
	}
	for _, k := range schema.Required {
		if _, ok := obj[k]; !ok {
			return fmt.Sprintf("The argument %q is required.%s", k, describe(schema.Properties[k])), k
		}
	}
	for _, k := range sortedKeys(obj) {
		if msg := explainValue(k, schema.Properties[k], obj[k]); msg != "" {
			return msg, k
		}
	}
	msg = verr.Error()
	msg = strings.TrimPrefix(msg, "validating root: ")
	msg = regexp.MustCompile(`validating /properties/([^/: ]+)`).ReplaceAllString(msg, "argument $1")
	return "Invalid arguments: " + msg + ".", ""
}

// explainValue checks one top-level argument against its schema.
func explainValue(name string, s *jsonschema.Schema, v any) string {
	if s == nil {
		return ""
	}
	want := s.Type
	if want == "" && len(s.Types) > 0 {
		want = strings.Join(slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" }), " or ")
	}
	got := jsonType(v)
	if want != "" && !typeFits(want, got, v) {
		return fmt.Sprintf("The argument %q must be %s, not %s.%s", name, article(want), article(got), describe(s))
	}
	switch x := v.(type) {
	case string:
		n := utf8.RuneCountInString(x)
		switch {
		case s.MinLength != nil && n < *s.MinLength && n == 0:
			return fmt.Sprintf("The argument %q must not be empty.%s", name, describe(s))
		case s.MinLength != nil && n < *s.MinLength:
			return fmt.Sprintf("The argument %q must be at least %d characters long.", name, *s.MinLength)
		case s.MaxLength != nil && n > *s.MaxLength:
			return fmt.Sprintf("The argument %q must be at most %d characters long (it has %d).", name, *s.MaxLength, n)
		case len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return e == x }):
			return fmt.Sprintf("The argument %q must be one of %s, not %q.", name, enumList(s.Enum), x)
		case s.Pattern != "" && !regexp.MustCompile(s.Pattern).MatchString(x):
			return fmt.Sprintf("The argument %q must match %s, not %q.", name, s.Pattern, clipQuote(x))
		}
	case float64:
		switch {
		case s.Minimum != nil && x < *s.Minimum:
			return fmt.Sprintf("The argument %q must be at least %s (it is %s).", name, num(*s.Minimum), num(x))
		case s.Maximum != nil && x > *s.Maximum:
			return fmt.Sprintf("The argument %q must be at most %s (it is %s).", name, num(*s.Maximum), num(x))
		}
	case []any:
		switch {
		case s.MinItems != nil && len(x) < *s.MinItems:
			return fmt.Sprintf("The argument %q needs at least %d items.", name, *s.MinItems)
		case s.MaxItems != nil && len(x) > *s.MaxItems:
			return fmt.Sprintf("The argument %q takes at most %d items (it has %d).", name, *s.MaxItems, len(x))
		}
		for i, e := range x {
			if s.Items != nil {
				if msg := explainValue(fmt.Sprintf("%s[%d]", name, i), s.Items, e); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func typeFits(want, got string, v any) bool {
	for _, w := range strings.Split(want, " or ") {
		if w == got || (w == "number" && got == "integer") {
			return true
		}
	}
	return false
}

func article(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	case "null":
		return "null"
	}
	if strings.Contains(t, " or ") {
		return t
	}
	return "a " + t
}

func num(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%g", f)
}

func enumList(e []any) string {
	s := make([]string, len(e))
	for i, v := range e {
		s[i] = fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return strings.Join(s, ", ")
}

// describe is the argument's own description, as a hint.
func describe(s *jsonschema.Schema) string {
	if s == nil || s.Description == "" {
		return ""
	}
	d := strings.TrimSuffix(s.Description, ".")
	if len(d) > 240 {
		d = d[:strings.LastIndexByte(d[:240], ' ')] + "…"
	}
	return " (" + d + ".)"
}

// didYouMean suggests the known name closest to a mistyped one.
func didYouMean(k string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(k), n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
