package core

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// crashed is what the hook panics with to stop a call where a crash
// (kill -9) would: after the note write, before its record says done.
type crashed struct{}

// appendAndCrash runs an idempotent append that stops after the note was
// written: on disk, the note holds the text and the key's record says
// pending, as a process killed there leaves them.
func appendAndCrash(t *testing.T, s *Core, in WriteNoteIn) {
	t.Helper()
	appendLandedHook = func() { panic(crashed{}) }
	defer func() {
		appendLandedHook = func() {}
		if r := recover(); r == nil {
			t.Fatal("the append did not reach the crash point")
		} else if _, ok := r.(crashed); !ok {
			panic(r)
		}
	}()
	_, _ = s.WriteNote(context.Background(), in)
}

// restarted is a new core over the same folder: a process started again.
func restarted(t *testing.T, dir string) *Core {
	t.Helper()
	ix := indexFolder(t, dir)
	s, err := New(&Vault{ID: "sample", Store: ix.Store, Text: ix.Text, Catalogs: LiveCatalog{C: ix.Catalog}, Reindex: ix})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keyRecord(t *testing.T, dir, path, key string) appendRecord {
	t.Helper()
	var rec appendRecord
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(appendKeyPath(path, key))))
	if err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("no record of the key: %v", err)
	}
	return rec
}

