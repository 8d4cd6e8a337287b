package textindex

import (
	"testing"
	"unicode/utf8"
)

func TestStem(t *testing.T) {
	var s Stemmer
	tests := []struct {
		lang       Lang
		word, want string
	}{
		{English, "flushed", "flush"},
		{English, "flushing", "flush"},
		{English, "lines", "line"},
		{English, "companies", "compani"},
		{English, "company", "compani"},
		{"", "gardens", "garden"},      // unknown language: English
		{Russian, "gardens", "garden"}, // a Latin word is never Russian
		{German, "gärten", "gart"},     // umlauts handled by the German stemmer
		{French, "conflits", "conflit"},
		{Spanish, "configuración", "configur"},
		{English, "инструменты", "инструмент"}, // Cyrillic: Russian whatever the language
		{English, "возвращайте", "возвраща"},
		{English, "2026", "2026"},       // digits: unchanged
		{English, "東京", "東京"},           // other scripts: unchanged
		{English, "ab", "ab"},           // too short
		{English, "Flushed", "Flushed"}, // not lower case: unchanged
	}
	for _, tt := range tests {
		if got := s.Stem(tt.lang, tt.word); got != tt.want {
			t.Errorf("Stem(%q, %q) = %q, want %q", tt.lang, tt.word, got, tt.want)
		}
	}
}

func TestDetectLang(t *testing.T) {
	tests := []struct {
		text string
		want Lang
	}{
		{"How often should the drip lines be flushed?", English},
		{"Wie funktioniert die Synchronisierung mit dem Server, und wer ist dafür zuständig?", German},
		{"Comment est-ce que le serveur gère les conflits avec les autres ?", French},
		{"¿Dónde está la configuración del índice y cómo se cambia?", Spanish},
		{"Куда нужно возвращать инструменты после работы?", Russian},
		{"drip lines flush", ""}, // no stopwords: unsure
		{"東京のカフェ", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := DetectLang(tt.text); got != tt.want {
			t.Errorf("DetectLang(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestStopwordListsNoEnglishContentWords(t *testing.T) {
	// Every list applies to every text, so none may hold a common English
	// content word.
	for _, w := range []string{"dig", "dog", "end", "man", "hoe", "son", "war", "door", "hat", "ham", "garden", "water"} {
		if IsStopword(w) {
			t.Errorf("%q is a stopword", w)
		}
	}
}

// FuzzStem checks that any word, in any language, stems to valid UTF-8
// without panicking, and that questions parse within their bounds.
func FuzzStem(f *testing.F) {
	for _, s := range []string{"flushed", "gärten", "возвращайте", "東京", "\xff\xfe", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ﬁsh", "İstanbul"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var st Stemmer
		q := ParseQuestion(s)
		if len(q.Words) > MaxTerms {
			t.Fatalf("%d words", len(q.Words))
		}
		for _, w := range q.Words {
			for _, l := range append(Langs, "") {
				if out := st.Stem(l, w.Text); !utf8.ValidString(out) || (out == "" && w.Text != "") {
					t.Fatalf("Stem(%q, %q) = %q", l, w.Text, out)
				}
			}
		}
		DetectLang(s)
	})
}
