package vault

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleCatalog() *Catalog {
	mod := time.Date(2026, 5, 28, 9, 12, 34, 0, time.UTC)
	n := note("Inbox/Café.md", wl("Other", 3), md("../x.md#Sec", 4))
	n.ID = "0f1e2d3c-aaaa-bbbb-cccc-000000000001"
	n.Aliases = []string{"Coffee"}
	n.Tags = []string{"travel/fr", "food"}
	n.Entities = []string{"Paris"}
	n.Frontmatter = map[string]any{"priority": 1.0, "repos": []any{"org/a"}, "nested": map[string]any{"k": "v"}}
	n.Headings = []Heading{{Level: 1, Title: "Café", ID: "café", Line: 1}}
	n.Blocks = []Block{{ID: "b1", Line: 5}}
	n.Directives = []Directive{{Line: 7, Title: "Summarize", Body: "x\ny", Done: false}}
	n.Mentions = []Mention{{Handle: "ada", Line: 8, Context: "ask @ada <now>"}}
	n.Size, n.Modified, n.Hash, n.ETag = 412, mod, "abc", `"etag"`
	c := catalogOf(n, note("Other.md", wl("Café", 1)))
	c.UpsertAttachment(Attachment{Path: "assets/pic.png", Size: 9, Modified: mod})
	c.SetIndexedAt(mod)
	c.SetProblem("binary.md", "binary content in a .md file, not indexed")
	c.SetProblem("Inbox/Café.md", "frontmatter: yaml: line 2: did not find expected key")
	return c
}

func TestSnapshotRoundTrip(t *testing.T) {
	c := sampleCatalog()
	var buf bytes.Buffer
	if err := c.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Notes(), c.Notes()) {
		t.Errorf("notes differ:\n%+v\n%+v", got.Notes(), c.Notes())
	}
	if !reflect.DeepEqual(got.Attachments(), c.Attachments()) {
		t.Errorf("attachments differ: %+v", got.Attachments())
	}
	if !got.IndexedAt().Equal(c.IndexedAt()) {
		t.Errorf("IndexedAt = %v", got.IndexedAt())
	}
	if !reflect.DeepEqual(got.Problems(), c.Problems()) || len(got.Problems()) != 2 {
		t.Errorf("problems = %v, want %v", got.Problems(), c.Problems())
	}
	// Indexes are rebuilt.
	if bs := got.Backlinks("Inbox/Café.md"); len(bs) != 1 || bs[0].Source != "Other.md" {
		t.Errorf("Backlinks after load = %+v", bs)
	}
	if ns := got.List(ListFilter{MetadataMatch: map[string]any{"priority": 1}, Tags: []string{"travel"}}); len(ns) != 1 {
		t.Errorf("List after load = %v", paths(ns))
	}
	if ns := got.ByID("0F1E2D"); len(ns) != 1 {
		t.Errorf("ByID after load = %v", paths(ns))
	}
	if r := got.ResolveTarget("Other.md", "coffee"); r.Path != "Inbox/Café.md" {
		t.Errorf("alias after load = %+v", r)
	}
}

func TestSnapshotEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := NewCatalog().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	c, err := ReadSnapshot(&buf)
	if err != nil || c.Len() != 0 {
		t.Fatalf("ReadSnapshot = %v, %v", c, err)
	}
}

// Problems are written sorted, NFC, and keyed like notes.
func TestSnapshotProblems(t *testing.T) {
	c := NewCatalog()
	c.SetProblem("z.md", "too large: over 16 bytes, not indexed")
	c.SetProblem("Cafe\u0301/a.md", "invalid UTF-8: indexed with replacement characters \xff")
	c.SetProblem("a.md", "unreadable: boom")
	var buf bytes.Buffer
	if err := c.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	seg, err := ReadSegment(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(seg.Problems) != 3 {
		t.Fatalf("problems written: %+v", seg.Problems)
	}
	for i, want := range []string{"Café/a.md", "a.md", "z.md"} {
		if got := seg.Problems[i].Path; got != want {
			t.Errorf("problem %d is of %q, want %q", i, got, want)
		}
	}
	got, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Café/a.md": "invalid UTF-8: indexed with replacement characters \ufffd", // as JSON, which cannot carry the raw byte, wrote it
		"a.md":      "unreadable: boom",
		"z.md":      "too large: over 16 bytes, not indexed",
	}
	if !reflect.DeepEqual(got.Problems(), want) {
		t.Errorf("problems = %q, want %q", got.Problems(), want)
	}
}

