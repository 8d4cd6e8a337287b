package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// TestResourcesFollowTheCaller: a folder-scoped caller lists and reads only
// its folders, and a path outside them reads like a missing one.
func TestResourcesFollowTheCaller(t *testing.T) {
	s, _, _ := gvault(t)
	read := func(id auth.Identity, uri string) error {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		_, err := s.readResource(auth.WithIdentity(context.Background(), id), req)
		return err
	}
	all := ident("all", auth.ScopeRead)
	pub := ident("pub", auth.ScopeRead, "Public/**")
	list := func(id auth.Identity) []string {
		var out []string
		items, _ := s.listResources(auth.WithIdentity(context.Background(), id), "")
		for _, r := range items {
			out = append(out, r.Name)
		}
		return out
	}
	if got := strings.Join(list(all), ","); !strings.Contains(got, "Secret/d.md") || !strings.Contains(got, "Public/pic.png") {
		t.Errorf("whole-vault list: %s", got)
	}
	for _, p := range list(pub) {
		if !strings.HasPrefix(p, "Public/") {
			t.Errorf("a Public/ key lists %s", p)
		}
	}
	if err := read(pub, resourceURI("g", "Public/a.md")); err != nil {
		t.Errorf("read own: %v", err)
	}
	hidden, missing := read(pub, resourceURI("g", "Secret/d.md")), read(pub, resourceURI("g", "Public/none.md"))
	if hidden == nil || missing == nil || hidden.Error() != strings.ReplaceAll(missing.Error(), "Public/none.md", "Secret/d.md") {
		t.Errorf("hidden %v, missing %v: want the same error", hidden, missing)
	}
	// Sheaf's own objects are never resources, even for a whole-vault key.
	v, err := s.core.View(context.Background(), VaultArg{Vault: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Store.Put(context.Background(), ".sheaf/keys.json", []byte(`{"secret":1}`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := read(all, resourceURI("g", ".sheaf/keys.json")); err == nil || !strings.Contains(err.Error(), "-32002") {
		t.Errorf("read .sheaf/keys.json: %v, want not found", err)
	}
	if err := read(auth.Identity{Subject: "none"}, resourceURI("g", "Public/a.md")); err == nil {
		t.Error("a caller without the read scope read a resource")
	}
	if got := resourceURI("g", "Projects/Plan 2026.md"); got != "sheaf://g/Projects/Plan%202026.md" {
		t.Errorf("uri %s", got)
	}
	if id, p, ok := parseResourceURI("sheaf://g/Projects/Plan%202026.md"); !ok || id != "g" || p != "Projects/Plan 2026.md" {
		t.Errorf("parse: %v %q %q", ok, id, p)
	}
}
