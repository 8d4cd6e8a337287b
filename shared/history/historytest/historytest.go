package historytest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// Harness is one empty vault with its history.
type Harness struct {
	Vault   store.Store
	History history.Store
	// External writes data at path as a program other than Sheaf would
	// (no metadata, nothing recorded), then tells history what the
	// indexer would (history.Observer, where the adapter has one).
	External func(t *testing.T, path string, data []byte)
}

// Run runs the conformance suite; newHarness returns a new, empty vault
// and history for each test.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"Versions", testVersions},
		{"External", testExternal},
		{"Move", testMove},
		{"DeleteRestore", testDeleteRestore},
		{"Find", testFind},
		{"Transaction", testTransaction},
		{"Paging", testPaging},
		{"Isolation", testIsolation},
		{"Bytes", testBytes},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newHarness(t)) })
	}
}

var (
	alice = history.Author{Subject: "key:a1", Name: "alice"}
	bob   = history.Author{Subject: "oauth:b-42", Name: "Bob Ünïcode"}
)

func writer(h Harness) *Writer { return &Writer{Vault: h.Vault, History: h.History} }

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func list(t *testing.T, h Harness, path string) []history.Version {
	t.Helper()
	var all []history.Version
	after := ""
	for {
		p, err := h.History.List(t.Context(), path, history.ListOptions{After: after, Limit: 100})
		if err != nil {
			t.Fatalf("List(%q): %v", path, err)
		}
		all = append(all, p.Versions...)
		if !p.More {
			return all
		}
		after = p.Versions[len(p.Versions)-1].ID
	}
}

func read(t *testing.T, h Harness, path string, v history.Version) []byte {
	t.Helper()
	data, got, err := h.History.Read(t.Context(), path, v.ID)
	if err != nil {
		t.Fatalf("Read(%q, %s %s): %v", path, v.Op, v.ID, err)
	}
	if got.ID != v.ID || got.Hash != history.Hash(data) {
		t.Errorf("Read(%q, %s): version %+v, hash of content %s", path, v.ID, got, history.Hash(data))
	}
	return data
}

// ops is the ops of vs, newest first, as "op@path".
func ops(vs []history.Version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v.Op) + "@" + v.Path
	}
	return out
}

func wantOps(t *testing.T, what string, vs []history.Version, want ...string) {
	t.Helper()
	if got := ops(vs); !slices.Equal(got, want) {
		t.Errorf("%s: ops %q, want %q", what, got, want)
	}
}

