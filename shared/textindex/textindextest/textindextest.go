// Package textindextest is the conformance suite every textindex adapter
// passes: an adapter's test calls Run with a constructor for fresh, empty
// indexes. Tests compare sets of paths, not rank order, except where one
// document is obviously the best match.
package textindextest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Run runs the conformance suite. newIndex must return a new, empty index;
// Run closes it when the subtest ends.
func Run(t *testing.T, newIndex func(t *testing.T) textindex.Index) {
	run(t, newIndex, Caps{})
}

func run(t *testing.T, newIndex func(t *testing.T) textindex.Index, caps Caps) {
	open := func(t *testing.T, docs ...textindex.Doc) textindex.Index {
		t.Helper()
		ix := newIndex(t)
		t.Cleanup(func() {
			if err := ix.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		if len(docs) > 0 {
			if err := ix.Upsert(context.Background(), docs...); err != nil {
				t.Fatalf("Upsert: %v", err)
			}
		}
		return ix
	}
	fixture := func(t *testing.T) textindex.Index { return open(t, Fixture()...) }

	t.Run("Query", func(t *testing.T) { testQuery(t, fixture(t)) })
	t.Run("Malformed", func(t *testing.T) { testMalformed(t, fixture(t)) })
	t.Run("Filters", func(t *testing.T) { testFilters(t, fixture(t)) })
	t.Run("FilterBeforeRanking", func(t *testing.T) { testFilterBeforeRanking(t, open(t)) })
	t.Run("Passages", func(t *testing.T) { testPassages(t, fixture(t)) })
	t.Run("Snippets", func(t *testing.T) { testSnippets(t, fixture(t)) })
	t.Run("Unicode", func(t *testing.T) { testUnicode(t, fixture(t), caps) })
	t.Run("Paging", func(t *testing.T) { testPaging(t, fixture(t)) })
	t.Run("DeleteAndReplace", func(t *testing.T) { testDeleteAndReplace(t, fixture(t)) })
	t.Run("Paths", func(t *testing.T) { testPaths(t, fixture(t)) })
	t.Run("HostileInput", func(t *testing.T) { testHostile(t, open(t), caps) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, fixture(t)) })
	t.Run("Ask", func(t *testing.T) { testAsk(t, fixture(t)) })
	t.Run("Description", func(t *testing.T) { testDescription(t, open(t)) })
}

// ask runs a question and checks the hits' order.
func ask(t *testing.T, ix textindex.Index, question string, opts textindex.Options) textindex.Result {
	t.Helper()
	res, err := ix.Ask(context.Background(), textindex.ParseQuestion(question), opts)
	if err != nil {
		t.Fatalf("Ask(%q): %v", question, err)
	}
	for i := 1; i < len(res.Hits); i++ {
		if res.Hits[i].Score < res.Hits[i-1].Score {
			t.Errorf("Ask(%q): hits not ordered best first", question)
		}
	}
	if len(res.Hits) > 0 && res.Total < len(res.Hits)+opts.Offset {
		t.Errorf("Ask(%q): total %d < %d hits", question, res.Total, len(res.Hits))
	}
	for _, h := range res.Hits {
		f := h.Features
		for name, x := range map[string]float64{"Stage": f.Stage, "Body": f.Body, "Passage": f.Passage, "Proximity": f.Proximity,
			"Name": f.Name, "Headings": f.Headings, "Meta": f.Meta, "Matched": f.Matched, "Anchor": f.Anchor} {
			if x < 0 || x > 1+1e-9 {
				t.Errorf("Ask(%q): %s feature %s = %v, outside [0, 1]", question, h.Path, name, x)
			}
		}
		if f.Anchor != 0 {
			t.Errorf("Ask(%q): %s has an anchor feature: the index does not know links", question, h.Path)
		}
	}
	return res
}

func testAsk(t *testing.T, ix textindex.Index) {
	// Any of the words; inflections match ("clobbering" finds "clobber").
	res := ask(t, ix, "How do agents avoid clobbering each other?", none)
	if len(res.Hits) == 0 || res.Hits[0].Path != sheaf {
		t.Errorf("clobbering: want %s first, got %q", sheaf, paths(res))
	}
	if h := res.Hits[0]; h.Passage != 1 || h.Heading != "Leases" || !strings.Contains(h.Snippet, "clobber") {
		t.Errorf("clobbering: want the Leases passage with a snippet, got %+v", h)
	}
	// An adapter that measures features measures them for its best hit,
	// and ranks by the weights it is given: with only Name weighted, the
	// note whose title is the question comes before the one that only
	// mentions it, whatever their BM25.
	if f := res.Hits[0].Features; f != (textindex.Features{}) && (f.Body <= 0 || f.Matched <= 0) {
		t.Errorf("clobbering: features %+v, want body and matched evidence", f)
	}
	if res.Hits[0].Features != (textindex.Features{}) {
		byName := textindex.AskOptions{Weights: textindex.Weights{Name: 1}, Pool: 10}
		res := ask(t, ix, "sheaf", textindex.Options{Ask: byName})
		if len(res.Hits) < 2 || res.Hits[0].Path != sheaf || res.Hits[0].Features.Name != 1 || res.Hits[1].Features.Name != 0 {
			t.Errorf("ranked by name alone: got %q", paths(res))
		}
	}
	res = ask(t, ix, "Which herbs grow well next to tomato plants?", none)
	if !slices.Contains(paths(res), basil) || !slices.Contains(paths(res), tomatoes) {
		t.Errorf("herbs next to tomatoes: got %q", paths(res))
	}
	// Filters apply before ranking.
	res = ask(t, ix, "Which herbs grow well next to tomato plants?", filter(textindex.Filter{PathPrefix: "kitchen/"}))
	for _, p := range paths(res) {
		if !strings.HasPrefix(p, "kitchen/") {
			t.Errorf("kitchen/ filter: got %s", p)
		}
	}
	if len(res.Hits) == 0 {
		t.Errorf("kitchen/ filter: nothing found")
	}
	if res := ask(t, ix, "tomatoes", filter(textindex.Filter{Paths: []string{}})); len(res.Hits) != 0 {
		t.Errorf("empty Paths filter: got %q", paths(res))
	}
	// Paging is a window on one ranking.
	all := ask(t, ix, "tomatoes garlic compost", textindex.Options{Limit: 10})
	page := ask(t, ix, "tomatoes garlic compost", textindex.Options{Limit: 2, Offset: 1})
	if len(all.Hits) < 3 || len(page.Hits) != 2 || page.Hits[0].Path != all.Hits[1].Path || page.Hits[1].Path != all.Hits[2].Path {
		t.Errorf("paging: %q then %q", paths(all), paths(page))
	}
	// Other languages and scripts.
	if res := ask(t, ix, "Где Кремль?", none); !slices.Contains(paths(res), moscow) {
		t.Errorf("Кремль: got %q", paths(res))
	}
	if res := ask(t, ix, "東京タワーはどこ？", none); len(res.Hits) == 0 || res.Hits[0].Path != tokyo {
		t.Errorf("東京タワー: got %q", paths(res))
	}
	// Nothing to ask, or only stopwords: no error.
	for _, q := range []string{"", "?!", "what is it", "\xff\xfe"} {
		ask(t, ix, q, none)
	}
}

// testDescription checks that words only in a note's frontmatter
// description are found, by a search and by a question.
func testDescription(t *testing.T, ix textindex.Index) {
	const leave, other = "hr/leave.md", "hr/other.md"
	text := "Annual leave hours carry over up to 240 a year."
	docs := []textindex.Doc{
		{Path: leave, Title: "Leave types", Description: []string{"vacation, sick days, jury duty"},
			Body: text, Modified: Modified, Passages: []vault.Passage{Passage(0, nil, "", text)}},
		{Path: other, Title: "Other", Body: "Nothing about time off.", Modified: Modified,
			Passages: []vault.Passage{Passage(0, nil, "", "Nothing about time off.")}},
	}
	if err := ix.Upsert(context.Background(), docs...); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
	expect(t, ix, "vacation", none, leave)
	expect(t, ix, "jury duty", none, leave)
	if res := ask(t, ix, "How do I ask for a vacation?", none); len(res.Hits) == 0 || res.Hits[0].Path != leave {
		t.Errorf("vacation question: got %q", paths(res))
	}
}

// Modified is the time every fixture document carries.
var Modified = time.Date(2026, 5, 28, 9, 12, 34, 500, time.UTC)

// Passage builds a vault.Passage for fixtures.
func Passage(ordinal int, headingPath []string, headingID, text string) vault.Passage {
	return vault.Passage{Ordinal: ordinal, HeadingPath: headingPath, HeadingID: headingID, Text: text}
}

// Fixture returns the suite's twelve documents.
func Fixture() []textindex.Doc {
	doc := func(path, title string, tags []string, author string, body string) textindex.Doc {
		return textindex.Doc{Path: path, Title: title, Tags: tags, Author: author, Body: body, Modified: Modified,
			Passages: []vault.Passage{Passage(0, nil, "", body)}}
	}
	tomatoes := textindex.Doc{
		Path: "garden/tomatoes.md", Title: "Growing tomatoes", Tags: []string{"garden/vegetables", "summer"},
		Author: "Alice Smith", Entities: []string{"Tomato", "Alice"}, Headings: []string{"Soil", "Watering"},
		Modified: Modified,
		Passages: []vault.Passage{
			Passage(0, nil, "", "Tomatoes love the sun. Pick green tomatoes before the frost and let them ripen indoors."),
			Passage(1, []string{"Soil"}, "soil", "## Soil\nDig in compost and manure in early spring."),
			Passage(2, []string{"Watering"}, "watering", "## Watering\nWater deeply twice a week, never the leaves."),
		},
	}
	tomatoes.Body = joinPassages(tomatoes.Passages)
	basil := doc("garden/basil.md", "Basil", []string{"garden/herbs"}, "alice smith",
		"Basil grows well next to tomatoes. Pinch the flowers to keep the leaves sweet.")
	basil.Entities = []string{"Basil"}
	roses := doc("garden/roses.md", "Roses", []string{"garden/flowers"}, "Bob",
		"Prune roses before the tomatoes turn green in the greenhouse.")
	soup := doc("kitchen/soup.md", "Tomato soup", []string{"recipe"}, "Carol",
		"Roast tomatoes with garlic, then blend with stock.")
	soup.Entities = []string{"Tomato"}
	salsa := doc("kitchen/salsa.md", "Salsa verde", []string{"recipe"}, "Carol",
		"Green tomatillos, onion, cilantro and lime.")
	sheaf := textindex.Doc{
		Path: "projects/sheaf.md", Title: "Sheaf", Aliases: []string{"Notes server"},
		Tags: []string{"project/sheaf/design"}, Author: "Dana", Entities: []string{"SQLite", "Go"},
		Headings: []string{"Architecture", "Leases"}, Modified: Modified,
		Passages: []vault.Passage{
			Passage(0, []string{"Architecture"}, "architecture", "## Architecture\nThe index uses SQLite FTS5 and ranks with BM25."),
			Passage(1, []string{"Architecture", "Leases"}, "leases", "### Leases\nAgents take a lease so that they never clobber each other's edits."),
		},
	}
	sheaf.Body = joinPassages(sheaf.Passages)
	return []textindex.Doc{
		tomatoes, basil, roses, soup, salsa, sheaf,
		doc("projects/lettuce.md", "Lettuce", []string{"project/lettuce"}, "Dana",
			"This is the lettuce project. Compare it with sheaf."),
		doc("travel/paris.md", "Café de Flore", []string{"travel"}, "Eve",
			"We had a café crème on the Boulevard Saint-Germain."),
		doc("travel/moscow.md", "Москва", []string{"travel"}, "Eve",
			"Красная площадь и Кремль. Мы пили чай."),
		doc("travel/tokyo.md", "東京旅行", []string{"travel"}, "Eve",
			"東京タワーに行きました。浅草の寺も見ました。"),
		doc("travel/beijing.md", "北京", []string{"travel"}, "Eve",
			"我们参观了长城和故宫。"),
		doc("inbox/untitled.md", "Untitled", nil, "",
			"Random thought about worms and compost."),
	}
}

func joinPassages(ps []vault.Passage) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Text)
		b.WriteString("\n\n")
	}
	return b.String()
}

