package vault

import (
	"cmp"
	"slices"
	"strings"
)

// GraphNode is a note in a link subgraph.
type GraphNode struct {
	Path string `json:"path"`
	Name string `json:"name"`
}

// GraphEdge is a link from one note to another.
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Distances walks links (outgoing resolved links and backlinks, notes only)
// breadth-first from the seed notes for up to depth hops, and returns each
// reached note's distance from the nearest seed (seeds at 0). Unknown seeds
// are ignored.
func (c *Catalog) Distances(seeds []string, depth int) map[string]int {
	c.rlock(names | links)
	defer c.mu.RUnlock()
	var known []string
	for _, s := range seeds {
		if n := c.lookup(s); n != nil {
			known = append(known, n.Path)
		}
	}
	return c.distances(known, depth)
}

func (c *Catalog) distances(seeds []string, depth int) map[string]int {
	dist := make(map[string]int, len(seeds))
	var frontier []string
	for _, p := range seeds {
		if _, seen := dist[p]; !seen {
			dist[p] = 0
			frontier = append(frontier, p)
		}
	}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []string
		for _, p := range frontier {
			for _, q := range c.neighbors(p) {
				if _, seen := dist[q]; !seen {
					dist[q] = d
					next = append(next, q)
				}
			}
		}
		frontier = next
	}
	return dist
}

// MaxGraphDepth is the largest depth Graph walks.
const MaxGraphDepth = 5

// Graph returns the local link subgraph around the note center: a
// breadth-first walk of depth hops (clamped to 1..MaxGraphDepth) along
// outgoing resolved links and incoming backlinks. Nodes are sorted by
// distance from center, then path; edges are deduplicated, sorted, and
// only join returned nodes. Attachments and self-links are left out.
// An unknown center gives nil, nil.
func (c *Catalog) Graph(center string, depth int) ([]GraphNode, []GraphEdge) {
	depth = max(1, min(depth, MaxGraphDepth))
	c.rlock(names | links)
	defer c.mu.RUnlock()
	start := c.lookup(center)
	if start == nil {
		return nil, nil
	}
	dist := c.distances([]string{start.Path}, depth)

	nodes := make([]GraphNode, 0, len(dist))
	var edges []GraphEdge
	for p := range dist {
		name := c.notes[p].Name
		if name == "" {
			name = NameOf(p)
		}
		nodes = append(nodes, GraphNode{Path: p, Name: name})
		for _, to := range c.outNotes(p) {
			if _, ok := dist[to]; ok {
				edges = append(edges, GraphEdge{From: p, To: to})
			}
		}
	}
	slices.SortFunc(nodes, func(a, b GraphNode) int {
		return cmp.Or(cmp.Compare(dist[a.Path], dist[b.Path]), strings.Compare(a.Path, b.Path))
	})
	slices.SortFunc(edges, func(a, b GraphEdge) int {
		return cmp.Or(strings.Compare(a.From, b.From), strings.Compare(a.To, b.To))
	})
	return nodes, edges
}

// neighbors returns the notes linked to or from p, deduplicated and sorted,
// without p itself.
func (c *Catalog) neighbors(p string) []string {
	out := c.outNotes(p)
	for _, b := range c.backlinks(p) {
		if b.Source != p {
			out = append(out, b.Source)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// outNotes returns the distinct other notes the note at p links to, sorted.
func (c *Catalog) outNotes(p string) []string {
	n := c.notes[p]
	if n == nil {
		return nil
	}
	var out []string
	for _, l := range n.Links {
		r := c.resolve(p, l)
		if r.Path != "" && !r.Attachment && r.Path != p {
			out = append(out, r.Path)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
