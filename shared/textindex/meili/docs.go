package meili

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/meilisearch/meilisearch-go"
	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// normPath is the form a path is indexed and filtered in: valid UTF-8, NFC.
func normPath(p string) string { return norm.NFC.String(strings.ToValidUTF8(p, "\uFFFD")) }

// noteID is the document id of the note at (normalised) path: 32 hex
// digits of its SHA-256.
func noteID(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:16])
}

// passageID is the document id of the i-th passage of the note with id
// note.
func passageID(note string, i int) string { return note + "-" + strconv.Itoa(i) }

// prefixHash is the filter key of one path prefix.
func prefixHash(prefix string) string {
	sum := sha256.Sum256([]byte(prefix))
	return hex.EncodeToString(sum[:12])
}

// prefixHashes hashes every prefix of path that ends on a rune boundary.
func prefixHashes(path string) []string {
	out := make([]string, 0, utf8.RuneCountInString(path))
	for i := range path {
		if i > 0 {
			out = append(out, prefixHash(path[:i]))
		}
	}
	if path != "" {
		out = append(out, prefixHash(path))
	}
	return out
}

// text makes s valid UTF-8 and NFC.
func text(s string) string { return norm.NFC.String(strings.ToValidUTF8(s, "\uFFFD")) }

func texts(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, text(s))
	}
	return out
}

// foldKey normalises a value compared case-insensitively (authors).
func foldKey(s string) string { return strings.ToLower(text(strings.TrimSpace(s))) }

// entityKey normalises an entity; "" is dropped.
func entityKey(s string) string { return text(s) }

type noteDoc struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Note        string   `json:"note"`
	Path        string   `json:"path"`
	Title       string   `json:"title"`
	Aliases     []string `json:"aliases"`
	Headings    []string `json:"headings"`
	Tags        []string `json:"tags"`
	Description []string `json:"description"`
	Body        string   `json:"body"`
	TagKeys     []string `json:"tagKeys"`
	Author      string   `json:"author"`
	Entities    []string `json:"entities"`
	Prefixes    []string `json:"prefixes"`
	Modified    string   `json:"modified"`
}

type passageDoc struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Note        string `json:"note"`
	Pidx        int    `json:"pidx"`
	Ordinal     int    `json:"ordinal"`
	Path        string `json:"path"`
	NoteTitle   string `json:"noteTitle"`
	Heading     string `json:"heading"`
	HeadingID   string `json:"headingId"`
	HeadingPath string `json:"headingPath"`
	Text        string `json:"text"`
}

// documents returns the note document of d and its passage documents. A
// Doc without Passages gets its Body as one passage, and one without a Body
// its passages' text as the body, as in the embedded adapter.
func documents(d textindex.Doc) (noteDoc, []passageDoc) {
	path := normPath(d.Path)
	id := noteID(path)
	n := noteDoc{
		ID: id, Kind: kindNote, Note: id, Path: path, Title: text(d.Title),
		Aliases: texts(d.Aliases), Headings: texts(d.Headings), Tags: texts(d.Tags),
		Description: texts(d.Description), Body: text(body(d)),
		TagKeys: vault.ExpandTags(d.Tags), Author: foldKey(d.Author), Prefixes: prefixHashes(path),
		Modified: d.Modified.UTC().Format(time.RFC3339Nano),
	}
	if n.TagKeys == nil {
		n.TagKeys = []string{}
	}
	n.Entities = []string{}
	for _, e := range d.Entities {
		if e = entityKey(e); e != "" {
			n.Entities = append(n.Entities, e)
		}
	}
	passages := d.Passages
	if len(passages) == 0 && strings.TrimSpace(d.Body) != "" {
		passages = []vault.Passage{{Text: d.Body}}
	}
	ps := make([]passageDoc, len(passages))
	for i, p := range passages {
		ps[i] = passageDoc{
			ID: passageID(id, i), Kind: kindPassage, Note: id, Pidx: i, Ordinal: p.Ordinal, Path: path,
			NoteTitle: n.Title, Heading: text(p.Heading()), HeadingID: text(p.HeadingID),
			HeadingPath: text(strings.Join(p.HeadingPath, "\n")), Text: text(p.Text),
		}
	}
	return n, ps
}

// body returns d.Body, or the text of its passages when Body is empty.
func body(d textindex.Doc) string {
	if d.Body != "" || len(d.Passages) == 0 {
		return d.Body
	}
	ts := make([]string, len(d.Passages))
	for i, p := range d.Passages {
		ts[i] = p.Text
	}
	return strings.Join(ts, "\n\n")
}

// staleChunk bounds the notes named in one stale-passage deletion filter.
const staleChunk = 250

