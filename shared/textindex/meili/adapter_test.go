package meili

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
	"github.com/sheaf-dev/sheaf/shared/textindex/textindextest"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,511}$`)

func note(path, body string, tags ...string) textindex.Doc {
	return textindex.Doc{Path: path, Title: "T", Body: body, Tags: tags, Modified: textindextest.Modified,
		Passages: []vault.Passage{textindextest.Passage(0, nil, "", body)}}
}

func searchPaths(t *testing.T, ix *Index, q string, opts textindex.Options) []string {
	t.Helper()
	res, err := ix.Search(context.Background(), textindex.ParseQuery(q), opts)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	slices.Sort(out)
	return out
}

func TestHostilePathIDs(t *testing.T) {
	fake := meilifake.New(t)
	ix := openFake(t, fake, "")
	ctx := context.Background()
	long := strings.Repeat("ü/", 150) + ".md" // 603 bytes
	paths := []string{long, "emoji 🍕/pizza 🍕.md", "nfd/cafe\u0301.md", "quote\"back\\slash'.md", "sp ace+plus%25.md", "\xff\xfe.md", ""}
	var docs []textindex.Doc
	for _, p := range paths {
		docs = append(docs, note(p, "wombat"))
	}
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
	got := searchPaths(t, ix, "wombat", textindex.Options{Limit: 50})
	want := []string{"", long, "emoji 🍕/pizza 🍕.md", "nfd/caf\u00e9.md", "quote\"back\\slash'.md", "sp ace+plus%25.md", "\uFFFD.md"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, p := range want {
		if id := noteID(p); !validID.MatchString(id) || !validID.MatchString(passageID(id, 1<<20)) {
			t.Errorf("id %q of %q is not a valid Meilisearch id", id, p)
		}
		if res := searchPaths(t, ix, "wombat", textindex.Options{Filter: textindex.Filter{PathPrefix: p}}); p != "" && !slices.Contains(res, p) {
			t.Errorf("path prefix %q (the whole path) finds %q", p, res)
		}
	}
	if got := searchPaths(t, ix, "wombat", textindex.Options{Filter: textindex.Filter{Paths: []string{"nfd/cafe\u0301.md", long}}}); !slices.Equal(got, []string{"nfd/caf\u00e9.md", long}) {
		t.Errorf("paths filter: got %q", got)
	}
	if err := ix.Delete(ctx, paths...); err != nil {
		t.Fatal(err)
	}
	if n := fake.DocumentCount(ix.cfg.Index); n != 0 {
		t.Errorf("after deleting every path, %d documents remain", n)
	}
}

func TestFilterEscaping(t *testing.T) {
	fake := meilifake.New(t)
	ix := openFake(t, fake, "")
	ctx := context.Background()
	hostile := []string{`a"b`, `back\slash`, `\"`, `x" OR kind = "passage`, `trail\`, `ünï/cödé`, `'single'`, `\u{41}`, "new\nline", `) OR (note != "`}
	var docs []textindex.Doc
	for i, v := range hostile {
		d := note(fmt.Sprintf("n%d.md", i), "okapi", v)
		d.Author, d.Entities = v, []string{v}
		docs = append(docs, d)
	}
	docs = append(docs, note("plain.md", "okapi", "plain"))
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	for i, v := range hostile {
		want := []string{fmt.Sprintf("n%d.md", i)}
		for _, f := range []textindex.Filter{{Tags: []string{v}}, {Author: v}, {Entities: []string{v}}} {
			if got := searchPaths(t, ix, "okapi", textindex.Options{Filter: f}); !slices.Equal(got, want) {
				t.Errorf("filter %+v: got %q, want %q", f, got, want)
			}
		}
	}
	// The values reach Meilisearch unchanged, one per condition.
	f := textindex.Filter{PathPrefix: "p", Author: `A"\`, Tags: []string{`t"`}, Entities: []string{`e\`}, Paths: []string{"x.md"}}
	vals, err := meilifake.FilterValues(noteFilter(f))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"note", prefixHash("p"), `a"\`, `t"`, `e\`, noteID("x.md")}
	if !slices.Equal(vals, want) {
		t.Errorf("filter values %q, want %q", vals, want)
	}
}

func TestTaskFailureSurfaced(t *testing.T) {
	fake := meilifake.New(t)
	ix := openFake(t, fake, "")
	ctx := context.Background()
	if err := ix.EnsureSettings(ctx); err != nil {
		t.Fatal(err)
	}
	fake.FailNextTask("invalid_document_id", "boom: bad id")
	err := ix.Upsert(ctx, note("a.md", "x"))
	var te *TaskError
	if !errors.As(err, &te) || te.Code != "invalid_document_id" || te.Message != "boom: bad id" || te.Status != "failed" {
		t.Fatalf("Upsert: got %v, want a *TaskError with Meilisearch's code and message", err)
	}
	if !strings.Contains(err.Error(), "invalid_document_id") || !strings.Contains(err.Error(), "boom: bad id") {
		t.Errorf("error text %q lacks code or message", err)
	}
	fake.FailNextTask("internal", "disk full")
	if err := ix.Delete(ctx, "a.md"); !errors.As(err, &te) || te.Code != "internal" {
		t.Errorf("Delete: got %v", err)
	}
}

func TestSettingsOncePerProcess(t *testing.T) {
	fake := meilifake.New(t)
	ctx := context.Background()
	cfg := Config{URL: fake.URL, Index: "sheaf-once"}
	a, _ := Open(ctx, cfg)
	b, _ := Open(ctx, cfg)
	fake.FailNextTask("index_creation_failed", "try again")
	if err := a.EnsureSettings(ctx); err == nil {
		t.Fatal("EnsureSettings: want the task failure")
	}
	for _, ix := range []*Index{a, b} {
		if err := ix.Upsert(ctx, note("a.md", "zebu")); err != nil {
			t.Fatal(err)
		}
		searchPaths(t, ix, "zebu", textindex.Options{})
		if _, err := ix.Paths(ctx); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, c := range fake.Calls() {
		if c.Method == "PATCH" && strings.HasSuffix(c.Path, "/settings") {
			n++
			var s map[string]any
			if err := json.Unmarshal(c.Body, &s); err != nil {
				t.Fatal(err)
			}
			if typo, _ := s["typoTolerance"].(map[string]any); typo["enabled"] != false {
				t.Errorf("settings: typo tolerance %v, want disabled", s["typoTolerance"])
			}
		}
	}
	if n != 2 { // the failed attempt and one success
		t.Errorf("settings sent %d times, want 2", n)
	}
}

func TestBatching(t *testing.T) {
	fake := meilifake.New(t)
	ix := openFake(t, fake, "")
	ctx := context.Background()
	if err := ix.EnsureSettings(ctx); err != nil {
		t.Fatal(err)
	}
	ix.maxBatchDocs = 7
	var docs []textindex.Doc
	for i := range 20 {
		docs = append(docs, note(fmt.Sprintf("b/%02d.md", i), "batch")) // 2 documents each
	}
	fake.ResetCalls()
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	sizes := docBatches(t, fake)
	if !slices.Equal(sizes, []int{7, 7, 7, 7, 7, 5}) {
		t.Errorf("batches of %v documents, want 5 of 7 and one of 5", sizes)
	}
	ix.maxBatchDocs, ix.maxBatchBytes = 1000, 1
	fake.ResetCalls()
	if err := ix.Upsert(ctx, docs[:3]...); err != nil {
		t.Fatal(err)
	}
	if sizes := docBatches(t, fake); !slices.Equal(sizes, []int{1, 1, 1, 1, 1, 1}) {
		t.Errorf("byte-bounded batches %v, want one document each", sizes)
	}
	if got := searchPaths(t, ix, "batch", textindex.Options{Limit: 100}); len(got) != 20 {
		t.Errorf("found %d notes, want 20", len(got))
	}
}

// docBatches returns the number of documents of each document request.
func docBatches(t *testing.T, fake *meilifake.Server) []int {
	var sizes []int
	for _, c := range fake.Calls() {
		if c.Method == "POST" && strings.HasSuffix(c.Path, "/documents") {
			var docs []json.RawMessage
			if err := json.Unmarshal(c.Body, &docs); err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(docs))
		}
	}
	return sizes
}

func TestStalePassagesRemoved(t *testing.T) {
	fake := meilifake.New(t)
	ix := openFake(t, fake, "")
	ctx := context.Background()
	d := note("s.md", "")
	d.Passages = []vault.Passage{textindextest.Passage(0, nil, "", "alpha"), textindextest.Passage(1, nil, "", "beta"),
		textindextest.Passage(2, nil, "", "gamma")}
	if err := ix.Upsert(ctx, d); err != nil {
		t.Fatal(err)
	}
	if n := fake.DocumentCount(ix.cfg.Index); n != 4 {
		t.Fatalf("%d documents, want a note and 3 passages", n)
	}
	d.Passages = d.Passages[:1]
	if err := ix.Upsert(ctx, d); err != nil {
		t.Fatal(err)
	}
	if n := fake.DocumentCount(ix.cfg.Index); n != 2 {
		t.Errorf("%d documents after shrinking to one passage, want 2", n)
	}
	res, err := ix.Search(ctx, textindex.ParseQuery("gamma OR alpha"), textindex.Options{Unit: textindex.Passages})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Passage != 0 {
		t.Errorf("passages after shrinking: %+v, %v", res, err)
	}
}

func TestPathsPaginates(t *testing.T) {
	fake := meilifake.New(t)
	ix := openFake(t, fake, "")
	ctx := context.Background()
	var docs []textindex.Doc
	for i := range pathsPage + 5 {
		d := textindex.Doc{Path: fmt.Sprintf("p/%04d.md", i), Modified: time.Unix(int64(i), 7).UTC()}
		docs = append(docs, d)
	}
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	got, err := ix.Paths(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(docs) {
		t.Fatalf("Paths: %d, want %d", len(got), len(docs))
	}
	for _, d := range docs {
		if !got[d.Path].Equal(d.Modified) {
			t.Errorf("Paths[%s] = %v, want %v", d.Path, got[d.Path], d.Modified)
		}
	}
}

func TestQueryTranslation(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"tomato garl", []string{"tomato garl"}},
		{`"green tomatoes" soup -onion NOT "red pepper"`, []string{`-onion -"red pepper" "green tomatoes" soup`}},
		{"a OR b c", []string{"a", "b c"}},
		{"each other's e-dits", []string{`"other s" "e dits" each`}},
		{"東京タワー", []string{`"東京タワー"`}},
		{"東京abc", []string{`"東京 abc"`}},
		{`x" OR "y`, []string{`"OR" x y`}}, // a quoted OR is a word
		{"-only", nil},
		{"🍕 ***", nil},
	} {
		var got []string
		for _, c := range conjs(textindex.ParseQuery(tc.in)) {
			got = append(got, c.q)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("conjs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// A term that must match exactly is a phrase even when it is one word.
	q := textindex.Query{Any: []textindex.Conj{{All: []textindex.Term{{Text: "exact"}}}}}
	if c := conjs(q); len(c) != 1 || c[0].q != `"exact"` {
		t.Errorf("exact term: %+v", c)
	}
}

func TestSnippet(t *testing.T) {
	if got := snippet("  a \n\n b\tc "); got != "a b c" {
		t.Errorf("snippet = %q", got)
	}
	long := strings.Repeat("ü", 400)
	got := snippet(long)
	if len(got) > snippetBytes+len(cropMarker) || !utf8.ValidString(got) || !strings.HasSuffix(got, cropMarker) {
		t.Errorf("long snippet: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

// FuzzQuote checks that any value quoted into a filter reaches Meilisearch
// (as the fake parses filters, following Meilisearch's parser) unchanged and
// as exactly one value: no input ends the value early or adds a condition.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", `"`, `\`, `\"`, `a" OR kind = "passage`, `\u{41}`, "\x00\xff", "ü🍕", `\\\"`, "'", `")`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		expr := "kind = " + quote("note") + " AND tagKeys = " + quote(s) + " AND note IN [" + quote(s) + ", " + quote("z") + "]"
		vals, err := meilifake.FilterValues(expr)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		v := strings.ToValidUTF8(s, "\uFFFD")
		if want := []string{"note", v, v, "z"}; !slices.Equal(vals, want) {
			t.Fatalf("%q parsed as %q, want %q", expr, vals, want)
		}
	})
}