// A version 1 snapshot (no problems section) still loads, with no problems.
func TestSnapshotVersion1(t *testing.T) {
	c := sampleCatalog()
	for p := range c.Problems() {
		c.SetProblem(p, "")
	}
	plain := jsonLines(t, c.Segment(nil))
	v1 := strings.Replace(plain, `"version":3,`, `"version":1,`, 1)
	v1 = strings.Replace(v1, `,"problems":0}`, `}`, 1)
	if v1 == plain {
		t.Fatal("could not rewrite the header as version 1")
	}
	got, err := ReadSnapshot(gz(v1))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Notes(), c.Notes()) || len(got.Attachments()) != 1 {
		t.Errorf("version 1 snapshot loaded %d notes, %d attachments", got.Len(), len(got.Attachments()))
	}
	if p := got.Problems(); p == nil || len(p) != 0 {
		t.Errorf("problems = %#v, want empty", p)
	}
	got.SetProblem("x.md", "why") // the loaded catalog takes problems
	if len(got.Problems()) != 1 {
		t.Error("SetProblem after loading a version 1 snapshot did not stick")
	}
}

func gz(s string) *bytes.Buffer {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	zw.Write([]byte(s))
	zw.Close()
	return &buf
}

// jsonLines writes s as Sheaf wrote segments before the binary format:
// JSON lines, version 3, uncompressed.
func jsonLines(t testing.TB, s *Segment) string {
	t.Helper()
	h := snapshotHeader{
		Format: SnapshotFormat, Version: lastJSONVersion, IndexedAt: s.IndexedAt, Written: time.Now().UTC(),
		Notes: len(s.Notes), Attachments: len(s.Attachments), Problems: len(s.Problems), Removed: len(s.Removed),
	}
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	values := []any{h}
	for i := range s.Notes {
		values = append(values, &s.Notes[i])
	}
	for _, a := range s.Attachments {
		values = append(values, a)
	}
	for _, p := range s.Problems {
		values = append(values, p)
	}
	for _, p := range s.Removed {
		values = append(values, removedLine{Path: p})
	}
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	return plain.String()
}

// zst compresses plain as segments are compressed.
func zst(plain string) *bytes.Buffer {
	ze, _ := zstdCodec()
	return bytes.NewBuffer(ze.EncodeAll([]byte(plain), nil))
}

func TestSnapshotVersionMismatch(t *testing.T) {
	for _, v := range []int{0, lastJSONVersion + 1, SnapshotVersion + 1} {
		_, err := ReadSnapshot(gz(fmt.Sprintf(`{"format":"sheaf-catalog","version":%d,"notes":0,"attachments":0}`, v) + "\n"))
		if !errors.Is(err, ErrSnapshotVersion) {
			t.Fatalf("version %d: err = %v, want ErrSnapshotVersion", v, err)
		}
	}
	// A future version's body need not parse: the header decides first.
	_, err := ReadSnapshot(gz(fmt.Sprintf(`{"format":"sheaf-catalog","version":%d,"notes":1}`, SnapshotVersion+1) + "\n<binary>\n"))
	if !errors.Is(err, ErrSnapshotVersion) {
		t.Fatalf("err = %v, want ErrSnapshotVersion", err)
	}
}

// Corrupt snapshots of the JSON-lines versions are refused.
func TestSnapshotCorrupt(t *testing.T) {
	text := jsonLines(t, sampleCatalog().Segment(nil))
	good := zst(text)
	lines := strings.SplitAfter(text, "\n")

	for name, in := range map[string]*bytes.Buffer{
		"not gzip":          bytes.NewBufferString("hello"),
		"truncated zstd":    bytes.NewBuffer(good.Bytes()[:good.Len()/2]),
		"truncated gzip":    bytes.NewBuffer(gz(text).Bytes()[:gz(text).Len()/2]),
		"not a snapshot":    gz(`{"format":"other","version":1}` + "\n"),
		"no header":         gz(""),
		"missing notes":     gz(lines[0]),
		"missing newline":   gz(strings.TrimSuffix(text, "\n")),
		"corrupt note":      gz(lines[0] + "{\"path\": 5}\n" + strings.Join(lines[2:], "")),
		"note without path": gz(lines[0] + "{}\n" + strings.Join(lines[2:], "")),
		"trailing data":     gz(text + "{}\n"),
		"negative counts":   gz(`{"format":"sheaf-catalog","version":1,"notes":-1}` + "\n"),
		"huge count":        gz(`{"format":"sheaf-catalog","version":1,"notes":1000000000000}` + "\n"),
		"negative problems": gz(`{"format":"sheaf-catalog","version":2,"problems":-1}` + "\n"),
		"huge problems":     gz(`{"format":"sheaf-catalog","version":2,"problems":1000000000000}` + "\n"),
		"v1 with problems":  gz(`{"format":"sheaf-catalog","version":1,"problems":1}` + "\n" + `{"path":"a.md","reason":"x"}` + "\n"),
		"missing problem":   gz(strings.Join(lines[:len(lines)-2], "")),
		"problem, no path":  gz(strings.Join(lines[:len(lines)-2], "") + `{"reason":"x"}` + "\n"),
		"problem, no why":   gz(strings.Join(lines[:len(lines)-2], "") + `{"path":"a.md"}` + "\n"),
		"corrupt problem":   gz(strings.Join(lines[:len(lines)-2], "") + `{"path":5}` + "\n"),
	} {
		if _, err := ReadSnapshot(in); err == nil {
			t.Errorf("%s: no error", name)
		} else if errors.Is(err, ErrSnapshotVersion) {
			t.Errorf("%s: reported as a version mismatch", name)
		}
	}
}

