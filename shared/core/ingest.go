package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/ingest"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// ingest_url and ingest_file: a web page or a file sent by the caller
// becomes a new note under sources/, the vault's write-once layer, through
// shared/ingest (fetch, convert, the note). docs/ingest.md says what is
// fetched and refused.

// ingestPaths is how many paths an ingest tries before giving up.
const ingestPaths = 20

type ingestURLIn struct {
	VaultArg
	TxArg
	URL     string `json:"url" jsonschema:"The page to capture: an absolute http or https URL. HTML, Markdown, plain text and PDF are accepted." schema:"minLength=1,maxLength=8192"`
	Refresh bool   `json:"refresh,omitempty" jsonschema:"Fetch again and file a new dated version even when the vault already holds this URL (by default the existing note is returned, duplicate: true)."`
}

type ingestFileIn struct {
	VaultArg
	TxArg
	Name          string `json:"name,omitempty" jsonschema:"The file's name, e.g. \"report.pdf\": recorded as source_file, and the note's title when the document has none. Needed with content_base64 or upload." schema:"minLength=1,maxLength=255"`
	ContentBase64 string `json:"content_base64,omitempty" jsonschema:"The file's bytes, base64 (standard or URL-safe); at most 10 MiB decoded (and within the server's request limit: on the cloud about 4 MB). Bigger files: upload." schema:"minLength=1"`
	MediaType     string `json:"media_type,omitempty" jsonschema:"text/html, text/markdown, text/plain or application/pdf; when absent the bytes and the name's extension decide." schema:"maxLength=200"`
	Upload        bool   `json:"upload,omitempty" jsonschema:"Instead of content_base64: answer a presigned URL (upload.url, S3 vaults only) to PUT the file to, up to 20 MiB; the server files it once it arrives. Then call ingest_file with upload_id for the note."`
	UploadID      string `json:"upload_id,omitempty" jsonschema:"The id an upload answered: the note filed from that upload (upload.state filed), or its state (waiting, expired)." schema:"maxLength=64"`
}

// ingestOut is what ingest_url and ingest_file answer.
type ingestOut struct {
	noteResult
	Title       string     `json:"title"`
	SourceURL   string     `json:"source_url,omitempty" jsonschema:"the canonical URL recorded in the note"`
	SourceFile  string     `json:"source_file,omitempty"`
	SourceHash  string     `json:"source_hash,omitempty" jsonschema:"sha256:<hex> of the bytes as fetched or sent (the note's content_hash frontmatter)"`
	ContentType string     `json:"content_type,omitempty" jsonschema:"what the document was read as: text/html, text/markdown, text/plain or application/pdf"`
	Duplicate   bool       `json:"duplicate" jsonschema:"true: the vault already held this URL; the existing note is returned and nothing was fetched or written"`
	Truncated   bool       `json:"truncated,omitempty" jsonschema:"the converted text was cut at 2 MiB"`
	Redirects   int        `json:"redirects,omitempty"`
	Upload      *uploadOut `json:"upload,omitempty" jsonschema:"ingest_file's presigned upload: its id, state and (when made) URL"`
}

// IngestURL implements ingest_url.
func (s *Core) IngestURL(ctx context.Context, in ingestURLIn) (*ingestOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	_, canon, err := ingest.ParseURL(in.URL)
	if err != nil {
		return nil, ingestError(err)
	}
	if !in.Refresh {
		if n, ok := ingestedNote(cat, canon.String()); ok {
			return &ingestOut{
				noteResult: noteResult{Path: n.Path, ContentHash: n.Hash, Size: n.Size, Index: WriteIndex{State: "current"}},
				Title:      n.Title, SourceURL: canon.String(), SourceHash: fmString(n, "content_hash"),
				ContentType: fmString(n, "content_type"), Duplicate: true,
			}, nil
		}
		claim, dup, err := s.claimURL(ctx, v, canon.String())
		if err != nil || dup != nil {
			return dup, err
		}
		out, err := s.fetchSource(ctx, v, in)
		if err != nil {
			claim.release(ctx)
			return nil, err
		}
		claim.done(ctx, out)
		return out, nil
	}
	return s.fetchSource(ctx, v, in)
}

// fetchSource fetches in.URL, converts it and files the note.
func (s *Core) fetchSource(ctx context.Context, v *Vault, in ingestURLIn) (*ingestOut, error) {
	resp, err := v.fetcher().Fetch(ctx, in.URL)
	if err != nil {
		return nil, ingestError(err)
	}
	doc, err := ingest.Convert(ctx, ingest.Source{Body: resp.Body, MediaType: resp.MediaType, Charset: resp.Charset, URL: resp.Final}, ingest.ConvertLimits{})
	if err != nil {
		return nil, ingestError(err)
	}
	final := resp.FinalCanonical
	if final == nil || final.String() == resp.Canonical.String() {
		final = nil
	}
	n := ingest.NewNote(doc, ingest.Origin{URL: resp.Canonical, FinalURL: final, FetchedAt: resp.FetchedAt, Raw: resp.Body, Refresh: in.Refresh})
	out, err := s.writeSource(ctx, v, n, "url "+resp.Canonical.String())
	if err != nil {
		return nil, err
	}
	out.SourceURL, out.ContentType, out.Truncated, out.Redirects = resp.Canonical.String(), doc.Format.MediaType(), doc.Truncated, resp.Redirects
	return out, nil
}

