package core

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/infra/embedder"
	"github.com/sheaf-dev/sheaf/shared/embed"
	"github.com/sheaf-dev/sheaf/shared/embed/embedcache"
	"github.com/sheaf-dev/sheaf/shared/rank"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// The retrieval harness: every lane on every question set in one run.
// The sets are the sample vault's own questions, the development sets
// beside the repository (rank.EvalSetsDir: questions written by people
// outside the team, never tuned on alone) and a generated vault whose
// questions vaultgen.Questions makes from each note's topic words by
// template (known-item questions, not written with the ranker in mind).

// evalSet is a question set on a vault copied into a temporary folder.
type evalSet struct {
	name string
	dir  string
	qs   []rank.Judged
	// lexical marks a set measured without embeddings: the generated
	// vault, whose prose is random words (vectors of them mean nothing)
	// and whose size (2,000 notes, 18k passages) USE-lite cannot embed
	// in a test's time.
	lexical bool
}

// evalSets returns every question set. The development sets are required
// under CI (the checkout has ../shared beside it) and skipped with a note
// elsewhere when absent.
func evalSets(t *testing.T) []evalSet {
	t.Helper()
	sets := []evalSet{copySet(t, "sample", "../../infra/sample-vault", "../../infra/sample-vault/eval/questions.jsonl")}
	root, ok := rank.EvalSetsDir()
	switch {
	case !ok && os.Getenv("CI") != "":
		t.Fatalf("the development question sets are not at %s: set %s", root, rank.EnvEvalSets)
	case !ok:
		t.Logf("the development question sets are not at %s (set %s): measuring the sample and generated vaults only", root, rank.EnvEvalSets)
	default:
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			qf := filepath.Join(root, e.Name(), "questions.jsonl")
			if _, err := os.Stat(qf); err == nil {
				sets = append(sets, copySet(t, e.Name(), filepath.Join(root, e.Name(), "vault"), qf))
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "generated")
	opt := vaultgen.Options{Notes: 2000, Seed: 7}
	if _, err := vaultgen.Generate(dir, opt); err != nil {
		t.Fatal(err)
	}
	var qs []rank.Judged
	for _, q := range vaultgen.Questions(opt, 120) {
		qs = append(qs, rank.Judged{Question: q.Question, Expected: q.Expected})
	}
	sets = append(sets, evalSet{name: "generated", dir: dir, qs: qs, lexical: true})
	return sets
}

// copySet copies a vault (without its eval folder) and reads its questions.
func copySet(t *testing.T, name, vaultDir, questions string) evalSet {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(vaultDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "eval")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(questions)
	if err != nil {
		t.Fatal(err)
	}
	var qs []rank.Judged
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var q evalQuestion
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatalf("%s: %v", questions, err)
		}
		qs = append(qs, rank.Judged{Question: q.Question, Expected: q.Expected})
	}
	return evalSet{name: name, dir: dir, qs: qs}
}

// cachedUSE is the USE-lite embedder behind a file cache that outlives the
// run ($SHEAF_EVAL_CACHE, else the user's cache folder), so only changed
// passages are embedded again; the server starts on the first miss only.
func cachedUSE(t *testing.T) embed.Embedder {
	t.Helper()
	dir := os.Getenv("SHEAF_EVAL_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "sheaf-eval")
	}
	c, err := embedcache.Open(filepath.Join(dir, embedder.Model+".vec"), embedder.Model, embedder.Dimensions, func() (embed.Embedder, error) {
		return embed.New(embed.Config{BaseURL: embedder.Start(t), Model: embedder.Model, BatchSize: 16, Timeout: 5 * time.Minute})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.Misses > 0 {
			t.Logf("embedded %d new texts (cached in %s)", c.Misses, dir)
		}
		c.Close()
	})
	return c
}

// laneNames are the lanes every set is measured in, in table order.
var laneNames = []string{"baseline", "fulltext", "semantic", "hybrid"}

