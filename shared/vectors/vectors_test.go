package vectors

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

func TestMatch(t *testing.T) {
	keys := vault.ExpandTags([]string{"project/alpha", "reading"})
	cases := []struct {
		f    Filter
		path string
		want bool
	}{
		{Filter{}, "a.md", true},
		{Filter{PathPrefix: "ga"}, "garden/x.md", true},
		{Filter{PathPrefix: "gb"}, "garden/x.md", false},
		{Filter{Folder: "garden"}, "garden/a/x.md", true},
		{Filter{Folder: "garden/"}, "gardening/x.md", false},
		{Filter{Folder: "garden"}, "garden", false},
		{Filter{Paths: []string{}}, "a.md", false},
		{Filter{Paths: []string{"b.md", "a.md"}}, "a.md", true},
		{Filter{Tags: []string{"#Project"}}, "a.md", true},
		{Filter{Tags: []string{"project", "reading"}}, "a.md", true},
		{Filter{Tags: []string{"project/beta"}}, "a.md", false},
		{Filter{Tags: []string{"proj"}}, "a.md", false},
		{Filter{Tags: []string{"", "#"}}, "a.md", true},
	}
	for _, c := range cases {
		if got := c.f.MatchPath(c.path) && c.f.MatchTags(keys); got != c.want {
			t.Errorf("%+v on %q = %v, want %v", c.f, c.path, got, c.want)
		}
	}
}

func TestGroupPoints(t *testing.T) {
	v := []float32{1, 0}
	notes, err := GroupPoints([]Point{
		{Path: "b.md", Ordinal: 0, Hash: "b0", Vector: v},
		{Path: "a.md", Ordinal: 0, Hash: "a0", Vector: v},
		{Path: "b.md", Ordinal: 1, Hash: "b1", Vector: v},
		{Path: "b.md", Ordinal: 0, Hash: "b0'", Vector: v},
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, n := range notes {
		var hs []string
		for _, p := range n {
			hs = append(hs, p.Path+":"+p.Hash)
		}
		got = append(got, hs)
	}
	want := [][]string{{"b.md:b0'", "b.md:b1"}, {"a.md:a0"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GroupPoints = %v, want %v", got, want)
	}
	for _, c := range []struct {
		p    Point
		want error
	}{
		{Point{Path: "a.md", Vector: []float32{1}}, ErrDimension},
		{Point{Path: "a.md", Vector: []float32{1, float32(math.NaN())}}, ErrVector},
		{Point{Path: "a.md", Vector: []float32{float32(math.Inf(-1)), 1}}, ErrVector},
	} {
		if _, err := GroupPoints([]Point{c.p}, 2); !errors.Is(err, c.want) {
			t.Errorf("GroupPoints(%v) = %v, want %v", c.p.Vector, err, c.want)
		}
	}
	if _, err := GroupPoints([]Point{{Vector: v}}, 2); err == nil {
		t.Error("GroupPoints accepted an empty path")
	}
}

func TestNormalize(t *testing.T) {
	for _, v := range [][]float32{{3, 4}, {3e37, 4e37}, {3e-40, 4e-40}} {
		Normalize(v)
		if math.Abs(float64(v[0])-0.6) > 1e-3 || math.Abs(float64(v[1])-0.8) > 1e-3 {
			t.Errorf("Normalize = %v, want [0.6 0.8]", v)
		}
	}
	z := []float32{0, 0}
	if Normalize(z); z[0] != 0 || z[1] != 0 {
		t.Errorf("Normalize(zero) = %v", z)
	}
}
