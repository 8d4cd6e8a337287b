package core

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// writeServer serves a copy of the sample vault with read-your-writes.
func writeServer(t testing.TB) (*Core, *Vault, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../infra/sample-vault")); err != nil {
		t.Fatal(err)
	}
	ix := indexFolder(t, dir)
	v := &Vault{ID: "sample", Store: ix.Store, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}, Reindex: ix,
		ImmutablePaths: []string{"sources/"}}
	s, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return s, v, dir
}

func wantKind(t *testing.T, what string, err error, kind Kind) *Error {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want %s", what, kind)
		return nil
	}
	te := toError(err)
	if te.Kind != kind {
		t.Errorf("%s: %s (%s), want %s", what, te.Kind, te.Message, kind)
	}
	return te
}

func readFile(t *testing.T, dir, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteNoteModes(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	out, err := s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/New idea.md", Content: "# New idea\n\nZanzibar compost tea.\n"})
	if err != nil || !out.Created || out.Index.State != "current" || out.Ledger == nil || out.ContentHash != hashOf([]byte("# New idea\n\nZanzibar compost tea.\n")) {
		t.Fatalf("create: %+v %v", out, err)
	}
	te := wantKind(t, "create again", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/New idea.md", Content: "x"})), KindNoteExists)
	if te != nil && te.Fields["current_hash"] != out.ContentHash {
		t.Errorf("note-exists carries %v, want the current hash", te.Fields)
	}
	// Read your writes: search, list, outline, backlinks.
	res, err := s.Search(ctx, SearchArgs{Query: "zanzibar", Limit: 10})
	if err != nil || len(res.Items) != 1 || res.Items[0].Path != "Inbox/New idea.md" {
		t.Errorf("search right after the write: %+v %v", res, err)
	}
	// overwrite
	wantKind(t, "overwrite without a hash", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/New idea.md", Content: "y", Mode: "overwrite"})), KindArgsInvalid)
	stale := strings.Repeat("a", 64)
	te = wantKind(t, "overwrite, stale hash", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/New idea.md", Content: "y", Mode: "overwrite", ExpectedHash: stale})), KindProposalStale)
	if te != nil && te.Fields["current_hash"] != out.ContentHash {
		t.Errorf("stale: fields %v", te.Fields)
	}
	ow, err := s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/New idea.md", Content: "# Better idea\n", Mode: "overwrite", ExpectedHash: out.ContentHash})
	if err != nil || ow.PreviousHash != out.ContentHash || readFile(t, dir, "Inbox/New idea.md") != "# Better idea\n" {
		t.Fatalf("overwrite: %+v %v", ow, err)
	}
	// append, on a line of its own
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: "Short.md", Content: "appended line", Mode: "append"}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dir, "Short.md"); !strings.HasSuffix(got, "\nappended line") {
		t.Errorf("append: %q", got)
	}
	// idempotency key: a retry lands once
	for i := range 3 {
		a, err := s.WriteNote(ctx, WriteNoteIn{Path: "Short.md", Content: "once only\n", Mode: "append", IdempotencyKey: "k-1"})
		if err != nil || a.Replayed != (i > 0) {
			t.Fatalf("append #%d with a key: %+v %v", i, a, err)
		}
	}
	if n := strings.Count(readFile(t, dir, "Short.md"), "once only"); n != 1 {
		t.Errorf("the keyed append landed %d times", n)
	}
	// refusals
	wantKind(t, "hidden", errOf(s.WriteNote(ctx, WriteNoteIn{Path: ".obsidian/x.md", Content: "x"})), KindPathInvalid)
	wantKind(t, "not markdown", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "data/x.csv", Content: "x"})), KindNotMarkdown)
	wantKind(t, "traversal", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "../x.md", Content: "x"})), KindPathInvalid)
	wantKind(t, "append to a missing note", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "Nope.md", Content: "x", Mode: "append"})), KindNoteNotFound)
	wantKind(t, "binary note", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "binary.md", Content: "x", Mode: "append"})), KindNotMarkdown)
	wantKind(t, "key with create", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "k.md", Content: "x", IdempotencyKey: "z"})), KindArgsInvalid)
	wantKind(t, "a file in the way", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "Short.md/x.md", Content: "x"})), KindPathInvalid)
	// immutable sources/: create only
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: "sources/New capture.md", Content: "raw\n"}); err != nil {
		t.Errorf("create under sources/: %v", err)
	}
	h := hashOf([]byte(readFile(t, dir, "sources/New capture.md")))
	wantKind(t, "overwrite under sources/", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "sources/New capture.md", Content: "x", Mode: "overwrite", ExpectedHash: h})), KindImmutablePath)
	wantKind(t, "append under Sources/", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "Sources/New capture.md", Content: "x", Mode: "append"})), KindImmutablePath)
}

