package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// Measured on a shared 2-core AMD EPYC (better of repeated runs; the machine
// was loaded, so small differences are noise), 10k notes, 54 MB:
//
//	BenchmarkUpsert10k  4.6-4.9 s, 5.0-5.9 CPU-s (was 7.6-8.3 s, 9.2-10.3 CPU-s
//	                    with passages_fts and a 4-character prefix index)
//	BenchmarkSearch     p50 / p99 ms     (before: passages_fts, prefix='2 3 4')
//	  mix               17.7 / 41.8      21.8 / 187
//	  common            23.8 / 26.0      37.4 / 50.0
//	  two-common        29.0 / 33.9      29.8 / 47.2
//	  rare               1.3 /  1.7       1.2 /  2.1
//	  two-mid            2.5 /  3.0       2.4 /  5.7
//	  prefix2           25.2 / 30.6      25.5 / 41.6
//	  prefix3           19.8 / 37.7      18.8 / 31.3
//	  prefix4           30.0 / 51.5      ~22 (4-character prefix index)
//	  phrase             0.8 /  2.1       0.6 /  1.1
//	  or                26.6 / 44.3      26.5 / 41.9
//	  not                4.3 /  5.7       4.2 /  5.9
//	  filter-tag         5.2 /  9.4       4.6 /  7.3
//	  filter-path-author 6.8 / 12.4       5.5 /  8.7
//	  passages-mid      11.5 / 23.0      14.1 / 24.1
//	  passages-common   24.4 / 33.1     105   / 165
//	  question          18.0 / 29.1      17.3 / 23.9
//
// A word in nearly every note costs ~2 µs of BM25 per matching note (60% of
// it FTS5's per-row docsize lookup, a SQL statement each); mmap_size and
// temp_store on the readers, and a read transaction around the search, did
// not measurably change that. A reader's page cache did change one thing:
// with SQLite's default 2 MB, each search for two common words of the
// generated 10k vault re-read about 80 pages from the file (pread); with
// 32 MB, as the writer had, none (strace -c over 200 searches: 16,045
// preads against 12).

// corpus is a synthetic vault: pseudo-words drawn with a Zipf distribution
// from a fixed-seed vocabulary, so runs are comparable.
type corpus struct {
	vocab []string
	docs  []textindex.Doc
	bytes int64
}

func newCorpus(n, docBytes int) *corpus {
	rng := rand.New(rand.NewSource(42))
	syll := []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zo", "pe", "qua", "dri", "ste", "mon", "far", "lin", "gor", "ux", "bel", "thi"}
	c := &corpus{}
	seen := map[string]bool{}
	for len(c.vocab) < 30000 {
		var w strings.Builder
		for range 2 + rng.Intn(3) {
			w.WriteString(syll[rng.Intn(len(syll))])
		}
		if !seen[w.String()] {
			seen[w.String()] = true
			c.vocab = append(c.vocab, w.String())
		}
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(c.vocab)-1))
	word := func() string { return c.vocab[zipf.Uint64()] }
	sentence := func(b *strings.Builder) {
		for i := range 8 + rng.Intn(10) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(word())
		}
		b.WriteString(". ")
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		d := textindex.Doc{
			Path:     fmt.Sprintf("folder%02d/note %05d.md", i%40, i),
			Title:    word() + " " + word(),
			Tags:     []string{fmt.Sprintf("area%d/topic%d", i%7, i%31), fmt.Sprintf("status%d", i%3)},
			Author:   fmt.Sprintf("Author %d", i%20),
			Entities: []string{fmt.Sprintf("Entity%d", i%97)},
			Modified: t0.Add(time.Duration(i) * time.Minute),
		}
		var body strings.Builder
		for s := 0; body.Len() < docBytes; s++ {
			var sec strings.Builder
			heading := word() + " " + word()
			d.Headings = append(d.Headings, heading)
			sec.WriteString("## " + heading + "\n")
			for sec.Len() < docBytes/5 {
				sentence(&sec)
			}
			d.Passages = append(d.Passages, vault.Passage{
				Ordinal: s, HeadingPath: []string{heading}, HeadingID: strings.ReplaceAll(heading, " ", "-"), Text: sec.String(),
			})
			body.WriteString(sec.String())
			body.WriteString("\n\n")
		}
		d.Body = body.String()
		c.bytes += int64(len(d.Body))
		c.docs = append(c.docs, d)
	}
	return c
}

