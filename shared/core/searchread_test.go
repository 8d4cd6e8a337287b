package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// indexedServer writes files into a temporary vault, indexes it and serves
// it; the vault's folder is returned for tests that change it afterwards.
func indexedServer(t *testing.T, files map[string]string, wrap func(store.Store) store.Store) (*Core, string) {
	t.Helper()
	dir := indexertest.Folder(t, files)
	ix := indexFolder(t, dir)
	st := ix.Store
	if wrap != nil {
		st = wrap(st)
	}
	s, err := New(&Vault{ID: "t", Store: st, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}})
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func sarArgs(query string, k int) searchAndReadIn {
	return searchAndReadIn{Query: query, K: k, Mode: "note"}
}

// Concise answers read a note's body without parsing it (loadNoteBody):
// the bodies, hashes and chunk ids are those of the detailed answer, whose
// notes are parsed, whatever the note holds before its text.
func TestSearchAndReadConciseBodies(t *testing.T) {
	files := map[string]string{
		"front.md":    "---\ntitle: Orchard front\n---\n\n# Orchard\n\nThe apples are mulched.\n",
		"crlf.md":     "---\r\ntitle: Orchard crlf\r\n---\r\nThe pears have CRLF lines.\r\n",
		"bom.md":      "\uFEFF---\ntitle: Orchard bom\n---\nThe plums note opens with a byte-order mark.\n",
		"unclosed.md": "---\ntitle: Orchard unclosed\nThe cherries note never closes its block.\n",
		"bad.md":      "---\ntitle: Orchard bad\n---\nThe figs note has a bad byte \xff here.\n",
		"plain.md":    "The quinces, with no frontmatter at all.\n",
	}
	s, _ := indexedServer(t, files, nil)
	in := sarArgs("apples, pears, plums, cherries, figs or quinces?", 6)
	detailed, err := s.SearchAndRead(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	in.ResponseFormat = "concise"
	concise, err := s.SearchAndRead(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(detailed.Notes) != len(files) || len(concise.Notes) != len(files) {
		t.Fatalf("%d detailed and %d concise notes of %d", len(detailed.Notes), len(concise.Notes), len(files))
	}
	for i, d := range detailed.Notes {
		c := concise.Notes[i]
		if c.Path != d.Path || c.Body != d.Body || c.ContentHash != d.ContentHash || c.ChunkID != d.ChunkID {
			t.Errorf("concise %s: body %q, hash %s, chunk %s\ndetailed %s: body %q, hash %s, chunk %s",
				c.Path, c.Body, c.ContentHash, c.ChunkID, d.Path, d.Body, d.ContentHash, d.ChunkID)
		}
	}
}

func TestSearchAndReadNoteMode(t *testing.T) {
	s, _ := indexedServer(t, map[string]string{
		"Apples.md":    "---\ntitle: Apples\ntags: [fruit]\n---\n# Apples\n\nApples grow in the orchard.\n",
		"Pears.md":     "# Pears\n\nPears grow beside the apples.\n",
		"Unrelated.md": "# Bees\n\nThree hives.\n",
	}, nil)
	out, err := s.SearchAndRead(context.Background(), sarArgs("where do apples grow?", 5))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Notes) != 2 || out.NextCursor != nil || len(out.Errors) != 0 {
		t.Fatalf("got %+v", out)
	}
	for i, n := range out.Notes {
		if n.Rank != i+1 {
			t.Errorf("item %d has rank %d", i, n.Rank)
		}
		if _, _, err := ParseChunkID(n.ChunkID); err != nil || !strings.HasPrefix(n.ChunkID, n.Path+"#p") {
			t.Errorf("chunk_id %q: %v", n.ChunkID, err)
		}
		if n.Frontmatter == nil {
			t.Errorf("%s: detailed (the default) must carry frontmatter", n.Path)
		}
		if n.Heading != nil || n.SectionResolved != nil || n.Truncated {
			t.Errorf("%s: section or truncation fields in note mode: %+v", n.Path, n)
		}
	}
	apples := out.Notes[0]
	if apples.Path == "Pears.md" {
		apples = out.Notes[1]
	}
	if apples.Body != "# Apples\n\nApples grow in the orchard.\n" {
		t.Errorf("body %q: want the note without frontmatter", apples.Body)
	}
	if fm := *apples.Frontmatter; fm["title"] != "Apples" {
		t.Errorf("frontmatter %v", fm)
	}
	rn, err := s.ReadNote(context.Background(), readNoteIn{Path: "Apples.md"})
	if err != nil {
		t.Fatal(err)
	}
	if apples.ContentHash != rn.ContentHash {
		t.Errorf("content_hash %s, read_note says %s", apples.ContentHash, rn.ContentHash)
	}
}

func TestSearchAndReadSections(t *testing.T) {
	note := "---\ntitle: Guide\n---\nIntro about marmalade.\n\n## Alpha\n\nAlpha text.\n\n## Beta\n\nBeta talks about quinces.\n\n### Beta detail\n\nMore quince detail.\n\n## Gamma\n\nGamma text.\n"
	s, dir := indexedServer(t, map[string]string{"Guide.md": note}, nil)
	ctx := context.Background()
	section := func(query string) ReadItem {
		t.Helper()
		in := sarArgs(query, 1)
		in.Mode = "section"
		out, err := s.SearchAndRead(ctx, in)
		if err != nil || len(out.Notes) != 1 {
			t.Fatalf("%q: %+v, %v", query, out, err)
		}
		return out.Notes[0]
	}
	it := section("quinces")
	if it.Heading == nil || *it.Heading == nil || **it.Heading != "Beta" || it.SectionResolved == nil || !*it.SectionResolved {
		t.Fatalf("heading/resolved: %+v", it)
	}
	if want := "## Beta\n\nBeta talks about quinces.\n\n### Beta detail\n\nMore quince detail."; it.Body != want {
		t.Errorf("section body %q, want %q", it.Body, want)
	}
	it = section("marmalade")
	if it.Heading == nil || *it.Heading != nil {
		t.Errorf("text before the first heading: heading must be null, got %+v", it.Heading)
	}
	if !strings.Contains(it.Body, "Intro about marmalade.") || strings.Contains(it.Body, "Alpha") {
		t.Errorf("preamble body %q", it.Body)
	}

	// The note changed after indexing: the section is gone, the whole note comes back.
	if err := os.WriteFile(filepath.Join(dir, "Guide.md"), []byte("# Rewritten\n\nNothing left.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	it = section("quinces")
	if it.SectionResolved == nil || *it.SectionResolved || it.Body != "# Rewritten\n\nNothing left.\n" {
		t.Errorf("unresolved section: %+v", it)
	}
	in := sarArgs("quinces", 1)
	in.Mode, in.ResponseFormat = "section", "concise"
	out, err := s.SearchAndRead(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out.Notes[0])
	if !strings.Contains(string(raw), `"section_resolved":false`) || strings.Contains(string(raw), "heading") {
		t.Errorf("concise unresolved item: %s", raw)
	}
}

func TestSearchAndReadPerItemErrors(t *testing.T) {
	s, dir := indexedServer(t, map[string]string{
		"a.md": "# A\n\nturnip turnip turnip\n",
		"b.md": "# B\n\nturnip turnip\n",
		"c.md": "# C\n\nturnip\n",
	}, nil)
	ctx := context.Background()
	before, err := s.SearchAndRead(ctx, sarArgs("turnip", 3))
	if err != nil || len(before.Notes) != 3 {
		t.Fatalf("%+v, %v", before, err)
	}
	gone, binary := before.Notes[0].Path, before.Notes[2].Path
	if err := os.Remove(filepath.Join(dir, gone)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, binary), []byte("turnip\x00\x01\x02\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := s.SearchAndRead(ctx, sarArgs("turnip", 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Notes) != 1 || out.Notes[0].Rank != 2 {
		t.Errorf("notes %+v, want only rank 2", out.Notes)
	}
	want := []ItemError{
		{Rank: 1, Path: gone, Code: string(KindNoteNotFound)},
		{Rank: 3, Path: binary, Code: string(KindNotMarkdown)},
	}
	if len(out.Errors) != len(want) {
		t.Fatalf("errors %+v", out.Errors)
	}
	for i, e := range out.Errors {
		if e.Rank != want[i].Rank || e.Path != want[i].Path || e.Code != want[i].Code || e.Message == "" {
			t.Errorf("error %d = %+v, want %+v", i, e, want[i])
		}
	}

	// A note over the server's read limit is an error with its size and the limit.
	v, _ := s.vault(context.Background(), VaultArg{})
	v.MaxNoteBytes = 10
	out, err = s.SearchAndRead(ctx, sarArgs("turnip", 3))
	if err != nil {
		t.Fatal(err)
	}
	var big *ItemError
	for i := range out.Errors {
		if out.Errors[i].Rank == 2 {
			big = &out.Errors[i]
		}
	}
	if big == nil || big.Code != string(KindUnsupported) || big.Budget != 10 || big.Size == 0 {
		t.Errorf("too large: %+v", out.Errors)
	}
}

// manyNotes is n notes that all match "kiwi", each about size bytes.
func manyNotes(n, size int) map[string]string {
	files := map[string]string{}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for b.Len() < size {
			b.WriteString("The kiwi vine climbs the fence & <drips> \"sap\".\n\n")
		}
		files[fmt.Sprintf("n%02d.md", i)] = b.String()
	}
	return files
}

// collect pages through a request with a small budget and checks every page.
func collect(t *testing.T, s *Core, in searchAndReadIn, budget int) (ranks []int, pages int) {
	t.Helper()
	ctx := context.Background()
	for {
		out, err := s.searchAndRead(ctx, in, budget)
		if err != nil {
			t.Fatalf("page %d: %v", pages+1, err)
		}
		pages++
		used := 0
		for _, n := range out.Notes {
			// An item gets at most max_bytes_per_item, else what the
			// budget has left.
			perItem := budget - used
			if in.MaxBytesPerItem > 0 {
				perItem = min(in.MaxBytesPerItem, budget)
			}
			size := jsonLen(n)
			used += size
			if size > perItem {
				t.Errorf("rank %d: %d bytes, over the item budget %d", n.Rank, size, perItem)
			}
			ranks = append(ranks, n.Rank)
		}
		if used > budget {
			t.Errorf("page %d: %d bytes, over the budget %d", pages, used, budget)
		}
		if out.NextCursor == nil {
			return ranks, pages
		}
		if len(out.Notes) == 0 || pages > 50 {
			t.Fatalf("page %d: a cursor without progress", pages)
		}
		in.Cursor = *out.NextCursor
	}
}

func TestSearchAndReadPaging(t *testing.T) {
	s, _ := indexedServer(t, manyNotes(12, 1500), nil)
	for _, tc := range []struct {
		name                string
		k, maxBytes, budget int
		wantNotes, minPages int
	}{
		{"shares fit one page", 10, 0, 20000, 10, 1},
		{"big items page", 10, 5000, 8000, 10, 4},
		{"k above the hits", 20, 4000, 6000, 12, 6},
		{"one item per page", 3, 100000, 1000, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sarArgs("kiwi", tc.k)
			in.MaxBytesPerItem = tc.maxBytes
			ranks, pages := collect(t, s, in, tc.budget)
			if len(ranks) != tc.wantNotes || pages < tc.minPages {
				t.Errorf("%d notes in %d pages, want %d notes in at least %d pages", len(ranks), pages, tc.wantNotes, tc.minPages)
			}
			for i, r := range ranks {
				if r != i+1 {
					t.Fatalf("ranks %v: want 1..%d once each, in order", ranks, len(ranks))
				}
			}
		})
	}
}

func TestSearchAndReadTruncation(t *testing.T) {
	s, _ := indexedServer(t, manyNotes(1, 20000), nil)
	in := sarArgs("kiwi", 1)
	in.MaxBytesPerItem = 1000
	out, err := s.SearchAndRead(context.Background(), in)
	if err != nil || len(out.Notes) != 1 {
		t.Fatalf("%+v, %v", out, err)
	}
	n := out.Notes[0]
	data, _, err := s.vaults["t"].Store.Get(context.Background(), "n00.md", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !n.Truncated || n.SizeBytes != len(data) || jsonLen(n) > 1000 || !strings.HasPrefix(string(data), n.Body) || n.Body == "" {
		t.Errorf("truncated item: truncated=%v size_bytes=%d (file %d) json=%d body %q", n.Truncated, n.SizeBytes, len(data), jsonLen(n), n.Body)
	}
	if strings.HasSuffix(n.Body, "\n") {
		t.Errorf("cut should end at a paragraph boundary, trimmed: %q", n.Body[len(n.Body)-20:])
	}
}

func TestSearchAndReadCursors(t *testing.T) {
	s, _ := indexedServer(t, manyNotes(6, 1500), nil)
	ctx := context.Background()
	in := sarArgs("kiwi", 6)
	in.MaxBytesPerItem = 3000
	out, err := s.searchAndRead(ctx, in, 4000)
	if err != nil || out.NextCursor == nil {
		t.Fatalf("first page: %+v, %v", out, err)
	}
	cur := *out.NextCursor
	wantErr := func(name string, ctx context.Context, in searchAndReadIn, msg string) {
		t.Helper()
		_, err := s.searchAndRead(ctx, in, 4000)
		var te *Error
		if !errors.As(err, &te) || te.Kind != KindArgsInvalid || !strings.Contains(te.Message, msg) {
			t.Errorf("%s: err = %v, want args-invalid %q", name, err, msg)
		}
	}
	next := in
	next.Cursor = cur
	if _, err := s.searchAndRead(ctx, next, 4000); err != nil {
		t.Fatalf("second page: %v", err)
	}
	// The alias spelling of the same format is the same request.
	alias := next
	alias.Verbosity = "full"
	if _, err := s.searchAndRead(ctx, alias, 4000); err != nil {
		t.Errorf("verbosity full = detailed: %v", err)
	}

	tampered := next
	tampered.Cursor = cur[:10] + string(cur[10]^1) + cur[11:]
	wantErr("tampered", ctx, tampered, "cursor is invalid")
	changed := next
	changed.Query = "kiwi vine"
	wantErr("changed query", ctx, changed, "other arguments")
	changed = next
	changed.Mode = "section"
	wantErr("changed mode", ctx, changed, "other arguments")
	changed = next
	changed.ResponseFormat = "concise"
	wantErr("changed format", ctx, changed, "other arguments")
	wantErr("another caller", auth.WithIdentity(ctx, auth.Identity{Subject: "mallory", Granted: []auth.Scope{auth.ScopeAdmin}}), next, "other arguments")

	v, _ := s.vault(context.Background(), VaultArg{})
	c, err := cursorsFor(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(cursorTTL + time.Minute)
	c.Now = func() time.Time { return later }
	wantErr("expired", ctx, next, "cursor expired")
	c.Now = nil

	// Another server over the same store shares the key: the cursor works there.
	other, err := New(&Vault{ID: "t", Store: v.Store, Text: v.Text, Catalogs: v.Catalogs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.searchAndRead(ctx, next, 4000); err != nil {
		t.Errorf("cursor on another server of the vault: %v", err)
	}
}

// readOnlyStore refuses every write.
type readOnlyStore struct{ store.Store }

func (readOnlyStore) Put(context.Context, string, []byte, store.PutOptions) (store.Object, error) {
	return store.Object{}, errors.New("read-only file system")
}

func TestSearchAndReadReadOnlyVault(t *testing.T) {
	s, _ := indexedServer(t, manyNotes(4, 1500), func(st store.Store) store.Store { return readOnlyStore{st} })
	in := sarArgs("kiwi", 4)
	in.MaxBytesPerItem = 2000
	if ranks, _ := collect(t, s, in, 2500); len(ranks) != 4 {
		t.Errorf("ranks %v: paging must work with a process-local key", ranks)
	}
}

func TestResponseFormat(t *testing.T) {
	for _, tc := range []struct{ format, verbosity, want string }{
		{"", "", "detailed"}, {"concise", "", "concise"}, {"", "terse", "concise"},
		{"", "full", "detailed"}, {"concise", "terse", "concise"}, {"detailed", "full", "detailed"},
	} {
		if got, err := responseFormat(tc.format, tc.verbosity); err != nil || got != tc.want {
			t.Errorf("(%q, %q) = %q, %v; want %q", tc.format, tc.verbosity, got, err, tc.want)
		}
	}
	for _, bad := range [][2]string{{"concise", "full"}, {"detailed", "terse"}} {
		if _, err := responseFormat(bad[0], bad[1]); err == nil {
			t.Errorf("%v: conflicting formats accepted", bad)
		}
	}
}

func TestHasOperators(t *testing.T) {
	for _, q := range []string{`"exact phrase" soil`, "compost OR mulch", "soil NOT clay", "soil -clay"} {
		if !hasOperators(q) {
			t.Errorf("%q: operators must use search's query language", q)
		}
	}
	for _, q := range []string{"how do I lime the soil?", "well-drained soil", "a - b"} {
		if hasOperators(q) {
			t.Errorf("%q: a question must use the question lane", q)
		}
	}
}

func TestParseChunkID(t *testing.T) {
	for id, want := range map[string]string{"a.md#p0": "a.md", "Notes/C# tips.md#p12": "Notes/C# tips.md", "x#p.md#p3": "x#p.md"} {
		if p, _, err := ParseChunkID(id); err != nil || p != want {
			t.Errorf("ParseChunkID(%q) = %q, %v; want %q", id, p, err, want)
		}
	}
	for _, bad := range []string{"", "a.md", "a.md#p", "a.md#px", "a.md#p-1", "a.md#p01", "#p1", "../a.md#p1", "a.txt#p1", "a.md#p1234567890", "/a.md#p1"} {
		if _, _, err := ParseChunkID(bad); err == nil {
			t.Errorf("ParseChunkID(%q): no error", bad)
		}
	}
	if p, o, _ := ParseChunkID(ChunkID("Café/Résumé.md", 7)); p != "Café/Résumé.md" || o != 7 {
		t.Errorf("round trip: %q %d", p, o)
	}
}

func TestFitItem(t *testing.T) {
	body := strings.Repeat("Para <one> & \"two\" \\ tab\t😀 ü\u2028.\n", 20) + "\n\n" + strings.Repeat("x", 400)
	for _, max := range []int{200, 300, 512, 1000, 2000, 100000} {
		it := &ReadItem{Path: "a.md", Rank: 1, ContentHash: strings.Repeat("0", 64), ChunkID: "a.md#p0"}
		if !fitItem(it, body, max) {
			t.Fatalf("max %d: did not fit", max)
		}
		if n := jsonLen(it); n > max {
			t.Errorf("max %d: item is %d bytes", max, n)
		}
		if !strings.HasPrefix(body, it.Body) || !utf8.ValidString(it.Body) {
			t.Errorf("max %d: body is not a clean prefix: %q", max, it.Body)
		}
		if it.Truncated != (it.Body != body) || (it.Truncated && it.SizeBytes != len(body)) {
			t.Errorf("max %d: truncated=%v size_bytes=%d", max, it.Truncated, it.SizeBytes)
		}
	}
	// Frontmatter is dropped before the item gives up; a path alone can be too big.
	fm := map[string]any{"k": strings.Repeat("v", 1000)}
	it := &ReadItem{Path: "a.md", Rank: 1, Frontmatter: &fm}
	if !fitItem(it, "body", 512) || it.Frontmatter != nil || !it.Truncated {
		t.Errorf("oversized frontmatter: %+v", it)
	}
	it = &ReadItem{Path: strings.Repeat("p", 600) + ".md", Rank: 1}
	if fitItem(it, "body", 512) {
		t.Error("an item whose path exceeds the budget fitted")
	}
}

func FuzzFitItem(f *testing.F) {
	f.Add("hello\n\nworld <&> \"x\"", 120)
	f.Add("\x00\x01\u2028😀", 90)
	f.Fuzz(func(t *testing.T, body string, max int) {
		max = 160 + int(uint(max)%4000) // above the fields besides the body
		body = strings.ToValidUTF8(body, "?")
		it := &ReadItem{Path: "a.md", Rank: 1}
		if !fitItem(it, body, max) {
			t.Fatalf("max %d: did not fit", max)
		}
		if n := jsonLen(it); n > max {
			t.Fatalf("max %d: %d bytes", max, n)
		}
		if !strings.HasPrefix(body, it.Body) || !utf8.ValidString(it.Body) {
			t.Fatalf("not a clean prefix")
		}
	})
}

// TestSearchAndReadOneHitGetsTheBudget: the budget is shared among the
// notes returned, not among k: one hit for k 5 is read with the whole
// budget, not a fifth of it.
func TestSearchAndReadOneHitGetsTheBudget(t *testing.T) {
	files := manyNotes(3, 1500)
	var b strings.Builder
	b.WriteString("# Gigantosaurus\n\n")
	for b.Len() < 30000 {
		b.WriteString("The gigantosaurus walked the plain for a long time.\n\n")
	}
	files["giant.md"] = b.String()
	s, _ := indexedServer(t, files, nil)
	const budget = 20000
	out, err := s.searchAndRead(context.Background(), sarArgs("gigantosaurus", 5), budget)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Notes) != 1 {
		t.Fatalf("%d notes, want the one hit", len(out.Notes))
	}
	if size := jsonLen(out.Notes[0]); size < budget*3/4 || size > budget {
		t.Errorf("the one hit took %d bytes of a %d-byte budget: want most of it", size, budget)
	}
}

// TestNoWordsHint: a query with no word the index can match (emoji,
// punctuation) says so instead of answering a silent nothing.
func TestNoWordsHint(t *testing.T) {
	s, _ := indexedServer(t, manyNotes(2, 200), nil)
	ctx := context.Background()
	for _, q := range []string{"🚀", "?!", "🍣 🍣"} {
		out, err := s.searchAndRead(ctx, sarArgs(q, 5), 20000)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Notes) != 0 || !strings.Contains(out.Hint, "no word") {
			t.Errorf("search_and_read %q: %d notes, hint %q", q, len(out.Notes), out.Hint)
		}
	}
	out, err := s.searchAndRead(ctx, sarArgs("kiwi", 5), 20000)
	if err != nil || out.Hint != "" || len(out.Notes) == 0 {
		t.Errorf("search_and_read kiwi: %d notes, hint %q, %v", len(out.Notes), out.Hint, err)
	}
	for _, match := range []string{"all", "any"} {
		res, err := s.Search(ctx, SearchArgs{Query: "🚀", Limit: 10, Match: match, Mode: "fulltext"})
		if err != nil || res.Total != 0 || !strings.Contains(res.Hint, "no word") {
			t.Errorf("search 🚀 (match %s): %+v %v", match, res, err)
		}
	}
	for _, q := range []string{"x", "C", "42"} {
		if got := noWordsHint(q); got != "" {
			t.Errorf("%q got the hint %q: the index holds it", q, got)
		}
	}
	if got := noWordsHint("how do I plant kiwi?"); got != "" {
		t.Errorf("a question in words got the hint %q", got)
	}
}
