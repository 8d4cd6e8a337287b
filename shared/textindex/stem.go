package textindex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
)

// Lang is a language the question lane stems and drops stopwords for: an
// ISO 639-1 code, or "" when unknown.
type Lang string

// The languages with a stemmer and a stopword list.
const (
	English    Lang = "en"
	German     Lang = "de"
	French     Lang = "fr"
	Spanish    Lang = "es"
	Italian    Lang = "it"
	Portuguese Lang = "pt"
	Dutch      Lang = "nl"
	Swedish    Lang = "sv"
	Danish     Lang = "da"
	Norwegian  Lang = "no"
	Finnish    Lang = "fi"
	Russian    Lang = "ru"
)

// stemmers are the Snowball stemmers (github.com/blevesearch/snowballstem,
// generated from the Snowball project's algorithms) by language.
var stemmers = map[Lang]func(*snowballstem.Env) bool{
	English: english.Stem, German: german.Stem, French: french.Stem, Spanish: spanish.Stem,
	Italian: italian.Stem, Portuguese: portuguese.Stem, Dutch: dutch.Stem, Swedish: swedish.Stem,
	Danish: danish.Stem, Norwegian: norwegian.Stem, Finnish: finnish.Stem, Russian: russian.Stem,
}

// Langs lists every language with a stemmer, in a fixed order.
var Langs = []Lang{English, German, French, Spanish, Italian, Portuguese, Dutch, Swedish, Danish, Norwegian, Finnish, Russian}

// maxStemBytes bounds the words that are stemmed; longer ones (hashes,
// base64, run-together junk) are kept as they are.
const maxStemBytes = 64

// Stemmer stems lower-cased words, remembering the words it has seen (a
// vocabulary is Zipf-distributed, so most words repeat). It is not safe for
// concurrent use; the zero value is ready.
type Stemmer struct {
	env   *snowballstem.Env
	cache map[stemKey]string
}

type stemKey struct {
	lang Lang
	word string
}

// maxCache bounds the words a Stemmer remembers.
const maxCache = 1 << 17

// Stem returns the stem of word, which must be lower case. The language
// follows the word's script: a Cyrillic word is Russian whatever lang says,
// a Latin one is stemmed in lang (English when lang has no stemmer or is
// Russian), and words of other scripts, with digits, or too long are
// returned unchanged.
func (s *Stemmer) Stem(lang Lang, word string) string {
	l, ok := stemLang(lang, word)
	if !ok {
		return word
	}
	k := stemKey{l, word}
	if st, ok := s.cache[k]; ok {
		return st
	}
	if s.env == nil {
		s.env = snowballstem.NewEnv("")
		s.cache = make(map[stemKey]string)
	}
	s.env.SetCurrent(word)
	stemmers[l](s.env)
	st := s.env.Current()
	if st == "" || !utf8.ValidString(st) {
		st = word
	}
	if len(s.cache) >= maxCache {
		clear(s.cache)
	}
	s.cache[k] = st
	return st
}

// stemLang picks the stemmer for word (see Stem).
func stemLang(lang Lang, word string) (Lang, bool) {
	if len(word) < 3 || len(word) > maxStemBytes {
		return "", false
	}
	cyrillic, latin := false, false
	for _, r := range word {
		switch {
		case r < utf8.RuneSelf:
			if r < 'a' || r > 'z' {
				return "", false // digits, upper case, punctuation
			}
			latin = true
		case unicode.Is(unicode.Cyrillic, r):
			cyrillic = true
		case unicode.Is(unicode.Latin, r) || unicode.IsMark(r):
			latin = true
		default:
			return "", false
		}
	}
	switch {
	case cyrillic && latin:
		return "", false
	case cyrillic:
		return Russian, true
	case lang == Russian || stemmers[lang] == nil:
		return English, true
	}
	return lang, true
}

// DetectLang guesses the language of text from the stopwords among its first
// words: the language whose list holds the most of them, when that is at
// least three and clearly ahead of the runner-up. Text mostly in Cyrillic is
// Russian. It returns "" when unsure; callers then stem Latin words as
// English.
func DetectLang(text string) Lang {
	const maxWords = 400
	counts := make(map[Lang]int, len(Langs))
	words, cyr, lat := 0, 0, 0
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsMark(r) }) {
		if words++; words > maxWords {
			break
		}
		r, _ := utf8.DecodeRuneInString(w)
		switch {
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		case unicode.Is(unicode.Latin, r):
			lat++
		}
		for _, l := range stopLangs()[strings.ToLower(w)] {
			counts[l]++
		}
	}
	if cyr > lat {
		return Russian
	}
	best, first, second := Lang(""), 0, 0
	for _, l := range Langs {
		switch n := counts[l]; {
		case n > first:
			best, first, second = l, n, first
		case n > second:
			second = n
		}
	}
	if first < 3 || float64(first) < 1.25*float64(second) {
		return ""
	}
	return best
}

// IsStopword reports whether the lower-cased word is a function word of one
// of the languages of Langs (or a question verb agents use): such words are
// dropped from questions and from the stemmed index alike.
func IsStopword(word string) bool {
	return stopLangs()[word] != nil
}
