package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// bigWord is planted once, near the end of the big notes.
const bigWord = "zanzibarquill"

// bigNote writes a note of about size bytes that is hard to page: many
// lines of multi-byte text, characters JSON escapes (quotes, backslashes,
// angle brackets, tabs, control characters), CRLF and LF lines, and two
// links on every line.
func bigNote(size int) []byte {
	var b bytes.Buffer
	b.WriteString("---\ntitle: A very big note\ntags: [big, test]\n---\n# Big\n\n")
	for i := 0; b.Len() < size; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "Line %d: plain words about compost and [[Note %d]] and [[Other|alias %d]].\n", i, i%97, i)
		case 1:
			fmt.Fprintf(&b, "行 %d: 庭の記録 🌱🌻 «guillemets» — [[Café]] ünïcödé [[Note %d#Heading]]\r\n", i, i%89)
		case 2:
			fmt.Fprintf(&b, "Quotes \"%d\" and back\\slashes \\n <tag attr=\"x\">&amp; [[A]] [[B]]\t\ttabs\n", i)
		case 3:
			fmt.Fprintf(&b, "Control \x01\x02\x1f chars %d, U+2028 \u2028 and U+2029 \u2029 [[C]] [[D]]\n", i)
		default:
			fmt.Fprintf(&b, "## Section %d\n\n", i)
		}
	}
	b.WriteString("\nThe end holds the word " + bigWord + ".\n")
	return b.Bytes()
}

