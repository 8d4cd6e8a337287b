package vault

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// binaryPlain is s in the binary format, uncompressed.
func binaryPlain(t testing.TB, s *Segment) []byte {
	t.Helper()
	b, err := s.appendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameAsJSON fails unless s reads back from the binary format exactly as
// from the JSON lines of version 3: the two formats hold the same catalog.
func sameAsJSON(t *testing.T, what string, s *Segment) {
	t.Helper()
	fromJSON, err := readSegment(&lines{b: []byte(jsonLines(t, s))})
	if err != nil {
		t.Fatalf("%s: JSON lines: %v", what, err)
	}
	fromBinary, err := decodeBinary(binaryPlain(t, s))
	if err != nil {
		t.Fatalf("%s: binary: %v", what, err)
	}
	if !reflect.DeepEqual(fromBinary.Notes, fromJSON.Notes) {
		for i := range fromJSON.Notes {
			if !reflect.DeepEqual(fromBinary.Notes[i], fromJSON.Notes[i]) {
				t.Fatalf("%s: note %d differs:\nbinary %#v\n  json %#v", what, i, fromBinary.Notes[i], fromJSON.Notes[i])
			}
		}
		t.Fatalf("%s: notes differ", what)
	}
	fromBinary.Notes, fromJSON.Notes = nil, nil
	if !reflect.DeepEqual(fromBinary, fromJSON) {
		t.Fatalf("%s: segments differ:\nbinary %#v\n  json %#v", what, fromBinary, fromJSON)
	}
}

// Every field of a note, with hostile strings, reads back from the binary
// format as from JSON.
func TestBinaryMatchesJSON(t *testing.T) {
	for _, s := range []string{
		"plain", "", "Café 🎉 日本語", "quote\" back\\slash", "ctl\x01\n\t\r", "bad utf8 \xff\xfe", "\xed\xa0\x80 surrogate",
		"<html>&amp;", "\u2028\u2029", "null", "a,b}]:", strings.Repeat("long ", 5000),
	} {
		var n Note
		fill(reflect.ValueOf(&n).Elem(), s, -42)
		n.Path = "p/" + s + ".md"
		n.Links[1].Kind = "future-kind"
		n.Links[0].Kind = KindMarkdown
		sameAsJSON(t, s, &Segment{Notes: []Note{n}})
	}
	seg := sampleCatalog().Segment(nil)
	seg.Removed = []string{"gone.md", "Cafe\u0301/x.md"}
	sameAsJSON(t, "sample catalog", seg)
	sameAsJSON(t, "synthetic catalog", syntheticCatalog(500).Segment(nil))
	sameAsJSON(t, "empty", &Segment{})
}

// The notes of a real vault, parsed, read back from the binary format as
// from JSON.
func TestBinaryMatchesJSONOnTheSampleVault(t *testing.T) {
	root := filepath.Join("..", "..", "infra", "sample-vault")
	c := NewCatalog()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		c.Upsert(Parse(filepath.ToSlash(rel), src).Note)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() < 20 {
		t.Fatalf("only %d notes in the sample vault", c.Len())
	}
	sameAsJSON(t, "sample vault", c.Segment(nil))
}

// A corrupt binary segment is an error, never a panic, and never a
// version mismatch: every truncation, and every single byte changed.
func TestBinaryCorrupt(t *testing.T) {
	good := binaryPlain(t, sampleCatalog().Segment(nil))
	for i := len(binMagic); i < len(good); i++ {
		if _, err := decodeBinary(good[:i]); err == nil {
			t.Fatalf("truncated at %d of %d: no error", i, len(good))
		} else if errors.Is(err, ErrSnapshotVersion) && i > len(binMagic)+1 {
			t.Fatalf("truncated at %d: reported as a version mismatch", i)
		}
	}
	for i := len(binMagic); i < len(good); i++ {
		for _, b := range []byte{0x00, 0x7f, 0x80, 0xff} {
			bad := bytes.Clone(good)
			bad[i] = b
			decodeBinary(bad) // must not panic
		}
	}
	if _, err := decodeBinary(append(bytes.Clone(good), 0)); err == nil {
		t.Error("trailing data accepted")
	}
	// Counts and totals beyond the data are refused before anything is
	// allocated for them.
	w := &binWriter{b: append([]byte{}, binMagic...)}
	w.uint(binVersion)
	w.time(sampleCatalog().IndexedAt())
	w.time(sampleCatalog().IndexedAt())
	w.uint(1 << 40)
	if _, err := decodeBinary(w.b); err == nil || !strings.Contains(err.Error(), "count exceeds") {
		t.Errorf("huge count: %v", err)
	}
	future := append(append([]byte{}, binMagic...), binVersion+1)
	if _, err := decodeBinary(future); !errors.Is(err, ErrSnapshotVersion) {
		t.Errorf("version %d: %v, want ErrSnapshotVersion", binVersion+1, err)
	}
	if _, err := ReadSegment(zst(string(future))); !errors.Is(err, ErrSnapshotVersion) {
		t.Errorf("version %d through ReadSegment: %v, want ErrSnapshotVersion", binVersion+1, err)
	}
}

// Appending to a decoded note's slices never changes another note.
func TestBinarySlicesAreCapped(t *testing.T) {
	seg, err := decodeBinary(binaryPlain(t, syntheticCatalog(3).Segment(nil)))
	if err != nil {
		t.Fatal(err)
	}
	before := seg.Notes[1].Links[0]
	_ = append(seg.Notes[0].Links, Link{Target: "clobber"})
	_ = append(seg.Notes[0].Tags, "clobber")
	if seg.Notes[1].Links[0] != before || seg.Notes[1].Aliases[0] == "clobber" {
		t.Fatal("appending to one note's slice wrote into the next note's")
	}
}

func FuzzDecodeBinary(f *testing.F) {
	f.Add(binaryPlain(f, sampleCatalog().Segment(nil)))
	f.Add(binaryPlain(f, syntheticCatalog(2).Segment(nil)))
	f.Fuzz(func(t *testing.T, data []byte) {
		plain := append(append([]byte{}, binMagic...), data...)
		seg, err := decodeBinary(plain)
		if err != nil {
			return
		}
		// What the reader accepts writes back and reads back the same.
		again, err := decodeBinary(binaryPlain(t, seg))
		if err != nil {
			t.Fatalf("accepted segment does not read back: %v", err)
		}
		if again.Len() != seg.Len() || !reflect.DeepEqual(again.Paths(), seg.Paths()) {
			t.Fatalf("round trip: %v, want %v", again.Paths(), seg.Paths())
		}
		c := CatalogOf(seg)
		for _, n := range c.Notes() {
			c.Outgoing(n.Path)
			c.Backlinks(n.Path)
		}
	})
}

func BenchmarkReadSegment10k(b *testing.B) {
	seg := syntheticCatalog(10000).Segment(nil)
	for _, format := range []string{"binary", "json-lines"} {
		b.Run(format, func(b *testing.B) {
			var data []byte
			if format == "binary" {
				var buf bytes.Buffer
				if err := seg.Write(&buf); err != nil {
					b.Fatal(err)
				}
				data = buf.Bytes()
			} else {
				data = zst(jsonLines(b, seg)).Bytes()
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ReadSegment(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data)), "compressed-bytes")
		})
	}
}
