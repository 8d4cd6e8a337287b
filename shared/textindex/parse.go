package textindex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTerms caps the number of terms ParseQuery and QuestionQuery keep, so a
// hostile query cannot build an unbounded index expression. Later terms are
// dropped.
const MaxTerms = 64

// ParseQuery parses s in the spec's query language. It never fails:
//
//   - bare words are AND'd, each matched as a prefix;
//   - "an exact phrase" in double quotes (straight or curly) is matched as
//     written, not as a prefix; an unbalanced quote runs to the end of s;
//   - OR between terms (upper case) separates alternatives, and AND binds
//     tighter: `a b OR c` is (a AND b) OR c;
//   - NOT (upper case) or a leading '-' excludes the next word or phrase;
//   - an upper-case AND is accepted and ignored (AND is implicit);
//   - lower-case "or", "and", "not" are ordinary words;
//   - there are no field filters or parentheses: ':' '(' ')' are punctuation.
//
// Terms with no letter or digit (pure punctuation, emoji) are dropped, so
// malformed input yields a Query that is Empty or matches what is left.
// A conjunction left with only exclusions can match nothing and is dropped.
func ParseQuery(s string) Query {
	var (
		q       Query
		cur     Conj
		negNext bool
		n       int
	)
	flush := func() {
		if len(cur.All) > 0 {
			q.Any = append(q.Any, cur)
		}
		cur = Conj{}
	}
	for _, tok := range lexQuery(s) {
		if !tok.quoted && !tok.neg {
			switch tok.text {
			case "OR":
				flush()
				negNext = false
				continue
			case "NOT":
				negNext = true
				continue
			case "AND":
				continue
			}
		}
		if !hasWordChar(tok.text) || n >= MaxTerms {
			continue // not a term: a pending NOT waits for the next one
		}
		neg := negNext || tok.neg
		negNext = false
		n++
		t := Term{Text: tok.text, Phrase: tok.quoted, Prefix: !tok.quoted}
		if neg {
			cur.Not = append(cur.Not, t)
		} else {
			cur.All = append(cur.All, t)
		}
	}
	flush()
	return q
}

// queryToken is one lexical item of a query: a bare word or a quoted phrase.
type queryToken struct {
	text   string
	quoted bool
	neg    bool // written with a leading '-'
}

// lexQuery splits s into bare words and quoted phrases. Invalid UTF-8 acts
// as a separator.
func lexQuery(s string) []queryToken {
	s = strings.ToValidUTF8(s, " ")
	var (
		toks []queryToken
		word strings.Builder
	)
	endWord := func() {
		w := word.String()
		word.Reset()
		neg := false
		if strings.HasPrefix(w, "-") {
			neg = true
			w = strings.TrimLeft(w, "-")
		}
		if w != "" {
			toks = append(toks, queryToken{text: w, neg: neg})
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case unicode.IsSpace(r):
			endWord()
		case isQuote(r):
			neg := strings.Trim(word.String(), "-") == "" && word.Len() > 0
			if neg {
				word.Reset()
			} else {
				endWord()
			}
			end := strings.IndexFunc(s[i:], isQuote)
			var phrase string
			if end < 0 {
				phrase, i = s[i:], len(s)
			} else {
				phrase = s[i : i+end]
				_, qsize := utf8.DecodeRuneInString(s[i+end:])
				i += end + qsize
			}
			if phrase = strings.TrimSpace(phrase); phrase != "" {
				toks = append(toks, queryToken{text: phrase, quoted: true, neg: neg})
			}
		default:
			word.WriteRune(r)
		}
	}
	endWord()
	return toks
}

// isQuote reports whether r opens or closes a phrase: the ASCII double quote
// and the curly quotes agents and word processors produce.
func isQuote(r rune) bool {
	switch r {
	case '"', '\u201C', '\u201D', '\u201E':
		return true
	}
	return false
}

// hasWordChar reports whether s contains a letter or a digit.
func hasWordChar(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsNumber(r)
	}) >= 0
}