func testVersions(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	texts := []string{"# Plan\n\nfirst\n", "# Plan\n\nsecond, whole\n", "# Plan\n\nsecond, whole\nand more\n"}
	v1 := must[history.Version](t, "create")(w.Put(ctx, "plan.md", history.OpWrite, []byte(texts[0]), history.Change{Author: alice, Tool: "write_note", Transaction: "tx-1"}))
	v2 := must[history.Version](t, "overwrite")(w.Put(ctx, "plan.md", history.OpOverwrite, []byte(texts[1]), history.Change{Author: bob, Tool: "write_note"}))
	v3 := must[history.Version](t, "append")(w.Edit(ctx, "plan.md", history.OpAppend, func(b []byte) []byte { return append(b, "and more\n"...) }, history.Change{Author: alice, Tool: "write_note", Transaction: "tx-2"}))
	vs := list(t, h, "plan.md")
	wantOps(t, "List", vs, "append@plan.md", "overwrite@plan.md", "write@plan.md")
	if len(vs) != 3 {
		return
	}
	if vs[0].ID != v3.ID || vs[1].ID != v2.ID || vs[2].ID != v1.ID {
		t.Errorf("List IDs %s %s %s, Record gave %s %s %s", vs[0].ID, vs[1].ID, vs[2].ID, v3.ID, v2.ID, v1.ID)
	}
	if v3.Parent != v2.ID || v2.Parent != v1.ID {
		t.Errorf("Record gave parents %q %q, want %q %q", v3.Parent, v2.Parent, v2.ID, v1.ID)
	}
	for i, v := range []history.Version{vs[2], vs[1], vs[0]} {
		if got := read(t, h, "plan.md", v); string(got) != texts[i] {
			t.Errorf("version %d reads %q, want %q", i, got, texts[i])
		}
		if v.Hash != history.Hash([]byte(texts[i])) || v.Size != int64(len(texts[i])) {
			t.Errorf("version %d: hash %s size %d", i, v.Hash, v.Size)
		}
	}
	if vs[0].Author != alice || vs[1].Author != bob || vs[0].Tool != "write_note" {
		t.Errorf("authors %+v %+v, tool %q", vs[0].Author, vs[1].Author, vs[0].Tool)
	}
	if vs[0].Transaction != "tx-2" || vs[1].Transaction != "" || vs[2].Transaction != "tx-1" {
		t.Errorf("transactions %q %q %q", vs[0].Transaction, vs[1].Transaction, vs[2].Transaction)
	}
	if vs[0].Parent != vs[1].ID || vs[1].Parent != vs[2].ID || vs[2].Parent != "" {
		t.Errorf("parents %q %q %q, want %q %q \"\"", vs[0].Parent, vs[1].Parent, vs[2].Parent, vs[1].ID, vs[2].ID)
	}
	if vs[0].Time.Before(vs[2].Time) || vs[0].Time.IsZero() {
		t.Errorf("times %v .. %v", vs[2].Time, vs[0].Time)
	}
}

// testExternal: what a write replaces is kept even when Sheaf never saw it.
func testExternal(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	h.External(t, "diary.md", []byte("typed in an editor\n"))
	must[history.Version](t, "overwrite")(w.Put(ctx, "diary.md", history.OpOverwrite, []byte("consolidated\n"), history.Change{Author: alice}))
	h.External(t, "diary.md", []byte("consolidated\nand edited again by hand\n"))
	must[history.Version](t, "overwrite")(w.Put(ctx, "diary.md", history.OpOverwrite, []byte("consolidated twice\n"), history.Change{Author: bob}))
	vs := list(t, h, "diary.md")
	wantOps(t, "List", vs, "overwrite@diary.md", "external@diary.md", "overwrite@diary.md", "external@diary.md")
	if len(vs) != 4 {
		return
	}
	want := []string{"consolidated twice\n", "consolidated\nand edited again by hand\n", "consolidated\n", "typed in an editor\n"}
	for i, v := range vs {
		if got := read(t, h, "diary.md", v); string(got) != want[i] {
			t.Errorf("version %d (%s) reads %q, want %q", i, v.Op, got, want[i])
		}
	}
	if vs[1].Author.Subject != history.External || vs[3].Author.Subject != history.External {
		t.Errorf("external versions by %+v, %+v", vs[1].Author, vs[3].Author)
	}
}

