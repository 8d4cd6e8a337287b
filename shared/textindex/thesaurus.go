package textindex

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"strings"
	"sync"
)

// thesaurusEN is derived from WordNet 3.0 (Princeton University; its
// license is in thesaurus_en.LICENSE and NOTICE) by
// infra/devtools/thesaurusgen: one line per English stem,
// "stem<TAB>synonyms<TAB>hypernyms".
//
//go:embed thesaurus_en.txt.gz
var thesaurusEN []byte

// Related are the words WordNet relates to an English word, stemmed as
// the index stems English: Synonyms (other words of its most frequent
// senses) and Hypernyms (words of those senses' direct broader ones).
type Related struct {
	Synonyms, Hypernyms []string
}

// RelatedEN returns the words related to the English stem (as
// Stemmer.Stem(English, word) gives it); none when WordNet has none.
func RelatedEN(stem string) Related { return thesaurus()[stem] }

var thesaurus = sync.OnceValue(func() map[string]Related {
	m, err := parseThesaurus(thesaurusEN)
	if err != nil {
		panic("textindex: the embedded thesaurus is corrupt: " + err.Error())
	}
	return m
})

// parseThesaurus reads a gzipped table as thesaurusgen writes it.
func parseThesaurus(gz []byte) (map[string]Related, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	m := map[string]Related{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		key, rest, _ := strings.Cut(sc.Text(), "\t")
		syn, hyp, _ := strings.Cut(rest, "\t")
		if key != "" {
			m[key] = Related{Synonyms: strings.Fields(syn), Hypernyms: strings.Fields(hyp)}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return m, zr.Close()
}
