package textindex

import (
	"reflect"
	"testing"
)

func questionTerms(q Query) []Term {
	var out []Term
	for _, c := range q.Any {
		if len(c.All) != 1 || len(c.Not) != 0 {
			panic("QuestionQuery must return one positive term per conjunction")
		}
		out = append(out, c.All[0])
	}
	return out
}

func TestQuestionQuery(t *testing.T) {
	tests := []struct {
		in   string
		want []Term
	}{
		{"how do agents avoid clobbering each other?",
			[]Term{w("agents"), w("avoid"), w("clobbering")}},
		{"What is the TTL of a lease? Lease TTL!",
			[]Term{{Text: "ttl"}, w("lease")}},
		{"Wie funktioniert die Synchronisierung mit dem Server?",
			[]Term{w("funktioniert"), w("synchronisierung"), w("server")}},
		{"Comment est-ce que le serveur gère les conflits ?",
			[]Term{w("serveur"), w("gère"), w("conflits")}},
		{"¿Dónde está la configuración del índice?",
			[]Term{w("configuración"), w("índice")}},
		{"what is it", // all stopwords: keep them all
			[]Term{w("what"), {Text: "is"}, {Text: "it"}}},
		{"x y z 42", []Term{{Text: "42"}}},
		{"東京のカフェ", []Term{ph("東京"), ph("京の"), ph("のカ"), ph("カフ"), ph("フェ")}},
		{"猫", []Term{{Text: "猫"}}},
		{"don't", []Term{{Text: "don"}}}, // stopword fallback
		{"", nil},
		{"?!", nil},
	}
	for _, tt := range tests {
		got := questionTerms(QuestionQuery(tt.in))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("QuestionQuery(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
		}
	}
}

func TestQuestionQueryMaxTerms(t *testing.T) {
	s := ""
	for i := 0; i < 2*MaxTerms; i++ {
		s += string(rune('a'+i%26)) + string(rune('a'+i/26)) + "zz "
	}
	if n := len(QuestionQuery(s).Any); n != MaxTerms {
		t.Fatalf("%d terms, want %d", n, MaxTerms)
	}
}

func TestUnspaced(t *testing.T) {
	for _, r := range "東京カフェのー한" {
		want := r != '한' // Hangul is written with spaces
		if Unspaced(r) != want {
			t.Errorf("Unspaced(%q) = %v", r, !want)
		}
	}
	for _, r := range "aé ж1ก" {
		if Unspaced(r) != (r == 'ก') {
			t.Errorf("Unspaced(%q) wrong", r)
		}
	}
}