// A snapshot written as JSON lines (version 3) reads back as the binary
// one does.
func TestSnapshotJSONLinesStillRead(t *testing.T) {
	for _, c := range []*Catalog{sampleCatalog(), syntheticCatalog(300)} {
		seg := c.Segment(nil)
		fromJSON, err := ReadSegment(zst(jsonLines(t, seg)))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := seg.Write(&buf); err != nil {
			t.Fatal(err)
		}
		fromBinary, err := ReadSegment(&buf)
		if err != nil {
			t.Fatal(err)
		}
		sameCatalog(t, "json vs binary", CatalogOf(fromJSON), CatalogOf(fromBinary))
	}
}

// syntheticCatalog builds n notes with ~10 links, 3 tags and 5 headings each.
func syntheticCatalog(n int) *Catalog {
	c := NewCatalog()
	mod := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		p := fmt.Sprintf("folder %d/Note number %d.md", i%50, i)
		nt := note(p)
		nt.ID = fmt.Sprintf("%08x-0000-4000-8000-%012x", i*2654435761%(1<<32), i)
		nt.Title = fmt.Sprintf("A fairly typical note title %d", i)
		nt.Tags = []string{fmt.Sprintf("area/%d", i%7), fmt.Sprintf("topic-%d", i%31), "status/active"}
		nt.Aliases = []string{fmt.Sprintf("alias %d", i)}
		nt.Frontmatter = map[string]any{"title": nt.Title, "tags": nt.Tags, "created": "2026-01-01", "priority": i % 3}
		for h := range 5 {
			title := fmt.Sprintf("Section heading %d", h)
			nt.Headings = append(nt.Headings, Heading{Level: 2, Title: title, ID: fmt.Sprintf("section-heading-%d", h), Line: 3 + h*10})
		}
		for l := range 10 {
			nt.Links = append(nt.Links, wl(fmt.Sprintf("Note number %d", (i*7+l*13)%n), 4+l*5))
		}
		nt.Size, nt.Modified, nt.Hash = 4096, mod.Add(time.Duration(i)*time.Minute), fmt.Sprintf("%064x", i)
		c.Upsert(nt)
	}
	return c
}

func TestSnapshotSynthetic(t *testing.T) {
	c := syntheticCatalog(500)
	var buf bytes.Buffer
	if err := c.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// JSON turns frontmatter ints into float64, so compare everything else.
	a, b := c.Notes(), got.Notes()
	for i := range a {
		a[i].Frontmatter, b[i].Frontmatter = nil, nil
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("notes differ after round trip")
	}
	if x, y := c.Backlinks("folder 0/Note number 0.md"), got.Backlinks("folder 0/Note number 0.md"); !reflect.DeepEqual(x, y) || len(x) == 0 {
		t.Errorf("backlinks differ: %d vs %d", len(x), len(y))
	}
	if x, y := c.List(ListFilter{MetadataMatch: map[string]any{"priority": 2}}), got.List(ListFilter{MetadataMatch: map[string]any{"priority": 2}}); len(x) != len(y) || len(x) == 0 {
		t.Errorf("metadata differs: %d vs %d", len(x), len(y))
	}
}

func BenchmarkReadSnapshot10k(b *testing.B) {
	var buf bytes.Buffer
	if err := syntheticCatalog(10000).WriteSnapshot(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadSnapshot(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "snapshot-bytes")
}

func BenchmarkWriteSnapshot10k(b *testing.B) {
	c := syntheticCatalog(10000)
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		if err := c.WriteSnapshot(&buf); err != nil {
			b.Fatal(err)
		}
	}
}

// fill sets every field reachable from v to a non-zero value built from s
// and i, so a field added to Note later cannot be silently lost by the
// snapshot decoder.
func fill(v reflect.Value, s string, i int64) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		v.SetInt(i)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), s, i)
		fill(v.Index(1), s+"2", i+1)
	case reflect.Map:
		v.Set(reflect.ValueOf(map[string]any{s: []any{s, float64(i), true, nil, map[string]any{"k": 1.5}}}))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 5, 28, 9, 12, 34, 123456789, time.FixedZone("", 3600))))
			return
		}
		for f := range v.NumField() {
			fill(v.Field(f), s, i)
		}
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

