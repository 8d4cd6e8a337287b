package tools

import (
	"github.com/sheaf-dev/sheaf/shared/core"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tool is one declared tool: what tools/list shows, its handler and its
// Spec. Tool holds no schemas: Listed adds them, built on first use (a
// server answers initialize before any tool's schema is needed).
type Tool struct {
	Tool    mcp.Tool
	Handler server.ToolHandlerFunc
	Spec    Spec
	args    func() []string     // the input's property names (built when first asked)
	schemas func() *toolSchemas // built once, on first use
}

// toolSchemas are a tool's schemas, as checked and as listed.
type toolSchemas struct {
	in       *jsonschema.Schema
	resolved *jsonschema.Resolved
	defaults map[string]json.RawMessage
	inJSON   json.RawMessage
	outJSON  json.RawMessage
}

// Listed is the tool as tools/list shows it: with its input and output
// schemas.
func (t Tool) Listed() mcp.Tool {
	mt := t.Tool
	if t.schemas != nil {
		s := t.schemas()
		mt.RawInputSchema, mt.RawOutputSchema = s.inJSON, s.outJSON
	}
	return mt
}

// argNames lists the JSON property names of struct type t, as its schema
// names them.
func argNames(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// define declares the tool sp with handler fn; its input and output
// schemas both derive from Go structs, once. Field tags:
//
//	json:"name,omitempty"   omitempty marks an optional argument
//	jsonschema:"..."        the description a model reads
//	schema:"minimum=1,maximum=70,default=50,enum=a|b,minLength=1,maxItems=10"
//
// Arguments are validated against the input schema (unknown keys rejected)
// and decoded strictly; any mismatch is an args-invalid error. The schemas
// are built on first use (tools/list or a call), not at start-up; a
// malformed declaration panics then (TestToolsList lists every tool).
func define[In, Out any](sp Spec, fn func(ctx context.Context, in In) (*Out, error)) Tool {
	sp.check()
	name, title, description, h := sp.Name, sp.Title, sp.Description, sp.Hints
	if _, ok := any(new(Out)).(covered); !ok {
		panic(fmt.Sprintf("tool %s: its result type must embed Coverage", name))
	}
	schemas := sync.OnceValue(func() *toolSchemas {
		inSchema := mustSchema[In](name, "input")
		outSchema := mustSchema[Out](name, "output")
		if sp.Access.proposable() {
			outSchema.Properties["proposal"] = proposalSchema
		}
		resolved, err := inSchema.Resolve(nil)
		if err != nil {
			panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
		}
		inJSON, _ := json.Marshal(inSchema)
		outJSON, _ := json.Marshal(outSchema)
		return &toolSchemas{in: inSchema, resolved: resolved, defaults: defaultsOf(inSchema), inJSON: inJSON, outJSON: outJSON}
	})

	tool := mcp.NewTool(name,
		mcp.WithDescription(description),
		mcp.WithToolTitle(title),
		mcp.WithToolAnnotation(mcp.ToolAnnotation{
			Title:           title,
			ReadOnlyHint:    &h.readOnly,
			DestructiveHint: &h.destructive,
			IdempotentHint:  &h.idempotent,
			OpenWorldHint:   &h.openWorld,
		}),
	)
	// Listed sets the real schemas; until then (mcp-go reads the input
	// schema when a tool is added) an object with no properties stands in.
	// mcp-go's own input validation (WithInputSchemaValidation), which
	// Sheaf does not turn on, would read this placeholder: turning it on
	// means registering the real schema (decodeArgs validates against it).
	tool.InputSchema.Type = ""
	tool.RawInputSchema = json.RawMessage(`{"type":"object"}`)
	handler := func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		ctx = core.WithTool(ctx, name) // history names the tool of each version
		c := callFrom(ctx)
		if c == nil {
			c = core.NewCall(0)
			ctx = withCall(ctx, c)
		}
		budget := c.Budget()
		defer func() {
			// A bug must surface as the spec's internal kind, not a protocol error.
			if r := recover(); r != nil {
				res = errorResult(core.InternalError(fmt.Errorf("tool %s panicked: %v\n%s", name, r, debug.Stack())))
			}
			if res != nil && res.IsError {
				res = fitError(res, budget)
			}
		}()
		sch := schemas()
		in, terr := decodeArgs[In](req, sch.in, sch.resolved, sch.defaults)
		if terr != nil {
			return errorResult(terr), nil
		}
		if propose := proposerFrom(ctx); propose != nil { // a propose-only caller: queue the call, write nothing
			if p, ok := any(in).(interface{ ProposeError() error }); ok {
				if err := p.ProposeError(); err != nil { // a call that cannot be a proposal
					return errorResult(toError(err)), nil
				}
			}
			ref, err := propose(ctx)
			if err != nil {
				return errorResult(toError(err)), nil
			}
			return proposedResult(new(Out), ref), nil
		}
		out, err := fn(ctx, in)
		if err != nil {
			te := toError(err)
			switch {
			case te.Kind == KindInternal && ctx.Err() != nil:
				// The caller cancelled the call or went away: no bug.
				slog.Debug("tool call ended by its caller", "tool", name, "err", err)
			case te.Kind == KindInternal && te.Fields["correlation_id"] == nil: // else logged with its id
				slog.Error("tool failed", "tool", name, "err", err)
			}
			return errorResult(te), nil
		}
		cov := any(out).(covered).Covered()
		ix, unindexed, lagging := c.Coverage()
		if ix != nil {
			cov.Partial, cov.Indexing = true, ix
		}
		cov.Unindexed = unindexed
		cov.Lagging = lagging
		return fitResult(name, out, budget), nil
	}
	return Tool{Tool: tool, Handler: handler, Spec: sp, args: sync.OnceValue(func() []string { return argNames(reflect.TypeFor[In]()) }), schemas: schemas}
}

// decodeArgs validates the raw arguments and decodes them into In.
func decodeArgs[In any](req mcp.CallToolRequest, schema *jsonschema.Schema, rs *jsonschema.Resolved, defaults map[string]json.RawMessage) (In, *Error) {
	var in In
	raw := []byte(req.Params.RawArguments)
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var err error
		if raw, err = json.Marshal(req.Params.Arguments); err != nil || string(raw) == "null" {
			raw = []byte("{}")
		}
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return in, newError(KindArgsInvalid, nil, "The arguments are not valid JSON (%v): send one JSON object.", err)
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return in, newError(KindArgsInvalid, nil, "The arguments must be one JSON object, like {\"path\": \"Note.md\"}.")
	}
	if err := rs.Validate(obj); err != nil {
		msg, arg := explainArgs(schema, obj, err)
		var fields map[string]any
		if arg != "" {
			fields = map[string]any{"argument": arg}
		}
		return in, newError(KindArgsInvalid, fields, "%s", msg)
	}
	for k, v := range defaults {
		if _, set := obj[k]; !set {
			var dv any
			_ = json.Unmarshal(v, &dv)
			obj[k] = dv
		}
	}
	filled, _ := json.Marshal(obj)
	dec := json.NewDecoder(bytes.NewReader(filled))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, newError(KindArgsInvalid, nil, "The arguments do not fit this tool's input schema: %s.", strings.TrimPrefix(err.Error(), "json: "))
	}
	return in, nil
}