// readAllPages reads a note by pages through a client session, checking
// every page; it returns the concatenated pages.
func readAllPages(t *testing.T, s *mcp.ClientSession, path string, wantHash string) ([]byte, int) {
	t.Helper()
	var got bytes.Buffer
	offset, pages := int64(0), 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read_note", Arguments: map[string]any{"path": path, "offset": offset}})
		cancel()
		if err != nil {
			t.Fatalf("read_note at %d: %v", offset, err)
		}
		if res.IsError {
			t.Fatalf("read_note at %d: %+v", offset, res.Content)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var page struct {
			Content     string `json:"content"`
			Offset      int64  `json:"offset"`
			NextOffset  *int64 `json:"next_offset"`
			Size        int64  `json:"size"`
			Truncated   bool   `json:"truncated"`
			ContentHash string `json:"content_hash"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatal(err)
		}
		if page.Offset != offset || page.ContentHash != wantHash || !page.Truncated {
			t.Fatalf("page at %d: offset %d, hash %s (want %s), truncated %v", offset, page.Offset, page.ContentHash, wantHash, page.Truncated)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !json.Valid([]byte(text)) {
			t.Fatalf("page at %d: the text copy is not JSON", offset)
		}
		got.WriteString(page.Content)
		pages++
		if page.NextOffset == nil {
			return got.Bytes(), pages
		}
		if *page.NextOffset != offset+int64(len(page.Content)) {
			t.Fatalf("page at %d: next_offset %d, but the page has %d bytes", offset, *page.NextOffset, len(page.Content))
		}
		offset = *page.NextOffset
	}
}

// TestBigNotes reads an 8 MB and a 50 MB note through the official Go SDK
// client (stdio and HTTP) and the TypeScript SDK client: every frame stays
// within the response budget, the session survives, every page is exact
// and the pages concatenated are the file byte for byte; search,
// find_references and search_and_read still work on the big note.
func TestBigNotes(t *testing.T) {
	sizes := map[string]int{"big8.md": 8 << 20, "big50.md": 50 << 20}
	if testing.Short() {
		sizes = map[string]int{"big8.md": 8 << 20}
	}
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for name, size := range sizes {
		files[name] = bigNote(size)
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "Small.md"), []byte("# Small\n\nLinks to [[big8]].\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	photo := make([]byte, 3<<20+1) // not a multiple of 3
	for i := range photo {
		photo[i] = byte(i*7 + i/251)
	}
	if err := os.WriteFile(filepath.Join(dir, "photo.jpg"), photo, 0o644); err != nil {
		t.Fatal(err)
	}
	hashOf := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	budget := core.DefaultMaxResponseBytes

	check := func(t *testing.T, s *mcp.ClientSession, frames *toolstest.Frames) {
		c := toolstest.NewClient(t, s)
		c.WaitIndexed()
		for name, data := range files {
			start := time.Now()
			got, pages := readAllPages(t, s, name, hashOf(data))
			if !bytes.Equal(got, data) {
				t.Errorf("%s: %d pages give %d bytes that differ from the file's %d", name, pages, len(got), len(data))
			} else {
				t.Logf("%s: %d bytes in %d pages, exact, in %v", name, len(data), pages, time.Since(start).Round(time.Millisecond))
			}
		}
		var b64 strings.Builder
		for offset, pages := int64(0), 0; ; pages++ {
			var page struct {
				Base64     string `json:"base64"`
				Offset     int64  `json:"offset"`
				NextOffset *int64 `json:"next_offset"`
				Size       int64  `json:"size"`
			}
			c.MustOK("read_attachment", map[string]any{"path": "photo.jpg", "offset": offset}, &page)
			if page.Offset != offset || page.Size != int64(len(photo)) {
				t.Fatalf("attachment page at %d: %+v", offset, page.Offset)
			}
			b64.WriteString(page.Base64)
			if page.NextOffset == nil {
				t.Logf("photo.jpg: %d bytes in %d pages", len(photo), pages+1)
				break
			}
			offset = *page.NextOffset
		}
		if got, err := base64.StdEncoding.DecodeString(b64.String()); err != nil || !bytes.Equal(got, photo) {
			t.Errorf("read_attachment pages concatenated: %d bytes, %v; want the file's %d", len(got), err, len(photo))
		}
		// The session survives, and the big note is searchable.
		var sr struct {
			Items []struct {
				Path string `json:"path"`
			} `json:"items"`
			Unindexed int `json:"unindexed"`
		}
		c.MustOK("search", map[string]any{"query": bigWord}, &sr)
		if len(sr.Items) != 1 || sr.Items[0].Path != "big8.md" {
			t.Errorf("search %s: %+v, want big8.md", bigWord, sr.Items)
		}
		// The 50 MB note is over --max-note-bytes: not indexed, and said so.
		if _, huge := files["big50.md"]; huge && sr.Unindexed != 1 {
			t.Errorf("search: unindexed %d, want 1 (big50.md is too large to index)", sr.Unindexed)
		}
		var refs struct {
			Counts []struct {
				Lines int `json:"lines"`
			} `json:"counts"`
			Note string `json:"note"`
		}
		c.MustOK("find_references", map[string]any{"values": []string{bigWord}}, &refs)
		if len(refs.Counts) != 1 || refs.Counts[0].Lines != 1 {
			t.Errorf("find_references %s: %+v, want one line (in big8.md)", bigWord, refs.Counts)
		}
		if _, huge := files["big50.md"]; huge && !strings.Contains(refs.Note, "big50.md") {
			t.Errorf("find_references must say it did not search big50.md: note %q", refs.Note)
		}
		var sar struct {
			Notes []struct {
				Path      string `json:"path"`
				Truncated bool   `json:"truncated"`
			} `json:"notes"`
		}
		c.MustOK("search_and_read", map[string]any{"query": "where is the " + bigWord}, &sar)
		if len(sar.Notes) == 0 || sar.Notes[0].Path != "big8.md" || !sar.Notes[0].Truncated {
			t.Errorf("search_and_read: %+v, want big8.md, truncated", sar.Notes)
		}
		c.MustOK("read_outline", map[string]any{"path": "big8.md"}, nil)
		c.MustOK("list_outgoing_links", map[string]any{"path": "big8.md", "limit": 500}, nil)
		if size, n := frames.Max(); size > budget+1024 {
			t.Errorf("largest of %d frames: %d bytes, over the budget of %d", n, size, budget)
		} else {
			t.Logf("largest of %d frames: %d bytes (budget %d)", n, size, budget)
		}
	}
	t.Run("GoStdio", func(t *testing.T) {
		var frames toolstest.Frames
		check(t, meteredSession(t, dir, &frames, "--no-watch"), &frames)
	})
	t.Run("GoHTTP", func(t *testing.T) {
		var frames toolstest.Frames
		check(t, meteredHTTPSession(t, httpServer(t, dir, "--no-watch"), &frames), &frames)
	})
	t.Run("TypeScript", func(t *testing.T) {
		node := testbin.Require(t, "node", "", "install Node.js 20")
		script, _ := filepath.Abs("../../infra/smoke/pages.mjs")
		if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules")); err != nil {
			testbin.Missing(t, fmt.Errorf("infra/smoke/node_modules is missing: run make tools"))
		}
		for name := range files {
			cmd := exec.Command(node, script, name, filepath.Join(dir, name))
			cmd.Env = append(os.Environ(), "SHEAF_BIN="+bin, "SHEAF_VAULT="+dir)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("%s through the TypeScript SDK: %v\n%s", name, err, out)
				continue
			}
			t.Logf("%s through the TypeScript SDK: %s", name, bytes.TrimSpace(out))
		}
	})
}
