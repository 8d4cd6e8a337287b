package vectors

import (
	"github.com/sheaf-dev/sheaf/shared/vault"
	"testing"
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
