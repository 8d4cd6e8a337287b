package core

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkHistoryTools1000: note_history (the newest 50) and diff_note
// (the first version against the note now) on a 10 KB note with 1,000
// versions, through the core (folder history, no fsync).
func BenchmarkHistoryTools1000(b *testing.B) {
	s, v, _ := historyServerB(b)
	ctx := context.Background()
	p := "Inbox/Busy.md"
	para := strings.Repeat("A line of a busy note that many agents edit. ", 2) + "\n"
	body := strings.Repeat(para, 10<<10/len(para))
	out, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: body})
	if err != nil {
		b.Fatal(err)
	}
	hash := out.ContentHash
	for i := range 999 {
		lines := strings.Split(body, "\n")
		lines[i%len(lines)] = fmt.Sprintf("edit %d", i)
		body = strings.Join(lines, "\n")
		o, err := s.WriteNote(ctx, WriteNoteIn{Path: p, Content: body, Mode: "overwrite", ExpectedHash: hash})
		if err != nil {
			b.Fatal(err)
		}
		hash = o.ContentHash
	}
	vs := versions(b, v, p)
	if len(vs) != 1000 {
		b.Fatalf("%d versions", len(vs))
	}
	first := vs[len(vs)-1].ID
	b.Run("note_history", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.NoteHistory(ctx, NoteHistoryIn{Path: p}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("note_history_after_900", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.NoteHistory(ctx, NoteHistoryIn{Path: p, After: vs[900].ID}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("diff_note", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.DiffNote(ctx, DiffNoteIn{Path: p, From: first}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read_note_version", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.ReadNote(ctx, readNoteIn{Path: p, Version: vs[500].ID}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