func checkDecode(t *testing.T, line []byte) {
	t.Helper()
	var want, got Note
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatalf("reference decode: %v", err)
	}
	if err := decodeNote(line, &got); err != nil {
		t.Fatalf("decodeNote(%s): %v", line, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeNote(%s)\n got %+v\nwant %+v", line, got, want)
	}
}

func TestDecodeNoteMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"plain", "", "Café 🎉 日本語", "quote\" back\\slash", "ctl\x01\n\t\r", "bad utf8 \xff\xfe",
		"<html>&amp;", "\u2028\u2029", "null", "a,b}]:",
	} {
		var n Note
		fill(reflect.ValueOf(&n).Elem(), s, -42)
		line, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		checkDecode(t, line)
	}
	// Whitespace, nulls, unknown fields and an empty object.
	checkDecode(t, []byte(` { "path" : "a.md" , "future" : {"x":[1,"]",{"y":null}]}, "tags": null,
		"links": [ {"kind":"wikilink","target":"b","line": 3, "new": -1.5e3} ], "modified": null, "size": 12 } `))
	checkDecode(t, []byte(`{}`))
	// Frontmatter of every JSON shape, decoded as encoding/json does.
	checkDecode(t, []byte(`{"path":"f.md","frontmatter":{"s":"Café \u00e9 \"q\"","n":0,"neg":-1.5e3,"big":1e308,"tiny":5e-324,
		"int":12345678901234567890,"t":true,"f":false,"nil":null,"empty":[],"obj":{},"deep":[[{"k":[1,"x",null]}]],"ключ 🎉":"v","dup":1,"dup":2}}`))
	checkDecode(t, []byte(`{"frontmatter":null}`))
	checkDecode(t, []byte(`{"frontmatter":{}}`))
	for _, bad := range []string{
		`{"frontmatter":[]}`, `{"frontmatter":"x"}`, `{"frontmatter":{"a":01}}`, `{"frontmatter":{"a":1.}}`, `{"frontmatter":{"a":.5}}`,
		`{"frontmatter":{"a":+1}}`, `{"frontmatter":{"a":1e}}`, `{"frontmatter":{"a":1e999}}`, `{"frontmatter":{"a":nul}}`, `{"frontmatter":{"a":-}}`,
		``, `[]`, `{"path":1}`, `{"path":"a"`, `{"size":1.5}`, `{"size":"1"}`, `{"links":[{"line":"x"}]}`,
		`{"modified":"yesterday"}`, `{"frontmatter":{"a":}}`, `{"path":"a"} x`, `{"path" "a"}`, `{"links":[{"embed":tru}]}`,
		`{"path":"a\x01"}`, `{"size":99999999999999999999}`, `{"future":[1,2}`,
	} {
		var n Note
		if err := decodeNote([]byte(bad), &n); err == nil {
			t.Errorf("decodeNote(%q) accepted", bad)
		}
	}
}

func FuzzDecodeNote(f *testing.F) {
	var n Note
	fill(reflect.ValueOf(&n).Elem(), "seed", 1)
	seed, _ := json.Marshal(n)
	f.Add(seed)
	f.Add([]byte(`{"links":[{"kind":"wikilink"}],"frontmatter":{"a":[1,{"b":"]"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Note
		if decodeNote(data, &got) != nil {
			return
		}
		// Whatever decodeNote accepts must re-encode and decode the same way.
		line, err := json.Marshal(got)
		if err != nil {
			return // e.g. a frontmatter number encoding/json cannot write
		}
		checkDecode(t, line)
	})
}

func FuzzReadSnapshot(f *testing.F) {
	var buf bytes.Buffer
	sampleCatalog().WriteSnapshot(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(jsonLines(f, sampleCatalog().Segment(nil))))
	f.Fuzz(func(t *testing.T, data []byte) {
		ReadSnapshot(bytes.NewReader(data)) // gzip framing
		// The decompressed stream, which raw bytes rarely reach.
		seg, err := readSegment(&lines{b: data})
		if err != nil {
			return
		}
		c := CatalogOf(seg)
		var out bytes.Buffer
		if err := c.WriteSnapshot(&out); err != nil {
			t.Fatalf("accepted snapshot does not write back: %v", err)
		}
		again, err := ReadSnapshot(&out)
		if err != nil {
			t.Fatalf("accepted snapshot does not read back: %v", err)
		}
		if again.Len() != c.Len() || len(again.Problems()) != len(c.Problems()) {
			t.Fatalf("round trip: %d notes, %d problems; want %d, %d", again.Len(), len(again.Problems()), c.Len(), len(c.Problems()))
		}
		for _, n := range c.Notes() {
			c.Outgoing(n.Path)
			c.Backlinks(n.Path)
			c.Graph(n.Path, 2)
		}
	})
}