func errOf[T any](_ T, err error) error { return err }

func errOf3[A, B any](_ A, _ B, err error) error { return err }

func TestLedgerAndRecentActivity(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	s.Now = func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/Logged.md", Content: "x\n"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(readFile(t, dir, "log.md"), "- 2026-11-02 ingest: Added soil test results\n- 2026-12-01 write: Inbox/Logged.md (create)\n") {
		t.Errorf("log.md:\n%s", readFile(t, dir, "log.md"))
	}
	ra, err := s.RecentActivity(ctx, recentActivityIn{Op: "write"})
	if err != nil || len(ra.Entries) != 1 || ra.Entries[0].Title != "Inbox/Logged.md (create)" || ra.Entries[0].Date != "2026-12-01" {
		t.Errorf("recent_activity: %+v %v", ra, err)
	}
}

func TestApplyEditsTool(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	before := readFile(t, dir, "Projects/Garden/Compost.md")
	te := wantKind(t, "ambiguous find", errOf(s.ApplyEdits(ctx, editsIn{Path: "Projects/Garden/Compost.md",
		Edits: []vault.Edit{{Find: "Compost", Replace: "x"}}})), KindEditNotUnique)
	if te != nil && (te.Fields["matches"].(int) < 2 || te.Fields["edit"] != 0) {
		t.Errorf("fields %v", te.Fields)
	}
	te = wantKind(t, "second edit not found", errOf(s.ApplyEdits(ctx, editsIn{Path: "Projects/Garden/Compost",
		Edits: []vault.Edit{{Find: before[:40], Replace: "NEW"}, {Find: "no such text anywhere", Replace: "y"}}})), KindEditNotUnique)
	if te != nil && (te.Fields["matches"] != 0 || te.Fields["edit"] != 1) {
		t.Errorf("fields %v", te.Fields)
	}
	wantKind(t, "no edits", errOf(s.ApplyEdits(ctx, editsIn{Path: "Projects/Garden/Compost.md"})), KindArgsInvalid)
	if readFile(t, dir, "Projects/Garden/Compost.md") != before {
		t.Fatal("a failed apply_edits changed the note")
	}
	out, err := s.ApplyEdits(ctx, editsIn{Path: "Projects/Garden/Compost.md", ExpectedHash: hashOf([]byte(before)),
		Edits: []vault.Edit{{Find: before[:40], Replace: "NEW START"}}})
	if err != nil || out.Applied != 1 || !strings.HasPrefix(readFile(t, dir, "Projects/Garden/Compost.md"), "NEW START") {
		t.Fatalf("apply_edits: %+v %v", out, err)
	}
	wantKind(t, "stale expected_hash", errOf(s.ApplyEdits(ctx, editsIn{Path: "Projects/Garden/Compost.md", ExpectedHash: hashOf([]byte(before)),
		Edits: []vault.Edit{{Find: "NEW START", Replace: "x"}}})), KindProposalStale)
	wantKind(t, "immutable", errOf(s.ApplyEdits(ctx, editsIn{Path: "sources/Pollinator survey 2025.md",
		Edits: []vault.Edit{{Find: "a", Replace: "b"}}})), KindImmutablePath)
}