func testMove(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	must[history.Version](t, "create")(w.Put(ctx, "inbox/idea.md", history.OpWrite, []byte("one\n"), history.Change{Author: alice}))
	must[history.Version](t, "overwrite")(w.Put(ctx, "inbox/idea.md", history.OpOverwrite, []byte("two\n"), history.Change{Author: alice}))
	moved, away, err := w.Move(ctx, "inbox/idea.md", "projects/idea.md", history.Change{Author: bob, Tool: "move_note", Transaction: "mv"})
	if err != nil {
		t.Fatalf("Move: %v", err)
	}
	if moved.From != "inbox/idea.md" || away.To != "projects/idea.md" || !away.Deleted() {
		t.Errorf("Move recorded %+v and %+v", moved, away)
	}
	must[history.Version](t, "edit")(w.Edit(ctx, "projects/idea.md", history.OpEdit, func(b []byte) []byte { return append(b, "three\n"...) }, history.Change{Author: alice}))
	vs := list(t, h, "projects/idea.md")
	wantOps(t, "List(new path)", vs, "edit@projects/idea.md", "move@projects/idea.md", "overwrite@inbox/idea.md", "write@inbox/idea.md")
	if len(vs) == 4 {
		for i, want := range []string{"two\nthree\n", "two\n", "two\n", "one\n"} {
			if got := read(t, h, "projects/idea.md", vs[i]); string(got) != want {
				t.Errorf("version %d reads %q, want %q", i, got, want)
			}
		}
		if vs[1].Parent != vs[2].ID {
			t.Errorf("the move's parent is %q, want the last version at the old path %q", vs[1].Parent, vs[2].ID)
		}
	}
	old := list(t, h, "inbox/idea.md")
	wantOps(t, "List(old path)", old, "move-away@inbox/idea.md", "overwrite@inbox/idea.md", "write@inbox/idea.md")
	// A note moved back continues its whole history.
	must[history.Version](t, "edit")(w.Edit(ctx, "projects/idea.md", history.OpEdit, func(b []byte) []byte { return append(b, "four\n"...) }, history.Change{Author: alice}))
	if _, _, err := w.Move(ctx, "projects/idea.md", "inbox/idea.md", history.Change{Author: bob}); err != nil {
		t.Fatalf("Move back: %v", err)
	}
	back := list(t, h, "inbox/idea.md")
	wantOps(t, "List(moved back)", back, "move@inbox/idea.md", "edit@projects/idea.md", "edit@projects/idea.md", "move@projects/idea.md", "overwrite@inbox/idea.md", "write@inbox/idea.md")
	// Pages of one version each walk the same history.
	var paged []history.Version
	after := ""
	for range 10 {
		p, err := h.History.List(ctx, "inbox/idea.md", history.ListOptions{After: after, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, p.Versions...)
		if !p.More || len(p.Versions) == 0 {
			break
		}
		after = p.Versions[0].ID
	}
	if fmt.Sprint(ops(paged)) != fmt.Sprint(ops(back)) {
		t.Errorf("paged one by one: %q, want %q", ops(paged), ops(back))
	}
	for i := range min(len(paged), len(back)) {
		if paged[i].ID != back[i].ID || paged[i].Author != back[i].Author || paged[i].Parent != back[i].Parent {
			t.Errorf("page %d: %+v, listed whole %+v", i, paged[i], back[i])
		}
	}
}

func testDeleteRestore(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	must[history.Version](t, "create")(w.Put(ctx, "gone.md", history.OpWrite, []byte("keep me\n"), history.Change{Author: alice}))
	last := must[history.Version](t, "overwrite")(w.Put(ctx, "gone.md", history.OpOverwrite, []byte("keep me, edited\n"), history.Change{Author: alice}))
	del := must[history.Version](t, "delete")(w.Delete(ctx, "gone.md", history.Change{Author: bob, Tool: "delete_note"}))
	if !del.Deleted() || del.Author != bob {
		t.Errorf("delete recorded as %+v", del)
	}
	vs := list(t, h, "gone.md")
	wantOps(t, "List after delete", vs, "delete@gone.md", "overwrite@gone.md", "write@gone.md")
	if _, _, err := h.History.Read(ctx, "gone.md", del.ID); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Read(tombstone) err = %v, want ErrNotFound", err)
	}
	data := read(t, h, "gone.md", last)
	rv := must[history.Version](t, "restore")(w.Put(ctx, "gone.md", history.OpRestore, data, history.Change{Author: alice, Tool: "restore_note", Restored: last.ID}))
	if rv.Restored != last.ID || rv.Hash != last.Hash {
		t.Errorf("restore recorded as %+v", rv)
	}
	vs = list(t, h, "gone.md")
	wantOps(t, "List after restore", vs, "restore@gone.md", "delete@gone.md", "overwrite@gone.md", "write@gone.md")
	if got, _, _ := h.Vault.Get(ctx, "gone.md", 0); string(got) != "keep me, edited\n" {
		t.Errorf("restored note reads %q", got)
	}
}