// evalPool is how many notes each lane ranks for the harness: what
// retrieve asks of each for a top 10.
var evalPool = lanePool(10)

// setRun is one set measured: the fixture, the baseline's and the vector
// lane's rankings, and for each question the lexical lane's pool with the
// features that rank it, so that any Params can be scored without
// querying again (score), then checked live (live).
type setRun struct {
	set      evalSet
	f        *semFixture
	baseline [][]string
	lex      map[poolKey][][]lexCand // per pool setting, per question (pools)
	vec      [][]laneHit
	q        []textindex.Question
	links    catalogLinks
}

// poolKey is what changes a question's measured pool: the feedback and
// the pool's size (the weights only reorder it). A setting that changes
// what Ask measures belongs here too.
type poolKey struct {
	feedback textindex.Feedback
	pool     int
}

// lexCand is a note of the lexical pool: its index hit and what the
// catalog knows of it.
type lexCand struct {
	hit     textindex.Hit
	in      int
	anchors []string
	out     []rank.Anchor
}

func measureSet(t *testing.T, set evalSet, emb embed.Embedder) *setRun {
	t.Helper()
	ctx := context.Background()
	if set.lexical {
		emb = nil // the fixture's fake: never asked
	}
	f := openSemFixtureWith(t, set.dir, emb)
	if !set.lexical {
		if _, err := f.s.ReindexEmbeddings(ctx, ReindexIn{}); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := f.v.Catalogs.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range set.qs {
		for _, e := range q.Expected {
			if _, ok := cat.Note(e); !ok {
				t.Fatalf("%s: %q expects %s, not a note of the vault", set.name, q.Question, e)
			}
		}
		n, _ := cat.Note(q.Expected[0])
		set.qs[i].NoTitleWord = rank.SharesNoTitleWord(q.Question, n.Title)
	}
	base := rank.NewBaseline(baselineDocs(t, set.dir, cat))
	run := &setRun{set: set, f: f, links: catalogLinks{cat}, lex: map[poolKey][][]lexCand{}}
	for _, q := range set.qs {
		var bp []string
		for _, h := range base.Rank(q.Question, 10) {
			bp = append(bp, h.Path)
		}
		run.baseline = append(run.baseline, bp)
		run.q = append(run.q, textindex.ParseQuestion(q.Question))
		var vec []laneHit
		if !set.lexical {
			if vec, err = f.s.vectorLane(ctx, f.v, cat, q.Question, RetrieveOptions{}, evalPool); err != nil {
				t.Fatal(err)
			}
		}
		run.vec = append(run.vec, vec)
	}
	run.pools(t, rank.Default.Ask)
	return run
}

// pools are the lexical lane's pools of every question with the pool
// settings of ao, measured the first time they are asked for.
func (r *setRun) pools(t *testing.T, ao textindex.AskOptions) [][]lexCand {
	key := poolKey{ao.Feedback, ao.Pool}
	if p, ok := r.lex[key]; ok {
		return p
	}
	ctx := context.Background()
	var out [][]lexCand
	for _, pq := range r.q {
		res, err := r.f.v.Text.Ask(ctx, pq, textindex.Options{Limit: evalPool + askSlack, Ask: ao})
		if err != nil {
			t.Fatal(err)
		}
		var lc []lexCand
		for _, h := range res.Hits {
			in, anchors := r.links.Incoming(h.Path)
			lc = append(lc, lexCand{hit: h, in: in, anchors: anchors, out: r.links.Outgoing(h.Path)})
		}
		out = append(out, lc)
	}
	r.lex[key] = out
	return out
}

// score ranks every question of the set with p from the measured pools,
// as retrieve would: the fulltext and hybrid lanes' top 10.
func (r *setRun) score(t *testing.T, p rank.Params) (full, hyb [][]string) {
	pools := r.pools(t, p.Ask)
	for i := range r.set.qs {
		hits := make([]textindex.Hit, len(pools[i]))
		for j, c := range pools[i] {
			h := c.hit
			h.Score = -p.Ask.Weights.Score(h.Features)
			hits[j] = h
		}
		links := fixedLinks{pool: pools[i], cat: r.links}
		hits = rank.Lexical(p, r.q[i], hits, links)
		sort.SliceStable(hits, func(a, b int) bool { return hits[a].Score < hits[b].Score })
		lex := make([]laneHit, len(hits))
		for j, h := range hits {
			lex[j] = laneHit{Path: h.Path, Score: -h.Score, Matched: h.Matched}
		}
		f := fuse(lex, nil, 0)
		sortCandidates(f)
		full = append(full, head10(pathsOf(f)))
		hb := fuse(lex, r.vec[i], p.VectorShare(confidence(lex)))
		sortCandidates(hb)
		hyb = append(hyb, head10(pathsOf(hb)))
	}
	return full, hyb
}

// live ranks every question through retrieve with p set on the vault.
func (r *setRun) live(t *testing.T, p rank.Params, mode string) [][]string {
	t.Helper()
	ctx := context.Background()
	r.f.v.Ranking = &p
	defer func() { r.f.v.Ranking = nil }()
	cat, _ := r.f.v.Catalogs.Catalog(ctx)
	var out [][]string
	for _, q := range r.set.qs {
		got, err := r.f.s.retrieve(ctx, r.f.v, cat, q.Question, RetrieveOptions{Limit: 10, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pathsOf(got))
	}
	return out
}

func (r *setRun) semantic() [][]string {
	var out [][]string
	for _, v := range r.vec {
		out = append(out, head10(pathsOf(candidatesOf(v))))
	}
	return out
}

func head10(ps []string) []string { return ps[:min(10, len(ps))] }

// fixedLinks answers rank.Links from a measured pool (and the catalog,
// for notes that join it through anchors).
type fixedLinks struct {
	pool []lexCand
	cat  catalogLinks
}

func (f fixedLinks) Incoming(path string) (int, []string) {
	for _, c := range f.pool {
		if c.hit.Path == path {
			return c.in, c.anchors
		}
	}
	return f.cat.Incoming(path)
}

func (f fixedLinks) Outgoing(path string) []rank.Anchor {
	for _, c := range f.pool {
		if c.hit.Path == path {
			return c.out
		}
	}
	return f.cat.Outgoing(path)
}

// baselineDocs reads every note of the vault at dir for the baseline.
func baselineDocs(t *testing.T, dir string, cat *vault.Catalog) []rank.BaselineDoc {
	t.Helper()
	var docs []rank.BaselineDoc
	for _, n := range cat.Notes() {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n.Path)))
		if err != nil {
			src = readNFD(t, dir, n.Path)
		}
		p := vault.Parse(n.Path, src)
		docs = append(docs, rank.BaselineDoc{Path: n.Path, Title: n.Title, Body: p.Body})
	}
	return docs
}