func TestPatchSectionTool(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	before := readFile(t, dir, "Multilingual.md")
	wantKind(t, "missing heading", errOf(s.PatchSection(ctx, patchIn{Path: "Multilingual.md", HeadingPath: []string{"Deutsch"}, Operation: "replace", Content: "x"})), KindTargetNotFound)
	te := wantKind(t, "duplicate heading", errOf(s.PatchSection(ctx, patchIn{Path: "Multilingual.md", HeadingPath: []string{"🌱 Seedlings"}, Operation: "append", Content: "x"})), KindEditNotUnique)
	if te != nil && te.Fields["matches"] != 2 {
		t.Errorf("fields %v", te.Fields)
	}
	wantKind(t, "two targets", errOf(s.PatchSection(ctx, patchIn{Path: "Multilingual.md", HeadingPath: []string{"Français"}, Block: "x", Operation: "append", Content: "x"})), KindArgsInvalid)
	wantKind(t, "frontmatter insert_after", errOf(s.PatchSection(ctx, patchIn{Path: "Multilingual.md", FrontmatterKey: "tags", Operation: "insert_after", Content: "x"})), KindArgsInvalid)
	if readFile(t, dir, "Multilingual.md") != before {
		t.Fatal("a failed patch changed the note")
	}
	out, err := s.PatchSection(ctx, patchIn{Path: "Multilingual.md", HeadingPath: []string{"Multilingual 🌍", "Français"}, Operation: "replace", Content: "Le thé aussi."})
	if err != nil || out.Index.State != "current" {
		t.Fatalf("patch: %+v %v", out, err)
	}
	if got := readFile(t, dir, "Multilingual.md"); got != strings.Replace(before, "Le café est offert le samedi matin. #café\n", "Le thé aussi.\n", 1) {
		t.Errorf("more than the section changed:\n%s", got)
	}
	if _, err := s.PatchSection(ctx, patchIn{Path: "Multilingual.md", FrontmatterKey: "tags", Operation: "append", Content: "signs"}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dir, "Multilingual.md"); !strings.Contains(got, "tags: [languages, signs]\n") {
		t.Errorf("frontmatter append: %s", got)
	}
	tags, err := s.NotesByTag(ctx, notesByTagIn{Tag: "signs", Page: Page{Limit: 10}})
	if err != nil || tags.Total != 1 {
		t.Errorf("notes_by_tag right after the patch: %+v %v", tags, err)
	}
}

