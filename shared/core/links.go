package core

import (
	"context"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

type notePathIn struct {
	VaultArg
	Page
	Path string `json:"path" jsonschema:"Vault-relative path of the note." schema:"minLength=1"`
}

// Backlink is one note pointing at the given note.
type Backlink struct {
	SourcePath  string `json:"sourcePath"`
	SourceName  string `json:"sourceName"`
	DisplayText string `json:"displayText"`
	Kind        string `json:"kind"`
	Line        int    `json:"line"`
	Heading     string `json:"heading,omitempty"`
	Block       string `json:"block,omitempty"`
}

type linkGraphIn struct {
	VaultArg
	Path  string `json:"path" jsonschema:"Vault-relative path of the centre note." schema:"minLength=1"`
	Depth int    `json:"depth,omitempty" jsonschema:"Hops to follow, outbound and inbound; capped at 5." schema:"minimum=1,default=1"`
}

// GraphNode and GraphEdge make up link_graph's subgraph.
type GraphNode struct {
	Path string `json:"path"`
	Name string `json:"name"`
}

// GraphEdge is a resolved link between two returned nodes.
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type linkGraphOut struct {
	Coverage
	Center string      `json:"center"`
	Depth  int         `json:"depth"`
	Nodes  []GraphNode `json:"nodes"`
	Edges  []GraphEdge `json:"edges"`
}

// ListOutgoingLinks implements list_outgoing_links.
func (s *Core) ListOutgoingLinks(ctx context.Context, in notePathIn) (*Paged[OutLink], error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	n, err := catalogNote(cat, in.Path)
	if err != nil {
		return nil, err
	}
	items, total := page(outLinks(cat, n.Path, n.Links), in.Page)
	return &Paged[OutLink]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}

// ListBacklinks implements list_backlinks.
func (s *Core) ListBacklinks(ctx context.Context, in notePathIn) (*Paged[Backlink], error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	n, err := catalogNote(cat, in.Path)
	if err != nil {
		return nil, err
	}
	var all []Backlink
	for _, b := range cat.Backlinks(n.Path) {
		disp := b.Link.Display
		if disp == "" {
			disp = b.Link.Target
		}
		all = append(all, Backlink{SourcePath: b.Source, SourceName: vault.NameOf(b.Source), DisplayText: disp,
			Kind: b.Link.Kind, Line: b.Link.Line, Heading: b.Link.Heading, Block: b.Link.Block})
	}
	if all == nil {
		all = []Backlink{}
	}
	items, total := page(all, in.Page)
	return &Paged[Backlink]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}

// LinkGraph implements link_graph.
func (s *Core) LinkGraph(ctx context.Context, in linkGraphIn) (*linkGraphOut, error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	n, err := catalogNote(cat, in.Path)
	if err != nil {
		return nil, err
	}
	depth := min(max(in.Depth, 1), 5)
	nodes, edges := cat.Graph(n.Path, depth)
	out := &linkGraphOut{Center: n.Path, Depth: depth, Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	for _, g := range nodes {
		out.Nodes = append(out.Nodes, GraphNode{Path: g.Path, Name: g.Name})
	}
	for _, e := range edges {
		out.Edges = append(out.Edges, GraphEdge{From: e.From, To: e.To})
	}
	return out, nil
}
