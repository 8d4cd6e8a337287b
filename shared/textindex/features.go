package textindex

// Features are what the question lane measured about one note for one
// question, each in [0, 1] (see Ask). An adapter that does not measure
// them leaves them zero and ranks by its own score.
type Features struct {
	// Stage is the first stage's score (FTS5's BM25 over the note's
	// fields, title and aliases weighted 3, headings 2, body, tags and
	// path words 1) divided by the best of the pool.
	Stage float64
	// Body is the BM25 of the note's text for the question's words,
	// divided by the most it could be (every word saturated): the
	// whole-note evidence.
	Body float64
	// Passage is the same for the note's best passage, against the
	// note's own mean passage length: the evidence in one place.
	Passage float64
	// Proximity is how close together the best passage holds the
	// question's words (1: every pair adjacent, in order).
	Proximity float64
	// Name, Headings and Meta are the share of the question's weight (the
	// idf of its words) found in the note's title and aliases, in its
	// headings, and in its tags, frontmatter keywords and path words.
	Name, Headings, Meta float64
	// Matched is that share over the whole note.
	Matched float64
	// Anchor is the share of the question's words in the display text of
	// the links pointing into the note. Set by the caller that knows the
	// links (rank.Lexical), not by the index.
	Anchor float64
}

// Weights combine Features into a note's score (Score). Every weight is
// chosen by cross-validation over the question sets (docs/retrieval.md).
type Weights struct {
	Stage, Body, Passage, Proximity, Name, Headings, Meta, Matched float64
}

// Score is the weighted sum of f.
func (w Weights) Score(f Features) float64 {
	return w.Stage*f.Stage + w.Body*f.Body + w.Passage*f.Passage + w.Proximity*f.Proximity +
		w.Name*f.Name + w.Headings*f.Headings + w.Meta*f.Meta + w.Matched*f.Matched
}

// Feedback is pseudo-relevance feedback: the Terms most telling words of
// the first Notes notes of the first-stage BM25 ranking (by frequency in
// them times idf, not already in the question) are added to the question
// with Weight times their strength relative to the strongest, and the
// pool is measured and scored again. Notes 0 turns it off.
type Feedback struct {
	Notes, Terms int
	Weight       float64
}

// AskOptions tune the question lane of adapters that measure Features.
// The zero value means DefaultAsk.
type AskOptions struct {
	Weights  Weights
	Feedback Feedback
	// Pool is how many notes, from the top of the first-stage BM25
	// ranking, are measured and ranked by Weights (at least the page).
	Pool int
}

// IsZero reports whether o is the zero value.
func (o AskOptions) IsZero() bool { return o == AskOptions{} }

// DefaultAsk is the question lane's tuning: fitted on all four question
// sets by the cross-validation of shared/tools TestQuestionSets (each
// fold's values, fitted on three sets and scored on the fourth, and the
// held-out figures are in docs/retrieval.md). The search starts from the
// ranking Sheaf had before (the first stage's BM25, a tenth of the best
// passage's, proximity) and moves a weight only where that helps the
// training sets on average. Feedback was tried (3 notes, 5 words, 0.3; 5
// notes, 10 words, 0.5) and chosen by no fold: off.
var DefaultAsk = AskOptions{
	Weights: Weights{Stage: 0.3, Passage: 0.6, Proximity: 0.4},
	Pool:    50,
}