// Upsert replaces the documents with the same paths (the last one wins when
// a path repeats) and returns once Meilisearch has applied every change.
func (ix *Index) Upsert(ctx context.Context, docs ...textindex.Doc) error {
	if len(docs) == 0 {
		return nil
	}
	if err := ix.EnsureSettings(ctx); err != nil {
		return err
	}
	last := map[string]int{}
	for i, d := range docs {
		last[normPath(d.Path)] = i
	}
	var (
		tasks  []int64
		batch  []json.RawMessage
		nbytes int
		stale  []staleNote
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		pk := "id"
		info, err := ix.indexManager().AddDocuments(ctx, batch, &meilisearch.DocumentOptions{PrimaryKey: &pk})
		if err != nil {
			return fmt.Errorf("meili: add documents: %w", err)
		}
		tasks = append(tasks, info.TaskUID)
		batch, nbytes = nil, 0
		return nil
	}
	add := func(v any) error {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("meili: encode document: %w", err)
		}
		if len(batch) > 0 && (len(batch) >= ix.maxBatchDocs || nbytes+len(raw) > ix.maxBatchBytes) {
			if err := flush(); err != nil {
				return err
			}
		}
		batch = append(batch, raw)
		nbytes += len(raw) + 1
		return nil
	}
	for i, d := range docs {
		if last[normPath(d.Path)] != i {
			continue
		}
		n, ps := documents(d)
		if err := add(n); err != nil {
			return err
		}
		for _, p := range ps {
			if err := add(p); err != nil {
				return err
			}
		}
		stale = append(stale, staleNote{n.ID, len(ps)})
	}
	if err := flush(); err != nil {
		return err
	}
	for len(stale) > 0 {
		chunk := stale[:min(staleChunk, len(stale))]
		stale = stale[len(chunk):]
		info, err := ix.indexManager().DeleteDocumentsByFilter(ctx, staleFilter(chunk), nil)
		if err != nil {
			return fmt.Errorf("meili: delete stale passages: %w", err)
		}
		tasks = append(tasks, info.TaskUID)
	}
	return ix.waitAll(ctx, tasks)
}

// staleNote is a note just written and its number of passages.
type staleNote struct {
	id       string
	passages int
}

// staleFilter matches the passages of notes beyond their new count.
func staleFilter(notes []staleNote) string {
	var b strings.Builder
	b.WriteString(fKind + " = " + quote(kindPassage) + " AND (")
	for i, n := range notes {
		if i > 0 {
			b.WriteString(" OR ")
		}
		fmt.Fprintf(&b, "(%s = %s AND %s >= %d)", fNote, quote(n.id), fPidx, n.passages)
	}
	b.WriteString(")")
	return b.String()
}

// waitAll waits for tasks in order and returns the first failure.
func (ix *Index) waitAll(ctx context.Context, tasks []int64) error {
	for _, t := range tasks {
		if err := ix.wait(ctx, t); err != nil {
			return fmt.Errorf("meili: %w", err)
		}
	}
	return nil
}

// deleteChunk bounds the notes named in one deletion filter.
const deleteChunk = 500

// Delete removes notes and their passages; missing paths are not an error.
func (ix *Index) Delete(ctx context.Context, paths ...string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := ix.EnsureSettings(ctx); err != nil {
		return err
	}
	var tasks []int64
	for len(paths) > 0 {
		chunk := paths[:min(deleteChunk, len(paths))]
		paths = paths[len(chunk):]
		ids := make([]string, len(chunk))
		for i, p := range chunk {
			ids[i] = noteID(normPath(p))
		}
		info, err := ix.indexManager().DeleteDocumentsByFilter(ctx, inFilter(fNote, ids), nil)
		if err != nil {
			return fmt.Errorf("meili: delete documents: %w", err)
		}
		tasks = append(tasks, info.TaskUID)
	}
	return ix.waitAll(ctx, tasks)
}

// pathsPage is the number of notes Paths fetches per request.
const pathsPage = 1000

// Paths returns every indexed note path with its Modified time.
func (ix *Index) Paths(ctx context.Context) (map[string]time.Time, error) {
	if err := ix.EnsureSettings(ctx); err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for offset := int64(0); ; offset += pathsPage {
		var res meilisearch.DocumentsResult
		err := ix.indexManager().GetDocuments(ctx, &meilisearch.DocumentsQuery{
			Offset: offset, Limit: pathsPage, Fields: []string{fPath, fModified}, Filter: kindFilter(kindNote),
		}, &res)
		if err != nil {
			return nil, fmt.Errorf("meili: fetch paths: %w", err)
		}
		for _, h := range res.Results {
			var d struct {
				Path     string `json:"path"`
				Modified string `json:"modified"`
			}
			if err := h.DecodeInto(&d); err != nil {
				return nil, fmt.Errorf("meili: fetch paths: %w", err)
			}
			t, err := time.Parse(time.RFC3339Nano, d.Modified)
			if err != nil {
				return nil, fmt.Errorf("meili: fetch paths: bad time %q for %q: %w", d.Modified, d.Path, err)
			}
			out[d.Path] = t
		}
		if len(res.Results) < pathsPage || offset+pathsPage >= res.Total {
			return out, nil
		}
	}
}
