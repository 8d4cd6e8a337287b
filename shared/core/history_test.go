package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/history"
	histfolder "github.com/sheaf-dev/sheaf/shared/history/folder"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// historyServer is writeServer with a folder history.
func historyServer(t *testing.T) (*Core, *Vault, string) { return historyServerB(t) }

func historyServerB(t testing.TB) (*Core, *Vault, string) {
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
func versions(t testing.TB, v *Vault, path string) []history.Version {
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
	indexertest.WriteAt(t, dir, p, "edited in an editor\n", time.Now())
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

func TestHistoryTools(t *testing.T) {
	s, v, _ := historyServer(t)
	ctx := asKey(context.Background(), "k1", "alice")
	p := "Inbox/Tools.md"
	c1, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# T\n\none\ntwo\n"})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# T\n\none\nTWO\nthree\n", Mode: "overwrite", ExpectedHash: c1.ContentHash})
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.NoteHistory(ctx, NoteHistoryIn{Path: "Inbox/Tools"})
	if err != nil || len(h.Versions) != 2 || h.Versions[0].Hash != c2.ContentHash || h.Versions[1].Hash != c1.ContentHash {
		t.Fatalf("note_history: %+v %v", h, err)
	}
	// paged
	h1, err := s.NoteHistory(ctx, NoteHistoryIn{Path: p, Limit: 1})
	if err != nil || len(h1.Versions) != 1 || !h1.More || h1.NextAfter == "" {
		t.Fatalf("page 1: %+v %v", h1, err)
	}
	h2, err := s.NoteHistory(ctx, NoteHistoryIn{Path: p, Limit: 1, After: h1.NextAfter})
	if err != nil || len(h2.Versions) != 1 || h2.More || h2.Versions[0].ID != h.Versions[1].ID {
		t.Fatalf("page 2: %+v %v", h2, err)
	}
	old := h.Versions[1].ID
	r, err := s.ReadNote(ctx, readNoteIn{Path: p, Version: old})
	if err != nil || r.Content != "# T\n\none\ntwo\n" || r.ContentHash != c1.ContentHash || r.Version == nil || r.Version.Author.Subject != "key:k1" {
		t.Fatalf("read_note version: %+v %v", r, err)
	}
	wantKind(t, "unknown version", errOf(s.ReadNote(ctx, readNoteIn{Path: p, Version: "999999"})), KindNoteNotFound)
	d, err := s.DiffNote(ctx, DiffNoteIn{Path: p, From: old})
	if err != nil || d.Added != 2 || d.Removed != 1 || !strings.Contains(d.Diff, "-two\n+TWO\n+three\n") || d.NextHunk != nil {
		t.Fatalf("diff_note: %+v %v", d, err)
	}
	// restore: compare-and-swap, a new version
	wantKind(t, "restore, stale", errOf(s.RestoreVersion(ctx, RestoreNoteIn{Path: p, Version: old, ExpectedHash: c1.ContentHash})), KindProposalStale)
	rs, err := s.RestoreVersion(ctx, RestoreNoteIn{Path: p, Version: old, ExpectedHash: c2.ContentHash})
	if err != nil || rs.ContentHash != c1.ContentHash || rs.Created || rs.Restored.ID != old {
		t.Fatalf("restore: %+v %v", rs, err)
	}
	vs := versions(t, v, p)
	if len(vs) != 3 || vs[0].Op != history.OpRestore || vs[0].Restored != old || vs[0].ID != rs.Version {
		t.Errorf("after restore: %s", describe(vs))
	}
	// a deleted note is restored by its path
	if _, err := s.DeleteNote(ctx, DeleteNoteIn{Path: p, Confirm: true}); err != nil {
		t.Fatal(err)
	}
	rs, err = s.RestoreVersion(ctx, RestoreNoteIn{Path: p, Version: h.Versions[0].ID})
	if err != nil || !rs.Created || rs.ContentHash != c2.ContentHash {
		t.Fatalf("restore deleted: %+v %v", rs, err)
	}
	// folder-scoped: the history of a hidden note is hidden; a note moved
	// out of a hidden folder shows only its versions since.
	scoped := asKey(context.Background(), "k3", "carol", "Projects/")
	if _, err := s.MoveNote(ctx, MoveNoteIn{Path: p, NewPath: "Projects/Tools.md"}); err != nil {
		t.Fatal(err)
	}
	hs, err := s.NoteHistory(scoped, NoteHistoryIn{Path: "Projects/Tools.md"})
	if err != nil || len(hs.Versions) != 1 || hs.Versions[0].Op != history.OpMove || hs.More {
		t.Errorf("scoped history: %+v %v", hs, err)
	}
	wantKind(t, "scoped read of a hidden version", errOf(s.ReadNote(scoped, readNoteIn{Path: "Projects/Tools.md", Version: old})), KindNoteNotFound)
}

func TestUndoTransaction(t *testing.T) {
	s, v, dir := historyServer(t)
	ctx := context.Background()
	a, err := s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/A.md", Content: "a1\n"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/B.md", Content: "b1\n"})
	if err != nil {
		t.Fatal(err)
	}
	tx := TxArg{"consolidate"}
	if _, err := s.WriteNote(ctx, WriteNoteIn{TxArg: tx, Path: "Inbox/A.md", Content: "a2\n", Mode: "overwrite", ExpectedHash: a.ContentHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteNote(ctx, WriteNoteIn{TxArg: tx, Path: "Inbox/C.md", Content: "c\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteNote(ctx, DeleteNoteIn{TxArg: tx, Path: "Inbox/B.md", Confirm: true}); err != nil {
		t.Fatal(err)
	}
	dry, err := s.UndoTransaction(ctx, UndoIn{Transaction: "consolidate", DryRun: true})
	if err != nil || len(dry.Changes) != 3 || len(dry.Conflicts) != 0 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if readFile(t, dir, "Inbox/A.md") != "a2\n" {
		t.Fatal("the dry run wrote")
	}
	// A later write to one of them refuses the undo, naming it.
	c := readFile(t, dir, "Inbox/C.md")
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/C.md", Content: "c later\n", Mode: "overwrite", ExpectedHash: hashOf([]byte(c))}); err != nil {
		t.Fatal(err)
	}
	te := wantKind(t, "undo after a later write", errOf(s.UndoTransaction(ctx, UndoIn{Transaction: "consolidate"})), KindProposalStale)
	if te != nil && fmt.Sprint(te.Fields["paths"]) != "[Inbox/C.md]" {
		t.Errorf("conflicts: %v", te.Fields)
	}
	if readFile(t, dir, "Inbox/A.md") != "a2\n" {
		t.Fatal("a refused undo wrote")
	}
	// Undo the later write (its own transaction), then the transaction.
	if _, err := s.WriteNote(ctx, WriteNoteIn{TxArg: TxArg{"later"}, Path: "Inbox/D.md", Content: "d\n"}); err != nil {
		t.Fatal(err)
	}
	vs := versions(t, v, "Inbox/C.md")
	if _, err := s.RestoreVersion(ctx, RestoreNoteIn{Path: "Inbox/C.md", Version: vs[1].ID}); err != nil {
		t.Fatal(err)
	}
	// C now holds the transaction's content but a newer version: still refused.
	wantKind(t, "undo after a restore", errOf(s.UndoTransaction(ctx, UndoIn{Transaction: "consolidate"})), KindProposalStale)
	out, err := s.UndoTransaction(ctx, UndoIn{Transaction: "later"})
	if err != nil || len(out.Changes) != 1 || out.Changes[0].Action != "delete" {
		t.Fatalf("undo later: %+v %v", out, err)
	}
	if _, err := v.Store.Stat(ctx, "Inbox/D.md"); err == nil {
		t.Error("D.md survived the undo of its creation")
	}
	// A clean undo: an overwrite, a create, a move and a delete reverted.
	clean := TxArg{"clean"}
	if _, err := s.WriteNote(ctx, WriteNoteIn{TxArg: clean, Path: "Inbox/A.md", Content: "a3\n", Mode: "overwrite", ExpectedHash: hashOf([]byte("a2\n"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteNote(ctx, WriteNoteIn{TxArg: clean, Path: "Inbox/E.md", Content: "e\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveNote(ctx, MoveNoteIn{TxArg: clean, Path: "Inbox/C.md", NewPath: "Inbox/C2.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteNote(ctx, DeleteNoteIn{TxArg: clean, Path: "Inbox/A.md", Confirm: true}); err != nil {
		t.Fatal(err)
	}
	out, err = s.UndoTransaction(WithTool(ctx, "undo_transaction"), UndoIn{Transaction: "clean"})
	if err != nil || len(out.Changes) != 4 {
		t.Fatalf("undo clean: %+v %v", out, err)
	}
	if got := readFile(t, dir, "Inbox/A.md"); got != "a2\n" {
		t.Errorf("A after undo: %q", got)
	}
	if got := readFile(t, dir, "Inbox/C.md"); got != "c\n" {
		t.Errorf("C after undo: %q", got)
	}
	for _, gone := range []string{"Inbox/E.md", "Inbox/C2.md"} {
		if _, err := v.Store.Stat(ctx, gone); err == nil {
			t.Errorf("%s survived the undo", gone)
		}
	}
	if vs := versions(t, v, "Inbox/A.md"); vs[0].Op != history.OpRestore || vs[0].Tool != "undo_transaction" {
		t.Errorf("A's history: %s", describe(vs))
	}
	_ = b
}

// Two servers of one folder vault (two stores, two history handles on one
// history folder, as two processes have) append to one note at once:
// history has every version once, in the order they landed, each the
// parent of the next, none taken for a change made outside Sheaf.
func TestHistoryOrderAcrossServers(t *testing.T) {
	s1, v1, dir := writeServer(t)
	hdir := t.TempDir()
	open := func() *histfolder.Store {
		h, err := histfolder.Open(hdir, histfolder.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	v1.History = open()
	ix := indexFolder(t, dir)
	v2 := &Vault{ID: "sample", Store: ix.Store, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}, Reindex: ix, History: open(), Ledger: "off"}
	v1.Ledger = "off"
	s2, err := New(v2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := "Inbox/Shared.md"
	if _, err := s1.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# Shared\n"}); err != nil {
		t.Fatal(err)
	}
	const each = 15
	var wg sync.WaitGroup
	for w, s := range []*Core{s1, s2, s1, s2} {
		wg.Go(func() {
			for i := range each {
				if _, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: fmt.Sprintf("w%d-%d", w, i), Mode: "append"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	vs := versions(t, v2, p)
	if len(vs) != 1+4*each {
		t.Errorf("%d versions, want %d:\n%s", len(vs), 1+4*each, describe(vs))
	}
	var newer []byte
	for i, ver := range vs {
		if ver.Op == history.OpExternal {
			t.Errorf("version %d is external: a write recorded out of order", i)
		}
		if i+1 < len(vs) && ver.Parent != vs[i+1].ID {
			t.Errorf("version %d's parent %s, the next older is %s", i, ver.Parent, vs[i+1].ID)
		}
		data, _, err := v1.History.Read(ctx, p, ver.ID)
		if err != nil {
			t.Fatal(err)
		}
		if newer != nil && !strings.HasPrefix(string(newer), string(data)) {
			t.Errorf("version %d is not what the next one appended to", i)
		}
		newer = data
	}
}

// TestUndoKeepsImmutablePaths: undoing a transaction refuses to delete or
// change a note under a write-once path, and writes nothing.
func TestUndoKeepsImmutablePaths(t *testing.T) {
	s, v, dir := historyServer(t)
	v.ImmutablePaths = []string{"sources/"}
	ctx := context.Background()
	if _, err := s.WriteNote(ctx, WriteNoteIn{TxArg: TxArg{"ingest"}, Path: "Inbox/Note.md", Content: "# note\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteNote(ctx, WriteNoteIn{TxArg: TxArg{"ingest"}, Path: "sources/src.md", Content: "# src\n"}); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "undo of a write-once note's creation", errOf(s.UndoTransaction(ctx, UndoIn{Transaction: "ingest"})), KindImmutablePath)
	wantKind(t, "its dry run", errOf(s.UndoTransaction(ctx, UndoIn{Transaction: "ingest", DryRun: true})), KindImmutablePath)
	if readFile(t, dir, "sources/src.md") != "# src\n" || readFile(t, dir, "Inbox/Note.md") != "# note\n" {
		t.Error("the refused undo wrote")
	}
}

// TestUndoCancelledCompletes: an undo cancelled once it has begun
// writing (a client timing out) still reverts every note of the
// transaction.
func TestUndoCancelledCompletes(t *testing.T) {
	s, v, dir := historyServer(t)
	ctx := context.Background()
	for _, p := range []string{"Inbox/A.md", "Inbox/B.md", "Inbox/C.md"} {
		if _, err := s.WriteNote(ctx, WriteNoteIn{TxArg: TxArg{"batch"}, Path: p, Content: "# " + p + "\n"}); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The undo deletes each note it created: cancel at the first delete.
	v.Store = cancelOnDelete{Store: v.Store, cancel: cancel}
	if _, err := s.UndoTransaction(cctx, UndoIn{Transaction: "batch"}); err != nil {
		t.Fatalf("undo cancelled midway: %v", err)
	}
	if cctx.Err() == nil {
		t.Fatal("the call was not cancelled: the test tests nothing")
	}
	for _, p := range []string{"Inbox/A.md", "Inbox/B.md", "Inbox/C.md"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			t.Errorf("%s survived the undo", p)
		}
	}
}

// cancelOnDelete cancels a context at the store's first delete.
type cancelOnDelete struct {
	store.Store
	cancel context.CancelFunc
}

func (c cancelOnDelete) Delete(ctx context.Context, p, ifMatch string) error {
	c.cancel()
	return c.Store.Delete(ctx, p, ifMatch)
}
