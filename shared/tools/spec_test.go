package tools

import (
	"bytes"
	"slices"
	"testing"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSpecs pins what the Specs declare beyond tools/list (which the golden
// file pins): the core profile, the paid tools and what each tool needs.
// These were tables beside the tools; a change here is a change of
// behaviour to review.
func TestSpecs(t *testing.T) {
	var core, paid, embeddings, llm []string
	for _, tl := range testServer(t).Tools() {
		sp := tl.Spec
		if sp.Name != tl.Tool.Name {
			t.Errorf("tool %s served with the Spec of %s", tl.Tool.Name, sp.Name)
		}
		if sp.Core {
			core = append(core, sp.Name)
		}
		if sp.Paid {
			paid = append(paid, sp.Name)
		}
		if sp.Needs.Embeddings {
			embeddings = append(embeddings, sp.Name)
		}
		if sp.Needs.LLM {
			llm = append(llm, sp.Name)
		}
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"core profile", core, []string{"find_references", "get_vault_info", "link_graph", "list_backlinks", "list_notes",
			"list_outgoing_links", "list_tags", "notes_by_tag", "read_note", "read_outline", "search", "search_and_read"}},
		{"paid", paid, []string{"answer", "eval", "find_duplicates", "ingest_file", "ingest_url", "lint_semantic", "reindex_embeddings", "related_notes",
			"semantic_search", "suggest_tags", "topic_map", "wiki_maintain"}},
		{"needs embeddings", embeddings, []string{"find_duplicates", "reindex_embeddings", "related_notes", "semantic_search", "topic_map"}},
		{"needs an LLM", llm, []string{"answer", "lint_semantic", "suggest_tags", "wiki_maintain"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// TestSchemasCompileWhereMCPGoValidates compiles every served tool's input
// and output schema with the library mcp-go/server validates with (its
// WithInputSchemaValidation and WithOutputSchemaValidation, which Sheaf
// does not turn on): each is valid JSON Schema 2020-12 for it, and the
// patched copy in third_party/jsonschema, which compiles its metaschemas on
// the first compiler rather than at start-up, still checks them.
func TestSchemasCompileWhereMCPGoValidates(t *testing.T) {
	s := testServer(t)
	for _, tl := range s.serve(append(s.declared(), testWriteTools(s)...)) {
		mt := tl.Listed()
		for what, raw := range map[string][]byte{"input": mt.RawInputSchema, "output": mt.RawOutputSchema} {
			if len(raw) == 0 {
				continue
			}
			doc, err := santhosh.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s %s schema: %v", mt.Name, what, err)
			}
			c := santhosh.NewCompiler()
			if err := c.AddResource("schema.json", doc); err != nil {
				t.Fatalf("%s %s schema: %v", mt.Name, what, err)
			}
			sch, err := c.Compile("schema.json")
			if err != nil {
				t.Errorf("%s %s schema does not compile: %v", mt.Name, what, err)
				continue
			}
			if what == "input" {
				// A string where an object belongs fails every input schema.
				if err := sch.Validate("not an object"); err == nil {
					t.Errorf("%s: its input schema accepts a string", mt.Name)
				}
			}
		}
	}
}