// IngestFile implements ingest_file.
func (s *Core) IngestFile(ctx context.Context, in ingestFileIn) (*ingestOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, err := s.ready(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	modes := 0
	for _, set := range []bool{in.ContentBase64 != "", in.Upload, in.UploadID != ""} {
		if set {
			modes++
		}
	}
	switch {
	case modes != 1:
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "content_base64"},
			"Send exactly one of content_base64 (the file), upload: true (a URL to upload a bigger file to) or upload_id (the note of an upload).")
	case in.Upload:
		return s.startUpload(ctx, v, in)
	case in.UploadID != "":
		return s.uploadState(ctx, v, in.UploadID)
	}
	f, err := ingest.DecodeFile(in.Name, in.ContentBase64, in.MediaType, ingest.DefaultMaxFileBytes)
	if err != nil {
		return nil, ingestError(err)
	}
	return s.fileSource(ctx, v, f, "file")
}

// fileSource converts a file sent or uploaded to Markdown and files it as
// a source note; how ("file", "upload") goes to the ledger.
func (s *Core) fileSource(ctx context.Context, v *Vault, f *ingest.File, how string) (*ingestOut, error) {
	doc, err := ingest.Convert(ctx, ingest.Source{Body: f.Body, MediaType: f.MediaType, Charset: f.Charset, Name: f.Name}, ingest.ConvertLimits{})
	if err != nil {
		return nil, ingestError(err)
	}
	n := ingest.NewNote(doc, ingest.Origin{FileName: f.Name, FetchedAt: s.now().UTC(), Raw: f.Body})
	out, err := s.writeSource(ctx, v, n, how+" "+f.Name)
	if err != nil {
		return nil, err
	}
	out.SourceFile, out.ContentType, out.Truncated = f.Name, doc.Format.MediaType(), doc.Truncated
	return out, nil
}

// writeSource creates the source note at the first free path of n's
// (create only: nothing is ever overwritten), logs it in the ledger and
// indexes it.
func (s *Core) writeSource(ctx context.Context, v *Vault, n *ingest.Note, what string) (*ingestOut, error) {
	defer v.writing()() // not during the fetch: a move need not wait for it
	if err := v.tooBig("content", len(n.Content)); err != nil {
		return nil, err
	}
	for attempt := range ingestPaths {
		p := n.Path(attempt)
		_, _, err := v.putNote(ctx, v.change(ctx, p, history.OpWrite, n.Content, nil), nil)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &ingestOut{
			noteResult: s.noteResult(ctx, v, "ingest", n.Title+" ("+what+")", p, nil, n.Content),
			Title:      n.Title, SourceHash: n.ContentHash,
		}, nil
	}
	return nil, newError(KindNoteExists, map[string]any{"path": n.Path(0)},
		"%d notes named like this source are already under %s: nothing was written.", ingestPaths, ingest.SourcesPrefix)
}

// ingestedNote finds the note that holds canonical URL u: its source_url (or
// the final_url its redirects ended at), canonicalised, is u.
func ingestedNote(cat *vault.Catalog, u string) (vault.Note, bool) {
	var found vault.Note
	ok := false
	cat.Each(func(n *vault.Note) {
		if ok || (n.SourceURL == "" && n.Frontmatter["final_url"] == nil) {
			return
		}
		for _, raw := range []string{n.SourceURL, fmString(*n, "final_url")} {
			if raw == "" {
				continue
			}
			if raw == u || canonicalURL(raw) == u {
				found, ok = *n, true
				return
			}
		}
	})
	return found, ok
}

func canonicalURL(raw string) string {
	if _, c, err := ingest.ParseURL(raw); err == nil {
		return c.String()
	}
	return ""
}

func fmString(n vault.Note, key string) string {
	if s, ok := n.Frontmatter[key].(string); ok {
		return s
	}
	return ""
}

// ingestError maps an ingest refusal to the tool error: kind args-invalid
// (the kind catalogue is closed) with its reason, whether a retry may
// succeed, and its fields; the cause goes to the log. Anything else is
// returned as it is.
func ingestError(err error) error {
	var ie *ingest.Error
	if !errors.As(err, &ie) {
		return err
	}
	if ie.Err != nil {
		slog.Info("ingest refused", "reason", ie.Reason, "err", ie.Err)
	}
	fields := map[string]any{"reason": string(ie.Reason), "retryable": ie.Retryable}
	for k, v := range ie.Fields {
		fields[k] = v
	}
	return newError(KindArgsInvalid, fields, "%s", ie.Message)
}

// fetcher is the vault's Fetcher, made once: it keeps a connection pool.
func (v *Vault) fetcher() *ingest.Fetcher {
	st := v.state()
	st.fetchOnce.Do(func() {
		st.fetch = &ingest.Fetcher{Policy: ingest.Policy{Allow: v.Ingest.Allow}, Limits: v.Ingest.Limits, Resolve: v.Ingest.Resolve}
	})
	return st.fetch
}

// ParseAllow parses the ingest allow-list: CIDR prefixes or single
// addresses.
func ParseAllow(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("ingest allow-list: %q is neither an address nor a CIDR prefix (such as 10.20.0.0/16)", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
