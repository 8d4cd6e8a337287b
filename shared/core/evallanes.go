package core

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/sheaf-dev/sheaf/shared/rank"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// maxBaselineNotes bounds the vaults eval builds the baseline for: it
// reads every note once per call.
const maxBaselineNotes = 20000

// EvalScores are one lane's scores over the question set.
type EvalScores struct {
	RecallAtK    float64 `json:"recallAtK"`
	PrecisionAtK float64 `json:"precisionAtK"`
	MRR          float64 `json:"mrr"`
	HitRate      float64 `json:"hitRate"`
}

// EvalExplain is, for one question, each lane's top 10 with the features
// that placed each note.
type EvalExplain struct {
	Question int         `json:"question" jsonschema:"1-based number of the question explained"`
	Text     string      `json:"text"`
	Expected []string    `json:"expected"`
	Lanes    []LaneTrace `json:"lanes"`
}

// LaneTrace is one lane's top 10 for an explained question.
type LaneTrace struct {
	Lane  string       `json:"lane" jsonschema:"baseline, fulltext, semantic or hybrid"`
	Note  string       `json:"note,omitempty" jsonschema:"how the lane scores, or why it is empty"`
	Notes []TracedNote `json:"notes"`
	Share *float64     `json:"vectorShare,omitempty" jsonschema:"hybrid: the vector lane's share for this question"`
	Terms []TracedTerm `json:"terms,omitempty" jsonschema:"baseline: the question's stemmed words and their idf"`
}

// TracedTerm is a stemmed word of the question and its weight.
type TracedTerm struct {
	Stem string  `json:"stem"`
	IDF  float64 `json:"idf"`
}

// TracedNote is one note of a lane's ranking and what placed it.
type TracedNote struct {
	Rank     int                `json:"rank"`
	Path     string             `json:"path"`
	Score    float64            `json:"score" jsonschema:"the lane's score, higher is better"`
	Expected bool               `json:"expected,omitempty"`
	Features map[string]float64 `json:"features,omitempty"`
}

// evalBaseline builds the textbook baseline over every note of the vault,
// or explains why not.
func evalBaseline(ctx context.Context, v *Vault, cat *vault.Catalog) (*rank.Baseline, string) {
	notes := cat.Notes()
	if len(notes) > maxBaselineNotes {
		return nil, fmt.Sprintf("not built: the vault has %d notes, more than the %d eval reads for it", len(notes), maxBaselineNotes)
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].Path < notes[j].Path })
	docs := make([]rank.BaselineDoc, 0, len(notes))
	for _, n := range notes {
		if ctx.Err() != nil {
			return nil, ctx.Err().Error()
		}
		ln, err := loadNote(ctx, v, n.Path)
		if err != nil {
			continue // unreadable since indexing: as absent for every lane
		}
		docs = append(docs, rank.BaselineDoc{Path: n.Path, Title: n.Title, Body: ln.parsed.Body})
	}
	return rank.NewBaseline(docs), ""
}

// baselinePaths is the baseline's top k for a question.
func baselinePaths(b *rank.Baseline, question string, k int) []string {
	out := []string{}
	for _, h := range b.Rank(question, k) {
		out = append(out, h.Path)
	}
	return out
}

