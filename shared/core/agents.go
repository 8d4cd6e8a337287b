package core

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

type agentMentionsIn struct {
	VaultArg
	Page
	Handle string `json:"handle,omitempty" jsonschema:"Only this handle (case-insensitive, '@' optional); omit for every handle." schema:"minLength=1,maxLength=128"`
}

// MentionItem is one @handle mention in a note's prose.
type MentionItem struct {
	Path    string `json:"path"`
	Handle  string `json:"handle" jsonschema:"lower-cased, without '@'"`
	Line    int    `json:"line" jsonschema:"1-based line of the mention"`
	Context string `json:"context" jsonschema:"the trimmed source line"`
}

// normHandle is the form handles are compared in: NFC, lower-cased,
// without a leading '@'.
func normHandle(h string) string {
	return strings.ToLower(norm.NFC.String(strings.TrimPrefix(strings.TrimSpace(h), "@")))
}

// AgentMentions implements agent_mentions.
func (s *Core) AgentMentions(ctx context.Context, in agentMentionsIn) (*Paged[MentionItem], error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	want := ""
	if in.Handle != "" {
		if want = normHandle(in.Handle); want == "" {
			return nil, newError(KindArgsInvalid, nil, "handle %q names no handle", in.Handle)
		}
	}
	all := []MentionItem{}
	cat.Each(func(n *vault.Note) {
		for _, m := range n.Mentions {
			if want != "" && normHandle(m.Handle) != want {
				continue
			}
			all = append(all, MentionItem{Path: n.Path, Handle: m.Handle, Line: m.Line, Context: m.Context})
		}
	})
	slices.SortStableFunc(all, func(a, b MentionItem) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	items, total := page(all, in.Page)
	return &Paged[MentionItem]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}