func testFind(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	texts := []string{"a\n", "b\n", "a\n", "c\n"}
	var vs []history.Version
	for i, s := range texts {
		op := history.OpOverwrite
		if i == 0 {
			op = history.OpWrite
		}
		vs = append(vs, must[history.Version](t, "write")(w.Put(ctx, "f.md", op, []byte(s), history.Change{Author: alice})))
	}
	got, err := h.History.Find(ctx, "f.md", history.Hash([]byte("a\n")))
	if err != nil || got.ID != vs[2].ID {
		t.Errorf("Find(a) = %s, %v; want the newest, %s", got.ID, err, vs[2].ID)
	}
	if got, err := h.History.Find(ctx, "f.md", history.Hash([]byte("b\n"))); err != nil || got.ID != vs[1].ID {
		t.Errorf("Find(b) = %s, %v; want %s", got.ID, err, vs[1].ID)
	}
	if _, err := h.History.Find(ctx, "f.md", history.Hash([]byte("never\n"))); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Find(never) err = %v, want ErrNotFound", err)
	}
	if _, err := h.History.Find(ctx, "other.md", history.Hash([]byte("a\n"))); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Find on another path err = %v, want ErrNotFound", err)
	}
}

func testTransaction(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	tx := history.Change{Author: alice, Tool: "apply_edits", Transaction: "consolidate-7"}
	must[history.Version](t, "create")(w.Put(ctx, "a.md", history.OpWrite, []byte("a0\n"), history.Change{Author: bob}))
	a := must[history.Version](t, "a")(w.Put(ctx, "a.md", history.OpOverwrite, []byte("a1\n"), tx))
	b := must[history.Version](t, "b")(w.Put(ctx, "b.md", history.OpWrite, []byte("b1\n"), tx))
	must[history.Version](t, "other")(w.Put(ctx, "c.md", history.OpWrite, []byte("c\n"), history.Change{Author: alice, Transaction: "other"}))
	a2 := must[history.Version](t, "a again")(w.Put(ctx, "a.md", history.OpOverwrite, []byte("a2\n"), tx))
	got := must[[]history.Version](t, "Transaction")(h.History.Transaction(ctx, "consolidate-7"))
	var ids []string
	for _, v := range got {
		ids = append(ids, v.Path+":"+v.ID)
	}
	want := []string{"a.md:" + a.ID, "b.md:" + b.ID, "a.md:" + a2.ID}
	if !slices.Equal(ids, want) {
		t.Errorf("Transaction = %q, want %q (oldest first)", ids, want)
	}
	for _, v := range got {
		if v.Author != alice || v.Tool != "apply_edits" {
			t.Errorf("transaction version %+v", v)
		}
	}
	if got := must[[]history.Version](t, "Transaction")(h.History.Transaction(ctx, "none")); len(got) != 0 {
		t.Errorf("Transaction(none) = %v", got)
	}
}

