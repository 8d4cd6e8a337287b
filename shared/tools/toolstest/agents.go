package toolstest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The sample vault's pending directives: a third ("Draft the festival
// poster") is done, and those in code, .trash/ and .obsidian/ do not count.
var sampleDirectives = []Directive{
	{Path: "Inbox/Agent requests.md", Line: 10, Title: "Summarise the soil test results"},
	{Path: "Inbox/Agent requests.md", Line: 14, Title: ""},
	{Path: "Inbox/Random thought.md", Line: 5, Title: "Estimate barrel capacity"},
}

// Directive is one item of pending_directives and await_directives.
type Directive struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Title string `json:"title"`
	Body  string `json:"body"`
	Done  bool   `json:"done"`
}

// Await is await_directives' result.
type Await struct {
	Cursor           int64       `json:"cursor"`
	TimedOut         bool        `json:"timedOut"`
	Directives       []Directive `json:"directives"`
	ClampedTimeoutMs int64       `json:"clampedTimeoutMs"`
	Leases           []struct {
		Path    string `json:"path"`
		Line    int    `json:"line"`
		Worker  string `json:"worker"`
		Expires string `json:"expires"`
	} `json:"leases"`
}

// DirectiveKeys renders directives as "path:line", for comparisons.
func DirectiveKeys(ds []Directive) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s:%d", d.Path, d.Line))
	}
	return out
}

type mentionsPage struct {
	Items []struct {
		Path    string `json:"path"`
		Handle  string `json:"handle"`
		Line    int    `json:"line"`
		Context string `json:"context"`
	} `json:"items"`
	Total int `json:"total"`
}

func testAgentMentions(t *testing.T, c *Client) {
	var claude mentionsPage
	c.MustOK("agent_mentions", map[string]any{"handle": "@Claude"}, &claude)
	var got []string
	for _, m := range claude.Items {
		got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
		if m.Handle != "claude" || !strings.Contains(strings.ToLower(m.Context), "@claude") {
			t.Errorf("mention %+v", m)
		}
	}
	want := []string{
		"Inbox/Agent requests.md:8", "Inbox/Random thought.md:8",
		"Meetings/2026-04-01 Committee.md:15", "Projects/Website/Release checklist.md:16",
	}
	if !slices.Equal(got, want) || claude.Total != len(want) {
		t.Errorf("@claude mentions %v, want %v", got, want)
	}

	var all mentionsPage
	c.MustOK("agent_mentions", map[string]any{"limit": 500}, &all)
	handles := map[string]int{}
	for _, m := range all.Items {
		handles[m.Handle]++
		if strings.HasPrefix(m.Path, ".") {
			t.Errorf("mention in a hidden folder: %+v", m)
		}
	}
	if handles["claude"] != 4 || handles["garden-bot"] != 4 || handles["alice"] != 1 {
		t.Errorf("handles %v, want claude 4, garden-bot 4, alice 1", handles)
	}
	for _, bad := range []string{"nobody", "trash-bot", "greenhaven.example", "greenhaven", "example", "handle"} {
		if handles[bad] > 0 {
			t.Errorf("%q is not a mention (code, hidden folder or e-mail)", bad)
		}
	}
	var bot mentionsPage
	c.MustOK("agent_mentions", map[string]any{"handle": "garden-bot", "limit": 1, "offset": 3}, &bot)
	if bot.Total != 4 || len(bot.Items) != 1 || bot.Items[0].Path != "Volunteer roster.md" {
		t.Errorf("garden-bot page: %+v", bot)
	}
	c.MustFail("args-invalid", "agent_mentions", map[string]any{"handle": ""})
	c.MustFail("args-invalid", "agent_mentions", map[string]any{"handle": "@"})
}