func TestDeleteAndRestore(t *testing.T) {
	s, v, dir := writeServer(t)
	ctx := context.Background()
	wantKind(t, "no confirm", errOf(s.DeleteNote(ctx, DeleteNoteIn{Path: "Short.md"})), KindConfirmationRequired)
	wantKind(t, "immutable", errOf(s.DeleteNote(ctx, DeleteNoteIn{Path: "sources/Pollinator survey 2025.md", Confirm: true})), KindImmutablePath)
	wantKind(t, "stale", errOf(s.DeleteNote(ctx, DeleteNoteIn{Path: "Short.md", Confirm: true, ExpectedHash: strings.Repeat("0", 64)})), KindProposalStale)
	before := readFile(t, dir, "Short.md")
	out, err := s.DeleteNote(ctx, DeleteNoteIn{Path: "Short.md", Confirm: true})
	if err != nil || !strings.HasPrefix(out.TrashPath, TrashDir+"/") || !strings.HasSuffix(out.TrashPath, "/Short.md") {
		t.Fatalf("delete: %+v %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "Short.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the note is still there: %v", err)
	}
	if readFile(t, dir, out.TrashPath) != before {
		t.Error("the trash copy differs")
	}
	list, _ := s.ListNotes(ctx, listNotesIn{Page: Page{Limit: 500}})
	for _, n := range list.Items {
		if n.Path == "Short.md" || strings.HasPrefix(n.Path, ".sheaf") {
			t.Errorf("list_notes still shows %s", n.Path)
		}
	}
	wantKind(t, "delete again", errOf(s.DeleteNote(ctx, DeleteNoteIn{Path: "Short.md", Confirm: true})), KindNoteNotFound)
	restored, idx, err := s.RestoreNote(ctx, VaultArg{}, out.TrashPath)
	if err != nil || restored != "Short.md" || readFile(t, dir, "Short.md") != before || idx.State != "current" {
		t.Fatalf("restore: %s %v", restored, err)
	}
	if _, ok := v.Catalogs.(LiveCatalog).C.Note("Short.md"); !ok {
		t.Error("the restored note is not indexed")
	}
	wantKind(t, "restore again", errOf3(s.RestoreNote(ctx, VaultArg{}, out.TrashPath)), KindNoteNotFound)
}

// unresolved is the set of lint unresolved-link findings, as path + message.
func unresolved(t *testing.T, s *Core) []string {
	t.Helper()
	out, err := s.Lint(context.Background(), LintIn{Page: Page{Limit: 500}})
	if err != nil {
		t.Fatal(err)
	}
	var u []string
	for _, f := range out.Items {
		if f.Rule == vault.RuleUnresolvedLink {
			u = append(u, f.Path+": "+f.Message)
		}
	}
	slices.Sort(u)
	return u
}

func TestMoveNoteTool(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	lintBefore := unresolved(t, s)
	back, _ := s.ListBacklinks(ctx, notePathIn{Path: "Projects/Garden/Compost.md", Page: Page{Limit: 100}})
	dry, err := s.MoveNote(ctx, MoveNoteIn{Path: "Projects/Garden/Compost.md", NewPath: "Archive/Humus heap.md", DryRun: true})
	if err != nil || dry.LinksChanged == 0 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "Archive/Humus heap.md")); err == nil {
		t.Fatal("a dry run wrote")
	}
	out, err := s.MoveNote(ctx, MoveNoteIn{Path: "Projects/Garden/Compost.md", NewPath: "Archive/Humus heap.md"})
	if err != nil {
		t.Fatal(err)
	}
	// binary.md, which the index does not hold, names Compost: it is said.
	if out.LinksChanged != dry.LinksChanged || len(out.NotRewritten) != 1 || out.NotRewritten[0].Path != "binary.md" || out.Index.State != "current" {
		t.Errorf("move: %d links (dry run %d), not rewritten %v", out.LinksChanged, dry.LinksChanged, out.NotRewritten)
	}
	for _, r := range out.Rewritten {
		for _, c := range r.Changes {
			t.Logf("%s:%d %s -> %s", r.Path, c.Line, c.Old, c.New)
		}
	}
	if got := unresolved(t, s); !slices.Equal(got, lintBefore) {
		t.Errorf("lint after the move:\n%s\nbefore:\n%s", strings.Join(got, "\n"), strings.Join(lintBefore, "\n"))
	}
	after, _ := s.ListBacklinks(ctx, notePathIn{Path: "Archive/Humus heap.md", Page: Page{Limit: 100}})
	if after.Total != back.Total {
		t.Errorf("backlinks: %d after, %d before", after.Total, back.Total)
	}
	if zoo := readFile(t, dir, "Link zoo.md"); !strings.Contains(zoo, "- Plain: [[Humus heap]]") || !strings.Contains(zoo, "[[Humus heap#^abc123]]") || !strings.Contains(zoo, "[[Compost heap]]") {
		t.Errorf("Link zoo after the move:\n%s", zoo)
	}
	wantKind(t, "move onto a note", errOf(s.MoveNote(ctx, MoveNoteIn{Path: "Short.md", NewPath: "Glossary.md"})), KindNoteExists)
	wantKind(t, "move a missing note", errOf(s.MoveNote(ctx, MoveNoteIn{Path: "Projects/Garden/Compost.md", NewPath: "X.md"})), KindNoteNotFound)
	wantKind(t, "move from sources/", errOf(s.MoveNote(ctx, MoveNoteIn{Path: "sources/Pollinator survey 2025.md", NewPath: "X.md"})), KindImmutablePath)
	wantKind(t, "a name a wikilink cannot hold", errOf(s.MoveNote(ctx, MoveNoteIn{Path: "Short.md", NewPath: "a|b.md"})), KindArgsInvalid)
	// And back: every note is byte for byte what it was.
	if _, err := s.MoveNote(ctx, MoveNoteIn{Path: "Archive/Humus heap.md", NewPath: "Projects/Garden/Compost.md"}); err != nil {
		t.Fatal(err)
	}
	orig := "../../infra/sample-vault"
	for _, r := range out.Rewritten {
		p := r.Path
		if p == "Archive/Humus heap.md" {
			p = "Projects/Garden/Compost.md"
		}
		if readFile(t, dir, p) != readFile(t, orig, p) {
			t.Errorf("%s differs after moving there and back", p)
		}
	}
}

