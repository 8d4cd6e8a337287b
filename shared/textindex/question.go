package textindex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Question is a question in natural language as the question lane reads
// it (ParseQuestion): its content words, in order, and its language.
type Question struct {
	Words []Word
	Lang  Lang // DetectLang of the question; "" when unsure
	// OnlyStopwords is set when every word was a stopword: Words then holds
	// them all ("what is it"), and an adapter that drops stopwords from its
	// index must match them some other way.
	OnlyStopwords bool
}

// Word is one word of a Question.
type Word struct {
	Text string // lower-cased; for a script written without spaces, a run of one or two characters
	// Pos is the word's position among all the words of the question,
	// stopwords included: words next to each other in the question (or
	// with one stopword between them, "cost of living") differ by 1 or 2.
	Pos      int
	Unspaced bool // Text is of a script written without spaces (see Unspaced)
}

// ParseQuestion reads a natural-language question ("how do agents avoid
// clobbering each other?"). Words are runs of letters, digits and marks,
// lower-cased. Stopwords (IsStopword) and one-letter Latin words are
// dropped, duplicates removed. Runs of a script written without spaces
// (see Unspaced) become overlapping two-character words. When every word is
// a stopword, all words are kept. At most MaxTerms words are returned.
func ParseQuestion(s string) Question {
	var content, all []Word
	seen := map[string]bool{}
	ws := questionWords(s)
	for pos, w := range ws {
		if seen[w] {
			continue
		}
		seen[w] = true
		r, _ := utf8.DecodeRuneInString(w)
		word := Word{Text: w, Pos: pos, Unspaced: Unspaced(r)}
		all = append(all, word)
		if !IsStopword(w) {
			content = append(content, word)
		}
	}
	q := Question{Words: content, Lang: DetectLang(strings.Join(ws, " "))}
	if len(content) == 0 && len(all) > 0 {
		q.Words, q.OnlyStopwords = all, true
	}
	if len(q.Words) > MaxTerms {
		q.Words = q.Words[:MaxTerms]
	}
	return q
}

// Empty reports whether q has no words.
func (q Question) Empty() bool { return len(q.Words) == 0 }

// Query is q as an any-term query in the spec's language: one Conj per
// word, so a document matches when it has any of them and BM25 ranks the
// ones with more, rarer words first. Words of four or more characters match
// as prefixes; unspaced runs of two characters as phrases.
func (q Question) Query() Query {
	var out Query
	for _, w := range q.Words {
		t := Term{Text: w.Text, Prefix: utf8.RuneCountInString(w.Text) >= 4}
		if w.Unspaced {
			t = Term{Text: w.Text, Phrase: utf8.RuneCountInString(w.Text) > 1}
		}
		out.Any = append(out.Any, Conj{All: []Term{t}})
	}
	return out
}

// QuestionQuery is ParseQuestion(s).Query(): the any-term query of a
// question, for adapters and tools that rank with Search.
func QuestionQuery(s string) Query { return ParseQuestion(s).Query() }

// questionWords splits s into lower-cased words, dropping one-letter Latin
// words and splitting unspaced runs into overlapping bigrams.
func questionWords(s string) []string {
	var words []string
	fields := strings.FieldsFunc(strings.ToValidUTF8(s, " "), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	for _, f := range fields {
		for _, w := range splitUnspaced(strings.ToLower(f)) {
			if r, n := utf8.DecodeRuneInString(w); n == len(w) && unicode.Is(unicode.Latin, r) {
				continue
			}
			words = append(words, w)
		}
	}
	return words
}

// splitUnspaced splits a word into its spaced parts and, for each run of
// unspaced-script characters, the run's overlapping bigrams (or the single
// character of a one-character run).
func splitUnspaced(w string) []string {
	var out []string
	var run []rune
	endRun := func() {
		switch {
		case len(run) == 1:
			out = append(out, string(run))
		case len(run) > 1:
			for i := 0; i+1 < len(run); i++ {
				out = append(out, string(run[i:i+2]))
			}
		}
		run = run[:0]
	}
	start := 0
	for i, r := range w {
		if Unspaced(r) {
			if start < i {
				out = append(out, w[start:i])
			}
			start = i + utf8.RuneLen(r)
			run = append(run, r)
			continue
		}
		if len(run) > 0 {
			endRun()
			start = i
		}
	}
	endRun()
	if start < len(w) {
		out = append(out, w[start:])
	}
	return out
}
