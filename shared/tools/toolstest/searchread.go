package toolstest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

type sarItem struct {
	Path            string         `json:"path"`
	Rank            int            `json:"rank"`
	Score           float64        `json:"score"`
	ChunkID         string         `json:"chunk_id"`
	Heading         *string        `json:"heading"`
	SectionResolved *bool          `json:"section_resolved"`
	Frontmatter     map[string]any `json:"frontmatter"`
	Body            string         `json:"body"`
	ContentHash     string         `json:"content_hash"`
	SizeBytes       int            `json:"size_bytes"`
	Truncated       bool           `json:"truncated"`
}

type sarError struct {
	Rank int    `json:"rank"`
	Path string `json:"path"`
	Code string `json:"code"`
}

type sarPage struct {
	Vault      string            `json:"vault"`
	Mode       string            `json:"mode"`
	Notes      []json.RawMessage `json:"notes"`
	Errors     []sarError        `json:"errors"`
	NextCursor *string           `json:"next_cursor"`
}

// items decodes the page's notes; keys lists each note's JSON keys.
func (p sarPage) items(t *testing.T) (items []sarItem, keys []map[string]bool) {
	t.Helper()
	for _, raw := range p.Notes {
		var it sarItem
		var m map[string]any
		if err := json.Unmarshal(raw, &it); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(raw, &m)
		k := map[string]bool{}
		for key := range m {
			k[key] = true
		}
		items = append(items, it)
		keys = append(keys, k)
	}
	return items, keys
}

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// writeTools are listed tools that are not read-only; testToolsList skips
// its read-tool check for them and each tool's own test checks its hints.
var writeTools = map[string]bool{"record_retrieval_feedback": true, "apply_proposal": true, "reject_proposal": true, "ingest_url": true, "ingest_file": true, "wiki_maintain": true}

