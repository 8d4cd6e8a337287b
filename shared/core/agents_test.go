package core

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// fakeClock is a settable clock for lease tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// agentVault is a small vault with directives and mentions; the catalog
// is filled by parsing, as the indexer would.
var agentVault = map[string]string{
	"Inbox/a.md":    "# A\n\n> [!ai] First task\n> do it well\n\nHey @Claude and @garden-bot, mail x@example.com.\n",
	"Inbox/b.md":    "> [!ai] Second task\n\n> [!ai-done] Old task\n",
	"Projects/p.md": "`@nobody` in code\n\n```\n> [!ai] fenced, not a directive\n```\n\n> [!ai] Third\n\nping @claude\n",
	"plain.md":      "# Plain\n",
}

type dirFixture struct {
	s     *Core
	v     *Vault
	cat   *vault.Catalog
	st    *fs.Store
	clock *fakeClock
}

// newDirFixture serves notes from a catalog over an fs store in a temporary
// folder (which holds .sheaf/ objects only), with a fake clock. Give the
// same store to several fixtures to model several servers.
func newDirFixture(t *testing.T, notes map[string]string, st *fs.Store) *dirFixture {
	t.Helper()
	if st == nil {
		var err error
		if st, err = fs.Open(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	}
	cat := vault.NewCatalog()
	for p, src := range notes {
		cat.Upsert(vault.Parse(p, []byte(src)).Note)
	}
	v := &Vault{ID: "test", Store: st, Catalogs: LiveCatalog{C: cat}}
	s, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s.Now = clock.Now
	return &dirFixture{s: s, v: v, cat: cat, st: st, clock: clock}
}

func (f *dirFixture) write(p, src string) { f.cat.Upsert(vault.Parse(p, []byte(src)).Note) }

func kindOfErr(err error) Kind {
	var te *Error
	if errors.As(err, &te) {
		return te.Kind
	}
	return ""
}

func TestAgentMentions(t *testing.T) {
	f := newDirFixture(t, agentVault, nil)
	ctx := context.Background()
	all, err := f.s.AgentMentions(ctx, agentMentionsIn{Page: Page{Limit: 50}})
	if err != nil {
		t.Fatal(err)
	}
	want := []MentionItem{
		{Path: "Inbox/a.md", Handle: "claude", Line: 6},
		{Path: "Inbox/a.md", Handle: "garden-bot", Line: 6},
		{Path: "Projects/p.md", Handle: "claude", Line: 9},
	}
	if all.Total != len(want) {
		t.Fatalf("mentions %+v, want %d", all.Items, len(want))
	}
	for i, w := range want {
		got := all.Items[i]
		if got.Path != w.Path || got.Handle != w.Handle || got.Line != w.Line || got.Context == "" {
			t.Errorf("mention %d: %+v, want %+v", i, got, w)
		}
	}
	for _, h := range []string{"claude", "@CLAUDE", " Claude "} {
		got, err := f.s.AgentMentions(ctx, agentMentionsIn{Handle: h, Page: Page{Limit: 50}})
		if err != nil || got.Total != 2 {
			t.Errorf("handle %q: %+v %v, want 2 mentions", h, got, err)
		}
	}
	if got, _ := f.s.AgentMentions(ctx, agentMentionsIn{Handle: "nobody", Page: Page{Limit: 50}}); got.Total != 0 {
		t.Errorf("a mention in code counted: %+v", got.Items)
	}
	if _, err := f.s.AgentMentions(ctx, agentMentionsIn{Handle: "@", Page: Page{Limit: 50}}); kindOfErr(err) != KindArgsInvalid {
		t.Errorf("handle \"@\": %v, want args-invalid", err)
	}
	pg, _ := f.s.AgentMentions(ctx, agentMentionsIn{Page: Page{Limit: 1, Offset: 2}})
	if pg.Total != 3 || len(pg.Items) != 1 || pg.Items[0].Path != "Projects/p.md" {
		t.Errorf("paging: %+v", pg)
	}
}
