package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// SourcesPrefix is the folder source notes are written under: the vault's
// immutable layer (get_vault_info's immutablePaths).
const SourcesPrefix = "sources/"

// maxSlugBytes bounds a path's slug.
const maxSlugBytes = 80

// Origin is where a converted document came from.
type Origin struct {
	URL       *url.URL  // ingest_url: the canonical URL (source_url)
	FinalURL  *url.URL  // ingest_url: the canonical URL the redirects ended at; recorded when it differs
	FileName  string    // ingest_file: the name the caller sent (source_file)
	FetchedAt time.Time // when it was fetched or received
	Raw       []byte    // the bytes as fetched or sent: content_hash is their SHA-256
	Refresh   bool      // a new dated version of a source already in the vault
}

// Note is a source note ready to write.
type Note struct {
	Title       string
	ContentHash string // "sha256:<hex>" of Origin.Raw
	Content     []byte // frontmatter and body
	slug        string
	key         string // what the hash suffix of a colliding path is taken from
	date        string // YYYY-MM-DD, for refreshed versions
	refresh     bool
}

// frontmatter is a source note's frontmatter, in this order.
type frontmatter struct {
	Title       string `yaml:"title"`
	SourceURL   string `yaml:"source_url,omitempty"`
	FinalURL    string `yaml:"final_url,omitempty"`
	SourceFile  string `yaml:"source_file,omitempty"`
	FetchedAt   string `yaml:"fetched_at"`
	ContentHash string `yaml:"content_hash"`
	ContentType string `yaml:"content_type"`
	Author      string `yaml:"author,omitempty"`
	Pages       int    `yaml:"pages,omitempty"`
	Truncated   bool   `yaml:"truncated,omitempty"`
}

// NewNote builds the source note for doc: frontmatter (title, source_url
// or source_file, final_url when redirects moved it, fetched_at,
// content_hash, content_type, author, pages, truncated) and the Markdown
// body under a "# title" heading unless the body starts with a heading.
// The title falls back to the file name or the URL.
func NewNote(doc *Document, o Origin) *Note {
	sum := sha256.Sum256(o.Raw)
	hash := "sha256:" + hex.EncodeToString(sum[:])
	title := doc.Title
	if title == "" {
		title = fallbackTitle(o)
	}
	title = cleanTitle(norm.NFC.String(title))
	fm := frontmatter{
		Title:       title,
		SourceFile:  cleanTitle(o.FileName),
		FetchedAt:   o.FetchedAt.UTC().Format(time.RFC3339),
		ContentHash: hash,
		ContentType: doc.Format.MediaType(),
		Author:      cleanTitle(doc.Author),
		Pages:       doc.Pages,
		Truncated:   doc.Truncated,
	}
	key := o.FileName + "\x00" + hash
	if o.URL != nil {
		fm.SourceURL = o.URL.String()
		key = fm.SourceURL
		if o.FinalURL != nil && o.FinalURL.String() != fm.SourceURL {
			fm.FinalURL = o.FinalURL.String()
		}
	}
	head, err := yaml.Marshal(&fm)
	if err != nil { // cannot happen: strings, ints and bools only
		panic(err)
	}
	var b strings.Builder
	b.WriteString("---\n")
	b.Write(head)
	b.WriteString("---\n\n")
	body := norm.NFC.String(doc.Markdown)
	if !strings.HasPrefix(body, "#") {
		b.WriteString("# " + escapeHeading(title) + "\n\n")
	}
	b.WriteString(body)
	b.WriteString("\n")
	s := slug(title)
	if s == "" {
		s = slug(fallbackTitle(o))
	}
	if s == "" {
		s = "source"
	}
	return &Note{
		Title: title, ContentHash: hash, Content: []byte(b.String()),
		slug: s, key: key, date: o.FetchedAt.UTC().Format("2006-01-02"), refresh: o.Refresh,
	}
}

// Path returns the attempt-th path to write the note at (0 first): the
// caller writes with "create only" (the store's IfNoneMatch) and, when a
// note is already there, tries the next. sources/<slug>.md, then
// sources/<slug>-<8 hex of the source's hash>.md, then -2, -3, ... after
// that. A refreshed version puts its date after the slug:
// sources/<slug>-2026-12-01.md. Every path is NFC, at most
// maxSlugBytes+30 bytes, and passes store.CleanPath.
func (n *Note) Path(attempt int) string {
	base := n.slug
	if n.refresh {
		base += "-" + n.date
	}
	switch {
	case attempt <= 0:
		return SourcesPrefix + base + ".md"
	case attempt == 1:
		return SourcesPrefix + base + "-" + shortHash(n.key) + ".md"
	default:
		return fmt.Sprintf("%s%s-%s-%d.md", SourcesPrefix, base, shortHash(n.key), attempt)
	}
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// fallbackTitle names a document without a title: the file name without
// its extension, else the URL's host and last path segment.
func fallbackTitle(o Origin) string {
	if o.FileName != "" {
		base := path.Base(strings.ReplaceAll(o.FileName, "\\", "/"))
		return strings.TrimSuffix(base, path.Ext(base))
	}
	if o.URL != nil {
		t := o.URL.Hostname()
		if seg := path.Base(strings.TrimSuffix(o.URL.Path, "/")); seg != "/" && seg != "." && seg != "" {
			t += " " + strings.TrimSuffix(seg, path.Ext(seg))
		}
		return t
	}
	return ""
}

// escapeHeading keeps a title from being read as more than heading text.
func escapeHeading(t string) string {
	return strings.NewReplacer("[[", "\\[\\[", "]]", "\\]\\]", "#", "\\#").Replace(t)
}

// reservedNames are file names Windows will not create (a vault synced to
// Windows must still open).
var reservedNames = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

// slug makes a file name from a title: NFC, lowercase, letters, marks and
// digits of any script kept, every other run of characters one '-', at
// most maxSlugBytes bytes (cut at a rune boundary), no leading or trailing
// '-', never a name Windows reserves.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFC.String(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) && b.Len() > 0 {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
		} else {
			dash = true
		}
		if b.Len() >= 4*maxSlugBytes {
			break
		}
	}
	s := b.String()
	if len(s) > maxSlugBytes {
		s = clip(s, maxSlugBytes)
		s = strings.TrimSuffix(s, "…")
	}
	s = norm.NFC.String(strings.Trim(s, "-"))
	if reservedNames[s] {
		s += "-page"
	}
	return s
}
