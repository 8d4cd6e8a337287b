package rank

import (
	"math"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// Params are every tunable number of the question lane and the fusion.
type Params struct {
	// Ask tunes the text index's question lane (textindex.AskOptions).
	Ask textindex.AskOptions
	// LinkWeight is the vault prior: a note's lexical score is
	// multiplied by 1 + LinkWeight * min(1, log(1 + links in) / log(17)).
	LinkWeight float64
	// AnchorWeight adds, to a note's lexical score, that much times the
	// share of the question's words found in the text of the links
	// pointing into it (their display text).
	AnchorWeight float64
	// VectorWeight and VectorFloor set the vector lane's share of a
	// hybrid score for one question:
	//
	//	share = VectorFloor + VectorWeight * (1 - confidence)
	//
	// where confidence is the share of the question's weight the lexical
	// lane's best note holds (textindex.Hit.Matched): when the words found
	// the note, the vectors must not move it; when they did not, the
	// vectors decide.
	VectorWeight, VectorFloor float64
}

// Default is what ships: every value fitted by leave-one-set-out
// cross-validation over the question sets, then on all of them
// (docs/retrieval.md has the folds and the held-out figures).
var Default = Params{
	Ask:          textindex.DefaultAsk,
	LinkWeight:   0.05,
	AnchorWeight: 0.1,
	VectorWeight: 0.4,
	VectorFloor:  0.1,
}

// VectorShare is the vector lane's share of the hybrid score for a
// question whose lexical lane's best note holds the share confidence of
// its weight (see Params).
func (p Params) VectorShare(confidence float64) float64 {
	c := min(max(confidence, 0), 1)
	return min(max(p.VectorFloor+p.VectorWeight*(1-c), 0), 1)
}

// LinkPrior is the vault prior of a note with in distinct notes linking
// to it.
func (p Params) LinkPrior(in int) float64 {
	return 1 + p.LinkWeight*min(1, math.Log1p(float64(in))/math.Log1p(16))
}
