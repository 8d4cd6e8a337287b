package vault

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func tagged(p string, tags ...string) Note {
	n := note(p)
	n.Tags = tags
	return n
}

func TestTags(t *testing.T) {
	c := catalogOf(
		tagged("1.md", "a/b/c"),
		tagged("2.md", "a/b", "a/b/d"),
		tagged("3.md", "a", "x"),
		tagged("4.md", "project/web", "Projects"),
		tagged("5.md"),
	)
	want := []TagCount{
		{"a", 3}, {"a/b", 2}, {"a/b/c", 1}, {"a/b/d", 1},
		{"project", 1}, {"project/web", 1}, {"projects", 1}, {"x", 1},
	}
	if got := c.Tags(""); !reflect.DeepEqual(got, want) {
		t.Errorf("Tags() = %v\nwant %v", got, want)
	}
	if got := c.Tags("#A/"); !reflect.DeepEqual(got, []TagCount{{"a/b", 2}, {"a/b/c", 1}, {"a/b/d", 1}}) {
		t.Errorf(`Tags("#A/") = %v`, got)
	}
	if got := c.Tags("zzz"); len(got) != 0 {
		t.Errorf("Tags(zzz) = %v", got)
	}
	for _, tc := range []struct {
		tag  string
		want []string
	}{
		{"a", []string{"1.md", "2.md", "3.md"}},
		{"#A/B", []string{"1.md", "2.md"}},
		{"a/b/c", []string{"1.md"}},
		{"project", []string{"4.md"}},  // via project/web
		{"projects", []string{"4.md"}}, // not a prefix match of "project"
		{"proj", []string{}},
		{"", []string{}},
	} {
		if got := paths(c.NotesByTag(tc.tag)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("NotesByTag(%q) = %v, want %v", tc.tag, got, tc.want)
		}
	}
	c.Upsert(tagged("1.md", "other")) // retag
	if got := c.Tags("a/b"); !reflect.DeepEqual(got, []TagCount{{"a/b", 1}, {"a/b/d", 1}}) {
		t.Errorf("after retag: %v", got)
	}
}

func TestExpandTags(t *testing.T) {
	got := ExpandTags([]string{"#A/B/c", "a//x", "/lead/", "Ä", "##Cafe\u0301", "\xff", "", "#", "  "})
	want := []string{"a", "a//x", "a/b", "a/b/c", "café", "lead", "ä", "\ufffd"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExpandTags = %q, want %q", got, want)
	}
}

func withMeta(p string, fm map[string]any) Note {
	n := note(p)
	n.Frontmatter = fm
	return n
}

func TestMetadataMatch(t *testing.T) {
	c := catalogOf(
		withMeta("1.md", map[string]any{"priority": 1, "repos": []any{"org/a", "org/b"}, "flag": true, "code": "1"}),
		withMeta("2.md", map[string]any{"priority": 1.0, "code": 1, "ratio": 1.5, "big": uint64(7)}),
		withMeta("3.md", map[string]any{"priority": "1", "repos": []string{"org/b"}, "nested": map[string]any{"k": "v"}}),
		withMeta("4.md", map[string]any{"priority": int64(2), "flag": false, "ratio": json.Number("1.5")}),
	)
	for _, tc := range []struct {
		name string
		m    map[string]any
		want []string
	}{
		{"int matches int and float", map[string]any{"priority": 1}, []string{"1.md", "2.md"}},
		{"float query", map[string]any{"priority": 1.0}, []string{"1.md", "2.md"}},
		{"string is not a number", map[string]any{"priority": "1"}, []string{"3.md"}},
		{"number is not a string", map[string]any{"code": 1}, []string{"2.md"}},
		{"string query", map[string]any{"code": "1"}, []string{"1.md"}},
		{"list membership", map[string]any{"repos": "org/a"}, []string{"1.md"}},
		{"typed list membership", map[string]any{"repos": "org/b"}, []string{"1.md", "3.md"}},
		{"AND across keys", map[string]any{"repos": "org/b", "flag": true}, []string{"1.md"}},
		{"bool false", map[string]any{"flag": false}, []string{"4.md"}},
		{"bool is not a string", map[string]any{"flag": "true"}, []string{}},
		{"fraction", map[string]any{"ratio": 1.5}, []string{"2.md", "4.md"}},
		{"json.Number query", map[string]any{"priority": json.Number("2")}, []string{"4.md"}},
		{"uint", map[string]any{"big": 7}, []string{"2.md"}},
		{"objects are not indexed", map[string]any{"nested": "v"}, []string{}},
		{"missing key", map[string]any{"nope": 1}, []string{}},
		{"invalid query value", map[string]any{"priority": []any{1}}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := paths(c.List(ListFilter{MetadataMatch: tc.m})); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("List(%v) = %v, want %v", tc.m, got, tc.want)
			}
		})
	}
}

