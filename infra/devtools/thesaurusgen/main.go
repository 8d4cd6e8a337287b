// Command thesaurusgen derives the question lane's English thesaurus
// (shared/textindex/thesaurus_en.txt.gz) from the WordNet 3.0 database
// (Debian's wordnet-base: /usr/share/wordnet). For every single-word lemma
// of a noun, verb or adjective, it takes the lemma's most frequent senses
// (WordNet lists a lemma's synsets by frequency) and records, stemmed as
// the index stems English (textindex.Stemmer):
//
//   - synonyms: the other single-word lemmas of those synsets;
//   - hypernyms: the single-word lemmas of their direct hypernyms (nouns
//     and verbs only).
//
// Lemmas with the same stem are merged. Stopwords are left out. The table
// is made by this code alone, never edited by hand:
//
//	go run ./infra/devtools/thesaurusgen [-wordnet /usr/share/wordnet] [-senses 2]
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "the WordNet database folder (index.* and data.*)")
	senses := flag.Int("senses", 2, "the most frequent senses of each lemma to read")
	maxSyn := flag.Int("max", 8, "at most this many words per relation")
	out := flag.String("out", "shared/textindex/thesaurus_en.txt.gz", "the table to write")
	flag.Parse()
	t, err := build(*dir, *senses, *maxSyn)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, t, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d bytes\n", *out, len(t))
}

// synset is one WordNet synset: its lemmas and its hypernyms' offsets.
type synset struct {
	words []string
	hyper []string
}

// build reads the database at dir and returns the gzipped table: one line
// per stem, "stem<TAB>synonyms<TAB>hypernyms", words separated by spaces,
// lines sorted.
func build(dir string, senses, maxWords int) ([]byte, error) {
	var st textindex.Stemmer
	stem := func(w string) (string, bool) {
		if strings.ContainsAny(w, "_-.'/") || textindex.IsStopword(w) || len(w) < 2 {
			return "", false
		}
		s := st.Stem(textindex.English, w)
		return s, !textindex.IsStopword(s)
	}
	syn := map[string][]string{}
	hyp := map[string][]string{}
	add := func(m map[string][]string, key, w string) {
		if w != key && !slices.Contains(m[key], w) {
			m[key] = append(m[key], w)
		}
	}
	for _, pos := range []string{"noun", "verb", "adj"} {
		data, err := readData(filepath.Join(dir, "data."+pos))
		if err != nil {
			return nil, err
		}
		idx, err := readIndex(filepath.Join(dir, "index."+pos), senses)
		if err != nil {
			return nil, err
		}
		for _, e := range idx {
			key, ok := stem(e.lemma)
			if !ok {
				continue
			}
			for _, off := range e.offsets {
				s := data[off]
				for _, w := range s.words {
					if v, ok := stem(w); ok {
						add(syn, key, v)
					}
				}
				for _, h := range s.hyper {
					for _, w := range data[h].words {
						if v, ok := stem(w); ok {
							add(hyp, key, v)
						}
					}
				}
			}
		}
	}
	keys := make([]string, 0, len(syn)+len(hyp))
	for k := range syn {
		keys = append(keys, k)
	}
	for k := range hyp {
		if _, ok := syn[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	for _, k := range keys {
		s, h := syn[k], hyp[k]
		h = slices.DeleteFunc(h, func(w string) bool { return slices.Contains(s, w) })
		s, h = s[:min(len(s), maxWords)], h[:min(len(h), maxWords)]
		if len(s)+len(h) == 0 {
			continue
		}
		fmt.Fprintf(zw, "%s\t%s\t%s\n", k, strings.Join(s, " "), strings.Join(h, " "))
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// indexEntry is a lemma and its first synsets, most frequent first.
type indexEntry struct {
	lemma   string
	offsets []string
}

// readIndex reads an index.POS file: "lemma pos synset_cnt p_cnt
// [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...".
func readIndex(file string, senses int) ([]indexEntry, error) {
	var out []indexEntry
	err := eachLine(file, func(f []string) error {
		if len(f) < 6 {
			return fmt.Errorf("short index line %q", strings.Join(f, " "))
		}
		ptrs, err := strconv.Atoi(f[3])
		if err != nil {
			return err
		}
		rest := f[4+ptrs+2:]
		out = append(out, indexEntry{lemma: strings.ToLower(f[0]), offsets: rest[:min(senses, len(rest))]})
		return nil
	})
	return out, err
}

// readData reads a data.POS file: "offset lex_filenum ss_type w_cnt(hex)
// word lex_id... p_cnt ptr(symbol offset pos source/target)... | gloss".
func readData(file string) (map[string]synset, error) {
	out := map[string]synset{}
	err := eachLine(file, func(f []string) error {
		n, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return err
		}
		var s synset
		i := 4
		for range n {
			w := strings.ToLower(f[i])
			if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: "(a)", "(p)", "(ip)"
				w = w[:j]
			}
			s.words = append(s.words, w)
			i += 2
		}
		np, err := strconv.Atoi(f[i])
		if err != nil {
			return err
		}
		i++
		for range np {
			if f[i] == "@" || f[i] == "@i" {
				s.hyper = append(s.hyper, f[i+1])
			}
			i += 4
		}
		out[f[0]] = s
		return nil
	})
	return out, err
}

// eachLine calls fn with the fields of each line of file that is not part
// of the license header (lines starting with two spaces).
func eachLine(file string, fn func([]string) error) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || line == "" {
			continue
		}
		if err := fn(strings.Fields(line)); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	return sc.Err()
}