func TestCompleteDirectiveTool(t *testing.T) {
	s, v, dir := writeServer(t)
	ctx := context.Background()
	pend, _ := s.PendingDirectives(ctx, pendingDirectivesIn{Page: Page{Limit: 50}})
	d := pend.Items[0]
	if _, _, err := claimLease(ctx, v.Store, d, "w1", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "drifted line", errOf(s.CompleteDirective(ctx, completeIn{Path: d.Path, Line: d.Line + 1})), KindTargetNotFound)
	wantKind(t, "drifted title", errOf(s.CompleteDirective(ctx, completeIn{Path: d.Path, Line: d.Line, Title: "something else"})), KindTargetNotFound)
	out, err := s.CompleteDirective(ctx, completeIn{Path: d.Path, Line: d.Line, Title: d.Title})
	if err != nil || out.AlreadyDone || out.Title != d.Title {
		t.Fatalf("complete: %+v %v", out, err)
	}
	if !strings.Contains(readFile(t, dir, d.Path), "> [!ai-done] "+d.Title) {
		t.Errorf("marker not flipped")
	}
	if l, _ := getLease(ctx, v.Store, leaseKey(d.Path, d.Line, d.Title)); l != nil {
		t.Errorf("the lease is still held: %+v", l)
	}
	again, err := s.CompleteDirective(ctx, completeIn{Path: d.Path, Line: d.Line})
	if err != nil || !again.AlreadyDone {
		t.Errorf("completing twice: %+v %v", again, err)
	}
	after, _ := s.PendingDirectives(ctx, pendingDirectivesIn{Page: Page{Limit: 50}})
	if after.Total != pend.Total-1 {
		t.Errorf("pending %d after, %d before", after.Total, pend.Total)
	}
}

func TestFilePage(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	in := filePageIn{Path: "Answers/Lime.md", Title: "Which beds need lime", Question: "Which beds need lime this year?",
		Content: "Beds 3 and 7 read below pH 6.", Tags: []string{"soil"},
		Citations: []Citation{{Path: "Projects/Garden/2026/Soil test results.md", Quote: "pH 5.8"}, {Path: "Projects/Website/Architecture"}}}
	out, err := s.FilePage(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	text := readFile(t, dir, "Answers/Lime.md")
	p := vault.Parse("Answers/Lime.md", []byte(text))
	n := p.Note
	if n.Title != "Which beds need lime" || n.FrontmatterError != "" || !slices.Contains(n.Tags, "soil") ||
		n.Frontmatter["question"] != in.Question || len(n.DerivedFromIDs) != 2 || len(out.Links) != 2 || !strings.Contains(text, "tags:\n  - soil\n") {
		t.Errorf("filed page:\n%s\n%+v", text, n)
	}
	back, _ := s.ListBacklinks(ctx, notePathIn{Path: "Projects/Garden/2026/Soil test results.md", Page: Page{Limit: 100}})
	found := false
	for _, b := range back.Items {
		found = found || b.SourcePath == "Answers/Lime.md"
	}
	if !found {
		t.Errorf("the cited note has no backlink from the filed page: %+v", back.Items)
	}
	wantKind(t, "again", errOf(s.FilePage(ctx, in)), KindNoteExists)
	in.Path, in.Citations = "Answers/Other.md", []Citation{{Path: "Nope.md"}}
	wantKind(t, "missing citation", errOf(s.FilePage(ctx, in)), KindNoteNotFound)
}

// TestConcurrentAppends has 8 goroutines each make 200 read-modify-write
// appends to one note (read_note's hash, then overwrite with expected_hash,
// retrying on proposal-stale): every line lands exactly once.
func TestConcurrentAppends(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	writers, each := 8, 200
	if testing.Short() {
		each = 25
	}
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: "Counter.md", Content: ""}); err != nil {
		t.Fatal(err)
	}
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				line := fmt.Sprintf("writer %d line %d\n", w, i)
				for {
					r, err := s.ReadNote(ctx, readNoteIn{Path: "Counter.md"})
					if err != nil {
						t.Error(err)
						return
					}
					_, err = s.WriteNote(ctx, WriteNoteIn{Path: "Counter.md", Mode: "overwrite", Content: r.Content + line, ExpectedHash: r.ContentHash})
					if err == nil {
						break
					}
					if toError(err).Kind != KindProposalStale {
						t.Error(err)
						return
					}
					conflicts.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	lines := strings.Split(strings.TrimSuffix(readFile(t, dir, "Counter.md"), "\n"), "\n")
	seen := map[string]int{}
	for _, l := range lines {
		seen[l]++
	}
	if len(lines) != writers*each || len(seen) != writers*each {
		t.Errorf("%d lines, %d distinct, want %d", len(lines), len(seen), writers*each)
	}
	n := writers * each
	t.Logf("%d writers x %d read-modify-write appends: %d conflicts retried (%.2f per write), %.0f writes/s", writers, each, conflicts.Load(),
		float64(conflicts.Load())/float64(n), float64(n)/elapsed.Seconds())
}

var _ = indexer.ErrReindexLater

