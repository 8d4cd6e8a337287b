package rank

import "github.com/sheaf-dev/sheaf/shared/textindex"

// Links is what the vault knows of the links pointing into a note.
type Links interface {
	// Incoming returns the number of other notes linking to path and the
	// display text of their links to it (the words people link it by).
	Incoming(path string) (sources int, anchors []string)
}

// Lexical rescores the text index's question hits with what the vault
// knows of each note beyond its own text: the link prior
// (Params.LinkPrior) and the share of the question found in the display
// text of links into it (Params.AnchorWeight). Scores stay lower is
// better. The caller sorts.
func Lexical(p Params, q textindex.Question, hits []textindex.Hit, links Links) {
	for i := range hits {
		h := &hits[i]
		in, anchors := links.Incoming(h.Path)
		rel := -h.Score * p.LinkPrior(in)
		if p.AnchorWeight != 0 && len(anchors) > 0 {
			h.Features.Anchor = WordShare(q, anchors)
			rel += p.AnchorWeight * h.Features.Anchor
		}
		h.Score = -rel
	}
}

// WordShare is the share of q's words found, by English stem and by the
// question's language, in texts.
func WordShare(q textindex.Question, texts []string) float64 {
	if q.Empty() {
		return 0
	}
	var st textindex.Stemmer
	langs := []textindex.Lang{textindex.English}
	if q.Lang != "" && q.Lang != textindex.English {
		langs = append(langs, q.Lang)
	}
	have := map[string]bool{}
	for _, t := range texts {
		for _, w := range textindex.ParseQuestion(t).Words {
			for _, l := range langs {
				have[st.Stem(l, w.Text)] = true
			}
		}
	}
	n := 0
	for _, w := range q.Words {
		for _, l := range langs {
			if have[st.Stem(l, w.Text)] {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(q.Words))
}
