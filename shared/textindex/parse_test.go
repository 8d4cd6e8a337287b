package textindex

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

func w(s string) Term  { return Term{Text: s, Prefix: true} }
func ph(s string) Term { return Term{Text: s, Phrase: true} }

func TestParseQuery(t *testing.T) {
	tests := []struct {
		in   string
		want Query
	}{
		{"lettuce", Query{Any: []Conj{{All: []Term{w("lettuce")}}}}},
		{"  garden   tomato ", Query{Any: []Conj{{All: []Term{w("garden"), w("tomato")}}}}},
		{`"green tomatoes" soup`, Query{Any: []Conj{{All: []Term{ph("green tomatoes"), w("soup")}}}}},
		{`a b OR c -d`, Query{Any: []Conj{{All: []Term{w("a"), w("b")}}, {All: []Term{w("c")}, Not: []Term{w("d")}}}}},
		{`a NOT b c`, Query{Any: []Conj{{All: []Term{w("a"), w("c")}, Not: []Term{w("b")}}}}},
		{`a -"b c"`, Query{Any: []Conj{{All: []Term{w("a")}, Not: []Term{ph("b c")}}}}},
		{`a NOT "b c"`, Query{Any: []Conj{{All: []Term{w("a")}, Not: []Term{ph("b c")}}}}},
		{`a AND b`, Query{Any: []Conj{{All: []Term{w("a"), w("b")}}}}},
		{`cats or dogs not birds and`, Query{Any: []Conj{{All: []Term{w("cats"), w("or"), w("dogs"), w("not"), w("birds"), w("and")}}}}},
		{`title:foo (bar)`, Query{Any: []Conj{{All: []Term{w("title:foo"), w("(bar)")}}}}},
		{`“curly quotes” x`, Query{Any: []Conj{{All: []Term{ph("curly quotes"), w("x")}}}}},
		{`word"phrase here"`, Query{Any: []Conj{{All: []Term{w("word"), ph("phrase here")}}}}},
		{`e-mail`, Query{Any: []Conj{{All: []Term{w("e-mail")}}}}},
		{`--a b`, Query{Any: []Conj{{All: []Term{w("b")}, Not: []Term{w("a")}}}}},
		{`NOT ( a`, Query{Any: []Conj{{Not: []Term{w("a")}}}}}, // NOT skips punctuation; conj dropped below
		{`a OR OR b`, Query{Any: []Conj{{All: []Term{w("a")}}, {All: []Term{w("b")}}}}},
		{`a OR -b`, Query{Any: []Conj{{All: []Term{w("a")}}}}},
		{`東京 カフェ`, Query{Any: []Conj{{All: []Term{w("東京"), w("カフェ")}}}}},
		// Malformed: unbalanced quote runs to the end.
		{`a "b c`, Query{Any: []Conj{{All: []Term{w("a"), ph("b c")}}}}},
	}
	for _, tt := range tests {
		got := ParseQuery(tt.in)
		want := tt.want
		// Conjunctions with no positive term are dropped by ParseQuery.
		var kept []Conj
		for _, c := range want.Any {
			if len(c.All) > 0 {
				kept = append(kept, c)
			}
		}
		want.Any = kept
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseQuery(%q)\n got %+v\nwant %+v", tt.in, got, want)
		}
	}
}

func TestParseQueryEmpty(t *testing.T) {
	for _, in := range []string{
		"", "   ", `"`, `""`, `" "`, "OR", "NOT", "AND", "OR OR", "a NOT", // "a NOT" is not empty: see below
		"-a", "-a -b", "NOT a", "-\"a b\"", "()", "(((", "***", ":", "- - -", "🍕 🎉", "\xff\xfe", "NOT OR a",
	} {
		q := ParseQuery(in)
		if in == "a NOT" || in == "NOT OR a" {
			if q.Empty() {
				t.Errorf("ParseQuery(%q) is empty, want the dangling operator ignored", in)
			}
			continue
		}
		if !q.Empty() {
			t.Errorf("ParseQuery(%q) = %+v, want Empty", in, q)
		}
	}
}

func TestParseQueryMaxTerms(t *testing.T) {
	s := ""
	for i := 0; i < 3*MaxTerms; i++ {
		s += "w "
	}
	q := ParseQuery(s)
	if n := len(q.Any[0].All); n != MaxTerms {
		t.Fatalf("kept %d terms, want %d", n, MaxTerms)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		`a b OR c -d`, `"unbalanced`, `NOT`, `-"x y"`, `“a” „b“`, "\xff\"\x00", `a"b"c"d`, `OR -`, `東京 "カフェ`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := ParseQuery(s)
		n := 0
		for _, c := range q.Any {
			if len(c.All) == 0 {
				t.Fatalf("conjunction without positive terms in %+v", q)
			}
			for _, terms := range [][]Term{c.All, c.Not} {
				for _, term := range terms {
					n++
					if term.Text == "" || !utf8.ValidString(term.Text) {
						t.Fatalf("bad term %q in %+v", term.Text, q)
					}
					if term.Phrase == term.Prefix {
						t.Fatalf("term %+v must be either a phrase or a prefix", term)
					}
				}
			}
		}
		if n > MaxTerms {
			t.Fatalf("%d terms, max %d", n, MaxTerms)
		}
	})
}
