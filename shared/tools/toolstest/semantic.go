package toolstest

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// SemanticTools are the embedding tools; every server lists them, and
// without an embeddings provider each fails with the "not configured" error.
var SemanticTools = []string{"semantic_search", "related_notes", "find_duplicates", "topic_map", "reindex_embeddings"}

// RunSemantic runs only the semantic checks, for a harness that serves the
// sample vault with an embeddings provider (Run's other checks assume none).
func RunSemantic(t *testing.T, connect Connect) {
	c := NewClient(t, connect(t))
	c.WaitIndexed()
	testSemantic(t, c)
}

type semanticHit struct {
	Path    string  `json:"path"`
	Title   string  `json:"title"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
}

type semanticPage struct {
	Items []semanticHit `json:"items"`
	Total int           `json:"total"`
	Limit int           `json:"limit"`
	Mode  string        `json:"mode"`
}

func hitPaths(items []semanticHit) []string {
	var ps []string
	for _, h := range items {
		ps = append(ps, h.Path)
	}
	return ps
}

// testSemantic checks the semantic tools: with embeddings, their results
// on the sample vault; without, the not-configured error of each.
func testSemantic(t *testing.T, c *Client) {
	res, err := c.S.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}

	var info struct {
		Capabilities struct {
			Embeddings bool `json:"embeddings"`
		} `json:"capabilities"`
		Liveness struct {
			Stale bool `json:"embeddingIndexStale"`
		} `json:"liveness"`
	}
	c.MustOK("get_vault_info", nil, &info)
	if !info.Capabilities.Embeddings {
		// Not offered, yet a call is answered unsupported.
		for _, n := range SemanticTools {
			if slices.Contains(names, n) {
				t.Errorf("tools/list offers %s without embeddings", n)
			}
		}
		t.Run("NotConfigured", func(t *testing.T) { testSemanticNotConfigured(t, c) })
		return
	}
	mustContain(t, "tools/list", names, SemanticTools...)
	t.Run("SemanticSearch", func(t *testing.T) { testSemanticSearch(t, c) })
	t.Run("SearchModes", func(t *testing.T) { testSemanticSearchModes(t, c) })
	t.Run("RelatedNotes", func(t *testing.T) { testRelatedNotes(t, c) })
	t.Run("FindDuplicates", func(t *testing.T) { testFindDuplicates(t, c) })
	t.Run("TopicMap", func(t *testing.T) { testTopicMap(t, c) })
	t.Run("Reindex", func(t *testing.T) { testReindex(t, c) })
}

func testSemanticNotConfigured(t *testing.T, c *Client) {
	calls := map[string]map[string]any{
		"semantic_search":    {"query": "soil"},
		"related_notes":      {"path": "Soil handbook.md"},
		"find_duplicates":    {},
		"topic_map":          {},
		"reindex_embeddings": {},
	}
	for name, args := range calls {
		r := c.MustFail("unsupported", name, args)
		if r.Fields["reason"] != "not-configured" || !strings.Contains(r.Message, "not configured") {
			t.Errorf("%s without embeddings: %v %q", name, r.Fields, r.Message)
		}
	}
}

func testSemanticSearch(t *testing.T, c *Client) {
	var p semanticPage
	c.MustOK("semantic_search", map[string]any{"query": "compost bays peelings heap", "limit": 5}, &p)
	if p.Mode != "semantic" || len(p.Items) == 0 || len(p.Items) > 5 || p.Limit != 5 {
		t.Fatalf("semantic_search: %+v", p)
	}
	mustContain(t, "semantic_search top 5", hitPaths(p.Items), "Projects/Garden/Compost.md")
	for i, h := range p.Items {
		if h.Score < -1-1e-6 || h.Score > 1+1e-6 || (i > 0 && h.Score > p.Items[i-1].Score) {
			t.Errorf("scores must be cosines, best first: %+v", p.Items)
		}
		if h.Title == "" {
			t.Errorf("hit without a title: %+v", h)
		}
	}
	if p.Items[0].Snippet == "" {
		t.Errorf("the best hit has no snippet: %+v", p.Items[0])
	}

	c.MustOK("semantic_search", map[string]any{"query": "compost bays peelings heap", "limit": 5, "hybrid": true, "prefer_recent": true}, &p)
	if p.Mode != "hybrid" || len(p.Items) == 0 {
		t.Fatalf("hybrid: %+v", p)
	}
	for i, h := range p.Items {
		if h.Score < 0 || h.Score > 1 || (i > 0 && h.Score > p.Items[i-1].Score) {
			t.Errorf("hybrid scores must be 0-1, best first: %+v", p.Items)
		}
	}
	c.MustOK("semantic_search", map[string]any{"query": "planting", "limit": 20, "path_prefix": "Projects/"}, &p)
	for _, h := range p.Items {
		if !strings.HasPrefix(h.Path, "Projects/") {
			t.Errorf("path_prefix Projects/ returned %s", h.Path)
		}
	}
	c.MustFail("args-invalid", "semantic_search", map[string]any{})
	c.MustFail("args-invalid", "semantic_search", map[string]any{"query": "x", "limit": 0})
	c.MustFail("args-invalid", "semantic_search", map[string]any{"query": "x", "mode": "semantic"})
}

func testSemanticSearchModes(t *testing.T, c *Client) {
	for _, mode := range []string{"semantic", "hybrid"} {
		var p struct {
			Items []semanticHit `json:"items"`
			Total int           `json:"total"`
			Mode  string        `json:"mode"`
		}
		c.MustOK("search", map[string]any{"query": "soil test", "mode": mode, "limit": 10, "tags": []any{"soil"}}, &p)
		if p.Mode != mode || len(p.Items) == 0 {
			t.Fatalf("search mode %s: %+v", mode, p)
		}
		top := p.Items[0].Score
		var cut struct {
			Items []semanticHit `json:"items"`
		}
		c.MustOK("search", map[string]any{"query": "soil test", "mode": mode, "limit": 10, "tags": []any{"soil"}, "threshold": math.Floor(top*1000) / 1000}, &cut)
		if len(cut.Items) == 0 || len(cut.Items) > len(p.Items) {
			t.Errorf("search mode %s, threshold at the top score: %d of %d", mode, len(cut.Items), len(p.Items))
		}
		for _, h := range cut.Items {
			if h.Score < math.Floor(top*1000)/1000 {
				t.Errorf("search mode %s: %s scores %v, under the threshold", mode, h.Path, h.Score)
			}
		}
	}
}

func testRelatedNotes(t *testing.T, c *Client) {
	const note = "Projects/Garden/Compost.md"
	var p semanticPage
	c.MustOK("related_notes", map[string]any{"path": note, "limit": 10}, &p)
	if len(p.Items) == 0 || len(p.Items) > 10 {
		t.Fatalf("related_notes: %+v", p)
	}
	linked := []string{note}
	var out struct {
		Items []struct {
			ResolvedPath *string `json:"resolvedPath"`
		} `json:"items"`
	}
	c.MustOK("list_outgoing_links", map[string]any{"path": note, "limit": 500}, &out)
	for _, l := range out.Items {
		if l.ResolvedPath != nil {
			linked = append(linked, *l.ResolvedPath)
		}
	}
	var in struct {
		Items []struct {
			SourcePath string `json:"sourcePath"`
		} `json:"items"`
	}
	c.MustOK("list_backlinks", map[string]any{"path": note, "limit": 500}, &in)
	for _, b := range in.Items {
		linked = append(linked, b.SourcePath)
	}
	if len(linked) < 2 {
		t.Fatalf("fixture: %s should have links", note)
	}
	mustLack(t, "related_notes", hitPaths(p.Items), linked...)
	c.MustFail("note-not-found", "related_notes", map[string]any{"path": "No such note.md"})
	c.MustFail("path-invalid", "related_notes", map[string]any{"path": "../outside.md"})
}

func testFindDuplicates(t *testing.T, c *Client) {
	var p struct {
		Items []struct {
			PathA      string  `json:"pathA"`
			PathB      string  `json:"pathB"`
			Similarity float64 `json:"similarity"`
		} `json:"items"`
		Total int `json:"total"`
	}
	c.MustOK("find_duplicates", map[string]any{"threshold": 0.5, "limit": 3}, &p)
	if len(p.Items) > 3 || p.Total < len(p.Items) {
		t.Fatalf("find_duplicates: %+v", p)
	}
	for i, it := range p.Items {
		if it.Similarity < 0.5-1e-6 || it.PathA >= it.PathB || (i > 0 && it.Similarity > p.Items[i-1].Similarity) {
			t.Errorf("pairs must be at or above the threshold, ordered A < B, best first: %+v", p.Items)
		}
	}
	c.MustFail("args-invalid", "find_duplicates", map[string]any{"threshold": 2})
}

func testTopicMap(t *testing.T, c *Client) {
	var p struct {
		Clusters []struct {
			Notes      []string `json:"notes"`
			Size       int      `json:"size"`
			HasHub     bool     `json:"hasHub"`
			SharedTags []string `json:"sharedTags"`
		} `json:"clusters"`
		MissingHubs []struct {
			Notes  []string `json:"notes"`
			HasHub bool     `json:"hasHub"`
		} `json:"missingHubs"`
		Total int `json:"total"`
	}
	c.MustOK("topic_map", map[string]any{"threshold": 0.3, "min_size": 3}, &p)
	seen := map[string]bool{}
	for i, cl := range p.Clusters {
		if cl.Size < 3 || len(cl.Notes) != min(cl.Size, 100) || (i > 0 && cl.Size > p.Clusters[i-1].Size) {
			t.Errorf("cluster %d: %+v", i, cl)
		}
		for _, n := range cl.Notes {
			if seen[n] {
				t.Errorf("%s is in two clusters", n)
			}
			seen[n] = true
		}
	}
	for _, m := range p.MissingHubs {
		if m.HasHub {
			t.Errorf("missingHubs lists a cluster with a hub: %+v", m)
		}
	}
	c.MustFail("args-invalid", "topic_map", map[string]any{"min_size": 1})
}

func testReindex(t *testing.T, c *Client) {
	var r struct {
		Notes    int `json:"notes"`
		Passages int `json:"passages"`
	}
	c.MustOK("reindex_embeddings", nil, &r)
	c.MustOK("reindex_embeddings", nil, &r)
	if r.Notes != 0 || r.Passages != 0 {
		t.Errorf("a second reindex with nothing changed embedded %+v", r)
	}
	var info struct {
		Liveness struct {
			Stale bool `json:"embeddingIndexStale"`
		} `json:"liveness"`
	}
	c.MustOK("get_vault_info", nil, &info)
	if info.Liveness.Stale {
		t.Error("embeddingIndexStale after a reindex")
	}
}

// hasEmbeddings reports get_vault_info's capabilities.embeddings.
func hasEmbeddings(c *Client) bool {
	var info struct {
		Capabilities struct {
			Embeddings bool `json:"embeddings"`
		} `json:"capabilities"`
	}
	c.MustOK("get_vault_info", nil, &info)
	return info.Capabilities.Embeddings
}