func BenchmarkUpsert10k(b *testing.B) {
	c := newCorpus(10000, 5000)
	b.SetBytes(c.bytes)
	ctx := context.Background()
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		i++
		ix, err := Open(filepath.Join(b.TempDir(), fmt.Sprintf("index%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Upsert(ctx, c.docs...); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(len(c.docs))*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// cpuTime is the process's user+system CPU time: on a shared machine it
// says more than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchIndex opens a 10k-note index. With SHEAF_BENCH_DB set it reuses (or
// builds once) the index at that path, which saves the build when iterating.
func benchIndex(b *testing.B, c *corpus) *Index {
	path := os.Getenv("SHEAF_BENCH_DB")
	reuse := path != ""
	if !reuse {
		path = filepath.Join(b.TempDir(), "index.db")
	}
	ix, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	ctx := context.Background()
	if got, err := ix.Paths(ctx); err != nil || len(got) != len(c.docs) {
		if err := ix.Upsert(ctx, c.docs...); err != nil {
			b.Fatal(err)
		}
	}
	return ix
}

func BenchmarkSearch(b *testing.B) {
	c := newCorpus(10000, 5000)
	ix := benchIndex(b, c)
	ctx := context.Background()
	v := c.vocab
	// A phrase that occurs: two adjacent words of some passage.
	words := strings.Fields(c.docs[123].Passages[1].Text)
	phrase := `"` + words[3] + " " + words[4] + `"`
	type qspec struct {
		name string
		q    textindex.Query
		opts textindex.Options
	}
	parse := func(name, s string, o textindex.Options) qspec { return qspec{name, textindex.ParseQuery(s), o} }
	top := textindex.Options{Limit: 10}
	mix := []qspec{
		parse("common", v[2], top),
		parse("two-common", v[3]+" "+v[5], top),
		parse("rare", v[20000], top),
		parse("two-mid", v[300]+" "+v[600], top),
		parse("prefix2", v[2][:2], top),
		parse("prefix3", v[40][:3], top),
		parse("prefix4", v[2][:4], top),
		parse("phrase", phrase, top),
		parse("or", v[4]+" OR "+v[25000], top),
		parse("not", v[3]+" -"+v[6], top),
		parse("filter-tag", v[2], textindex.Options{Limit: 10, Filter: textindex.Filter{Tags: []string{"area3/topic10"}}}),
		parse("filter-path-author", v[2], textindex.Options{Limit: 10, Filter: textindex.Filter{PathPrefix: "folder07/", Author: "author 7"}}),
		parse("passages-mid", v[100], textindex.Options{Limit: 10, Unit: textindex.Passages}),
		parse("passages-common", v[2], textindex.Options{Limit: 25, Unit: textindex.Passages}),
		{"question", textindex.QuestionQuery(fmt.Sprintf("how does %s relate to %s and %s?", v[50], v[500], v[5000])), top},
	}
	// run searches qs in turn. Each search starts with what keep says is
	// cached: nothing (a search whose words were not searched since the
	// index last changed), the words' postings (termCache: a new search of
	// words searched before), or the rankings too (the same search again).
	type cached int
	const (
		nothing cached = iota
		postings
		rankings
	)
	run := func(b *testing.B, qs []qspec, keep cached) {
		var lat []time.Duration
		i := 0
		cpu0 := cpuTime()
		for b.Loop() {
			s := qs[i%len(qs)]
			i++
			if keep < rankings {
				ix.ranks.mu.Lock()
				ix.ranks.entries = nil
				ix.ranks.mu.Unlock()
			}
			if keep < postings {
				ix.terms.mu.Lock()
				ix.terms.entries, ix.terms.postings = nil, 0
				ix.terms.mu.Unlock()
			}
			t0 := time.Now()
			res, err := ix.Search(ctx, s.q, s.opts)
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Hits) == 0 {
				b.Fatalf("%s: query %+v found nothing", s.name, s.q)
			}
		}
		cpu := cpuTime() - cpu0
		slices.Sort(lat)
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(cpu)/float64(len(lat)), "cpu-ms/op")
		b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	}
	b.Run("mix", func(b *testing.B) { run(b, mix, nothing) })
	b.Run("mix-words-seen", func(b *testing.B) { run(b, mix, postings) })
	for _, s := range mix {
		b.Run(s.name, func(b *testing.B) { run(b, []qspec{s}, nothing) })
	}
	b.Run("two-common-words-seen", func(b *testing.B) { run(b, mix[1:2], postings) })
	// The same search again, and its first five pages in turn: served
	// from the ranking cache (see rankCache).
	b.Run("two-common-again", func(b *testing.B) { run(b, mix[1:2], rankings) })
	var pages []qspec
	for p := range 5 {
		pages = append(pages, qspec{"two-common-pages", mix[1].q, textindex.Options{Limit: 10, Offset: 10 * p}})
	}
	b.Run("two-common-pages", func(b *testing.B) { run(b, pages, rankings) })
}

// BenchmarkRankParts splits the ranking query of a plain search for two
// common words (BenchmarkSearch/two-common) into its parts, in CPU time:
// the query Search runs (rank plus count(*) OVER ()), the same without the
// window, counting the matches, and walking them without rank. It shows
// where a search's time goes: ranking is BM25 over every match, and
// neither the window nor the LIMIT changes that.
func BenchmarkRankParts(b *testing.B) {
	c := newCorpus(10000, 5000)
	ix := benchIndex(b, c)
	ctx := context.Background()
	expr := matchExpr(textindex.ParseQuery(c.vocab[3] + " " + c.vocab[5]))
	const from = ` FROM notes_fts WHERE notes_fts MATCH ?`
	for _, p := range []struct{ name, sql string }{
		{"rank-window", `SELECT rowid, rank, count(*) OVER ()` + from + ` ORDER BY rank LIMIT 10`},
		{"rank", `SELECT rowid, rank` + from + ` ORDER BY rank LIMIT 10`},
		{"count", `SELECT count(*)` + from},
		{"match", `SELECT rowid` + from},
	} {
		b.Run(p.name, func(b *testing.B) {
			cpu0, n := cpuTime(), 0
			for b.Loop() {
				rows, err := ix.query(ctx, p.sql, expr)
				if err != nil {
					b.Fatal(err)
				}
				for n = 0; rows.Next(); n++ {
				}
				if err := rows.Close(); err != nil {
					b.Fatal(err)
				}
			}
			if n == 0 {
				b.Fatalf("%s: no row", p.name)
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(n), "rows")
		})
	}
}

// BenchmarkAsk measures the question lane (Ask, k=5 as search_and_read
// asks) on the 10k-note corpus, for questions of common, mid-frequency and
// rare words.
func BenchmarkAsk(b *testing.B) {
	c := newCorpus(10000, 5000)
	ix := benchIndex(b, c)
	ctx := context.Background()
	v := c.vocab
	qs := []struct{ name, q string }{
		{"mixed", fmt.Sprintf("how does %s relate to %s and %s?", v[50], v[500], v[5000])},
		{"common", fmt.Sprintf("what do we know about the %s and the %s?", v[2], v[5])},
		{"mid", fmt.Sprintf("where did we write about %s with %s?", v[300], v[600])},
		{"rare", fmt.Sprintf("is there a note on %s?", v[20000])},
		{"long", fmt.Sprintf("why did %s and %s change the %s of %s after %s, %s and %s?", v[10], v[80], v[200], v[900], v[3000], v[7000], v[15000])},
	}
	run := func(b *testing.B, qs []string) {
		var lat []time.Duration
		i := 0
		cpu0 := cpuTime()
		for b.Loop() {
			q := textindex.ParseQuestion(qs[i%len(qs)])
			i++
			t0 := time.Now()
			res, err := ix.Ask(ctx, q, textindex.Options{Limit: 5})
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Hits) == 0 {
				b.Fatalf("%+v found nothing", q)
			}
		}
		cpu := cpuTime() - cpu0
		slices.Sort(lat)
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(cpu)/float64(len(lat)), "cpu-ms/op")
		b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	}
	var all []string
	for _, q := range qs {
		all = append(all, q.q)
	}
	b.Run("mix", func(b *testing.B) { run(b, all) })
	for _, q := range qs {
		b.Run(q.name, func(b *testing.B) { run(b, []string{q.q}) })
	}
}