// search runs a query and fails the test on error.
func search(t *testing.T, ix textindex.Index, q textindex.Query, opts textindex.Options) textindex.Result {
	t.Helper()
	res, err := ix.Search(context.Background(), q, opts)
	if err != nil {
		t.Fatalf("Search(%+v, %+v): %v", q, opts, err)
	}
	for i := 1; i < len(res.Hits); i++ {
		if res.Hits[i].Score < res.Hits[i-1].Score {
			t.Errorf("Search(%+v): hits not ordered best (lowest score) first: %v then %v",
				q, res.Hits[i-1].Score, res.Hits[i].Score)
		}
	}
	if res.Total < len(res.Hits)+opts.Offset && len(res.Hits) > 0 {
		t.Errorf("Search(%+v): total %d < offset %d + %d hits", q, res.Total, opts.Offset, len(res.Hits))
	}
	return res
}

func paths(res textindex.Result) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	sort.Strings(out)
	return out
}

// expect checks that query s (spec syntax) under opts finds exactly want
// (in any order), and that Total agrees.
func expect(t *testing.T, ix textindex.Index, s string, opts textindex.Options, want ...string) {
	t.Helper()
	res := search(t, ix, textindex.ParseQuery(s), opts)
	expectPaths(t, fmt.Sprintf("%q %+v", s, opts.Filter), res, want...)
}

