package rank

import (
	"slices"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// Judged is one question of a question set and the notes that answer it,
// best first.
type Judged struct {
	Question string
	Expected []string
	// NoTitleWord is set when no content word of the question, stemmed,
	// is a word of its first expected note's title (SharesNoTitleWord).
	NoTitleWord bool
}

// Metrics are a ranking's scores over a question set: recall at K (the
// share of each question's expected notes in its top K, averaged) and MRR
// (the reciprocal rank of its first expected note in the top K, 0 past K,
// averaged), as the eval tool computes them.
type Metrics struct {
	N      int     `json:"questions"`
	Recall float64 `json:"recall"`
	MRR    float64 `json:"mrr"`
}

// Score scores one ranking (paths, best first, without repeats) of a
// question with the expected paths at cutoff k.
func Score(expected, ranking []string, k int) (recall, rr float64) {
	found := 0
	for i, p := range ranking[:min(k, len(ranking))] {
		if slices.Contains(expected, p) {
			found++
			if rr == 0 {
				rr = 1 / float64(i+1)
			}
		}
	}
	if len(expected) > 0 {
		recall = float64(found) / float64(len(expected))
	}
	return recall, rr
}

// Measure averages Score over questions and their rankings (one per
// question, in order), at cutoff k. keep, when not nil, selects the
// questions counted.
func Measure(qs []Judged, rankings [][]string, k int, keep func(Judged) bool) Metrics {
	var m Metrics
	for i, q := range qs {
		if keep != nil && !keep(q) {
			continue
		}
		r, rr := Score(q.Expected, rankings[i], k)
		m.N++
		m.Recall += r
		m.MRR += rr
	}
	if m.N > 0 {
		m.Recall /= float64(m.N)
		m.MRR /= float64(m.N)
	}
	return m
}

// SharesNoTitleWord reports whether no content word of question (as
// textindex.ParseQuestion reads it) is a word of title, both stemmed in
// English and in the question's language.
func SharesNoTitleWord(question, title string) bool {
	var st textindex.Stemmer
	q := textindex.ParseQuestion(question)
	langs := []textindex.Lang{textindex.English}
	if q.Lang != "" && q.Lang != textindex.English {
		langs = append(langs, q.Lang)
	}
	inTitle := map[string]bool{}
	for _, w := range textindex.ParseQuestion(title).Words {
		for _, l := range langs {
			inTitle[st.Stem(l, w.Text)] = true
		}
	}
	if q.OnlyStopwords {
		return true // no content word at all
	}
	for _, w := range q.Words {
		for _, l := range langs {
			if inTitle[st.Stem(l, w.Text)] {
				return false
			}
		}
	}
	return true
}
