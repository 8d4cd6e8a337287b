package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/core"
)

// FuzzExplainArgs: any arguments a client sends to search are either
// accepted or refused with a message that names no Go internals; nothing
// panics.
func FuzzExplainArgs(f *testing.F) {
	schema := mustSchema[core.SearchArgs]("search", "input")
	rs, err := schema.Resolve(nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{}`, `{"query":"x","limit":0}`, `{"query":5}`, `{"qeury":"x"}`, `{"query":"x","tags":["a",3]}`, `{"query":"x","mode":"psychic"}`, `{"query":"x","threshold":-1}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var obj map[string]any
		if json.Unmarshal([]byte(raw), &obj) != nil || obj == nil {
			t.Skip()
		}
		verr := rs.Validate(obj)
		if verr == nil {
			return
		}
		msg, _ := explainArgs(schema, obj, verr)
		if msg == "" || strings.Contains(msg, "%!") || strings.Contains(msg, "/properties/") {
			t.Fatalf("%s: message %q", raw, msg)
		}
	})
}

func TestExplainArgs(t *testing.T) {
	schema := mustSchema[core.SearchArgs]("search", "input")
	rs, _ := schema.Resolve(nil)
	for raw, want := range map[string]string{
		`{"qeury":"x"}`:                   `Unknown argument "qeury". This tool takes: agent_id, author, entities, graph_depth, include, limit, match, mode, offset, path_prefix, query, rerank, seed_ids, tags, threshold, vault. Did you mean "query"?`,
		`{"query":"x","limit":0}`:         `The argument "limit" must be at least 1 (it is 0).`,
		`{"query":"x","limit":1000}`:      `The argument "limit" must be at most 100 (it is 1000).`,
		`{"query":"x","mode":"psychic"}`:  `The argument "mode" must be one of "fulltext", "semantic", "hybrid", "graph", not "psychic".`,
		`{"query":"x","tags":["a",3]}`:    `The argument "tags[1]" must be a string, not an integer.`,
		`{"query":""}`:                    `The argument "query" must not be empty.`,
		`{"query":"x","vault":"Bad Id!"}`: `The argument "vault" must match ^[a-z0-9_-]+$, not "Bad Id!".`,
	} {
		var obj map[string]any
		_ = json.Unmarshal([]byte(raw), &obj)
		verr := rs.Validate(obj)
		if verr == nil {
			t.Errorf("%s: valid", raw)
			continue
		}
		got, arg := explainArgs(schema, obj, verr)
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", raw, got, want)
		}
		// The argument at fault, also as a field: the name quoted first.
		if name := strings.SplitN(want, `"`, 3)[1]; arg != strings.SplitN(name, "[", 2)[0] {
			t.Errorf("%s: argument %q, want %q", raw, arg, name)
		}
	}
}
