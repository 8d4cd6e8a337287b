package tools

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
	Path string `json:"path" jsonschema:"Vault-relative path of the file, e.g. \"assets/diagram.png\"." schema:"minLength=1"`
}

type readAttachmentOut struct {
	Path     string `json:"path"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Base64   string `json:"base64"`
}

func (s *Server) attachmentTools() []Tool {
	list := define("list_attachments", "List attachments",
		"List the non-Markdown files in the vault (images, PDFs, data) as {path, size, mimeType}: how to find out which referenced files exist. Paginated.",
		readOnly, s.ListAttachments)
	read := define("read_attachment", "Read an attachment",
		"Read one non-Markdown file (image, PDF, data) as base64, after read_note shows a reference to it. Files over the server's cap are rejected to protect the context window.",
		readOnly, s.ReadAttachment)
	return []Tool{list, read}
}

// ListAttachments implements list_attachments.
func (s *Server) ListAttachments(ctx context.Context, in listAttachmentsIn) (*Paged[AttachmentInfo], error) {
	_, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	dir, err := store.CleanDir(in.Path)
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
	return &Paged[AttachmentInfo]{Items: items, Total: total, Offset: in.Offset, Limit: in.Limit}, nil
}

// ReadAttachment implements read_attachment.
func (s *Server) ReadAttachment(ctx context.Context, in readAttachmentIn) (*readAttachmentOut, error) {
	v, err := s.vault(in.VaultArg)
	if err != nil {
		return nil, err
	}
	path, err := store.CleanPath(in.Path)
	if err != nil {
		return nil, err
	}
	if vault.IsHidden(path) {
		return nil, newError(KindNoteNotFound, nil, "file not found: %s (hidden folders are not part of the vault)", path)
	}
	if vault.IsNotePath(path) {
		return nil, newError(KindArgsInvalid, nil, "%s is a Markdown note: use read_note", path)
	}
	limit := v.maxAttachment()
	data, obj, err := v.Store.Get(ctx, path, limit)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, newError(KindNoteNotFound, nil, "file not found: %s", path)
	case errors.Is(err, store.ErrTooLarge):
		fields := map[string]any{"max_bytes": limit}
		if o, serr := v.Store.Stat(ctx, path); serr == nil {
			fields["size"] = o.Size
		}
		return nil, newError(KindUnsupported, fields, "%s is larger than the %d-byte cap of read_attachment", path, limit)
	case err != nil:
		return nil, err
	}
	return &readAttachmentOut{Path: obj.Path, MimeType: vault.MimeTypeOf(obj.Path), Size: obj.Size,
		Base64: base64.StdEncoding.EncodeToString(data)}, nil
}
