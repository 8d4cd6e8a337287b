package textindex

// Query is a parsed search query in the spec's language: bare words AND'd as
// prefixes, "exact phrases", OR / NOT between terms (upper case), a leading
// '-' to exclude a word. No field filters, no parentheses.
//
// A Query is a disjunction of conjunctions: it matches a document when any
// one of Any matches. ParseQuery builds it; adapters translate it.
type Query struct {
	Any []Conj
}

// Conj matches a document that has every term in All and none in Not.
// A Conj with no All terms never matches.
type Conj struct {
	All []Term
	Not []Term
}

// Term is one word or phrase.
type Term struct {
	Text   string // the words, as typed (adapters tokenize and escape)
	Phrase bool   // from "double quotes": the words must appear adjacent, in order
	Prefix bool   // match as a prefix (bare words)
}

// Empty reports whether q can match nothing.
func (q Query) Empty() bool {
	for _, c := range q.Any {
		if len(c.All) > 0 {
			return false
		}
	}
	return true
}
