package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

type completeIn struct {
	VaultArg
	TxArg
	Path  string `json:"path" jsonschema:"The note holding the directive." schema:"minLength=1"`
	Line  int    `json:"line" jsonschema:"1-based line of the [!ai] marker, as pending_directives gave it." schema:"minimum=1"`
	Title string `json:"title,omitempty" jsonschema:"The directive's title, as pending_directives gave it: checked, so a drifted line is caught." schema:"maxLength=1000"`
}

type completeOut struct {
	noteResult
	Line        int    `json:"line"`
	Title       string `json:"title"`
	AlreadyDone bool   `json:"already_done,omitempty" jsonschema:"the directive was already marked done: nothing was written"`
}

// CompleteDirective implements complete_directive.
func (s *Core) CompleteDirective(ctx context.Context, in completeIn) (*completeOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, path, release, err := s.noteToEdit(ctx, in.VaultArg, in.Path)
	if err != nil {
		return nil, err
	}
	defer release()
	title := ""
	prev, _, data, err := v.mutate(ctx, path, "", history.OpEdit, func(c *current) ([]byte, error) {
		out, err := vault.CompleteDirective(c.data, in.Line, in.Title)
		if errors.Is(err, vault.ErrAlreadyDone) {
			return nil, err
		}
		if err != nil {
			return nil, matchError("line", err)
		}
		for _, d := range vault.Parse(path, c.data).Note.Directives {
			if d.Line == in.Line {
				title = d.Title
			}
		}
		return out, nil
	})
	if errors.Is(err, vault.ErrAlreadyDone) {
		c, rerr := v.readForWrite(ctx, path)
		if rerr != nil {
			return nil, rerr
		}
		for _, d := range vault.Parse(path, c.data).Note.Directives {
			if d.Line == in.Line {
				title = d.Title
			}
		}
		_ = releaseLease(ctx, v.Store, path, in.Line, title)
		return &completeOut{noteResult: noteResult{Path: path, ContentHash: c.hash, Size: int64(len(c.data)), Index: WriteIndex{State: "current"}},
			Line: in.Line, Title: title, AlreadyDone: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := releaseLease(ctx, v.Store, path, in.Line, title); err != nil {
		return nil, err
	}
	return &completeOut{noteResult: s.noteResult(ctx, v, "complete", path+": "+title, prev.path, prev, data), Line: in.Line, Title: title}, nil
}

// Citation is one source a filed page cites.
type Citation struct {
	Path  string `json:"path" jsonschema:"A cited note's vault-relative path." schema:"minLength=1"`
	Quote string `json:"quote,omitempty" jsonschema:"The passage it supports the answer with." schema:"maxLength=2000"`
}

type filePageIn struct {
	VaultArg
	TxArg
	Path      string     `json:"path" jsonschema:"Where to file the page: a new vault-relative path ending in .md, e.g. \"Answers/Which beds need lime.md\"." schema:"minLength=1"`
	Title     string     `json:"title,omitempty" jsonschema:"The page's title (default: the file name)." schema:"maxLength=300"`
	Content   string     `json:"content" jsonschema:"The answer, in Markdown." schema:"minLength=1"`
	Question  string     `json:"question,omitempty" jsonschema:"The question it answers, kept in the frontmatter." schema:"maxLength=2000"`
	Citations []Citation `json:"citations,omitempty" jsonschema:"The notes the answer rests on: each becomes a link in a Sources section." schema:"maxItems=100"`
	Tags      []string   `json:"tags,omitempty" schema:"maxItems=20,minLength=1,maxLength=100"`
}

type filePageOut struct {
	noteResult
	Links []string `json:"links" jsonschema:"the cited notes, as linked"`
}

// FilePage implements file_page.
func (s *Core) FilePage(ctx context.Context, in filePageIn) (*filePageOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	defer v.writing()()
	path, err := writablePath("path", in.Path)
	if err != nil {
		return nil, err
	}
	title := strings.TrimSpace(in.Title)
	if title == "" {
		title = vault.NameOf(path)
	}
	var cited []vault.Note
	for i, c := range in.Citations {
		p, err := notePath(ctx, v, fmt.Sprintf("citations[%d].path", i), c.Path)
		if err != nil {
			return nil, err
		}
		n, ok := cat.Note(p)
		if !ok {
			if _, err := v.Store.Stat(ctx, p); err != nil {
				return nil, noNote(fmt.Sprintf("citations[%d].path", i), p)
			}
			n = vault.Note{Path: p, Name: vault.NameOf(p), Title: vault.NameOf(p)}
		}
		cited = append(cited, n)
	}
	data, links, err := pageText(title, in, cited, s.now(), cat)
	if err != nil {
		return nil, err
	}
	if err := v.tooBig("content", len(data)); err != nil {
		return nil, err
	}
	if err := v.create(ctx, "path", path, data); err != nil {
		return nil, err
	}
	return &filePageOut{noteResult: s.noteResult(ctx, v, "file", path, path, nil, data), Links: links}, nil
}

// pageText composes a filed page: frontmatter with provenance, a title
// heading (unless the content opens with one), the content, and a Sources
// section with a link to every cited note, spelled by path (unambiguous).
func pageText(title string, in filePageIn, cited []vault.Note, now time.Time, cat *vault.Catalog) ([]byte, []string, error) {
	fm := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v any) {
		var n yaml.Node
		_ = n.Encode(v)
		fm.Content = append(fm.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &n)
	}
	add("title", title)
	if len(in.Tags) > 0 {
		add("tags", in.Tags)
	}
	if q := strings.TrimSpace(in.Question); q != "" {
		add("question", q)
	}
	var paths, ids []string
	for _, n := range cited {
		paths = append(paths, n.Path)
		if n.ID != "" {
			ids = append(ids, n.ID)
		}
	}
	if len(paths) > 0 {
		add("derived_from", paths)
	}
	if len(ids) > 0 {
		add("derived_from_ids", ids)
	}
	add("filed_by", "file_page")
	add("filed_at", now.UTC().Format(time.RFC3339))
	head, err := encodeYAMLDoc(fm)
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	b.WriteString("---\n")
	b.WriteString(head)
	b.WriteString("---\n\n")
	body := strings.TrimSpace(in.Content)
	if !strings.HasPrefix(body, "# ") {
		b.WriteString("# " + strings.ReplaceAll(title, "\n", " ") + "\n\n")
	}
	b.WriteString(body)
	b.WriteString("\n")
	var links []string
	if len(cited) > 0 {
		b.WriteString("\n## Sources\n\n")
		for i, n := range cited {
			target := strings.TrimSuffix(n.Path, ".md")
			link := "[[" + target + "]]"
			if strings.ContainsAny(target, "|#^[]") {
				link = "[" + n.Title + "](<" + n.Path + ">)"
			} else if n.Title != "" && n.Title != vault.NameOf(n.Path) {
				link = "[[" + target + "|" + strings.ReplaceAll(n.Title, "|", "-") + "]]"
			}
			links = append(links, link)
			b.WriteString("- " + link)
			if q := strings.Join(strings.Fields(in.Citations[i].Quote), " "); q != "" {
				b.WriteString(": “" + q + "”")
			}
			b.WriteString("\n")
		}
	}
	return []byte(b.String()), links, nil
}

func encodeYAMLDoc(n *yaml.Node) (string, error) {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	return b.String(), enc.Close()
}
