package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/core"
)

// DefaultMaxResponseBytes and MaxResponseBytesLimit bound a result's
// serialized size (see core).
const (
	DefaultMaxResponseBytes = core.DefaultMaxResponseBytes
	MaxResponseBytesLimit   = core.MaxResponseBytesLimit
)

// resultSize is the serialized size of res as a transport sends it.
func resultSize(res *mcp.CallToolResult) int {
	b, err := json.Marshal(res)
	if err != nil {
		return 0
	}
	return len(b) + core.EnvelopeBytes
}

// fitResult renders out (a pointer to a result struct) within budget bytes.
// When it does not fit, its longest lists are cut, the cut recorded in its
// Coverage (with next_offset for paged lists); when even that cannot make it
// fit, the result is an error saying how to narrow the call.
func fitResult(tool string, out any, budget int) *mcp.CallToolResult {
	res, n := render(out, budget)
	if n <= budget || res.IsError {
		return res
	}
	cov, _ := out.(covered)
	if cov == nil {
		return tooLarge(tool, n, budget)
	}
	v := reflect.ValueOf(out).Elem()
	lists := listsOf(v, "")
	for range 64 {
		l := longest(lists)
		if l == nil || l.v.Len() <= 1 {
			break
		}
		keep := int(float64(l.v.Len()) * float64(budget) / float64(n) * 0.9)
		keep = max(1, min(keep, l.v.Len()-1))
		l.v.Set(l.v.Slice(0, keep))
		recordClip(cov.Covered(), v, l, keep, budget)
		if res, n = render(out, budget); n <= budget {
			return res
		}
	}
	return tooLarge(tool, n, budget)
}

// render is structuredResult with its size (see sizeOf).
func render(out any, budget int) (*mcp.CallToolResult, int) {
	res, _ := structuredResult(out)
	if res.IsError {
		return res, 0
	}
	return res, core.WireSize(res.StructuredContent.(json.RawMessage))
}

func tooLarge(tool string, n, budget int) *mcp.CallToolResult {
	return errorResult(newError(KindUnsupported,
		map[string]any{"reason": "response-too-large", "size_bytes": n, "max_bytes": budget},
		"The answer of %s would take %d bytes, over this server's response budget of %d bytes. Ask for less: a smaller limit or depth, a path_prefix, or an offset.",
		tool, n, budget))
}

// list is one slice field of a result.
type list struct {
	name   string        // JSON name, dotted below the top level
	v      reflect.Value // the settable slice
	parent reflect.Value // the struct holding it
	orig   int           // its length before any cut
}

// listsOf finds the slice fields of struct v and of the structs it holds
// (one level down), skipping the embedded Coverage.
func listsOf(v reflect.Value, prefix string) []*list {
	var out []*list
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type == reflect.TypeFor[Coverage]() {
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		switch {
		case fv.Kind() == reflect.Slice && name != "":
			out = append(out, &list{name: prefix + name, v: fv, parent: v, orig: fv.Len()})
		case f.Anonymous && fv.Kind() == reflect.Struct:
			out = append(out, listsOf(fv, prefix)...)
		case prefix == "" && fv.Kind() == reflect.Pointer && !fv.IsNil() && fv.Elem().Kind() == reflect.Struct:
			out = append(out, listsOf(fv.Elem(), name+".")...)
		case prefix == "" && fv.Kind() == reflect.Struct && name != "":
			out = append(out, listsOf(fv, name+".")...)
		}
	}
	return out
}

// longest is the list that takes the most serialized bytes.
func longest(ls []*list) *list {
	var best *list
	bestN := 0
	for _, l := range ls {
		if l.v.Len() == 0 {
			continue
		}
		b, _ := json.Marshal(l.v.Interface())
		if len(b) > bestN {
			best, bestN = l, len(b)
		}
	}
	return best
}

// recordClip notes the cut of l in cov; for the list of a paged result
// (a struct with an offset), it says where the next page starts.
func recordClip(cov *Coverage, top reflect.Value, l *list, keep, budget int) {
	cov.Partial = true
	c := Clipped{Field: l.name, Kept: keep, Of: l.orig, MaxBytes: budget}
	if off, ok := offsetOf(l.parent); ok && !strings.Contains(l.name, ".") {
		next := off + keep
		c.NextOffset = &next
	}
	if h, ok := top.Addr().Interface().(interface{ clippedAt(field string, kept int) }); ok {
		h.clippedAt(l.name, keep)
	}
	for i := range cov.Clipped {
		if cov.Clipped[i].Field == c.Field {
			c.Of = cov.Clipped[i].Of
			cov.Clipped[i] = c
			return
		}
	}
	cov.Clipped = append(cov.Clipped, c)
}

// offsetOf reads the `offset` field of a paged result.
func offsetOf(v reflect.Value) (int, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if strings.Split(f.Tag.Get("json"), ",")[0] == "offset" && f.Type.Kind() == reflect.Int {
			return int(v.Field(i).Int()), true
		}
		if f.Anonymous && v.Field(i).Kind() == reflect.Struct {
			if off, ok := offsetOf(v.Field(i)); ok {
				return off, true
			}
		}
	}
	return 0, false
}

// fitError keeps an error result within budget: its extra fields go first
// (a long candidates list), then its message is shortened.
func fitError(res *mcp.CallToolResult, budget int) *mcp.CallToolResult {
	if resultSize(res) <= budget {
		return res
	}
	fields := res.Meta.AdditionalFields[errorMetaKey].(map[string]any)
	kept := map[string]any{"kind": fields["kind"], "message": fields["message"]}
	res.Meta.AdditionalFields[errorMetaKey] = kept
	if resultSize(res) <= budget {
		return res
	}
	msg, _ := fields["message"].(string)
	msg = fmt.Sprintf("%.1000s… (shortened to fit the response budget)", msg)
	kept["message"] = msg
	res.Content = []mcp.Content{mcp.NewTextContent(msg)}
	return res
}