func expectPaths(t *testing.T, what string, res textindex.Result, want ...string) {
	t.Helper()
	want = slices.Clone(want)
	sort.Strings(want)
	got := paths(res)
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
	if res.Total != len(want) {
		t.Errorf("%s: total %d, want %d", what, res.Total, len(want))
	}
}

const (
	tomatoes = "garden/tomatoes.md"
	basil    = "garden/basil.md"
	roses    = "garden/roses.md"
	soup     = "kitchen/soup.md"
	salsa    = "kitchen/salsa.md"
	sheaf    = "projects/sheaf.md"
	lettuce  = "projects/lettuce.md"
	paris    = "travel/paris.md"
	moscow   = "travel/moscow.md"
	tokyo    = "travel/tokyo.md"
	beijing  = "travel/beijing.md"
	untitled = "inbox/untitled.md"
)

var none textindex.Options

func testQuery(t *testing.T, ix textindex.Index) {
	expect(t, ix, "garlic", none, soup)
	expect(t, ix, "tom", none, tomatoes, basil, roses, soup, salsa) // prefix: tomatillos too
	expect(t, ix, "tomato garl", none, soup)                        // AND of prefixes
	expect(t, ix, "tomatoes compost", none, tomatoes)               // words in different passages
	expect(t, ix, `"green tomatoes"`, none, tomatoes)               // phrase, not "tomatoes turn green"
	expect(t, ix, `"tomato"`, none, soup)                           // a phrase is not a prefix
	expect(t, ix, `"green tomat"`, none)
	expect(t, ix, "garlic OR lime", none, soup, salsa)
	expect(t, ix, "tomatoes NOT green", none, basil, soup)
	expect(t, ix, "tomatoes -green", none, basil, soup)
	expect(t, ix, `tomatoes -"green tomatoes"`, none, basil, roses, soup)
	expect(t, ix, "garlic stock OR lime -onion", none, soup)
	expect(t, ix, "garlic stock OR lime onion", none, soup, salsa)
	expect(t, ix, "lime OR", none, salsa)
	expect(t, ix, "lime NOT", none, salsa)
	expect(t, ix, "compost OR -worms", none, tomatoes, untitled)
	expect(t, ix, "each other's", none, sheaf)
	expect(t, ix, "e-dits", none)
	// Title matches weigh more than body matches.
	if res := search(t, ix, textindex.ParseQuery("basil"), none); len(res.Hits) == 0 || res.Hits[0].Path != basil {
		t.Errorf("basil: want %s first, got %q", basil, paths(res))
	}
	if res := search(t, ix, textindex.ParseQuery("lettuce"), none); len(res.Hits) != 1 || res.Hits[0].Title != "Lettuce" {
		t.Errorf("lettuce: want the Lettuce note with its title, got %+v", res.Hits)
	}
	// Aliases, headings and tags are searchable.
	expect(t, ix, "server", none, sheaf)
	expect(t, ix, "watering", none, tomatoes)
	expect(t, ix, "herbs", none, basil)
}

