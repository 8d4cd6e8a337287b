package core

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/llm/llmtest"
)

var lintNotes = map[string]string{
	"index.md":       "# Index\n\n[[Bees]] [[Compost]] [[Hives]]\n",
	"Bees.md":        "---\ntags: [garden]\n---\n# Bees\n\nWe keep three hives. See [[Hives]].\n",
	"Hives.md":       "# Hives\n\nWe keep five hives since 2019.\n",
	"Compost.md":     "---\ntags: [garden]\n---\n# Compost\n\nTurn the heap weekly.\n",
	".hidden/x.md":   "# Hidden\n",
	"Pollinators.md": "# Pollinators\n\nBees and hoverflies.\n",
}

func TestLintSemantic(t *testing.T) {
	s, _, fake := llmServer(t, lintNotes)
	fake.Queue(mustJSON(t, map[string]any{"findings": []map[string]any{
		{"kind": "contradiction", "paths": []string{"Bees.md", "hives"}, "message": "Three hives or five?", "suggestion": "Count them."},
		{"kind": "contradiction", "paths": []string{"Bees.md", "Nowhere.md"}, "message": "Only one real page"},
		{"kind": "stale-claim", "paths": []string{"Hives.md"}, "message": "'since 2019' may be stale"},
		{"kind": "missing-concept", "concept": "Hoverflies", "paths": []string{"Pollinators.md"}, "message": "No page for hoverflies"},
		{"kind": "missing-concept", "concept": "compost", "message": "Compost already has a page"},
		{"kind": "open-question", "message": "Where does the honey go?"},
		{"kind": "gossip", "message": "unknown kind"},
		{"kind": "data-gap", "paths": []string{"Compost.md"}, "message": ""},
	}}))
	out, err := s.LintSemantic(context.Background(), LintSemanticIn{MaxNotes: 40})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range out.Findings {
		kinds = append(kinds, f.Kind)
	}
	if !slices.Equal(kinds, []string{"contradiction", "stale-claim", "missing-concept", "open-question"}) || out.Dropped != 4 {
		t.Fatalf("findings %+v, dropped %d", out.Findings, out.Dropped)
	}
	if !slices.Equal(out.Findings[0].Paths, []string{"Bees.md", "Hives.md"}) || out.Findings[2].Concept != "Hoverflies" || len(out.Findings[3].Paths) != 0 {
		t.Errorf("findings %+v", out.Findings)
	}
	if out.Examined.Notes != 5 || out.Examined.TotalNotes != 5 || !out.Examined.Complete || out.Examined.Bytes == 0 {
		t.Errorf("examined %+v", out.Examined)
	}
	user := fake.Requests()[0].User()
	if strings.Contains(user, "Hidden") || !strings.Contains(user, `path="Hives.md"`) {
		t.Errorf("the model should see every visible note and no hidden one:\n%s", user)
	}
	// Hives.md (linked twice) is shown before the notes nothing links to.
	if strings.Index(user, `path="Hives.md"`) > strings.Index(user, `path="Pollinators.md"`) {
		t.Errorf("best-linked notes first")
	}

	fake.Queue(`{"findings": []}`)
	out, err = s.LintSemantic(context.Background(), LintSemanticIn{MaxNotes: 2})
	if err != nil || out.Examined.Notes != 2 || out.Examined.TotalNotes != 5 || out.Examined.Complete {
		t.Errorf("bounded: %+v %v", out.Examined, err)
	}
	fake.Queue(`{"findings": []}`)
	out, err = s.LintSemantic(context.Background(), LintSemanticIn{MaxNotes: 10, PathPrefix: "B"})
	if err != nil || out.Examined.TotalNotes != 1 {
		t.Errorf("path_prefix: %+v %v", out.Examined, err)
	}

	fake.Queue("no", "still no")
	if _, err := s.LintSemantic(context.Background(), LintSemanticIn{MaxNotes: 3}); toError(err).Kind != KindInternal {
		t.Errorf("two bad replies: %v", err)
	}
	fake.QueueReply(llmtest.Reply{Status: 429, Content: "slow", Header: map[string][]string{"Retry-After": {"7"}}})
	_, err = s.LintSemantic(context.Background(), LintSemanticIn{MaxNotes: 3})
	var te *Error
	if !errors.As(err, &te) || te.Kind != KindRateLimited || te.Fields["retry_after_ms"] != int64(7000) {
		t.Errorf("provider 429: %v %+v", err, te)
	}
}