// FuzzConjs checks that any query translates to q strings made of words,
// spaces, quotes around phrases and '-' before exclusions only.
func FuzzConjs(f *testing.F) {
	for _, s := range []string{"tomato garl", `"a b" -c NOT "d"`, "a OR b", `"unbalanced`, "東京 タワー", "-", `""`, "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range conjs(textindex.ParseQuery(s)) {
			if c.positive == "" || !strings.HasSuffix(c.q, c.positive) {
				t.Fatalf("%q: conj %+v", s, c)
			}
			for _, frag := range splitFrags(c.q) {
				body := strings.TrimPrefix(frag, "-")
				if strings.HasPrefix(body, `"`) {
					if len(body) < 3 || !strings.HasSuffix(body, `"`) {
						t.Fatalf("%q: bad phrase %q in %q", s, frag, c.q)
					}
					body = body[1 : len(body)-1]
				}
				if qw := queryWords(body); strings.Join(qw, " ") != body {
					t.Fatalf("%q: fragment %q of %q is not plain words", s, frag, c.q)
				}
			}
		}
	})
}

// splitFrags splits q at spaces outside quotes.
func splitFrags(q string) []string {
	var out []string
	in, start := false, 0
	for i := 0; i < len(q); i++ {
		switch {
		case q[i] == '"':
			in = !in
		case q[i] == ' ' && !in:
			out = append(out, q[start:i])
			start = i + 1
		}
	}
	return append(out, q[start:])
}

