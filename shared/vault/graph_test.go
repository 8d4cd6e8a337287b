package vault

import (
	"reflect"
	"testing"
)

func TestGraph(t *testing.T) {
	// e -> a -> b -> c -> d, a -> b twice, a -> self, a -> picture, b -> [[C]] and [[c#x]].
	c := catalogOf(
		note("a.md", wl("b", 1), wl("B#h", 2), wl("a", 3), wl("#top", 4), wl("pic.png", 5), wl("missing", 6)),
		note("b.md", wl("C", 1), wl("c#x", 2)),
		note("sub/c.md", wl("d", 1)),
		note("d.md"),
		note("e.md", wl("a", 1)),
		note("island.md"),
	)
	c.UpsertAttachment(Attachment{Path: "pic.png"})

	nodeNames := func(ns []GraphNode) []string {
		out := []string{}
		for _, n := range ns {
			out = append(out, n.Path)
		}
		return out
	}
	for _, tc := range []struct {
		depth int
		nodes []string
		edges []GraphEdge
	}{
		{1, []string{"a.md", "b.md", "e.md"}, []GraphEdge{{"a.md", "b.md"}, {"e.md", "a.md"}}},
		{0, []string{"a.md", "b.md", "e.md"}, []GraphEdge{{"a.md", "b.md"}, {"e.md", "a.md"}}}, // clamped to 1
		{2, []string{"a.md", "b.md", "e.md", "sub/c.md"},
			[]GraphEdge{{"a.md", "b.md"}, {"b.md", "sub/c.md"}, {"e.md", "a.md"}}},
		{99, []string{"a.md", "b.md", "e.md", "sub/c.md", "d.md"},
			[]GraphEdge{{"a.md", "b.md"}, {"b.md", "sub/c.md"}, {"e.md", "a.md"}, {"sub/c.md", "d.md"}}},
	} {
		nodes, edges := c.Graph("A.md", tc.depth)
		if got := nodeNames(nodes); !reflect.DeepEqual(got, tc.nodes) {
			t.Errorf("depth %d nodes = %v, want %v", tc.depth, got, tc.nodes)
		}
		if !reflect.DeepEqual(edges, tc.edges) {
			t.Errorf("depth %d edges = %v, want %v", tc.depth, edges, tc.edges)
		}
	}
	nodes, _ := c.Graph("sub/c.md", 1)
	if want := []GraphNode{{"sub/c.md", "c"}, {"b.md", "b"}, {"d.md", "d"}}; !reflect.DeepEqual(nodes, want) {
		t.Errorf("nodes from c = %v, want %v", nodes, want)
	}
	nodes, edges := c.Graph("island.md", 3)
	if len(nodes) != 1 || len(edges) != 0 {
		t.Errorf("island = %v %v", nodes, edges)
	}
	if nodes, edges := c.Graph("nope.md", 1); nodes != nil || edges != nil {
		t.Error("graph of a missing note")
	}
	// The depth cap is 5 hops.
	chain := NewCatalog()
	for i := range 8 {
		chain.Upsert(note(string(rune('a'+i))+".md", wl(string(rune('a'+i+1)), 1)))
	}
	if nodes, _ := chain.Graph("a.md", 10); len(nodes) != 6 {
		t.Errorf("depth cap: %d nodes, want 6", len(nodes))
	}
}

func TestDistances(t *testing.T) {
	c := catalogOf(
		note("a.md", wl("b", 1), wl("b", 2), wl("a", 3)),
		note("b.md", wl("a", 1)),
		note("c.md", wl("a", 1)),
		note("d.md"),
	)
	for _, tc := range []struct {
		seeds []string
		depth int
		want  map[string]int
	}{
		{[]string{"a.md"}, 1, map[string]int{"a.md": 0, "b.md": 1, "c.md": 1}},
		{[]string{"d.md"}, 3, map[string]int{"d.md": 0}},
		{[]string{"nope.md"}, 1, map[string]int{}},
		{[]string{"b.md", "d.md"}, 2, map[string]int{"b.md": 0, "d.md": 0, "a.md": 1, "c.md": 2}},
		{[]string{"b.md"}, 1, map[string]int{"b.md": 0, "a.md": 1}},
	} {
		if got := c.Distances(tc.seeds, tc.depth); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Distances(%v, %d) = %v, want %v", tc.seeds, tc.depth, got, tc.want)
		}
	}
}
