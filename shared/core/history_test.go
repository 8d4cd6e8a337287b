package core

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/history"
	histfolder "github.com/sheaf-dev/sheaf/shared/history/folder"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// historyServer is writeServer with a folder history.
func historyServer(t *testing.T) (*Core, *Vault, string) {
	t.Helper()
	s, v, dir := writeServer(t)
	h, err := histfolder.Open(t.TempDir(), histfolder.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	v.History = h
	return s, v, dir
}

// asKey is ctx of a caller with an API key named name.
func asKey(ctx context.Context, id, name string, folders ...string) context.Context {
	ident := auth.Identity{Subject: "key:" + id, Name: name, Granted: []auth.Scope{auth.ScopeWrite}}
	if len(folders) > 0 {
		f, err := auth.ParseFolders(folders)
		if err != nil {
			panic(err)
		}
		ident.Folders = f
	}
	return auth.WithIdentity(ctx, ident)
}

// versions lists every version of path, newest first, as "op author tool tx" lines.
func versions(t *testing.T, v *Vault, path string) []history.Version {
	t.Helper()
	page, err := v.History.List(context.Background(), path, history.ListOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return page.Versions
}

func describe(vs []history.Version) string {
	var b []string
	for _, v := range vs {
		b = append(b, fmt.Sprintf("%s %s %s %s %s", v.Op, v.Path, v.Author.Subject, v.Tool, v.Transaction))
	}
	return strings.Join(b, "\n")
}

func TestWritesRecordVersions(t *testing.T) {
	s, v, _ := historyServer(t)
	alice := asKey(context.Background(), "k1", "alice")
	ctx := WithTool(alice, "write_note")
	p := "Inbox/Versioned.md"
	c1, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# V\n\none\n", TxArg: TxArg{"tx-1"}})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# V\n\ntwo\n", Mode: "overwrite", ExpectedHash: c1.ContentHash, TxArg: TxArg{"tx-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "three", Mode: "append"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyEdits(WithTool(alice, "apply_edits"), editsIn{Path: p, Edits: []vault.Edit{{Find: "two", Replace: "deux"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PatchSection(WithTool(alice, "patch_section"), patchIn{Path: p, HeadingPath: []string{"V"}, Operation: "append", Content: "four"}); err != nil {
		t.Fatal(err)
	}
	bob := asKey(context.Background(), "k2", "bob")
	if _, err := s.MoveNote(WithTool(bob, "move_note"), MoveNoteIn{Path: p, NewPath: "Projects/Versioned.md", TxArg: TxArg{"tx-2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteNote(WithTool(bob, "delete_note"), DeleteNoteIn{Path: "Projects/Versioned.md", Confirm: true, TxArg: TxArg{"tx-2"}}); err != nil {
		t.Fatal(err)
	}
	got := describe(versions(t, v, "Projects/Versioned.md"))
	want := strings.Join([]string{
		"delete Projects/Versioned.md key:k2 delete_note tx-2",
		"move Projects/Versioned.md key:k2 move_note tx-2",
		"edit Inbox/Versioned.md key:k1 patch_section ",
		"edit Inbox/Versioned.md key:k1 apply_edits ",
		"append Inbox/Versioned.md key:k1 write_note ",
		"overwrite Inbox/Versioned.md key:k1 write_note tx-1",
		"write Inbox/Versioned.md key:k1 write_note tx-1",
	}, "\n")
	if got != want {
		t.Errorf("history:\n%s\nwant:\n%s", got, want)
	}
	// Every version reads back byte for byte, with its author's name.
	vs := versions(t, v, "Projects/Versioned.md")
	data, ver, err := v.History.Read(context.Background(), "Projects/Versioned.md", vs[len(vs)-2].ID)
	if err != nil || string(data) != "# V\n\ntwo\n" || hashOf(data) != c2.ContentHash || ver.Author.Name != "alice" {
		t.Errorf("the overwrite's version: %q %+v %v", data, ver, err)
	}
	// The old path shows the move away, then the same history.
	old := versions(t, v, p)
	if len(old) == 0 || old[0].Op != history.OpMoveAway || old[0].To != "Projects/Versioned.md" {
		t.Errorf("old path: %s", describe(old))
	}
	tx, err := v.History.Transaction(context.Background(), "tx-2")
	if err != nil || len(tx) != 3 { // move, move-away, delete
		t.Errorf("tx-2: %s %v", describe(tx), err)
	}
}

// A note edited outside Sheaf before a write keeps that edit as an
// external version.
func TestWriteKeepsExternalEdit(t *testing.T) {
	s, v, dir := historyServer(t)
	ctx := context.Background()
	p := "Inbox/Ext.md"
	_, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "a\n"})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, p, "edited in an editor\n", time.Now())
	c, err := v.readForWrite(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "b\n", Mode: "overwrite", ExpectedHash: c.hash}); err != nil {
		t.Fatal(err)
	}
	got := describe(versions(t, v, p))
	want := "overwrite Inbox/Ext.md local  \nexternal Inbox/Ext.md external  \nwrite Inbox/Ext.md local  "
	if got != want {
		t.Errorf("history:\n%s\nwant:\n%s", got, want)
	}
}