func testSearchAndRead(t *testing.T, c *Client) {
	const tool = "search_and_read"
	sar := func(args map[string]any) sarPage {
		t.Helper()
		var p sarPage
		c.MustOK(tool, args, &p)
		return p
	}
	readNote := func(path string) (content, hash string) {
		t.Helper()
		var rn struct {
			Content     string `json:"content"`
			ContentHash string `json:"content_hash"`
		}
		c.MustOK("read_note", map[string]any{"path": path}, &rn)
		return rn.Content, rn.ContentHash
	}

	t.Run("Args", func(t *testing.T) {
		for name, args := range map[string]map[string]any{
			"no query":         {},
			"empty query":      {"query": ""},
			"k 0":              {"query": "soil", "k": 0},
			"k 21":             {"query": "soil", "k": 21},
			"small item cap":   {"query": "soil", "max_bytes_per_item": 511},
			"bad mode":         {"query": "soil", "mode": "paragraph"},
			"empty cursor":     {"query": "soil", "cursor": ""},
			"bad format":       {"query": "soil", "response_format": "short"},
			"formats disagree": {"query": "soil", "response_format": "detailed", "verbosity": "terse"},
			"unknown key":      {"query": "soil", "limit": 3},
		} {
			t.Run(name, func(t *testing.T) { c.MustFail("args-invalid", tool, args) })
		}
	})

	t.Run("NoteDetailed", func(t *testing.T) {
		p := sar(map[string]any{"query": "how do we test the soil and add lime?", "k": 3})
		items, keys := p.items(t)
		if p.Mode != "note" || p.Vault == "" || len(items) == 0 || len(items) > 3 || p.NextCursor != nil {
			t.Fatalf("page %+v", p)
		}
		for i, it := range items {
			if it.Rank != i+1 {
				t.Errorf("item %d: rank %d", i, it.Rank)
			}
			if !strings.HasPrefix(it.ChunkID, it.Path+"#p") {
				t.Errorf("%s: chunk_id %q", it.Path, it.ChunkID)
			}
			if !keys[i]["frontmatter"] || keys[i]["heading"] || keys[i]["section_resolved"] {
				t.Errorf("%s: detailed note mode has frontmatter, no section fields: %v", it.Path, keys[i])
			}
			content, hash := readNote(it.Path)
			if it.ContentHash != hash || !hexHash.MatchString(hash) {
				t.Errorf("%s: content_hash %s, read_note says %s", it.Path, it.ContentHash, hash)
			}
			if !it.Truncated && (!strings.HasSuffix(content, it.Body) || strings.HasPrefix(it.Body, "---")) {
				t.Errorf("%s: body is not the note without its frontmatter: %q", it.Path, clipText(it.Body))
			}
			if it.Path == "Soil handbook.md" && it.Frontmatter["title"] != "Soil handbook" {
				t.Errorf("Soil handbook frontmatter %v", it.Frontmatter)
			}
		}
	})

	t.Run("Concise", func(t *testing.T) {
		args := map[string]any{"query": "compost bays", "k": 4, "response_format": "concise"}
		p := sar(args)
		items, keys := p.items(t)
		if len(items) == 0 {
			t.Fatal("no notes")
		}
		allowed := map[string]bool{"path": true, "rank": true, "score": true, "body": true, "content_hash": true, "chunk_id": true}
		for i, k := range keys {
			for key := range allowed {
				if !k[key] {
					t.Errorf("%s: concise item lacks %s", items[i].Path, key)
				}
			}
			for key := range k {
				if !allowed[key] && !(items[i].Truncated && (key == "truncated" || key == "size_bytes")) {
					t.Errorf("%s: concise item has %s", items[i].Path, key)
				}
			}
		}
		delete(args, "response_format")
		args["verbosity"] = "terse"
		if alias := sar(args); !sameNotes(alias, p) {
			t.Error("verbosity terse differs from response_format concise")
		}
	})

	t.Run("Section", func(t *testing.T) {
		// "tilth" is a word of the Soil handbook only.
		p := sar(map[string]any{"query": "tilth", "k": 2, "mode": "section"})
		items, keys := p.items(t)
		// With embeddings the vector lane adds nearest neighbours after it.
		if p.Mode != "section" || len(items) == 0 || items[0].Path != "Soil handbook.md" || (len(items) != 1 && !hasEmbeddings(c)) {
			t.Fatalf("want the Soil handbook first (alone without embeddings), got %+v", items)
		}
		for i, it := range items {
			if !keys[i]["heading"] || it.SectionResolved == nil || !*it.SectionResolved {
				t.Errorf("%s: detailed section item needs heading and section_resolved true: %v", it.Path, keys[i])
			}
			content, _ := readNote(it.Path)
			if !it.Truncated && !strings.Contains(content, it.Body) {
				t.Errorf("%s: section body is not part of the note: %q", it.Path, clipText(it.Body))
			}
			if it.Path == "Soil handbook.md" && !strings.Contains(strings.ToLower(it.Body), "tilth") {
				t.Errorf("the section does not contain the word it matched: %q", clipText(it.Body))
			}
			if it.Heading == nil || !strings.HasPrefix(it.Body, "#") || !strings.Contains(strings.SplitN(it.Body, "\n", 2)[0], *it.Heading) {
				t.Errorf("handbook section must start at its heading %v: %q", it.Heading, clipText(it.Body))
			}
			if it.Path == "Soil handbook.md" && len(it.Body) > len(content)/4 {
				t.Errorf("handbook section is %d of %d bytes: not one section", len(it.Body), len(content))
			}
		}
	})

	t.Run("Truncation", func(t *testing.T) {
		p := sar(map[string]any{"query": "tilth rubble", "k": 1, "max_bytes_per_item": 2048})
		items, _ := p.items(t)
		if len(items) != 1 || items[0].Path != "Soil handbook.md" {
			t.Fatalf("want the Soil handbook first, got %+v", items)
		}
		it := items[0]
		content, _ := readNote(it.Path)
		if !it.Truncated || it.SizeBytes < 30000 || len(p.Notes[0]) > 2048 || it.Body == "" || !strings.Contains(content, it.Body) {
			t.Errorf("truncated=%v size_bytes=%d item=%d bytes body %q", it.Truncated, it.SizeBytes, len(p.Notes[0]), clipText(it.Body))
		}
	})

	// Paging: the handbook (38 KB) alone overflows the response budget.
	args := map[string]any{"query": "soil", "k": 20, "max_bytes_per_item": 1 << 20, "response_format": "concise"}
	var firstCursor string
	t.Run("Paging", func(t *testing.T) {
		seen, pages := 0, 0
		cur := ""
		for {
			a := clone(args)
			if cur != "" {
				a["cursor"] = cur
			}
			p := sar(a)
			pages++
			items, _ := p.items(t)
			for _, it := range items {
				seen++
				if it.Rank != seen {
					t.Fatalf("page %d: rank %d, want %d (ranks consecutive, none repeated)", pages, it.Rank, seen)
				}
			}
			for _, e := range p.Errors {
				t.Errorf("unexpected per-item error %+v", e)
			}
			if p.NextCursor == nil {
				break
			}
			if len(items) == 0 || pages > 20 {
				t.Fatalf("page %d: next_cursor without progress", pages)
			}
			cur = *p.NextCursor
			if firstCursor == "" {
				firstCursor = cur
			}
		}
		if pages < 2 || seen < 5 || seen > 20 {
			t.Errorf("%d notes in %d pages; want several notes over at least 2 pages", seen, pages)
		}
	})

	t.Run("Cursor", func(t *testing.T) {
		if firstCursor == "" {
			t.Skip("no cursor from Paging")
		}
		a := clone(args)
		a["cursor"] = firstCursor
		sar(a) // still valid
		i := len(firstCursor) / 3
		flip := byte('A')
		if firstCursor[i] == 'A' {
			flip = 'B'
		}
		a["cursor"] = firstCursor[:i] + string(flip) + firstCursor[i+1:]
		if r := c.MustFail("args-invalid", tool, a); !strings.Contains(r.Message, "cursor") {
			t.Errorf("tampered cursor: message %q should name the cursor", r.Message)
		}
		for key, val := range map[string]any{"query": "soil test", "k": 19, "mode": "section", "response_format": "detailed"} {
			b := clone(args)
			b[key], b["cursor"] = val, firstCursor
			if r := c.MustFail("args-invalid", tool, b); !strings.Contains(r.Message, "other arguments") {
				t.Errorf("cursor reused with another %s: message %q", key, r.Message)
			}
		}
	})

	t.Run("Feedback", func(t *testing.T) {
		res, err := c.S.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if a := tool.Annotations; tool.Name == "record_retrieval_feedback" &&
				(a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint) {
				t.Errorf("record_retrieval_feedback writes a record: readOnly false, not destructive, not idempotent, closed-world; got %+v", a)
			}
		}
		p := sar(map[string]any{"query": "compost", "k": 1})
		items, _ := p.items(t)
		if len(items) != 1 {
			t.Fatal("no notes")
		}
		var out struct {
			Recorded bool   `json:"recorded"`
			ChunkID  string `json:"chunk_id"`
		}
		c.MustOK("record_retrieval_feedback", map[string]any{"chunk_id": items[0].ChunkID, "useful": true, "query": "compost"}, &out)
		if !out.Recorded || out.ChunkID != items[0].ChunkID {
			t.Errorf("feedback result %+v", out)
		}
		c.MustFail("args-invalid", "record_retrieval_feedback", map[string]any{"chunk_id": "not a chunk", "useful": true})
		c.MustFail("args-invalid", "record_retrieval_feedback", map[string]any{"chunk_id": items[0].ChunkID})
		c.MustFail("args-invalid", "record_retrieval_feedback", map[string]any{"chunk_id": items[0].ChunkID, "useful": true, "note": strings.Repeat("x", 2001)})
	})
}

func sameNotes(a, b sarPage) bool {
	x, _ := json.Marshal(a.Notes)
	y, _ := json.Marshal(b.Notes)
	return string(x) == string(y)
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func clipText(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