// feedbacks are the pseudo-relevance feedback settings tried: off, and
// two strengths.
var feedbacks = []textindex.Feedback{{}, {Notes: 3, Terms: 5, Weight: 0.3}, {Notes: 5, Terms: 10, Weight: 0.5}}

func feedbackIndex(fb textindex.Feedback) int {
	i := slices.Index(feedbacks, fb)
	if i < 0 {
		panic(fmt.Sprintf("feedback %+v is not one the harness measured", fb))
	}
	return i
}

// cvParams are the values cross-validation chooses from; each starts at
// what rank.Default ships.
func cvParams() []rank.Param {
	d := rank.Default
	w := d.Ask.Weights
	grid := func(name string, start float64, vs ...float64) rank.Param {
		out := []float64{start}
		for _, v := range vs {
			if v != start {
				out = append(out, v)
			}
		}
		return rank.Param{Name: name, Values: out}
	}
	return []rank.Param{
		grid("passage", w.Passage, 0, 0.1, 0.3, 0.6, 1),
		grid("proximity", w.Proximity, 0, 0.1, 0.2, 0.4),
		grid("name", w.Name, 0, 0.1, 0.3, 0.6, 1, 1.5),
		grid("headings", w.Headings, 0, 0.1, 0.3, 0.6),
		grid("meta", w.Meta, 0, 0.1, 0.3, 0.6),
		grid("matched", w.Matched, 0, 0.2, 0.5, 1),
		grid("link", d.LinkWeight, 0, 0.05, 0.1, 0.2),
		grid("anchor", d.AnchorWeight, 0, 0.1, 0.3, 0.6),
		grid("vector", d.VectorWeight, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8),
		grid("floor", d.VectorFloor, 0, 0.05, 0.1, 0.2, 0.3),
		grid("feedback", float64(feedbackIndex(d.Ask.Feedback)), 0, 1, 2),
		grid("stage", w.Stage, 0, 0.3, 0.6, 1, 2),
		grid("body", w.Body, 0, 0.3, 1),
		grid("pool", float64(d.Ask.Pool), 100),
	}
}