func testPaging(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	for i := range 7 {
		op := history.OpOverwrite
		if i == 0 {
			op = history.OpWrite
		}
		must[history.Version](t, "write")(w.Put(ctx, "p.md", op, []byte(fmt.Sprintf("v%d\n", i)), history.Change{Author: alice}))
	}
	var seen []string
	after := ""
	for range 4 {
		p, err := h.History.List(ctx, "p.md", history.ListOptions{After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range p.Versions {
			seen = append(seen, string(read(t, h, "p.md", v)))
		}
		if !p.More {
			break
		}
		after = p.Versions[len(p.Versions)-1].ID
	}
	want := []string{"v6\n", "v5\n", "v4\n", "v3\n", "v2\n", "v1\n", "v0\n"}
	if !slices.Equal(seen, want) {
		t.Errorf("pages of 3 read %q, want %q", seen, want)
	}
}

// testIsolation: a version of one note is never read through another's path.
func testIsolation(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	secret := must[history.Version](t, "secret")(w.Put(ctx, "private/secret.md", history.OpWrite, []byte("secret\n"), history.Change{Author: alice}))
	must[history.Version](t, "public")(w.Put(ctx, "public.md", history.OpWrite, []byte("public\n"), history.Change{Author: alice}))
	if _, _, err := h.History.Read(ctx, "public.md", secret.ID); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Read(public.md, the secret's version) err = %v, want ErrNotFound", err)
	}
	if p, err := h.History.List(ctx, "never.md", history.ListOptions{}); err != nil || len(p.Versions) != 0 || p.More {
		t.Errorf("List(never.md) = %+v, %v; want empty", p, err)
	}
	if _, _, err := h.History.Read(ctx, "public.md", "no-such-version"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Read(unknown id) err = %v, want ErrNotFound", err)
	}
	if _, err := h.History.List(ctx, "public.md", history.ListOptions{After: secret.ID}); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("List(After another note's version) err = %v, want ErrNotFound", err)
	}
}

func testBytes(t *testing.T, h Harness) {
	ctx, w := t.Context(), writer(h)
	big := bytes.Repeat([]byte("a line of a long note, with ünïcödé and 日本語\r\n"), 20000)
	cases := map[string][]byte{
		"empty.md":                     {},
		"crlf.md":                      []byte("# T\r\n\r\nline\r\n"),
		"no-newline.md":                []byte("last line"),
		"café/Ünïcode 日本 notes.md":     []byte("naïve\n"),
		"big.md":                       big,
		"with spaces & symbols (1).md": []byte("---\ntags: [a]\n---\nx\n"),
	}
	for p, data := range cases {
		v := must[history.Version](t, p)(w.Put(ctx, p, history.OpWrite, data, history.Change{Author: bob}))
		if got := read(t, h, p, v); !bytes.Equal(got, data) {
			t.Errorf("%s: read back %d bytes, want %d", p, len(got), len(data))
		}
		if v.Size != int64(len(data)) {
			t.Errorf("%s: size %d, want %d", p, v.Size, len(data))
		}
	}
}

// testConcurrent: writers racing on one note lose no version.
func testConcurrent(t *testing.T, h Harness) {
	ctx := t.Context()
	w := writer(h)
	must[history.Version](t, "create")(w.Put(ctx, "race.md", history.OpWrite, []byte("start\n"), history.Change{Author: alice}))
	const writers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				line := fmt.Sprintf("writer %d line %d\n", i, j)
				_, err := w.Edit(ctx, "race.md", history.OpAppend, func(b []byte) []byte { return append(b, line...) },
					history.Change{Author: history.Author{Subject: fmt.Sprintf("key:w%d", i)}})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	vs := list(t, h, "race.md")
	if len(vs) != 1+writers*each {
		t.Fatalf("%d versions, want %d", len(vs), 1+writers*each)
	}
	// Each version is its parent plus one line: the chain is the order
	// the writes landed.
	for i := 0; i+1 < len(vs); i++ {
		if vs[i].Parent != vs[i+1].ID || vs[i].Op != history.OpAppend {
			t.Errorf("version %d: parent %q, want %q", i, vs[i].Parent, vs[i+1].ID)
		}
		cur, prev := read(t, h, "race.md", vs[i]), read(t, h, "race.md", vs[i+1])
		if !bytes.HasPrefix(cur, prev) || strings.Count(string(cur[len(prev):]), "\n") != 1 {
			t.Errorf("version %d is not its parent plus one line", i)
		}
	}
	final, _, _ := h.Vault.Get(ctx, "race.md", 0)
	if !bytes.Equal(read(t, h, "race.md", vs[0]), final) {
		t.Errorf("the newest version is not the note")
	}
}