func testMalformed(t *testing.T, ix textindex.Index) {
	for _, s := range []string{
		"", `"`, `""`, "OR", "NOT", "AND", "NOT tomatoes", "-tomatoes", "-tomatoes -garlic", "()", "(((", "***",
		":", `"unbalanced tomatoes`, "OR OR NOT", "🍅", "\xff\xfe", "tomatoes:garlic",
	} {
		expect(t, ix, s, none)
	}
	// Text that is FTS5 (or Meilisearch) syntax is matched as words, never
	// interpreted.
	for _, text := range []string{
		`tomatoes" OR "lime`, "title:lettuce", "NEAR(tomatoes garlic)", `tomatoes AND lime`, "{title}: lettuce",
		`"`, `*`, "\x00", "^", "\"\"\"",
	} {
		for _, term := range []textindex.Term{{Text: text, Prefix: true}, {Text: text, Phrase: true}} {
			q := textindex.Query{Any: []textindex.Conj{{All: []textindex.Term{term}}}}
			expectPaths(t, fmt.Sprintf("term %+v", term), search(t, ix, q, none))
		}
	}
	// A conjunction without positive terms matches nothing.
	q := textindex.Query{Any: []textindex.Conj{{Not: []textindex.Term{{Text: "tomatoes"}}}}}
	expectPaths(t, "only exclusions", search(t, ix, q, none))
	expectPaths(t, "empty query", search(t, ix, textindex.Query{}, none))
	// An excluded term without tokens excludes nothing.
	q = textindex.Query{Any: []textindex.Conj{{All: []textindex.Term{{Text: "garlic"}}, Not: []textindex.Term{{Text: "!!"}}}}}
	expectPaths(t, "punctuation exclusion", search(t, ix, q, none), soup)
}

func filter(f textindex.Filter) textindex.Options { return textindex.Options{Filter: f} }