func TestValidateMetadataMatch(t *testing.T) {
	for _, ok := range []map[string]any{nil, {"a": "x", "b": 1, "c": 2.5, "d": true, "e": json.Number("3")}} {
		if err := ValidateMetadataMatch(ok); err != nil {
			t.Errorf("ValidateMetadataMatch(%v) = %v", ok, err)
		}
	}
	for _, bad := range []map[string]any{{"a": nil}, {"a": []any{"x"}}, {"a": map[string]any{}}, {"a": struct{}{}}} {
		if err := ValidateMetadataMatch(bad); err == nil {
			t.Errorf("ValidateMetadataMatch(%v) accepted", bad)
		}
	}
}

func TestList(t *testing.T) {
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mk := func(p, title, author string, mod time.Time, ents []string, tags ...string) Note {
		n := tagged(p, tags...)
		n.Title, n.Author, n.Modified, n.Entities = title, author, mod, ents
		return n
	}
	c := catalogOf(
		mk("Root.md", "Root note", "Ada", day, nil),
		mk("Inbox/one.md", "Café plans", "ada", day.Add(time.Hour), []string{"Paris", "Food"}, "travel/fr"),
		mk("Inbox/deep/two.md", "Deep", "Bob", day.Add(-time.Hour), []string{"Paris"}, "travel"),
		mk("Inboxes/three.md", "Other", "", day, nil, "travel"),
		mk("Ελληνικές σημειώσεις.md", "Ελληνικές σημειώσεις", "", day, nil),
		mk("Straße.md", "Straße", "", day, nil),
	)
	for _, tc := range []struct {
		name string
		f    ListFilter
		want []string
	}{
		{"all", ListFilter{}, []string{"Inbox/deep/two.md", "Inbox/one.md", "Inboxes/three.md", "Root.md", "Straße.md", "Ελληνικές σημειώσεις.md"}},
		{"root only", ListFilter{Folder: "/"}, []string{"Root.md", "Straße.md", "Ελληνικές σημειώσεις.md"}},
		{"root recursive", ListFilter{Folder: ".", Recursive: true}, []string{"Inbox/deep/two.md", "Inbox/one.md", "Inboxes/three.md", "Root.md", "Straße.md", "Ελληνικές σημειώσεις.md"}},
		{"folder", ListFilter{Folder: "Inbox"}, []string{"Inbox/one.md"}},
		{"folder recursive", ListFilter{Folder: "Inbox/", Recursive: true}, []string{"Inbox/deep/two.md", "Inbox/one.md"}},
		{"path prefix is a plain prefix", ListFilter{PathPrefix: "Inbox"}, []string{"Inbox/deep/two.md", "Inbox/one.md", "Inboxes/three.md"}},
		{"tag with descendants", ListFilter{Tags: []string{"travel"}}, []string{"Inbox/deep/two.md", "Inbox/one.md", "Inboxes/three.md"}},
		{"tags AND", ListFilter{Tags: []string{"travel", "#Travel/FR"}}, []string{"Inbox/one.md"}},
		{"author case-insensitive", ListFilter{Author: "ADA"}, []string{"Inbox/one.md", "Root.md"}},
		{"since inclusive", ListFilter{Since: day}, []string{"Inbox/one.md", "Inboxes/three.md", "Root.md", "Straße.md", "Ελληνικές σημειώσεις.md"}},
		{"title contains NFD and case", ListFilter{TitleContains: "CAFE\u0301"}, []string{"Inbox/one.md"}},
		{"title contains, Greek final sigma", ListFilter{TitleContains: "ΣΗΜΕΙΏΣΕΙΣ"}, []string{"Ελληνικές σημειώσεις.md"}},
		{"title contains, folded in full", ListFilter{TitleContains: "STRASSE"}, []string{"Straße.md"}},
		{"entities AND", ListFilter{Entities: []string{"Paris", "Food"}}, []string{"Inbox/one.md"}},
		{"entities exact", ListFilter{Entities: []string{"paris"}}, []string{}},
		{"paths", ListFilter{Paths: map[string]bool{"Root.md": true, "Inbox/one.md": false, "gone.md": true}}, []string{"Root.md"}},
		{"empty paths", ListFilter{Paths: map[string]bool{}}, []string{}},
		{"combined", ListFilter{Folder: "Inbox", Recursive: true, Entities: []string{"Paris"}, Author: "bob"}, []string{"Inbox/deep/two.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := paths(c.List(tc.f)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("List = %v, want %v", got, tc.want)
			}
		})
	}
}
