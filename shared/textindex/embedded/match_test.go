package embedded

import (
	"context"
	"reflect"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

func TestSegment(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":    "plain text",
		"東京タワー":         " 東  京  タ  ワ  ー ",
		"go東京":          "go 東  京 ",
		"สวัสดีครับ ok": " ส  ว  ั  ส  ด  ี  ค  ร  ั  บ  ok",
	} {
		if got := segment(in); got != want {
			t.Errorf("segment(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokens(t *testing.T) {
	got := tokens("Hello, wörld! e-mail 東京x ²")
	want := []string{"Hello", "wörld", "e", "mail", "東", "京", "x", "²"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
}

func TestMatchExpr(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", ""},
		{"-a", ""},
		{"tomato", `("tomato"*)`},
		{"a b", `("a"* AND "b"*)`},
		{`"green tomatoes"`, `("green tomatoes")`},
		{`a b OR c -d`, `(("a"* AND "b"*)) OR (("c"*) NOT "d"*)`},
		{`title:foo`, `("title foo"*)`},
		{`NEAR(a`, `("NEAR a"*)`},
		{`東京`, `("東 京")`},
		{`東京x`, `("東 京 x"*)`},
		{`(( ** )) -!!`, ""},
		{`a -!!`, `("a"*)`},
		{"cafe\u0301", `("café"*)`},
	}
	for _, tt := range tests {
		if got := matchExpr(textindex.ParseQuery(tt.in)); got != tt.want {
			t.Errorf("matchExpr(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	// Raw terms carrying FTS5 syntax stay inside one string.
	q := textindex.Query{Any: []textindex.Conj{{All: []textindex.Term{{Text: `a" OR "b`, Prefix: true}, {Text: "x\x00y\xff", Phrase: true}}}}}
	if got, want := matchExpr(q), `("a OR b"* AND "x y")`; got != want {
		t.Errorf("matchExpr(injection) = %s, want %s", got, want)
	}
}

func TestGlobEscape(t *testing.T) {
	if got, want := globEscape("a*b?c[d]"), "a[*]b[?]c[[]d]"; got != want {
		t.Errorf("globEscape = %q, want %q", got, want)
	}
}

func TestMalformedExpr(t *testing.T) {
	ix, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, expr := range []string{`"a" AND (`, `NEAR(`, `"unterminated`, `col:x`, `*`} {
		for _, unit := range []textindex.Unit{textindex.Notes, textindex.Passages} {
			res, err := ix.searchExpr(context.Background(), textindex.Query{}, expr, textindex.Options{Unit: unit})
			if err != nil || len(res.Hits) != 0 {
				t.Errorf("searchExpr(%q) = %+v, %v; want no rows, no error", expr, res, err)
			}
		}
	}
}

func TestQueryMatch(t *testing.T) {
	tests := []struct {
		query, heading, text string
		want                 bool
	}{
		{"tomato", "", "Green Tomatoes here", true},
		{"tomato", "", "a tomatillo", false},
		{`"tomato"`, "", "tomatoes", false},
		{`"green tomatoes"`, "", "green  Tomatoes", true},
		{`"green tomatoes"`, "", "tomatoes green", false},
		{"tomatoes compost", "", "tomatoes only", false},
		{"tomatoes compost", "Compost", "tomatoes", true}, // the heading path counts
		{`"compost tomatoes"`, "compost", "tomatoes", false},
		{"garlic OR lime", "", "lime juice", true},
		{"garlic -lime", "", "garlic and lime", false},
		{"garlic -lime OR juice", "", "garlic and lime juice", true},
		{"creme", "", "Crème brûlée", true},
		{"東京", "", "東京タワー", true},
		{"京東", "", "東京", false},
		{"each other's", "", "each other's edits", true},
		{"-x", "", "anything", false},
		{"", "", "anything", false},
	}
	for _, tt := range tests {
		toks := append(append(foldedTokens(tt.heading), ""), foldedTokens(tt.text)...)
		if got := newQueryMatch(textindex.ParseQuery(tt.query)).matches(toks); got != tt.want {
			t.Errorf("%q on (%q, %q) = %v, want %v", tt.query, tt.heading, tt.text, got, tt.want)
		}
	}
}
