// Package rank is the question lane's ranking, free of any protocol and of
// any index: the textbook baseline every lane is measured against, the
// fusion of the lexical and vector lanes, pseudo-relevance feedback, the
// features a note is ranked by, and the metrics and cross-validation that
// choose every weight (see docs/retrieval.md).
package rank

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The textbook baseline: what SQLite FTS5 ranks with
//
//	CREATE VIRTUAL TABLE b USING fts5(path UNINDEXED, title, body,
//	    tokenize='porter unicode61 remove_diacritics 2');
//	INSERT INTO b(b, rank) VALUES('rank', 'bm25(0, 5.0, 1.0)');
//	SELECT path FROM b WHERE b MATCH '"w1" OR "w2" OR ...' ORDER BY rank;
//
// over whole notes (title, body without frontmatter), every word of the
// question OR'd, stopwords kept. It is written out here in Go, formula for
// formula (fts5_aux.c's bm25: k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) /
// (n + 0.5)) floored at 1e-6, the weighted term frequency of each phrase
// summed over columns and saturated against the row's whole length), so
// that every door (the Lambda function links no SQLite) can print it beside
// Sheaf's lanes; a test checks it against FTS5 itself, ranking for ranking.
const (
	baselineK1          = 1.2
	baselineB           = 0.75
	baselineTitleWeight = 5.0
)

// BaselineDoc is one note as the baseline indexes it.
type BaselineDoc struct {
	Path, Title, Body string
}

// Baseline is an in-memory BM25 index of whole notes. It is safe for
// concurrent Rank calls once built.
type Baseline struct {
	paths    []string
	length   []float64 // tokens in title and body
	avg      float64
	postings map[string][]posting
}

type posting struct {
	doc         int
	title, body float64 // term frequencies
}

// NewBaseline indexes docs, in order (ties rank in this order).
func NewBaseline(docs []BaselineDoc) *Baseline {
	b := &Baseline{postings: map[string][]posting{}}
	st := newPorter()
	total := 0.0
	for i, d := range docs {
		b.paths = append(b.paths, d.Path)
		tf := map[string]*posting{}
		var order []string
		n := 0
		count := func(text string, title bool) {
			for _, tok := range fts5Tokens(text) {
				n++
				s := st.stem(tok)
				p := tf[s]
				if p == nil {
					p = &posting{doc: i}
					tf[s] = p
					order = append(order, s)
				}
				if title {
					p.title++
				} else {
					p.body++
				}
			}
		}
		count(d.Title, true)
		count(d.Body, false)
		for _, s := range order {
			b.postings[s] = append(b.postings[s], *tf[s])
		}
		b.length = append(b.length, float64(n))
		total += float64(n)
	}
	if len(docs) > 0 {
		b.avg = total / float64(len(docs))
	}
	return b
}

// Len is the number of notes indexed.
func (b *Baseline) Len() int { return len(b.paths) }

// BaselineHit is one note as the baseline ranked it.
type BaselineHit struct {
	Path  string
	Score float64 // BM25, higher is better (FTS5's rank negated)
	// Terms are the question's stemmed words found in the note, with their
	// frequency in the title and the body: the features that placed it.
	Terms []BaselineTerm
}

// BaselineTerm is one stemmed word of a question in one note.
type BaselineTerm struct {
	Stem        string
	IDF         float64
	Title, Body float64
}

// Rank returns up to limit notes for question, best first.
func (b *Baseline) Rank(question string, limit int) []BaselineHit {
	if len(b.paths) == 0 || limit <= 0 {
		return nil
	}
	st := newPorter()
	var phrases []string // one per word of the question, repeats kept, as FTS5 counts them
	for _, w := range strings.FieldsFunc(question, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		for _, tok := range fts5Tokens(w) {
			phrases = append(phrases, st.stem(tok))
		}
	}
	n := float64(len(b.paths))
	scores := map[int]float64{}
	terms := map[int][]BaselineTerm{}
	for _, s := range phrases {
		ps := b.postings[s]
		if len(ps) == 0 {
			continue
		}
		idf := math.Log((n - float64(len(ps)) + 0.5) / (float64(len(ps)) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		for _, p := range ps {
			f := baselineTitleWeight*p.title + p.body
			norm := baselineK1 * (1 - baselineB + baselineB*b.length[p.doc]/b.avg)
			scores[p.doc] += idf * f * (baselineK1 + 1) / (f + norm)
			if !slices.ContainsFunc(terms[p.doc], func(t BaselineTerm) bool { return t.Stem == s }) {
				terms[p.doc] = append(terms[p.doc], BaselineTerm{Stem: s, IDF: idf, Title: p.title, Body: p.body})
			}
		}
	}
	docs := make([]int, 0, len(scores))
	for d := range scores {
		docs = append(docs, d)
	}
	slices.SortFunc(docs, func(x, y int) int {
		switch {
		case scores[x] > scores[y]:
			return -1
		case scores[x] < scores[y]:
			return 1
		}
		return x - y
	})
	out := make([]BaselineHit, 0, min(limit, len(docs)))
	for _, d := range docs[:min(limit, len(docs))] {
		out = append(out, BaselineHit{Path: b.paths[d], Score: scores[d], Terms: terms[d]})
	}
	return out
}

// fts5Tokens splits s as FTS5's unicode61 tokenizer with remove_diacritics 2
// does: runs of letters, numbers and private-use characters, case-folded,
// diacritics removed. (FTS5's tables are Unicode 6.1's, which also make a
// token of a character assigned since, such as a newer emoji: a rare
// difference of one token in a note's length.)
func fts5Tokens(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Co, r)
	}) {
		if t := removeDiacritics(f); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// removeDiacritics lower-cases s and drops its combining marks.
func removeDiacritics(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.IsMark(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// porterStemmer is FTS5's porter tokenizer: porterStem on tokens of 3 to
// 64 bytes, others unchanged, with a cache.
type porterStemmer struct {
	cache map[string]string
}

func newPorter() *porterStemmer { return &porterStemmer{cache: map[string]string{}} }

func (p *porterStemmer) stem(tok string) string {
	if len(tok) < 3 || len(tok) > 64 {
		return tok
	}
	if s, ok := p.cache[tok]; ok {
		return s
	}
	s := porterStem(tok)
	p.cache[tok] = s
	return s
}
