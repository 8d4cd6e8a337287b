package textindex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// QuestionQuery turns a natural-language question ("how do agents avoid
// clobbering each other?") into an any-term query: one Conj per content word,
// so a document matches when it has any of them and BM25 ranks the ones with
// more, rarer words first.
//
// Words are runs of letters, digits and marks, lower-cased. Stopwords
// (English, German, French, Spanish, Italian, Portuguese, Dutch) and
// one-letter Latin words are dropped, duplicates removed; words of four or
// more characters match as prefixes. Runs of a script written without spaces
// (see Unspaced) become overlapping two-character phrases. When every word is
// a stopword, all words are kept. At most MaxTerms terms are returned.
func QuestionQuery(s string) Query {
	var content, all []Term
	seen := map[string]bool{}
	for _, w := range questionWords(s) {
		if seen[w] {
			continue
		}
		seen[w] = true
		t := Term{Text: w, Prefix: utf8.RuneCountInString(w) >= 4}
		if r, _ := utf8.DecodeRuneInString(w); Unspaced(r) {
			t = Term{Text: w, Phrase: utf8.RuneCountInString(w) > 1}
		}
		all = append(all, t)
		if !stopwords[w] {
			content = append(content, t)
		}
	}
	if len(content) == 0 {
		content = all
	}
	if len(content) > MaxTerms {
		content = content[:MaxTerms]
	}
	var q Query
	for _, t := range content {
		q.Any = append(q.Any, Conj{All: []Term{t}})
	}
	return q
}

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

// stopwords are dropped from questions: function words of English, German,
// French, Spanish, Italian, Portuguese and Dutch, and the question verbs
// agents use. Words that are common content words in English (door, hat,
// son, war, ...) are left out of the other languages' lists.
var stopwords = wordSet(
	// English
	`a about above after again against all almost also am an and any anyone anything are aren as at
	be because been before being below between both but by can cannot could couldn
	did didn do does doesn doing don done down during each either else ever every few for from further
	get gets getting got had hadn has hasn have haven having he her here hers herself him himself his how
	however i if in into is isn it its itself just let lets like ll may me might mine more most much must
	my myself need needs neither no nor not now of off often on once one only onto or other others ought
	our ours ourselves out over own per please rather re really same shall shan she should shouldn so
	some something somehow such than that thats the their theirs them themselves then there these they
	this those though through thus to too under until up upon us use very via ve was wasn way ways we
	were weren what whats when where whether which while who whom whose why will with within without
	won would wouldn yes yet you your yours yourself yourselves
	describe explain find show tell`,
	// German
	`aber als am an auch auf aus bei bis bitte da damit dann das dass dein deine dem den der des
	dich die dir doch dort du durch ein eine einem einen einer eines er es etwa euch für gegen habe haben
	hier ich ihm ihn ihr im in ist ja jede jeder jedes kann kein keine können mein meine mich mir mit
	muss nach nicht noch nur ob oder ohne sehr sein seine sich sie sind soll über um und uns unser unter
	vom von vor warum was weil welche welcher welches wenn wer werden wie wir wird wo wurde zu zum zur`,
	// French
	`au aux avec avoir ce ceci cela ces cet cette comment dans des du elle elles en est et être eux il ils
	je la le les leur leurs lui ma mais me mes moi mon même ne nos notre nous ou où par pas plus pourquoi
	quand que quel quelle quelles quels qui quoi sa se ses sont sur ta te tes toi ton tu un une vos
	votre vous`,
	// Spanish
	`al como cómo con cual cuál cuando cuándo de del donde dónde el él ella ellas ellos es esa ese esta
	está están este esto estos fue la las le les lo los más mi mis muy nos nosotros para pero por porque
	qué quien quién se ser si sí son su sus también tu tú un una uno unos unas usted y yo`,
	// Italian
	`che chi come cosa della delle dello dei degli di dove gli il io lei loro lui ma mio nel nella nelle
	non noi per perché più questa questo quella quello sono su sua suo tra voi è`,
	// Portuguese
	`ao aos como da das do dos ela elas ele eles em essa esse esta este eu isso isto mais meu minha na
	nas não nós num numa os ou pela pelo pelos porque qual quando quem são sem seu sua também um uma
	você`,
	// Dutch
	`aan al dat de deze die dit een en er geen haar had heb hebben het hij hoe hun ik in is je jij kan
	maar met mij mijn naar niet nog of om ons ook op over te tot uit van voor waar waarom wanneer wat
	welke wie wij wordt zijn zij ze zich`,
)

func wordSet(lists ...string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, w := range strings.Fields(l) {
			m[w] = true
		}
	}
	return m
}