// explainQuestion traces every lane for one question.
func (s *Core) explainQuestion(ctx context.Context, v *Vault, cat *vault.Catalog, n int, c evalCase, b *rank.Baseline, bnote string) (*EvalExplain, error) {
	const top = 10
	out := &EvalExplain{Question: n, Text: c.Question, Expected: c.Expected}
	mark := func(ns []TracedNote) []TracedNote {
		for i := range ns {
			ns[i].Rank = i + 1
			ns[i].Expected = slices.Contains(c.Expected, ns[i].Path)
		}
		return ns
	}

	bl := LaneTrace{Lane: "baseline", Notes: []TracedNote{}, Note: "BM25 over whole notes (FTS5's formula), every word OR'd, porter stems, title x5; features: each word's frequency in title and body"}
	if b == nil {
		bl.Note = "baseline " + bnote
	} else {
		terms := map[string]float64{}
		for _, h := range b.Rank(c.Question, top) {
			f := map[string]float64{}
			for _, t := range h.Terms {
				f["title:"+t.Stem], f["body:"+t.Stem] = t.Title, t.Body
				terms[t.Stem] = t.IDF
			}
			bl.Notes = append(bl.Notes, TracedNote{Path: h.Path, Score: roundScore(h.Score), Features: f})
		}
		for st, idf := range terms {
			bl.Terms = append(bl.Terms, TracedTerm{Stem: st, IDF: roundScore(idf)})
		}
		sort.Slice(bl.Terms, func(i, j int) bool { return bl.Terms[i].IDF > bl.Terms[j].IDF })
		bl.Notes = mark(bl.Notes)
	}
	out.Lanes = append(out.Lanes, bl)

	p := v.ranking()
	q := textindex.ParseQuestion(c.Question)
	res, err := askLexical(ctx, v, cat, q, textindex.Filter{}, lanePool(top), 0)
	if err != nil {
		return nil, err
	}
	ft := LaneTrace{Lane: "fulltext", Notes: []TracedNote{}, Note: "the question lane: features weighted by rank.Params (name, headings, meta and matched are shares of the question's idf; body and passage normalised BM25), times the link prior, plus the anchor share"}
	var lex []laneHit
	for i, h := range res.Hits {
		lex = append(lex, laneHit{Path: h.Path, Title: h.Title, Score: -h.Score, Matched: h.Matched, Ordinal: h.Passage})
		if i < top {
			f := h.Features
			ft.Notes = append(ft.Notes, TracedNote{Path: h.Path, Score: roundScore(-h.Score), Features: map[string]float64{
				"stage": roundScore(f.Stage), "body": roundScore(f.Body), "passage": roundScore(f.Passage), "proximity": roundScore(f.Proximity),
				"name": roundScore(f.Name), "headings": roundScore(f.Headings), "meta": roundScore(f.Meta),
				"matched": roundScore(f.Matched), "anchor": roundScore(f.Anchor),
				"linkPrior": roundScore(p.LinkPrior(incoming(cat, h.Path))),
			}})
		}
	}
	ft.Notes = mark(ft.Notes)
	out.Lanes = append(out.Lanes, ft)

	if v.Embedder == nil || v.Vectors == nil {
		out.Lanes = append(out.Lanes,
			LaneTrace{Lane: "semantic", Notes: []TracedNote{}, Note: "no embeddings provider is set up"},
			LaneTrace{Lane: "hybrid", Notes: []TracedNote{}, Note: "no embeddings provider is set up"})
		return out, nil
	}
	vec, err := s.vectorLane(ctx, v, cat, c.Question, RetrieveOptions{}, lanePool(top))
	if err != nil {
		return nil, err
	}
	sem := LaneTrace{Lane: "semantic", Notes: []TracedNote{}, Note: "cosine of the question's vector and the note's best passage (passage -1: its name, title and aliases)"}
	for _, h := range firstPerPath(vec)[:min(top, len(firstPerPath(vec)))] {
		sem.Notes = append(sem.Notes, TracedNote{Path: h.Path, Score: roundScore(h.Score), Features: map[string]float64{"passage": float64(h.Ordinal)}})
	}
	sem.Notes = mark(sem.Notes)
	out.Lanes = append(out.Lanes, sem)

	share := p.VectorShare(confidence(lex))
	ln, vn := normalised(firstPerPath(lex), false), normalised(firstPerPath(vec), true)
	hy := LaneTrace{Lane: "hybrid", Notes: []TracedNote{}, Share: &share, Note: "(1 - vectorShare) * lexical + vectorShare * vector, each lane normalised over its pool; vectorShare = floor + weight * (1 - the lexical best note's matched share)"}
	fused := fuse(lex, vec, share)
	sortCandidates(fused)
	for _, c := range fused[:min(top, len(fused))] {
		hy.Notes = append(hy.Notes, TracedNote{Path: c.Path, Score: roundScore(c.Score), Features: map[string]float64{
			"lexical": roundScore(ln[c.Path]), "vector": roundScore(vn[c.Path]),
		}})
	}
	hy.Notes = mark(hy.Notes)
	out.Lanes = append(out.Lanes, hy)
	return out, nil
}

// incoming is the number of other notes linking to path.
func incoming(cat *vault.Catalog, path string) int {
	n, _ := catalogLinks{cat}.Incoming(path)
	return n
}