// mustSchema infers T's schema and applies the `schema` tag constraints.
func mustSchema[T any](tool, which string) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: %s schema: %v", tool, which, err))
	}
	applyTags(reflect.TypeFor[T](), s, tool)
	if s.Type != "object" {
		panic(fmt.Sprintf("tool %s: %s schema must be an object", tool, which))
	}
	return s
}

// applyTags walks struct fields (recursively) and applies `schema` tags.
func applyTags(t reflect.Type, s *jsonschema.Schema, tool string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
		if s.Items != nil {
			s = s.Items
		}
	}
	if t.Kind() != reflect.Struct || s == nil {
		return
	}
	for _, f := range reflect.VisibleFields(t) {
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "" || name == "-" || f.Anonymous {
			continue
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if tag := f.Tag.Get("schema"); tag != "" {
			if err := applyTag(ps, tag); err != nil {
				panic(fmt.Sprintf("tool %s: field %s: %v", tool, name, err))
			}
		}
		applyTags(f.Type, ps, tool)
	}
}

func applyTag(s *jsonschema.Schema, tag string) error {
	for opt := range strings.SplitSeq(tag, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(opt), "=")
		if !ok {
			return fmt.Errorf("schema option %q needs key=value", opt)
		}
		target := s
		if s.Items != nil && (key == "minLength" || key == "maxLength" || key == "itemEnum") {
			target = s.Items // constraints on an array's strings
		}
		switch key {
		case "minimum", "maximum":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return err
			}
			if key == "minimum" {
				target.Minimum = &f
			} else {
				target.Maximum = &f
			}
		case "minLength", "maxLength", "minItems", "maxItems":
			n, err := strconv.Atoi(val)
			if err != nil {
				return err
			}
			switch key {
			case "minLength":
				target.MinLength = &n
			case "maxLength":
				target.MaxLength = &n
			case "minItems":
				target.MinItems = &n
			case "maxItems":
				target.MaxItems = &n
			}
		case "enum", "itemEnum":
			target.Enum = nil
			for v := range strings.SplitSeq(val, "|") {
				target.Enum = append(target.Enum, v)
			}
		case "pattern":
			target.Pattern = val
		case "default":
			var v any
			if err := json.Unmarshal([]byte(val), &v); err != nil {
				v = val // a bare string
			}
			b, _ := json.Marshal(v)
			target.Default = b
		default:
			return fmt.Errorf("unknown schema option %q", key)
		}
	}
	return nil
}

// defaultsOf returns the top-level defaults of an input schema.
func defaultsOf(s *jsonschema.Schema) map[string]json.RawMessage {
	d := map[string]json.RawMessage{}
	for name, p := range s.Properties {
		if len(p.Default) > 0 {
			d[name] = p.Default
		}
	}
	return d
}
