package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// TestSmallResponseBudget serves the sample vault with a 12 KiB response
// budget and calls every read tool broadly: no frame is over the budget,
// cut lists say so and page on to the whole list, and a note pages to its
// bytes exactly.
func TestSmallResponseBudget(t *testing.T) {
	const budget = 12 << 10
	dir := sampleVault(t)
	var frames toolstest.Frames
	c := toolstest.NewClient(t, meteredSession(t, dir, &frames, "--max-response-bytes", "12288"))
	c.WaitIndexed()

	// list_notes: cut to fit, then paged by next_offset to every note.
	seen := map[string]bool{}
	total, pages := -1, 0
	for offset := 0; ; pages++ {
		var page struct {
			Items []struct {
				Path string `json:"path"`
			} `json:"items"`
			Total   int  `json:"total"`
			Partial bool `json:"partial"`
			Clipped []struct {
				Field      string `json:"field"`
				NextOffset *int   `json:"next_offset"`
			} `json:"clipped"`
		}
		c.MustOK("list_notes", map[string]any{"limit": 500, "offset": offset}, &page)
		total = page.Total
		for _, it := range page.Items {
			seen[it.Path] = true
		}
		if len(page.Clipped) == 0 {
			if offset+len(page.Items) != total {
				t.Fatalf("an uncut page at %d has %d of %d items", offset, len(page.Items), total)
			}
			break
		}
		if !page.Partial || page.Clipped[0].Field != "items" || page.Clipped[0].NextOffset == nil || *page.Clipped[0].NextOffset != offset+len(page.Items) {
			t.Fatalf("a cut page must say where to go on: %+v", page)
		}
		offset = *page.Clipped[0].NextOffset
	}
	if len(seen) != total || pages == 0 {
		t.Errorf("paging by next_offset gave %d distinct notes of %d in %d cut pages", len(seen), total, pages)
	}

	// Every read tool, asked broadly: it fits, or says it was cut, or
	// says it cannot fit.
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"get_vault_info", nil},
		{"list_tags", map[string]any{"limit": 500}},
		{"list_folders", nil},
		{"list_attachments", map[string]any{"limit": 500}},
		{"link_graph", map[string]any{"path": "index.md", "depth": 5}},
		{"list_backlinks", map[string]any{"path": "index.md", "limit": 500}},
		{"list_outgoing_links", map[string]any{"path": "Link zoo.md", "limit": 500}},
		{"lint", map[string]any{"limit": 500}},
		{"search", map[string]any{"query": "the", "limit": 100, "match": "any"}},
		{"search_and_read", map[string]any{"query": "compost soil garden", "k": 20}},
		{"find_references", map[string]any{"values": []string{"a", "e"}, "limit": 70}},
		{"recent_activity", map[string]any{"limit": 200}},
		{"read_outline", map[string]any{"path": "Soil handbook.md"}},
		{"note_relations", map[string]any{"path": "index.md", "depth": 3}},
		{"pending_directives", map[string]any{"limit": 500}},
		{"agent_mentions", map[string]any{"limit": 500}},
		{"suggest_links", map[string]any{"path": "Glossary.md", "limit": 500}},
		{"wiki_health", nil},
	} {
		r := c.Call(call.tool, call.args, nil)
		if r.IsError && r.Kind != "unsupported" {
			t.Errorf("%s: %s: %s", call.tool, r.Kind, r.Message)
		}
	}

	// A note bigger than the budget pages to its bytes exactly.
	want, err := os.ReadFile(filepath.Join(dir, "Soil handbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for offset := int64(0); ; {
		var page struct {
			Content    string `json:"content"`
			NextOffset *int64 `json:"next_offset"`
		}
		c.MustOK("read_note", map[string]any{"path": "Soil handbook.md", "offset": offset}, &page)
		got.WriteString(page.Content)
		if page.NextOffset == nil {
			break
		}
		offset = *page.NextOffset
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("Soil handbook.md by pages: %d bytes, want the file's %d", got.Len(), len(want))
	}
	size, n := frames.Max()
	if size > budget+1024 {
		t.Errorf("largest of %d frames: %d bytes, over the %d budget", n, size, budget)
	}
	t.Logf("largest of %d frames: %d bytes (budget %d): %s", n, size, budget, frames.Largest())
	_ = json.Valid
}