func testFilters(t *testing.T, ix textindex.Index) {
	type F = textindex.Filter
	expect(t, ix, "tom", filter(F{PathPrefix: "garden/"}), tomatoes, basil, roses)
	expect(t, ix, "tom", filter(F{PathPrefix: "garden/ro"}), roses)
	expect(t, ix, "tom", filter(F{PathPrefix: "garden*"}))
	expect(t, ix, "tom", filter(F{PathPrefix: "Garden/"}))
	expect(t, ix, "tom", filter(F{Tags: []string{"garden"}}), tomatoes, basil, roses)
	expect(t, ix, "tom", filter(F{Tags: []string{"garden/herbs"}}), basil)
	expect(t, ix, "tom", filter(F{Tags: []string{"gard"}}))
	expect(t, ix, "tom", filter(F{Tags: []string{"garden", "summer"}}), tomatoes)
	expect(t, ix, "sheaf", none, sheaf, lettuce)
	expect(t, ix, "sheaf", filter(F{Tags: []string{"project"}}), sheaf, lettuce)
	expect(t, ix, "sheaf", filter(F{Tags: []string{"project/sheaf"}}), sheaf)
	expect(t, ix, "sheaf", filter(F{Tags: []string{"project/sheaf/design"}}), sheaf)
	expect(t, ix, "tom", filter(F{Author: "ALICE SMITH"}), tomatoes, basil)
	expect(t, ix, "tom", filter(F{Author: "alice"}))
	expect(t, ix, "tom", filter(F{Entities: []string{"Tomato"}}), tomatoes, soup)
	expect(t, ix, "tom", filter(F{Entities: []string{"Tomato", "Alice"}}), tomatoes)
	expect(t, ix, "tom", filter(F{Paths: []string{soup, basil, "missing.md"}}), soup, basil)
	expect(t, ix, "tom", filter(F{Paths: []string{}}))
	expect(t, ix, "tom", filter(F{PathPrefix: "garden/", Tags: []string{"garden"}, Author: "alice smith",
		Entities: []string{"Basil"}, Paths: []string{basil, tomatoes}}), basil)
	expect(t, ix, "compost OR garlic", filter(F{PathPrefix: "kitchen/"}), soup)
	res := search(t, ix, textindex.ParseQuery("tom"), textindex.Options{Unit: textindex.Passages, Filter: F{Tags: []string{"recipe"}}})
	expectPaths(t, "passages with a tag filter", res, soup, salsa)
}