// BenchmarkUpsert1000 indexes 1,000 notes of 3 passages against the fake
// and reports the requests and bytes sent per Upsert.
func BenchmarkUpsert1000(b *testing.B) {
	fake := meilifake.New(b)
	ix := openFake(b, fake, "")
	ctx := context.Background()
	if err := ix.EnsureSettings(ctx); err != nil {
		b.Fatal(err)
	}
	var docs []textindex.Doc
	for i := range 1000 {
		d := note(fmt.Sprintf("bench/%04d.md", i), "")
		d.Body = ""
		d.Passages = nil
		for j := range 3 {
			d.Passages = append(d.Passages, textindextest.Passage(j, []string{"H"}, "h",
				strings.Repeat(fmt.Sprintf("word%d lorem ipsum dolor ", j), 20)))
		}
		docs = append(docs, d)
	}
	b.ResetTimer()
	var calls, bytes int
	for range b.N {
		fake.ResetCalls()
		if err := ix.Upsert(ctx, docs...); err != nil {
			b.Fatal(err)
		}
		for _, c := range fake.Calls() {
			if c.Method == "POST" {
				calls++
				bytes += len(c.Body)
			}
		}
	}
	b.ReportMetric(float64(calls)/float64(b.N), "writes/op")
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes-sent/op")
}
