package rank

import "github.com/sheaf-dev/sheaf/shared/textindex"

// Links is what the vault knows of the links between notes, resolved as
// the vault is now.
type Links interface {
	// Incoming returns the number of other notes linking to path and the
	// display text of their links to it (the words people link it by).
	Incoming(path string) (sources int, anchors []string)
	// Outgoing returns the notes path links to, each with the display
	// text of the link ("" when it has none).
	Outgoing(path string) []Anchor
}

// Anchor is a link to a note and its display text.
type Anchor struct {
	Target, Text string
}

// Lexical rescores the text index's question hits with what the vault
// knows of each note beyond its own text: the link prior
// (Params.LinkPrior) and the share of the question found in the display
// text of links into it (Params.AnchorWeight). With anchors weighted, a
// note the index did not find joins when a note it found links to it with
// words of the question (the words are in the linking note's text, so
// that note is in the pool). Scores stay lower is better; the caller
// sorts.
func Lexical(p Params, q textindex.Question, hits []textindex.Hit, links Links) []textindex.Hit {
	if p.AnchorWeight != 0 {
		have := make(map[string]bool, len(hits))
		for _, h := range hits {
			have[h.Path] = true
		}
		for _, h := range hits[:len(hits):len(hits)] {
			for _, a := range links.Outgoing(h.Path) {
				if a.Target != "" && a.Text != "" && !have[a.Target] && WordShare(q, []string{a.Text}) > 0 {
					have[a.Target] = true
					hits = append(hits, textindex.Hit{Path: a.Target})
				}
			}
		}
	}
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
	return hits
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