// BenchmarkSearchIndexFile times the searches `make bench-search` makes (two
// of its 20 words, 25 hits, the ranking cache emptied before each: a
// search not made before) on an existing index: SHEAF_BENCH_INDEX names a
// copy of the index.db of a `sheaf serve --state` folder, e.g. that of the
// 10k bench vault. The words' postings stay cached (termCache), as in a
// server that searched them before; SHEAF_BENCH_COLD empties that cache too
// before each search. With SHEAF_BENCH_AGAIN set it repeats one search,
// served from the ranking cache.
func BenchmarkSearchIndexFile(b *testing.B) {
	path := os.Getenv("SHEAF_BENCH_INDEX")
	if path == "" {
		b.Skip("SHEAF_BENCH_INDEX is not set")
	}
	ix, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	words := []string{"note", "project", "meeting", "idea", "research", "plan", "review", "design", "test", "data",
		"garden", "travel", "book", "music", "health", "budget", "team", "launch", "draft", "summary"}
	again, cold := os.Getenv("SHEAF_BENCH_AGAIN") != "", os.Getenv("SHEAF_BENCH_COLD") != ""
	ctx := context.Background()
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		q := words[i%len(words)] + " " + words[(i*7+3)%len(words)]
		i++
		if again {
			q = words[0] + " " + words[1]
		} else {
			ix.ranks.mu.Lock()
			ix.ranks.entries = nil
			ix.ranks.mu.Unlock()
		}
		if cold {
			ix.terms.mu.Lock()
			ix.terms.entries, ix.terms.postings = nil, 0
			ix.terms.mu.Unlock()
		}
		if _, err := ix.Search(ctx, textindex.ParseQuery(q), textindex.Options{Limit: 25}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkAskIndexFile asks BenchmarkSearchAndRead10k's 200 questions
// (vaultgen's, seed 1) of an existing index, SHEAF_BENCH_INDEX: a copy of
// the index.db of a `sheaf serve --state` folder of the 10k bench vault
// (Open upgrades it in place: compare builds on copies of one file, each
// already opened by the newer build, so both read the same schema).
// SHEAF_BENCH_QUESTIONS asks a questions.jsonl instead (the eval format:
// one {"question": ...} a line), e.g. a development set of ../shared/eval
// on the index `sheaf index` makes of its vault.
// SHEAF_BENCH_WRITE_EVERY=n writes a scratch note before every n-th
// question, as a vault being edited while an agent asks does (the
// writes' CPU time is left out of cpu-ms and the latencies, their
// allocations and ns/op are not). The note is deleted after each round,
// but the file keeps the writes' FTS5 segments: give each run a fresh
// copy.
// Each round opens the index afresh (its caches empty, as a restarted
// server's) and asks every question, k = 5; it reports the CPU time and
// the allocations per question, steadier than the server's latencies on
// a shared machine, and the latencies of all rounds' questions.
func BenchmarkAskIndexFile(b *testing.B) {
	path := os.Getenv("SHEAF_BENCH_INDEX")
	if path == "" {
		b.Skip("SHEAF_BENCH_INDEX is not set")
	}
	var qs []string
	if file := os.Getenv("SHEAF_BENCH_QUESTIONS"); file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			var q struct{ Question string }
			if err := json.Unmarshal([]byte(line), &q); err != nil || q.Question == "" {
				continue
			}
			qs = append(qs, q.Question)
		}
		if len(qs) == 0 {
			b.Fatalf("no question in %s", file)
		}
	} else {
		for _, q := range vaultgen.Questions(vaultgen.Options{Notes: 10000, Seed: 1}, 200) {
			qs = append(qs, q.Question)
		}
	}
	every, _ := strconv.Atoi(os.Getenv("SHEAF_BENCH_WRITE_EVERY"))
	const scratchNote = "sheaf-bench-scratch.md"
	ctx := context.Background()
	var cpu time.Duration
	var ms0, ms1 runtime.MemStats
	var allocs, bytes uint64
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		ix, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		b.StartTimer()
		cpu0 := cpuTime()
		var writing time.Duration // CPU time of the scratch writes
		for i, q := range qs {
			if every > 0 && i%every == 0 {
				w0 := cpuTime()
				scratch := textindex.Doc{Path: scratchNote, Title: "Scratch", Body: fmt.Sprintf("An edit, number %d.", i)}
				if err := ix.Upsert(ctx, scratch); err != nil {
					b.Fatal(err)
				}
				writing += cpuTime() - w0
			}
			t0 := time.Now()
			if _, err := ix.Ask(ctx, textindex.ParseQuestion(q), textindex.Options{Limit: 5}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		cpu += cpuTime() - cpu0 - writing
		b.StopTimer()
		runtime.ReadMemStats(&ms1)
		allocs += ms1.Mallocs - ms0.Mallocs
		bytes += ms1.TotalAlloc - ms0.TotalAlloc
		if every > 0 {
			if err := ix.Delete(ctx, scratchNote); err != nil {
				b.Fatal(err)
			}
		}
		ix.Close()
		b.StartTimer()
	}
	n := float64(b.N * len(qs))
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/n, "cpu-ms/question")
	b.ReportMetric(float64(allocs)/n, "allocs/question")
	b.ReportMetric(float64(bytes)/1024/n, "KB/question")
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}
