package tools

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sheaf-dev/sheaf/shared/audit"
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/tools/mcphttp"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Notes and attachments as MCP resources: sheaf://<vault>/<path>, the
// path's segments percent-encoded. resources/list pages through what the
// caller may read (notes by path, then attachments); resources/read returns
// a note as text/markdown and an attachment as a blob. The same scope and
// folder checks as read_note apply, and a read is recorded in the read
// audit (tool "resources/read").

const (
	resourceScheme    = "sheaf://"
	resourceTemplate  = "sheaf://{vault}/{+path}"
	resourcesPageSize = 100
)

// Errors of resources/read, as JSON-RPC errors (mcphttp.RPCError): a
// resource that is not there, or that the caller may not read, looks the
// same (resource not found); a URI that is not a sheaf:// note URI is
// invalid params.

// notFound is the resource-not-found error for uri: -32002, or, for a
// client of protocol 2026-07-28 or later, -32602 (what mcp-go answers for a
// URI no template matches).
func notFound(ctx context.Context, uri string) error {
	code := mcphttp.CodeResourceNotFound
	if mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		code = mcphttp.CodeInvalidParams
	}
	return &mcphttp.RPCError{Code: code, Message: "Resource not found: " + clipURI(uri), Data: map[string]any{"uri": clipURI(uri)}}
}

func badURI(uri string) error {
	return &mcphttp.RPCError{Code: mcphttp.CodeInvalidParams,
		Message: "Invalid params: " + clipURI(uri) + " is not a resource of this server: sheaf://<vault>/<path>, the path's segments percent-encoded, no . or .. segments (resources/list lists them)"}
}

// resourceURI is the URI of path in vault id.
func resourceURI(id, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return resourceScheme + id + "/" + strings.Join(segs, "/")
}

// parseResourceURI splits a sheaf:// URI into its vault and path.
func parseResourceURI(uri string) (id, path string, ok bool) {
	rest, found := strings.CutPrefix(uri, resourceScheme)
	if !found {
		return "", "", false
	}
	id, raw, found := strings.Cut(rest, "/")
	if !found || id == "" || raw == "" {
		return "", "", false
	}
	p, err := url.PathUnescape(raw)
	if err != nil {
		return "", "", false
	}
	return id, p, true
}

// addResources registers the note template, the paged list and completion.
func (s *Server) addResources(srv *server.MCPServer, hooks *server.Hooks) {
	srv.AddResourceTemplate(mcp.NewResourceTemplate(resourceTemplate, "Vault note or file",
		mcp.WithTemplateDescription("A note (text/markdown, frontmatter included) or an attachment (a blob) of a vault, by its vault-relative path, e.g. sheaf://notes/Projects/Plan%202026.md. resources/list pages through every note and file you may read."),
		mcp.WithTemplateMIMEType("text/markdown"),
	), s.readResource)
	hooks.AddAfterListResources(func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		items, next := s.listResources(ctx, string(req.Params.Cursor))
		res.Resources = append(res.Resources, items...)
		res.NextCursor = mcp.Cursor(next)
	})
}

// readResource reads one note or attachment for the caller in ctx.
func (s *Server) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	id, raw, ok := parseResourceURI(uri)
	if !ok {
		return nil, badURI(uri)
	}
	path, err := store.CleanPath(raw)
	if err != nil {
		return nil, badURI(uri)
	}
	caller := auth.IdentityFrom(ctx)
	if !caller.Has(auth.ScopeRead) || auth.Denied(path) || gatePath(caller, note("path"), path, false) != nil {
		return nil, notFound(ctx, uri)
	}
	v, err := s.core.View(ctx, VaultArg{Vault: id})
	if err != nil {
		return nil, notFound(ctx, uri)
	}
	isNote := vault.IsNotePath(path)
	max := v.MaxNote()
	if !isNote {
		max = v.MaxAttachment()
	}
	data, _, err := v.Store.Get(ctx, path, max)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrPathInvalid):
		return nil, notFound(ctx, uri)
	case errors.Is(err, store.ErrTooLarge):
		return nil, &mcphttp.RPCError{Code: mcphttp.CodeInvalidParams,
			Message: fmt.Sprintf("Invalid params: %s is bigger than the %d bytes this server returns as a resource; read a note by pages with read_note (offset)", clipURI(uri), max)}
	case err != nil:
		return nil, &mcphttp.RPCError{Code: mcphttp.CodeInternal, Message: core.InternalError(err).Message}
	}
	v.Audit.Record(audit.Record{Caller: caller.Subject, Tool: "resources/read", Path: path})
	if isNote {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: string(data)}}, nil
	}
	return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: vault.MimeTypeOf(path), Blob: base64.StdEncoding.EncodeToString(data)}}, nil
}

// listResources is one page of the caller's notes and attachments, across
// the vaults it may read, and the next page's cursor ("" at the end).
func (s *Server) listResources(ctx context.Context, cursor string) ([]mcp.Resource, string) {
	caller := auth.IdentityFrom(ctx)
	if !caller.Has(auth.ScopeRead) {
		return nil, ""
	}
	offset, _ := strconv.Atoi(strings.TrimPrefix(cursor, "o"))
	var all []mcp.Resource
	for _, id := range s.core.VaultIDs() {
		_, cat, err := s.core.Open(ctx, VaultArg{Vault: id})
		if err != nil {
			continue
		}
		notes := cat.Notes()
		sort.Slice(notes, func(i, j int) bool { return notes[i].Path < notes[j].Path })
		for _, n := range notes {
			if auth.Denied(n.Path) {
				continue
			}
			size := n.Size
			r := mcp.Resource{URI: resourceURI(id, n.Path), Name: n.Path, Title: n.Title, MIMEType: "text/markdown", Size: &size}
			r.Annotations = &mcp.Annotations{LastModified: n.Modified.UTC().Format("2006-01-02T15:04:05Z")}
			all = append(all, r)
		}
		atts := cat.Attachments()
		sort.Slice(atts, func(i, j int) bool { return atts[i].Path < atts[j].Path })
		for _, a := range atts {
			if auth.Denied(a.Path) {
				continue
			}
			size := a.Size
			all = append(all, mcp.Resource{URI: resourceURI(id, a.Path), Name: a.Path, MIMEType: a.MimeType, Size: &size})
		}
	}
	if offset < 0 || offset >= len(all) {
		return nil, ""
	}
	end := min(len(all), offset+resourcesPageSize)
	next := ""
	if end < len(all) {
		next = "o" + strconv.Itoa(end)
	}
	return all[offset:end], next
}

func clipURI(u string) string {
	if len(u) > 300 {
		return u[:300] + "…"
	}
	return u
}
