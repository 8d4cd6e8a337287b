package core

import (
	"context"
	"strings"
)

type listTagsIn struct {
	VaultArg
	Page
	Prefix string `json:"prefix,omitempty" jsonschema:"Only tags starting with this (case-insensitive, '#' optional)."`
}

// TagCount is one tag and how many notes carry it (or a nested descendant).
type TagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}

type notesByTagIn struct {
	VaultArg
	Page
	Tag string `json:"tag" jsonschema:"The tag, with or without '#'; nested descendants match too (\"project\" also returns \"project/web\")." schema:"minLength=1"`
	IncludeArg
}

type listFoldersIn struct {
	VaultArg
	Path string `json:"path,omitempty" jsonschema:"Only folders under this one (vault-relative); default the whole vault."`
}

type listFoldersOut struct {
	Coverage
	Folders []string `json:"folders" jsonschema:"vault-relative folder paths, empty folders included, hidden ones excluded"`
	Total   int      `json:"total"`
}

// ListTags implements list_tags.
func (s *Core) ListTags(ctx context.Context, in listTagsIn) (*Paged[TagCount], error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	all := []TagCount{}
	for _, t := range cat.Tags(strings.TrimPrefix(in.Prefix, "#")) {
		all = append(all, TagCount{Tag: t.Tag, Count: t.Count})
	}
	items, total := page(all, in.Page)
	return &Paged[TagCount]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}

// NotesByTag implements notes_by_tag.
func (s *Core) NotesByTag(ctx context.Context, in notesByTagIn) (*Paged[NoteSummary], error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if strings.Trim(in.Tag, "# \t") == "" {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "tag"}, "tag %q names no tag: send one such as \"project\" or \"project/web\".", in.Tag)
	}
	notes, total := page(cat.NotesByTag(in.Tag), in.Page)
	return &Paged[NoteSummary]{Items: s.summaries(notes, in.metadata()), Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}

// ListFolders implements list_folders.
func (s *Core) ListFolders(ctx context.Context, in listFoldersIn) (*listFoldersOut, error) {
	v, err := s.vault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	dir, err := cleanDirArg("path", in.Path)
	if err != nil {
		return nil, err
	}
	folders, err := v.Store.Folders(ctx, dir)
	if err != nil {
		return nil, err
	}
	if folders == nil {
		folders = []string{}
	}
	return &listFoldersOut{Folders: folders, Total: len(folders)}, nil
}
