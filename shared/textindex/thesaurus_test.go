package textindex

import (
	"bytes"
	"compress/gzip"
	"slices"
	"testing"
)

func TestRelatedEN(t *testing.T) {
	var st Stemmer
	stem := func(w string) string { return st.Stem(English, w) }
	// WordNet's vacation is a kind of leave; to pay is to compensate.
	if r := RelatedEN(stem("vacation")); !slices.Contains(r.Synonyms, stem("holiday")) || !slices.Contains(r.Hypernyms, stem("leave")) {
		t.Errorf("vacation: %+v", r)
	}
	if r := RelatedEN(stem("pay")); !slices.Contains(r.Synonyms, stem("compensate")) {
		t.Errorf("pay: %+v", r)
	}
	if r := RelatedEN("zzzqx"); r.Synonyms != nil || r.Hypernyms != nil {
		t.Errorf("an unknown word has relations: %+v", r)
	}
	for _, w := range []string{"the", "of"} {
		if r := RelatedEN(w); len(r.Synonyms)+len(r.Hypernyms) > 0 {
			t.Errorf("stopword %q has relations: %+v", w, r)
		}
	}
}

func TestParseThesaurus(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("car\tauto automobil\tmotor vehicl\nfoo\t\tbar\n"))
	zw.Close()
	m, err := parseThesaurus(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := m["car"]; !slices.Equal(got.Synonyms, []string{"auto", "automobil"}) || !slices.Equal(got.Hypernyms, []string{"motor", "vehicl"}) {
		t.Errorf("car: %+v", got)
	}
	if got := m["foo"]; len(got.Synonyms) != 0 || !slices.Equal(got.Hypernyms, []string{"bar"}) {
		t.Errorf("foo: %+v", got)
	}
	if _, err := parseThesaurus([]byte("not gzip")); err == nil {
		t.Error("a corrupt table parses")
	}
}