// testFilterBeforeRanking checks that a filter narrows the candidates before
// ranking and paging: the best match inside the filter is found even when
// many better matches lie outside it.
func testFilterBeforeRanking(t *testing.T, ix textindex.Index) {
	var docs []textindex.Doc
	for i := range 60 {
		body := strings.Repeat("zebra stripes zebra herd. ", 5)
		docs = append(docs, textindex.Doc{
			Path: fmt.Sprintf("noise/%02d.md", i), Title: "Zebra " + fmt.Sprint(i), Tags: []string{"noise"},
			Author: "Noise", Body: body, Modified: Modified, Passages: []vault.Passage{Passage(0, nil, "", body)},
		})
	}
	long := "A long note about many other animals. " + strings.Repeat("Giraffes and lions and elephants. ", 40) + "Once we saw a zebra."
	docs = append(docs, textindex.Doc{
		Path: "narrow/one.md", Title: "Safari", Tags: []string{"trip/africa"}, Author: "Me", Entities: []string{"Kenya"},
		Body: long, Modified: Modified, Passages: []vault.Passage{Passage(0, nil, "", long)},
	})
	if err := ix.Upsert(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	opts := func(f textindex.Filter) textindex.Options { return textindex.Options{Filter: f, Limit: 5} }
	res := search(t, ix, textindex.ParseQuery("zebra"), textindex.Options{Limit: 5})
	if len(res.Hits) != 5 || res.Total != 61 || slices.Contains(paths(res), "narrow/one.md") {
		t.Fatalf("unfiltered: got %d hits %q total %d; want 5 noise hits of 61", len(res.Hits), paths(res), res.Total)
	}
	for _, f := range []textindex.Filter{
		{PathPrefix: "narrow/"}, {Tags: []string{"trip"}}, {Author: "me"}, {Entities: []string{"Kenya"}},
		{Paths: []string{"narrow/one.md", "noise/00.md"}},
	} {
		res := search(t, ix, textindex.ParseQuery("zebra"), opts(f))
		want := []string{"narrow/one.md"}
		if f.Paths != nil {
			want = append(want, "noise/00.md")
		}
		expectPaths(t, fmt.Sprintf("zebra %+v", f), res, want...)
		res = search(t, ix, textindex.ParseQuery("zebra"), textindex.Options{Filter: f, Limit: 5, Unit: textindex.Passages})
		expectPaths(t, fmt.Sprintf("zebra passages %+v", f), res, want...)
	}
}

func testPassages(t *testing.T, ix textindex.Index) {
	res := search(t, ix, textindex.ParseQuery("clobber"), textindex.Options{Unit: textindex.Passages})
	if len(res.Hits) != 1 || res.Total != 1 {
		t.Fatalf("clobber passages: got %+v", res)
	}
	h := res.Hits[0]
	if h.Path != sheaf || h.Title != "Sheaf" || h.Passage != 1 || h.Heading != "Leases" || h.HeadingID != "leases" {
		t.Errorf("clobber passage: got %+v", h)
	}
	if !strings.Contains(h.Snippet, "clobber") {
		t.Errorf("clobber passage snippet %q lacks the match", h.Snippet)
	}
	// One hit per matching passage; words must co-occur in a passage.
	res = search(t, ix, textindex.ParseQuery("tomatoes OR compost OR water"), textindex.Options{Unit: textindex.Passages, Filter: textindex.Filter{Paths: []string{tomatoes}}})
	var ords []int
	for _, h := range res.Hits {
		ords = append(ords, h.Passage)
	}
	sort.Ints(ords)
	if !slices.Equal(ords, []int{0, 1, 2}) || res.Total != 3 {
		t.Errorf("tomatoes passages: got ordinals %v total %d, want [0 1 2] 3", ords, res.Total)
	}
	res = search(t, ix, textindex.ParseQuery("tomatoes compost"), textindex.Options{Unit: textindex.Passages})
	expectPaths(t, "passage AND across passages", res)
	// Heading paths are searchable in passages.
	res = search(t, ix, textindex.ParseQuery("architecture lease"), textindex.Options{Unit: textindex.Passages})
	if len(res.Hits) != 1 || res.Hits[0].Passage != 1 {
		t.Errorf("heading path search: got %+v", res.Hits)
	}
}

func testSnippets(t *testing.T, ix textindex.Index) {
	// A note hit carries its best passage.
	res := search(t, ix, textindex.ParseQuery("clobber"), none)
	if len(res.Hits) != 1 {
		t.Fatalf("clobber: got %+v", res)
	}
	h := res.Hits[0]
	if h.Heading != "Leases" || h.HeadingID != "leases" || h.Passage != 1 || !strings.Contains(h.Snippet, "clobber") {
		t.Errorf("clobber note hit: got %+v", h)
	}
	res = search(t, ix, textindex.ParseQuery("manure"), none)
	if len(res.Hits) != 1 || res.Hits[0].Heading != "Soil" || !strings.Contains(res.Hits[0].Snippet, "manure") {
		t.Errorf("manure: got %+v", res.Hits)
	}
	// A match only in the aliases: the snippet starts the note.
	res = search(t, ix, textindex.ParseQuery("server"), none)
	if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Snippet, "The index uses SQLite") {
		t.Errorf("alias match: want the start of the note as snippet, got %+v", res.Hits)
	}
	// Snippets are short excerpts of a long passage, around the match.
	long := strings.Repeat("filler words here and there. ", 200) + "The needle is here. " + strings.Repeat("more filler after. ", 200)
	if err := ix.Upsert(context.Background(), textindex.Doc{Path: "long.md", Title: "Long", Body: long,
		Modified: Modified, Passages: []vault.Passage{Passage(0, nil, "", long)}}); err != nil {
		t.Fatal(err)
	}
	res = search(t, ix, textindex.ParseQuery("needle"), none)
	if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Snippet, "needle") || len(res.Hits[0].Snippet) > 400 {
		t.Errorf("long note: want a short snippet around the match, got %+v", res.Hits)
	}
}

func testUnicode(t *testing.T, ix textindex.Index, caps Caps) {
	expect(t, ix, "cafe", none, paris)
	expect(t, ix, "CAFÉ", none, paris)
	expect(t, ix, "cafe\u0301", none, paris) // NFD
	expect(t, ix, "creme", none, paris)
	expect(t, ix, "flore", none, paris)
	expect(t, ix, "москва", none, moscow)
	expect(t, ix, "крем", none, moscow) // prefix of Кремль
	expect(t, ix, `"красная площадь"`, none, moscow)
	expect(t, ix, "東京", none, tokyo)
	expect(t, ix, "浅草", none, tokyo)
	expect(t, ix, "タワー", none, tokyo)
	expect(t, ix, "東京タワー", none, tokyo)
	expect(t, ix, "長城", none) // traditional form, not in the text
	expect(t, ix, "长城", none, beijing)
	expect(t, ix, "故宫 北京", none, beijing)
	expect(t, ix, "京北", none) // unigrams in the wrong order are not a match
	if !caps.CJKByWord {
		expect(t, ix, "京", none, tokyo, beijing)
	}
	expect(t, ix, "东京", none) // simplified 东 is a different character
	res := search(t, ix, textindex.ParseQuery("浅草"), none)
	if len(res.Hits) == 1 && !strings.Contains(res.Hits[0].Snippet, "浅草") {
		t.Errorf("Japanese snippet %q lacks the match", res.Hits[0].Snippet)
	}
	// Questions in whole sentences find notes with any of their words.
	res = search(t, ix, textindex.QuestionQuery("How do agents avoid clobbering each other?"), none)
	if len(res.Hits) == 0 || res.Hits[0].Path != sheaf {
		t.Errorf("question: want %s first, got %q", sheaf, paths(res))
	}
	res = search(t, ix, textindex.QuestionQuery("東京で何を見ましたか"), none)
	if len(res.Hits) == 0 || res.Hits[0].Path != tokyo {
		t.Errorf("Japanese question: want %s first, got %q", tokyo, paths(res))
	}
}

