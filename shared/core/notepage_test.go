package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// pagedNote is a note that is hard to page: multi-byte text, characters
// JSON escapes, CRLF lines and many links.
func pagedNote(size int) []byte {
	var b bytes.Buffer
	b.WriteString("---\ntitle: Paged\n---\n# Paged\n\n")
	for i := 0; b.Len() < size; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "Line %d: words and [[Note %d]] and [[Other|alias %d]].\n", i, i%97, i)
		case 1:
			fmt.Fprintf(&b, "行 %d: 庭の記録 🌱🌻 — [[Café]] [[Note %d#Heading]]\r\n", i, i%89)
		case 2:
			fmt.Fprintf(&b, "Quotes \"%d\" back\\slash <tag attr=\"x\">&amp; \x01\x1f \u2028 [[A]] [[B]]\t\n", i)
		default:
			fmt.Fprintf(&b, "## Section %d\n\n", i)
		}
	}
	return b.Bytes()
}

// pagedVault serves one big note, indexed (in the catalog) or not.
func pagedVault(t testing.TB, data []byte, indexed bool) *Core {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.md"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat := vault.NewCatalog()
	if indexed {
		obj, _ := st.Stat(context.Background(), "big.md")
		n := vault.Parse("big.md", data).Note
		sum := sha256.Sum256(data)
		n.Size, n.Modified, n.ETag, n.Hash = obj.Size, obj.Modified, obj.ETag, hex.EncodeToString(sum[:])
		cat.Upsert(n)
	}
	s, err := New(&Vault{ID: "test", Store: st, Catalogs: LiveCatalog{C: cat}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readPages(t testing.TB, s *Core, budget int, length int64) ([]byte, int) {
	t.Helper()
	ctx := withCall(context.Background(), &call{budget: budget})
	var got []byte
	var off int64
	pages := 0
	for {
		out, err := s.ReadNote(ctx, readNoteIn{Path: "big.md", Offset: off, Length: length})
		if err != nil {
			t.Fatalf("at %d: %v", off, err)
		}
		if _, n := render(out, budget); n > budget {
			t.Fatalf("page at %d: %d bytes, over the budget of %d", off, n, budget)
		}
		got = append(got, out.Content...)
		pages++
		if out.NextOffset == nil {
			return got, pages
		}
		off = *out.NextOffset
	}
}

func TestReadNotePages(t *testing.T) {
	data := pagedNote(3 << 20)
	for _, indexed := range []bool{true, false} {
		s := pagedVault(t, data, indexed)
		for _, c := range []struct {
			budget int
			length int64
		}{{256 << 10, 0}, {1 << 20, 0}, {1 << 20, 10007}} {
			got, pages := readPages(t, s, c.budget, c.length)
			if !bytes.Equal(got, data) {
				t.Errorf("indexed=%v budget=%d length=%d: %d pages give %d bytes that differ from the %d of the file", indexed, c.budget, c.length, pages, len(got), len(data))
			}
		}
	}
}

// TestReadNoteOffsetInsideACharacter: a page asked for inside a character
// starts after it, and says so.
func TestReadNoteOffsetInsideACharacter(t *testing.T) {
	data := []byte("# 庭\n\n庭の記録 " + strings.Repeat("x", 100))
	s := pagedVault(t, data, true)
	off := int64(strings.Index(string(data), "の") + 1)
	out, err := s.ReadNote(context.Background(), readNoteIn{Path: "big.md", Offset: off, Length: 20})
	if err != nil {
		t.Fatal(err)
	}
	if out.Offset != off+2 || !strings.HasPrefix(out.Content, "記録") || len(out.Warnings) == 0 {
		t.Errorf("page at %d: offset %d, content %q, warnings %v", off, out.Offset, out.Content, out.Warnings)
	}
	if _, err := s.ReadNote(context.Background(), readNoteIn{Path: "big.md", Offset: int64(len(data)) + 1}); err == nil {
		t.Error("an offset past the end must be an error")
	}
}

func BenchmarkReadNotePage(b *testing.B) {
	data := pagedNote(8 << 20)
	s := pagedVault(b, data, true)
	ctx := withCall(context.Background(), &call{budget: DefaultMaxResponseBytes})
	b.ResetTimer()
	for i := range b.N {
		off := int64(i%20) * 400 << 10
		if _, err := s.ReadNote(ctx, readNoteIn{Path: "big.md", Offset: off}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzPageEnd cuts any text into pages as read_note does: every page but
// a one-character one fits its budget, no page splits a character, and the
// pages concatenated are the text.
func TestInsideRune(t *testing.T) {
	data := []byte("a庭🌱\xa8b")
	for at, want := range map[int]int{0: 0, 1: 0, 2: 2, 3: 1, 4: 0, 5: 3, 6: 2, 7: 1, 8: 0, 9: 0} {
		if got := insideRune(data, at); got != want {
			t.Errorf("insideRune(%q, %d) = %d, want %d", data, at, got, want)
		}
	}
}

func FuzzPageEnd(f *testing.F) {
	f.Add([]byte("plain text\nand lines\n"), 40)
	f.Add([]byte("庭の記録 🌱 \"quotes\" <tags> \x01\u2028\r\n"), 13)
	f.Add(pagedNote(4096), 700)
	f.Fuzz(func(t *testing.T, data []byte, avail int) {
		if avail < 1 || avail > 1<<20 || len(data) > 1<<16 {
			t.Skip()
		}
		var got []byte
		for off := 0; off < len(data); {
			rest := data[off:]
			if skip := insideRune(data, off); skip > 0 {
				t.Fatalf("page at %d starts inside a character", off)
			}
			end := pageEnd(rest, avail, true)
			if end == 0 {
				_, size := utf8.DecodeRune(rest) // one character: progress
				end = size
			}
			page := rest[:end]
			cost := 0
			for i := 0; i < len(page); {
				r, size := utf8.DecodeRune(page[i:])
				cost += jsonCost(r, size)
				i += size
			}
			if cost > avail && utf8.RuneCount(page) > 1 {
				t.Fatalf("page at %d costs %d, over %d", off, cost, avail)
			}
			got = append(got, page...)
			off += end
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("pages give %q, want %q", got, data)
		}
	})
}