func TestSuggestTags(t *testing.T) {
	s, _, fake := llmServer(t, map[string]string{
		"index.md": "---\ntags: [hub]\nlint:\n  tags:\n    allowed: [hub, garden, soil, water, tools, project]\n    required: [hub, garden, project]\n    deprecated: {shed: tools}\n---\n# Index\n",
		"Beds.md":  "---\ntags: [soil]\n---\n# Beds\n\nRaised beds of loam.\n",
		"Shed.md":  "# Shed\n\nThe blue shed holds spades.\n",
		"Pond.md":  "# Pond\n\nFrogs and water lilies.\n",
		"Plan.md":  "---\ntags: [garden]\n---\n# Plan\n",
	})
	fake.Queue(mustJSON(t, map[string]any{"suggestions": []map[string]any{
		{"path": "Beds.md", "tags": []string{"#Gardens", "soil", "Soil", "compost bins"}, "rationale": "About beds."},
		{"path": "Shed", "tags": []string{"shed", "tools", "  "}, "rationale": "Tools live there."},
		{"path": "Pond.md", "tags": []string{"2024", "wild life!"}, "rationale": "No valid tag."},
		{"path": "Plan.md", "tags": []string{"project"}, "rationale": "Not flagged."},
		{"path": "Nowhere.md", "tags": []string{"garden"}},
	}}))
	out, err := s.SuggestTags(context.Background(), SuggestTagsIn{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	want := []TagSuggestion{
		{Path: "Beds.md", SuggestedTags: []string{"garden"}, Rationale: "About beds."},
		{Path: "Shed.md", SuggestedTags: []string{"tools"}, NewTags: []string{"tools"}, Rationale: "Tools live there."},
	}
	if !reflect.DeepEqual(out.Items, want) {
		t.Errorf("items\n got %+v\nwant %+v", out.Items, want)
	}
	if out.Flagged != 3 || out.Examined != 3 {
		t.Errorf("flagged %d examined %d (Beds, Pond, Shed)", out.Flagged, out.Examined)
	}
	sys := fake.Requests()[0].System()
	if !strings.Contains(sys, "Existing tags:") || !strings.Contains(sys, "at least one of: hub, garden, project") {
		t.Errorf("the model should see the vocabulary and schema:\n%s", sys)
	}

	fake.Queue(`{"suggestions": []}`)
	out, err = s.SuggestTags(context.Background(), SuggestTagsIn{Limit: 1})
	if err != nil || out.Examined != 1 || out.Flagged != 3 || len(fake.Requests()[1].User()) == 0 {
		t.Errorf("limit: %+v %v", out, err)
	}
}

func TestTagFit(t *testing.T) {
	tv := &tagVocab{known: map[string]bool{"garden-tools": true, "soil": true}, variant: map[string]string{}}
	for _, k := range []string{"garden-tools", "soil"} {
		tv.variant[tagVariantKey(k)] = k
	}
	for raw, want := range map[string]string{
		"Garden Tools":  "garden-tools",
		"#garden_tools": "garden-tools",
		"soils":         "soil",
		"Café/Menu":     "café/menu",
		"🐝":             "🐝",
		"123":           "",
		"a//b":          "",
		"bad,tag":       "",
		"":              "",
	} {
		got, _, ok := tv.fit(raw)
		if !ok {
			got = ""
		}
		if got != want {
			t.Errorf("fit(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestPageMatcher(t *testing.T) {
	m := newPageMatcher([]PageRef{{Path: "Concepts/Soft locks.md", Title: "Soft locks"}, {Path: "a.md", Title: "Same"}, {Path: "b.md", Title: "Same"}})
	for in, want := range map[string]string{
		"Concepts/Soft locks.md":  "Concepts/Soft locks.md",
		"concepts/soft locks":     "Concepts/Soft locks.md",
		"[[Concepts/Soft locks]]": "Concepts/Soft locks.md",
		"/Concepts/Soft locks.md": "Concepts/Soft locks.md",
		"Soft Locks":              "Concepts/Soft locks.md",
		"Same":                    "",
		"Soft locks.md":           "",
		"Secret.md":               "",
	} {
		if got := m.match(in); got != want {
			t.Errorf("match(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSONObject(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                        `{"a":1}`,
		"```json\n{\"a\":1}\n```":        `{"a":1}`,
		`Here you go: {"a":{"b":2}} bye`: `{"a":{"b":2}}`,
		`no json`:                        `no json`,
		// Braces in the prose around the object.
		"{\"a\":1}\n\nHope this helps {smile}":      `{"a":1}`,
		`I think {maybe}. {"a":"}"} -- {x}`:         `{"a":"}"}`,
		"```json\n{\"a\":[1,{\"b\":2}]}\n``` {oops": `{"a":[1,{"b":2}]}`,
		`{broken {"a":1`:                            `{broken {"a":1`,
	} {
		if got := string(jsonObject(in)); got != want {
			t.Errorf("jsonObject(%q) = %q", in, got)
		}
	}
}

// FuzzJSONObject: jsonObject never panics, returns part of the reply, and
// finds an object the reply holds verbatim after prose.
func FuzzJSONObject(f *testing.F) {
	f.Add("{\"a\":1} {x}", `{"b":[1,2]}`)
	f.Add("```json\n", "{}")
	f.Add("{{{{", `{"a":"}"}`)
	f.Fuzz(func(t *testing.T, prose, obj string) {
		reply := prose + obj
		got := jsonObject(reply)
		if !strings.Contains(reply, string(got)) && !strings.Contains(strings.TrimSpace(reply), string(got)) {
			t.Fatalf("jsonObject(%q) = %q, not part of the reply", reply, got)
		}
		if strings.ContainsRune(prose, '{') || !json.Valid([]byte(obj)) || !strings.HasPrefix(obj, "{") {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("jsonObject(%q) = %q, want the object", reply, got)
		}
	})
}
