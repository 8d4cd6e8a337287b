package core

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

type listAttachmentsIn struct {
	VaultArg
	Page
	Path string `json:"path,omitempty" jsonschema:"Folder to list under (vault-relative); default the whole vault."`
}

// AttachmentInfo is one non-Markdown file.
type AttachmentInfo struct {
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	MimeType string `json:"mimeType"`
	Modified string `json:"modified"`
}

type readAttachmentIn struct {
	VaultArg
	Path   string `json:"path" jsonschema:"Vault-relative path of the file, e.g. \"assets/diagram.png\"." schema:"minLength=1"`
	Offset int64  `json:"offset,omitempty" jsonschema:"Byte offset to read from: pass the next_offset of the previous page. A file too big for one answer comes in pages whose base64 strings, concatenated, decode to the file." schema:"minimum=0"`
}

type readAttachmentOut struct {
	Coverage
	Path       string `json:"path"`
	MimeType   string `json:"mimeType"`
	Size       int64  `json:"size" jsonschema:"the whole file's size in bytes"`
	Base64     string `json:"base64" jsonschema:"the bytes from offset, base64-encoded"`
	Offset     int64  `json:"offset"`
	NextOffset *int64 `json:"next_offset" jsonschema:"where the next page starts (pass it as offset), or null when this page reaches the end of the file"`
}

// ListAttachments implements list_attachments.
func (s *Core) ListAttachments(ctx context.Context, in listAttachmentsIn) (*Paged[AttachmentInfo], error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	dir, err := cleanDirArg("path", in.Path)
	if err != nil {
		return nil, err
	}
	all := []AttachmentInfo{}
	for _, a := range cat.Attachments() {
		if dir != "" && !strings.HasPrefix(a.Path, dir+"/") {
			continue
		}
		all = append(all, AttachmentInfo{Path: a.Path, Size: a.Size, MimeType: a.MimeType, Modified: a.Modified.UTC().Format(time.RFC3339)})
	}
	items, total := page(all, in.Page)
	out := &Paged[AttachmentInfo]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}
	if total == 0 && dir != "" {
		if out.Hint, err = missingFolder(ctx, v, cat, dir); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadAttachment implements read_attachment.
func (s *Core) ReadAttachment(ctx context.Context, in readAttachmentIn) (*readAttachmentOut, error) {
	v, err := s.vault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	path, err := cleanArg("path", in.Path)
	if err != nil {
		return nil, err
	}
	if vault.IsHidden(path) {
		return nil, newError(KindNoteNotFound, map[string]any{"argument": "path"},
			"No file at %q: folders whose name starts with a dot are not part of the vault.", path)
	}
	binaryNote := false
	if vault.IsNotePath(path) {
		// A file named .md that holds binary content is no note: read_note
		// sends it here, and here it is read as the file it is.
		head, _, err := store.GetRange(ctx, v.Store, path, 0, 8<<10)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if binaryNote = err == nil && errors.Is(vault.Check(head), vault.ErrBinary); !binaryNote && err == nil {
			return nil, newError(KindArgsInvalid, map[string]any{"argument": "path"}, "%s is a Markdown note: read it with read_note.", path)
		}
	}
	limit := v.maxAttachment()
	obj, err := v.Store.Stat(ctx, path)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, newError(KindNoteNotFound, map[string]any{"argument": "path"},
			"No file at %q (path): list_attachments shows the files the vault has.", path)
	case err != nil:
		return nil, err
	case obj.Size > limit:
		return nil, newError(KindUnsupported, map[string]any{"max_bytes": limit, "size": obj.Size},
			"%s has %d bytes, over the %d-byte cap of read_attachment on this server.", path, obj.Size, limit)
	case in.Offset > obj.Size:
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "offset", "size": obj.Size},
			"offset %d is past the end of %s, which has %d bytes: pass an offset below its size (or 0).", in.Offset, path, obj.Size)
	}
	// base64 takes 4 bytes for 3, and the text copy repeats it: a page is
	// a multiple of 3 bytes, so the pages' base64 strings concatenate.
	out := &readAttachmentOut{Path: obj.Path, MimeType: vault.MimeTypeOf(obj.Path), Size: obj.Size, Offset: in.Offset}
	if binaryNote {
		out.MimeType = "application/octet-stream"
	}
	_, meta := render(out, 0)
	n := max(int64(budgetOf(ctx)-meta-256)*3/8/3*3, 3)
	data, got, err := store.GetRange(ctx, v.Store, path, in.Offset, n)
	if err != nil {
		return nil, err
	}
	out.Size, out.Base64 = got.Size, base64.StdEncoding.EncodeToString(data)
	if end := in.Offset + int64(len(data)); end < got.Size {
		out.NextOffset = &end
	}
	return out, nil
}