func testPaging(t *testing.T, ix textindex.Index) {
	q := textindex.ParseQuery("tom")
	var seen []string
	for off := 0; off < 6; off += 2 {
		res := search(t, ix, q, textindex.Options{Limit: 2, Offset: off})
		if res.Total != 5 {
			t.Errorf("offset %d: total %d, want 5", off, res.Total)
		}
		if want := min(2, 5-off); len(res.Hits) != want {
			t.Errorf("offset %d: %d hits, want %d", off, len(res.Hits), want)
		}
		seen = append(seen, paths(res)...)
	}
	sort.Strings(seen)
	if want := []string{basil, roses, tomatoes, salsa, soup}; !slices.Equal(seen, sorted(want)) {
		t.Errorf("pages: got %q, want each of %q once", seen, sorted(want))
	}
	res := search(t, ix, q, textindex.Options{Limit: 2, Offset: 10})
	if len(res.Hits) != 0 || res.Total != 5 {
		t.Errorf("past the end: got %d hits, total %d; want 0, 5", len(res.Hits), res.Total)
	}
	res = search(t, ix, q, textindex.Options{})
	if len(res.Hits) != 5 {
		t.Errorf("default limit: got %d hits", len(res.Hits))
	}
	res = search(t, ix, textindex.ParseQuery("tomatoes"), textindex.Options{Unit: textindex.Passages, Limit: 1})
	if len(res.Hits) != 1 || res.Total != 4 {
		t.Errorf("passage total: got %d hits, total %d; want 1, 4", len(res.Hits), res.Total)
	}
	// Pages of passages cover every matching passage once; Total is exact
	// on the last page.
	q = textindex.ParseQuery("tomatoes OR compost OR water")
	want := passageKeys(search(t, ix, q, textindex.Options{Unit: textindex.Passages}))
	var got []string
	for off := 0; off <= len(want); off += 2 {
		res := search(t, ix, q, textindex.Options{Unit: textindex.Passages, Limit: 2, Offset: off})
		if off+2 >= len(want) && res.Total != len(want) {
			t.Errorf("passage page at %d: total %d, want %d", off, res.Total, len(want))
		}
		got = append(got, passageKeys(res)...)
	}
	if len(want) != 7 || !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("passage pages: got %q, want %q (7 passages)", got, want)
	}
}