// TestBinaryTextRefused: no write makes a note binary (a NUL byte, or
// many control characters): such a note no tool could read, edit or
// delete. The note is unchanged.
func TestBinaryTextRefused(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	const p = "Projects/Garden/Compost.md"
	before := readFile(t, dir, p)
	wantKind(t, "create with a NUL", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/Nul.md", Content: "x\x00y\n"})), KindArgsInvalid)
	if _, err := os.Stat(filepath.Join(dir, "Inbox", "Nul.md")); err == nil {
		t.Error("the refused note was created")
	}
	wantKind(t, "an edit putting a NUL in", errOf(s.ApplyEdits(ctx, editsIn{Path: p,
		Edits: []vault.Edit{{Find: before[:20], Replace: "x\x00y"}}})), KindArgsInvalid)
	wantKind(t, "an append of control characters", errOf(s.WriteNote(ctx, WriteNoteIn{Path: p, Mode: "append",
		Content: strings.Repeat("\x01\x02", len(before))})), KindArgsInvalid)
	if readFile(t, dir, p) != before {
		t.Error("a refused write changed the note")
	}
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Mode: "append", Content: "tabs\tand\nbreaks\r\n"}); err != nil {
		t.Errorf("text with tabs and line breaks refused: %v", err)
	}
}

