package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
func pagedVault(t testing.TB, data []byte, indexed bool) *Server {
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
	s, err := NewServer(&Vault{ID: "test", Store: st, Catalogs: LiveCatalog{C: cat}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readPages(t testing.TB, s *Server, budget int, length int64) ([]byte, int) {
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
		if n := resultSize(fitResult("read_note", out, budget)); n > budget {
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