// paramsOf turns cross-validation values (in cvParams' order) into Params.
func paramsOf(x []float64) rank.Params {
	p := rank.Default
	w := &p.Ask.Weights
	w.Passage, w.Proximity, w.Name, w.Headings, w.Meta, w.Matched = x[0], x[1], x[2], x[3], x[4], x[5]
	p.LinkWeight, p.AnchorWeight, p.VectorWeight, p.VectorFloor = x[6], x[7], x[8], x[9]
	p.Ask.Feedback = feedbacks[int(x[10])]
	w.Stage, w.Body = x[11], x[12]
	p.Ask.Pool = int(x[13])
	return p
}

// TestQuestionSets measures every lane on every set in one run and
// chooses the ranking's parameters by leave-one-set-out cross-validation
// (rank.CrossValidate: fit on the other sets, score on the one left out).
// It logs one table per set, every figure held out: recall@5 and MRR
// (first expected note in the top 5), on all questions and on those
// sharing no content word with their first expected note's title; then
// the folds and the values fitted on all sets (what rank.Default should
// ship). The held-out rankings are checked live, through retrieve, against
// the scores computed from the measured pools, and the hybrid lane must
// not fall below its best single lane on any set. Run it with -v.
func TestQuestionSets(t *testing.T) {
	if testing.Short() {
		t.Skip("the question sets take a minute (USE-lite embeddings)")
	}
	emb := cachedUSE(t)
	const k = 5
	var runs []*setRun
	var names []string
	for _, set := range evalSets(t) {
		runs = append(runs, measureSet(t, set, emb))
		names = append(names, set.name)
	}
	params := cvParams()
	objective := func(x []float64, i int) rank.Metrics {
		full, hyb := runs[i].score(t, paramsOf(x))
		a, b := rank.Measure(runs[i].set.qs, full, k, nil), rank.Measure(runs[i].set.qs, hyb, k, nil)
		if runs[i].set.lexical {
			return a
		}
		return rank.Metrics{N: a.N, Recall: (a.Recall + b.Recall) / 2, MRR: (a.MRR + b.MRR) / 2}
	}
	cv := rank.CrossValidate(names, params, 3, objective)
	var report strings.Builder
	for i, fold := range cv.Folds {
		r := runs[i]
		p := paramsOf(fold.Values)
		full, hyb := r.score(t, p)
		if lf := r.live(t, p, "fulltext"); !sameRankings(lf, full, k) {
			t.Errorf("%s: the live fulltext ranking differs from the measured one", r.set.name)
		}
		if !r.set.lexical {
			if lh := r.live(t, p, "hybrid"); !sameRankings(lh, hyb, k) {
				t.Errorf("%s: the live hybrid ranking differs from the measured one", r.set.name)
			}
		}
		lanes := map[string][][]string{"baseline": r.baseline, "fulltext": full, "semantic": r.semantic(), "hybrid": hyb}
		fmt.Fprintf(&report, "\n%s: %d questions (%d share no word with their note's title); parameters fitted on the other sets\n",
			r.set.name, len(r.set.qs), rank.Measure(r.set.qs, r.baseline, k, noTitle).N)
		fmt.Fprintf(&report, "  %-9s  %-9s  %-6s  %-16s  %s\n", "lane", "recall@5", "MRR", "no-title recall", "no-title MRR")
		for _, lane := range laneNames {
			if r.set.lexical && (lane == "semantic" || lane == "hybrid") {
				fmt.Fprintf(&report, "  %-9s  not measured (random words, no embeddings)\n", lane)
				continue
			}
			all, nt := rank.Measure(r.set.qs, lanes[lane], k, nil), rank.Measure(r.set.qs, lanes[lane], k, noTitle)
			fmt.Fprintf(&report, "  %-9s  %-9.3f  %-6.3f  %-16.3f  %.3f\n", lane, all.Recall, all.MRR, nt.Recall, nt.MRR)
		}
		// Fusion is never below its best lane, held out, on any set.
		full5, sem5, hyb5 := rank.Measure(r.set.qs, full, k, nil), rank.Measure(r.set.qs, lanes["semantic"], k, nil), rank.Measure(r.set.qs, hyb, k, nil)
		if r.set.lexical {
			hyb5 = full5
		}
		if best := max(full5.Recall, sem5.Recall); hyb5.Recall < best-1e-9 {
			t.Errorf("%s: hybrid recall@5 %.3f is below its best lane's %.3f", r.set.name, hyb5.Recall, best)
		}
		if best := max(full5.MRR, sem5.MRR); hyb5.MRR < best-1e-9 {
			t.Errorf("%s: hybrid MRR %.3f is below its best lane's %.3f", r.set.name, hyb5.MRR, best)
		}
		if testing.Verbose() && os.Getenv("SHEAF_EVAL_MISSES") != "" {
			for j, q := range r.set.qs {
				if rr := rank.Measure([]rank.Judged{q}, [][]string{full[j]}, k, nil).MRR; rr < 1 {
					fmt.Fprintf(&report, "    %q want %v\n      base %v\n      full %v\n      hyb  %v\n", q.Question, q.Expected, head(r.baseline[j]), head(full[j]), head(hyb[j]))
				}
			}
		}
	}
	fmt.Fprintf(&report, "\nfolds (held-out set: values fitted on the others)\n")
	for _, fold := range cv.Folds {
		fmt.Fprintf(&report, "  %-13s %s\n", fold.Held, describeValues(params, fold.Values))
	}
	fmt.Fprintf(&report, "  %-13s %s\n", "all sets", describeValues(params, cv.All))
	if os.Getenv("SHEAF_EVAL_SWEEP") != "" {
		// How each set's objective moves with each value, the others at
		// the all-sets fit: which sets pull a value where.
		fmt.Fprintf(&report, "\nsensitivity around the all-sets fit (objective per set: %s)\n", strings.Join(names, ", "))
		for pi, p := range params {
			for _, v := range p.Values {
				x := slices.Clone(cv.All)
				x[pi] = v
				fmt.Fprintf(&report, "  %-9s %-5g", p.Name, v)
				for i := range runs {
					fmt.Fprintf(&report, "  %.4f", rank.Objective(objective(x, i)))
				}
				fmt.Fprintln(&report)
			}
		}
	}
	t.Log(report.String())
}

func describeValues(ps []rank.Param, x []float64) string {
	var b strings.Builder
	for i, p := range ps {
		fmt.Fprintf(&b, "%s=%g ", p.Name, x[i])
	}
	return b.String()
}

// sameRankings reports whether two sets of rankings agree in their top k.
func sameRankings(a, b [][]string, k int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i][:min(k, len(a[i]))], b[i][:min(k, len(b[i]))]) {
			return false
		}
	}
	return true
}

func noTitle(q rank.Judged) bool { return q.NoTitleWord }