// TestBinaryNoteReadAsFile: a file named .md that holds binary content
// is refused by read_note, which sends the caller to read_attachment, and
// read_attachment reads it; a real note it still sends to read_note.
func TestBinaryNoteReadAsFile(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	bin := bytes.Repeat([]byte{0, 1, 2, 0xff, 'P', 'K'}, 100)
	if err := os.WriteFile(filepath.Join(dir, "blob.md"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "read_note of a binary .md", errOf(s.ReadNote(ctx, readNoteIn{Path: "blob.md"})), KindNotMarkdown)
	out, err := s.ReadAttachment(ctx, readAttachmentIn{Path: "blob.md"})
	if err != nil {
		t.Fatalf("read_attachment of a binary .md: %v", err)
	}
	if got, _ := base64.StdEncoding.DecodeString(out.Base64); !bytes.Equal(got, bin) || out.MimeType != "application/octet-stream" {
		t.Errorf("read_attachment gave %d bytes as %s, want the file's %d", len(got), out.MimeType, len(bin))
	}
	wantKind(t, "read_attachment of a note", errOf(s.ReadAttachment(ctx, readAttachmentIn{Path: "Projects/Garden/Compost.md"})), KindArgsInvalid)
}

// TestCaseTwinRefused: a new note (or a move) to a path that differs from
// another note's only in case is refused with note-exists, naming that
// note; renaming a note's own case is a move like any other.
func TestCaseTwinRefused(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	te := wantKind(t, "create a case twin", errOf(s.WriteNote(ctx, WriteNoteIn{Path: "projects/garden/compost.md", Content: "x\n"})), KindNoteExists)
	if te != nil && te.Fields["existing"] != "Projects/Garden/Compost.md" {
		t.Errorf("fields %v", te.Fields)
	}
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/Other.md", Content: "# Other\n"}); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "move onto a case twin", errOf(s.MoveNote(ctx, MoveNoteIn{Path: "Inbox/Other.md", NewPath: "Projects/Garden/COMPOST.md"})), KindNoteExists)
	if _, err := s.MoveNote(ctx, MoveNoteIn{Path: "Inbox/Other.md", NewPath: "Inbox/OTHER.md"}); err != nil {
		t.Errorf("renaming a note's own case: %v", err)
	}
	if readFile(t, dir, "Projects/Garden/Compost.md") == "" {
		t.Error("the twin's original is gone")
	}
}

// TestMoveUnindexable: moving a binary .md says not-markdown, not "not
// indexed yet, try again", which would never come true.
func TestMoveUnindexable(t *testing.T) {
	s, _, dir := writeServer(t)
	if err := os.WriteFile(filepath.Join(dir, "blob.md"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "move a binary .md", errOf(s.MoveNote(context.Background(), MoveNoteIn{Path: "blob.md", NewPath: "blob2.md"})), KindNotMarkdown)
}

// TestUnlinkableNameRefused: write_note creates no note whose name a
// wikilink cannot spell, as move_note moves none there.
func TestUnlinkableNameRefused(t *testing.T) {
	s, _, dir := writeServer(t)
	for _, p := range []string{"Inbox/a#b.md", "Inbox/a|b.md", "Inbox/[x].md", "Inbox/a^b.md"} {
		wantKind(t, "create "+p, errOf(s.WriteNote(context.Background(), WriteNoteIn{Path: p, Content: "x\n"})), KindArgsInvalid)
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	// A note already there under such a name is note-exists, as any.
	if err := os.WriteFile(filepath.Join(dir, "Inbox", "C#.md"), []byte("# C#\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "create over an existing C#.md", errOf(s.WriteNote(context.Background(), WriteNoteIn{Path: "Inbox/C#.md", Content: "x\n"})), KindNoteExists)
}

// TestWriteThroughSymlinkRefused: a write to a note that is a symlink
// inside the vault is refused (path-invalid): the file it leads to was not
// the one checked against write-once paths and the caller's folders.
func TestWriteThroughSymlinkRefused(t *testing.T) {
	s, v, dir := writeServer(t)
	v.ImmutablePaths = []string{"Projects/"}
	if err := os.Symlink("Projects/Garden/Compost.md", filepath.Join(dir, "Link.md")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	before := readFile(t, dir, "Projects/Garden/Compost.md")
	wantKind(t, "append through a symlink", errOf(s.WriteNote(context.Background(), WriteNoteIn{Path: "Link.md", Mode: "append", Content: "more\n"})), KindPathInvalid)
	if readFile(t, dir, "Projects/Garden/Compost.md") != before {
		t.Error("the write-once note changed through a symlink")
	}
}

// TestPagedReadJudgesTheFile: a note whose few control characters sit
// close together reads by pages as it reads whole: whether a file is
// binary is judged on its head, not on the page asked for.
func TestPagedReadJudgesTheFile(t *testing.T) {
	s, _, _ := writeServer(t)
	ctx := context.Background()
	text := "# Gamma\nLinks\x01\x02\x03\x04\x05\x06\x07: [[Alpha]] and more text, enough to make the control characters a small share of the whole note.\n"
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: "Inbox/G2.md", Content: text}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadNote(ctx, readNoteIn{Path: "Inbox/G2.md"}); err != nil {
		t.Fatalf("whole: %v", err)
	}
	if _, err := s.ReadNote(ctx, readNoteIn{Path: "Inbox/G2.md", Length: 40}); err != nil {
		t.Errorf("a page of 40 bytes: %v", err)
	}
}

// TestEmptyListsSayWhy: a list of a folder that is not there says so in
// hint (the spec's list_notes answers a valid call with no error), naming
// the folder meant when only the case differs, or the note or attachment
// named instead of a folder; a folder that leads out of the vault is
// path-invalid.
func TestEmptyListsSayWhy(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	for path, want := range map[string]string{
		"projects":    `did you mean "Projects"?`,
		"Nowhere":     `No note or file is in a folder "Nowhere"`,
		"Short.md":    `"Short.md" is a note`,
		"Short":       `"Short" is a note (Short.md)`,
		"Projects/Ga": `No note or file is in a folder "Projects/Ga"`,
	} {
		got, err := s.ListNotes(ctx, listNotesIn{Path: path, Page: Page{Limit: 5}})
		if err != nil || got.Total != 0 || !strings.Contains(got.Hint, want) {
			t.Errorf("list_notes %q: %+v %v, want a hint with %q", path, got, err, want)
		}
	}
	if got, err := s.ListNotes(ctx, listNotesIn{Path: "Projects", Page: Page{Limit: 5}}); err != nil || got.Total == 0 || got.Hint != "" {
		t.Errorf("list_notes Projects: %+v %v", got, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "Empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ListNotes(ctx, listNotesIn{Path: "Empty", Page: Page{Limit: 5}}); err != nil || got.Total != 0 || !strings.HasPrefix(got.Hint, `No note or file is in a folder "Empty": list_folders`) {
		t.Errorf("an empty folder: %+v %v", got, err)
	}
	out := t.TempDir()
	if err := os.Symlink(out, filepath.Join(dir, "outlink")); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "folder out of the vault", errOf(s.ListNotes(ctx, listNotesIn{Path: "outlink", Page: Page{Limit: 5}})), KindPathInvalid)
	atts, err := s.ListAttachments(ctx, listAttachmentsIn{Path: "Nowhere", Page: Page{Limit: 5}})
	if err != nil || !strings.Contains(atts.Hint, `No note or file is in a folder "Nowhere"`) {
		t.Errorf("list_attachments Nowhere: %+v %v", atts, err)
	}
	wantKind(t, "tag #", errOf(s.NotesByTag(ctx, notesByTagIn{Tag: "#", Page: Page{Limit: 5}})), KindArgsInvalid)
}

// TestBigNoteParsesWait: a note of a MiB or more is read and parsed only
// when the process-wide parse budget has room; a call cancelled while it
// waits ends with its context's error, and the next one goes through.
func TestBigNoteParsesWait(t *testing.T) {
	s, v, dir := writeServer(t)
	big := "# Big\n\n" + strings.Repeat("A line of text about [[Short]] and more.\n", 30000)
	if err := os.WriteFile(filepath.Join(dir, "Big.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.Reindex.Reindex(context.Background(), "Big.md"); err != nil {
		t.Fatal(err)
	}
	if err := parseGate.Acquire(context.Background(), parseBudget); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := s.ReadOutline(ctx, readOutlineIn{Path: "Big.md"})
	parseGate.Release(parseBudget)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read_outline with the budget taken: %v, want it to wait", err)
	}
	if out, err := s.ReadOutline(context.Background(), readOutlineIn{Path: "Big.md"}); err != nil || len(out.Headings) != 1 {
		t.Fatalf("read_outline: %+v %v", out, err)
	}
	// Small notes never wait.
	if err := parseGate.Acquire(context.Background(), parseBudget); err != nil {
		t.Fatal(err)
	}
	defer parseGate.Release(parseBudget)
	if _, err := s.ReadOutline(context.Background(), readOutlineIn{Path: "Short.md"}); err != nil {
		t.Fatal(err)
	}
}

// TestReadOutlinePages: offset skips headings (the clipper's next_offset
// comes from the answer's offset), and one past the end is args-invalid.
func TestReadOutlinePages(t *testing.T) {
	s, _, _ := writeServer(t)
	ctx := context.Background()
	all, err := s.ReadOutline(ctx, readOutlineIn{Path: "Multilingual.md"})
	if err != nil || len(all.Headings) < 3 {
		t.Fatalf("outline: %+v %v", all, err)
	}
	rest, err := s.ReadOutline(ctx, readOutlineIn{Path: "Multilingual.md", Offset: 2})
	if err != nil || rest.Offset != 2 || len(rest.Headings) != len(all.Headings)-2 || rest.Headings[0] != all.Headings[2] {
		t.Errorf("offset 2: %+v %v", rest, err)
	}
	wantKind(t, "offset past the end", errOf(s.ReadOutline(ctx, readOutlineIn{Path: "Multilingual.md", Offset: len(all.Headings) + 1})), KindArgsInvalid)
}

// TestMoveNamesUnindexedLinkers: a note the index does not hold, whose
// text names the moved note, is listed in not_rewritten (its links were
// never read); one that does not name it is not.
func TestMoveNamesUnindexedLinkers(t *testing.T) {
	s, v, dir := writeServer(t)
	ctx := context.Background()
	for name, body := range map[string]string{"Blob.md": "\x00\x01\x02 see [[Short]] \x00\x03", "Other blob.md": "\x00\x01\x02 nothing \x00\x03"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = v.Reindex.Reindex(ctx, name)
	}
	out, err := s.MoveNote(ctx, MoveNoteIn{Path: "Short.md", NewPath: "Shorter.md", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range out.NotRewritten {
		got = append(got, n.Path)
	}
	if !slices.Equal(got, []string{"Blob.md"}) {
		t.Errorf("not_rewritten %v, want [Blob.md]", got)
	}
	// A caller limited to some folders hears nothing of notes outside them.
	scoped := asKey(ctx, "k1", "scoped", "*.md")
	if err := os.MkdirAll(filepath.Join(dir, "Private"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "Blob.md"), filepath.Join(dir, "Private", "Blob.md")); err != nil {
		t.Fatal(err)
	}
	_ = v.Reindex.Reindex(ctx, "Blob.md", "Private/Blob.md")
	out, err = s.MoveNote(scoped, MoveNoteIn{Path: "Short.md", NewPath: "Shorter.md", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range out.NotRewritten {
		if strings.HasPrefix(n.Path, "Private/") {
			t.Errorf("a scoped caller was told of %s", n.Path)
		}
	}
}