// passageKeys returns "path#ordinal" for each hit.
func passageKeys(res textindex.Result) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, fmt.Sprintf("%s#%d", h.Path, h.Passage))
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func testDeleteAndReplace(t *testing.T, ix textindex.Index) {
	ctx := context.Background()
	if err := ix.Delete(ctx, tomatoes, "no/such/note.md"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	expect(t, ix, `"green tomatoes"`, none)
	expect(t, ix, "manure", none)
	expect(t, ix, "tom", filter(textindex.Filter{Tags: []string{"summer"}}))
	expect(t, ix, "tom", none, basil, roses, soup, salsa)
	if err := ix.Delete(ctx); err != nil {
		t.Fatalf("Delete(): %v", err)
	}

	later := Modified.Add(time.Hour)
	gazpacho := textindex.Doc{Path: soup, Title: "Gazpacho", Tags: []string{"cold"}, Author: "Frank",
		Body: "Chilled cucumber soup.", Modified: later,
		Passages: []vault.Passage{Passage(0, []string{"Method"}, "method", "Chilled cucumber soup.")}}
	if err := ix.Upsert(ctx, gazpacho); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
	expect(t, ix, "garlic", none)
	expect(t, ix, "cucumber", none, soup)
	expect(t, ix, "cucumber", filter(textindex.Filter{Tags: []string{"recipe"}}))
	expect(t, ix, "cucumber", filter(textindex.Filter{Tags: []string{"cold"}}), soup)
	expect(t, ix, "cucumber", filter(textindex.Filter{Author: "frank"}), soup)
	expect(t, ix, "cucumber", filter(textindex.Filter{Entities: []string{"Tomato"}}))
	res := search(t, ix, textindex.ParseQuery("gazpacho"), none)
	if len(res.Hits) != 1 || res.Hits[0].Title != "Gazpacho" {
		t.Errorf("replaced title: got %+v", res.Hits)
	}
	res = search(t, ix, textindex.ParseQuery("cucumber"), textindex.Options{Unit: textindex.Passages})
	if len(res.Hits) != 1 || res.Hits[0].Heading != "Method" {
		t.Errorf("replaced passages: got %+v", res.Hits)
	}
	got, err := ix.Paths(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got[soup].Equal(later) {
		t.Errorf("Paths[%s] = %v, want %v", soup, got[soup], later)
	}
	// The same path twice in one call: the last one wins.
	if err := ix.Upsert(ctx, textindex.Doc{Path: "dup.md", Body: "first version", Modified: Modified},
		textindex.Doc{Path: "dup.md", Body: "second version", Modified: later}); err != nil {
		t.Fatal(err)
	}
	expect(t, ix, "first", none)
	expect(t, ix, "second", none, "dup.md")
}

func testPaths(t *testing.T, ix textindex.Index) {
	got, err := ix.Paths(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{}
	for _, d := range Fixture() {
		want[d.Path] = d.Modified
	}
	if len(got) != len(want) {
		t.Errorf("Paths: %d paths, want %d", len(got), len(want))
	}
	for p, m := range want {
		if !got[p].Equal(m) {
			t.Errorf("Paths[%s] = %v, want %v", p, got[p], m)
		}
	}
}

func testHostile(t *testing.T, ix textindex.Index, caps Caps) {
	ctx := context.Background()
	huge := strings.Repeat("lorem ipsum dolor sit amet ", 40000) + "needle"
	var many []vault.Passage
	for i := range 2000 {
		many = append(many, Passage(i, []string{"H"}, "h", fmt.Sprintf("passage %d haystack", i)))
	}
	docs := []textindex.Doc{
		{Path: "bad-utf8.md", Title: "bad \xff\xfe title", Body: "invalid \xc3\x28 bytes and \x00 nul kiwi", Tags: []string{"\xff"},
			Passages: []vault.Passage{Passage(0, []string{"\xfe"}, "\xff", "invalid \xc3\x28 bytes and \x00 nul kiwi")}},
		{Path: "huge.md", Title: "Huge", Body: huge, Passages: []vault.Passage{Passage(0, nil, "", huge)}},
		{Path: "many.md", Title: "Many", Passages: many},
		{Path: "empty.md"},
		{Path: "emoji 🍕.md", Title: "🍕🍕", Body: "pizza 🍕 party", Tags: []string{"food/🍕"}},
		{Path: "nfd-cafe\u0301.md", Title: "Cafe\u0301 NFD", Body: "noir"},
	}
	if err := ix.Upsert(ctx, docs...); err != nil {
		t.Fatalf("Upsert hostile docs: %v", err)
	}
	expect(t, ix, "kiwi", none, "bad-utf8.md")
	if !caps.LongFieldsTruncated {
		expect(t, ix, "needle", none, "huge.md")
	}
	expect(t, ix, "haystack", none, "many.md")
	expect(t, ix, "pizza", none, "emoji 🍕.md")
	expect(t, ix, "café noir", none, "nfd-caf\u00e9.md")
	res := search(t, ix, textindex.ParseQuery("1999 haystack"), textindex.Options{Unit: textindex.Passages})
	if len(res.Hits) != 1 || res.Hits[0].Passage != 1999 {
		t.Errorf("passage 1999: got %+v", res.Hits)
	}
	res = search(t, ix, textindex.ParseQuery("1999 haystack"), none)
	if len(res.Hits) != 1 || res.Hits[0].Passage != 1999 {
		t.Errorf("best passage of many: got %+v", res.Hits)
	}
	if err := ix.Delete(ctx, "huge.md", "many.md", "bad-utf8.md", "empty.md"); err != nil {
		t.Fatal(err)
	}
	expect(t, ix, "haystack OR needle OR kiwi", none)
}

func testConcurrent(t *testing.T, ix textindex.Index) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			d := textindex.Doc{Path: fmt.Sprintf("new/%d.md", i), Title: "Concurrent", Body: "walrus tomatoes",
				Modified: Modified, Passages: []vault.Passage{Passage(0, nil, "", "walrus tomatoes")}}
			if err := ix.Upsert(ctx, d); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				res, err := ix.Search(ctx, textindex.ParseQuery("tomatoes"), textindex.Options{Limit: 50})
				if err != nil {
					errs <- err
					return
				}
				if len(res.Hits) < 4 {
					errs <- fmt.Errorf("concurrent search found %d hits, want at least the fixture's 4", len(res.Hits))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	expect(t, ix, "walrus", filter(textindex.Filter{PathPrefix: "new/1"}), "new/1.md", "new/10.md", "new/11.md",
		"new/12.md", "new/13.md", "new/14.md", "new/15.md", "new/16.md", "new/17.md", "new/18.md", "new/19.md")
}
