package core

import (
	"context"
	"sort"

	"github.com/sheaf-dev/sheaf/shared/rank"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// askSlack is how many notes past the page the lexical lane ranks, so that
// the vault prior can lift a note onto the page.
const askSlack = 10

// askLexical ranks notes for a question with the text index's question lane
// (textindex.Index.Ask) and what the catalog knows of each note (the link
// prior and the display text of links pointing into it: rank.Lexical), and
// returns the hits from offset on: at most limit, best (lowest Score)
// first.
func askLexical(ctx context.Context, v *Vault, cat *vault.Catalog, q textindex.Question, f textindex.Filter, limit, offset int) (textindex.Result, error) {
	p := v.ranking()
	res, err := v.Text.Ask(ctx, q, textindex.Options{Filter: f, Limit: offset + limit + askSlack, Ask: p.Ask})
	if err != nil {
		return textindex.Result{}, err
	}
	res.Hits = rank.Lexical(p, q, res.Hits, catalogLinks{cat})
	sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].Score < res.Hits[j].Score })
	hits := res.Hits[min(offset, len(res.Hits)):]
	res.Hits = hits[:min(limit, len(hits))]
	return res, nil
}

// catalogLinks answers rank.Links from the catalog, at query time: links
// are resolved as they are now, so a note gaining or losing a link (or a
// rename changing where one points) is seen at once, and indexing a note
// never touches another.
type catalogLinks struct{ cat *vault.Catalog }

func (c catalogLinks) Incoming(path string) (sources int, anchors []string) {
	if c.cat == nil {
		return 0, nil
	}
	in := c.cat.Inbound(path)
	return in.Sources, in.Anchors
}

func (c catalogLinks) Outgoing(path string) []rank.Anchor {
	if c.cat == nil {
		return nil
	}
	var out []rank.Anchor
	for _, l := range c.cat.Outgoing(path) {
		if l.Path != "" && !l.Attachment && l.Path != path {
			out = append(out, rank.Anchor{Target: l.Path, Text: l.Display})
		}
	}
	return out
}