func testPendingDirectives(t *testing.T, c *Client) {
	var pg struct {
		Items []Directive `json:"items"`
		Total int         `json:"total"`
	}
	c.MustOK("pending_directives", nil, &pg)
	if pg.Total != len(sampleDirectives) || len(pg.Items) != len(sampleDirectives) {
		t.Fatalf("pending_directives: %+v, want %+v", pg.Items, sampleDirectives)
	}
	for i, w := range sampleDirectives {
		g := pg.Items[i]
		if g.Path != w.Path || g.Line != w.Line || g.Title != w.Title || g.Done || g.Body == "" {
			t.Errorf("directive %d: %+v, want %+v", i, g, w)
		}
	}
	if !strings.Contains(pg.Items[0].Body, "[[Soil test results]]") {
		t.Errorf("body %q", pg.Items[0].Body)
	}
	for path, n := range map[string]int{"Inbox": 3, "Inbox/Random thought.md": 1, "Projects": 0, ".trash": 0} {
		c.MustOK("pending_directives", map[string]any{"path": path}, &pg)
		if pg.Total != n {
			t.Errorf("path %q: %d directives, want %d", path, pg.Total, n)
		}
	}
	c.MustFail("note-not-found", "pending_directives", map[string]any{"path": "Inbox/No such note.md"})
	c.MustFail("path-invalid", "pending_directives", map[string]any{"path": "../outside.md"})
	c.MustFail("path-invalid", "await_directives", map[string]any{"path": "../outside"})
}

func testAwaitDirectives(t *testing.T, c *Client) {
	var first Await
	c.MustOK("await_directives", map[string]any{"cursor": 0}, &first)
	if first.TimedOut || first.Cursor < 1 || !slices.Equal(DirectiveKeys(first.Directives), DirectiveKeys(sampleDirectives)) {
		t.Fatalf("first call: %+v", first)
	}
	// Nothing changes: the call blocks for its (clamped) timeout.
	var idle Await
	c.MustOK("await_directives", map[string]any{"cursor": first.Cursor, "timeout_ms": 10}, &idle)
	if !idle.TimedOut || idle.Cursor != first.Cursor || len(idle.Directives) != 0 || idle.ClampedTimeoutMs != 1000 {
		t.Errorf("idle call: %+v, want a timeout clamped to 1000 ms", idle)
	}
	var scoped Await
	c.MustOK("await_directives", map[string]any{"path": "Inbox/Random thought.md", "limit": 1}, &scoped)
	if !slices.Equal(DirectiveKeys(scoped.Directives), []string{"Inbox/Random thought.md:5"}) {
		t.Errorf("scoped: %+v", scoped)
	}

	// Two workers claiming: disjoint, and each sees its own leases.
	var a, b, again Await
	c.MustOK("await_directives", map[string]any{"worker": "suite-a", "claim": true, "limit": 2}, &a)
	c.MustOK("await_directives", map[string]any{"worker": "suite-b", "claim": true}, &b)
	if len(a.Directives) != 2 || len(a.Leases) != 2 || a.Leases[0].Worker != "suite-a" {
		t.Errorf("suite-a: %+v", a)
	}
	if !slices.Equal(DirectiveKeys(b.Directives), []string{"Inbox/Random thought.md:5"}) || len(b.Leases) != 1 {
		t.Errorf("suite-b: %+v", b)
	}
	c.MustOK("await_directives", map[string]any{"worker": "suite-a"}, &again)
	if !slices.Equal(DirectiveKeys(again.Directives), DirectiveKeys(a.Directives)) || len(again.Leases) != 2 {
		t.Errorf("suite-a again: %+v, want its own leased directives", again)
	}
	var anon Await
	c.MustOK("await_directives", nil, &anon)
	if len(anon.Directives) != 3 {
		t.Errorf("a call without worker sees every directive: %+v", anon)
	}

	c.MustFail("args-invalid", "await_directives", map[string]any{"cursor": -1})
	c.MustFail("args-invalid", "await_directives", map[string]any{"worker": ""})
	c.MustFail("args-invalid", "await_directives", map[string]any{"worker": strings.Repeat("w", 129)})
	c.MustFail("args-invalid", "await_directives", map[string]any{"limit": 0})
	c.MustFail("args-invalid", "await_directives", map[string]any{"limit": 101})
	c.MustFail("args-invalid", "await_directives", map[string]any{"claim": "yes"})
}