// TestAppendOnceAfterCrash: an idempotent append killed between the note
// write and its record, the note edited meanwhile (by an editor, another
// call), then retried in a new process with the same key: the text is in
// the note exactly once and the retry replays the first call's result.
// Before, any edit but a later append made the retry append again (it
// checked that the note still started with the append's result).
func TestAppendOnceAfterCrash(t *testing.T) {
	const text = "- [ ] water the tomatoes (appended once)"
	for _, tc := range []struct {
		name string
		edit func(string) string
	}{
		{"no edit", func(s string) string { return s }},
		{"a line put at the top", func(s string) string { return "Pinned: read me first.\n\n" + s }},
		{"frontmatter added", func(s string) string { return "---\ntags: [garden]\n---\n" + s }},
		{"a word changed above", func(s string) string { return strings.Replace(s, "Beds", "Raised beds", 1) }},
		{"appended to after", func(s string) string { return s + "\n- [ ] and the beans\n" }},
		{"a line put before the text", func(s string) string {
			return strings.Replace(s, text, "A note written in between.\n"+text, 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, dir := writeServer(t)
			ctx := context.Background()
			const p = "Garden beds.md"
			if _, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# Beds\n\nBeds one to four get compost in March.\n"}); err != nil {
				t.Fatal(err)
			}
			in := WriteNoteIn{Path: p, Content: text, Mode: "append", IdempotencyKey: "k-crash"}
			appendAndCrash(t, s, in)
			if rec := keyRecord(t, dir, p, in.IdempotencyKey); rec.State != "pending" {
				t.Fatalf("after the crash the record says %q", rec.State)
			}
			if got := readFile(t, dir, p); strings.Count(got, text) != 1 {
				t.Fatalf("the crashed append did not land: %q", got)
			}
			full := filepath.Join(dir, p)
			if err := os.WriteFile(full, []byte(tc.edit(readFile(t, dir, p))), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := restarted(t, dir).WriteNote(ctx, in)
			if err != nil {
				t.Fatalf("the retry: %v", err)
			}
			got := readFile(t, dir, p)
			if n := strings.Count(got, text); n != 1 || !out.Replayed {
				t.Errorf("after the retry the text is in the note %d times (replayed %v):\n%s", n, out.Replayed, got)
			}
			if rec := keyRecord(t, dir, p, in.IdempotencyKey); rec.State != "done" {
				t.Errorf("after the retry the record says %q", rec.State)
			}
		})
	}
}

// TestAppendOnceClaimWithoutNote: a call killed after its claim, before the
// note write, does not hold the key: the retry appends at once (it used to
// be told to come back for 30 s), exactly once.
func TestAppendOnceClaimWithoutNote(t *testing.T) {
	s, v, dir := writeServer(t)
	ctx := context.Background()
	const p = "Claimed.md"
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# Claimed\n"}); err != nil {
		t.Fatal(err)
	}
	c, err := v.readForWrite(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	claim := newAppendClaim(c, appendText(c.data, "once"))
	if _, err := putAppendRecord(ctx, v.Store, appendKeyPath(p, "k"), claim, ""); err != nil {
		t.Fatal(err)
	}
	out, err := restarted(t, dir).WriteNote(ctx, WriteNoteIn{Path: p, Content: "once", Mode: "append", IdempotencyKey: "k"})
	if err != nil || out.Replayed {
		t.Fatalf("retry: %+v %v", out, err)
	}
	if got := readFile(t, dir, p); strings.Count(got, "once") != 1 {
		t.Errorf("%q", got)
	}
}

// TestAppendOnceYoungClaimWaits: a fresh claim whose append shows nowhere
// in a note someone else has changed may belong to a call still running:
// the retry is told to come back when the claim runs out (its remaining
// time, not a constant), and then takes it over and appends once.
func TestAppendOnceYoungClaimWaits(t *testing.T) {
	s, v, dir := writeServer(t)
	ctx := context.Background()
	const p = "Young.md"
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# Young\n"}); err != nil {
		t.Fatal(err)
	}
	c, err := v.readForWrite(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	claim := newAppendClaim(c, appendText(c.data, "once"))
	claim.At = time.Now().Add(-10 * time.Second).UTC()
	rp := appendKeyPath(p, "k")
	obj, err := putAppendRecord(ctx, v.Store, rp, claim, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, p), []byte("# Young\n\nChanged by someone else.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := WriteNoteIn{Path: p, Content: "once", Mode: "append", IdempotencyKey: "k"}
	te := wantKind(t, "a retry while a fresh claim holds the key", errOf(s.WriteNote(ctx, in)), KindTargetIsBeingEdited)
	if te != nil {
		ms, _ := te.Fields["retry_after_ms"].(int64)
		if ms < 15_000 || ms > 20_000 {
			t.Errorf("retry_after_ms = %v, want the claim's remaining ~20 s", te.Fields["retry_after_ms"])
		}
	}
	claim.At = time.Now().Add(-31 * time.Second).UTC()
	if _, err := putAppendRecord(ctx, v.Store, rp, claim, obj.ETag); err != nil {
		t.Fatal(err)
	}
	if out, err := s.WriteNote(ctx, in); err != nil || out.Replayed {
		t.Fatalf("after the claim ran out: %+v %v", out, err)
	}
	if got := readFile(t, dir, p); strings.Count(got, "once") != 1 {
		t.Errorf("%q", got)
	}
}

// TestAppendOnceTwins: calls with one key racing (a client retrying while
// its first call still runs) land the text once.
func TestAppendOnceTwins(t *testing.T) {
	s, _, dir := writeServer(t)
	ctx := context.Background()
	const p = "Twins.md"
	if _, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: "# Twins\n"}); err != nil {
		t.Fatal(err)
	}
	for round := range 10 {
		key := "twin-" + string(rune('a'+round))
		text := "line " + key
		var wg sync.WaitGroup
		var mu sync.Mutex
		landed := 0
		for range 6 {
			wg.Go(func() {
				for {
					out, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: text, Mode: "append", IdempotencyKey: key})
					if err == nil {
						if !out.Replayed {
							mu.Lock()
							landed++
							mu.Unlock()
						}
						return
					}
					if toError(err).Kind != KindTargetIsBeingEdited {
						t.Error(err)
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		if n := strings.Count(readFile(t, dir, p), text+"\n"); n != 1 && strings.Count(readFile(t, dir, p), text) != 1 {
			t.Errorf("round %d: the text is in the note %d times", round, n)
		}
		if landed != 1 {
			t.Errorf("round %d: %d calls say they appended, want 1", round, landed)
		}
	}
}
