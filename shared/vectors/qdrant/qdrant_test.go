package qdrant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sheaf-dev/sheaf/shared/vectors"
	"github.com/sheaf-dev/sheaf/shared/vectors/qdrant/qdrantfake"
	"github.com/sheaf-dev/sheaf/shared/vectors/vectorstest"
)

var ctx = context.Background()

var collections atomic.Int64

// open returns an index on a new collection of addr, closed at cleanup.
func open(t testing.TB, addr string) *Index {
	t.Helper()
	return openAt(t, Config{Addr: addr, Collection: fmt.Sprintf("sheaf-test-%d", collections.Add(1))})
}

func openAt(t testing.TB, c Config) *Index {
	t.Helper()
	ix, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestConformanceFake(t *testing.T) {
	addr := qdrantfake.Start(t)
	vectorstest.Run(t, func(t *testing.T) vectors.Index {
		ix, err := Open(ctx, Config{Addr: addr, Collection: fmt.Sprintf("conf-%d", collections.Add(1))})
		if err != nil {
			t.Fatal(err)
		}
		return ix
	})
}

// TestConformanceReal runs the suite against the Qdrant server at
// SHEAF_TEST_QDRANT_ADDR (host:port, or a qdrant:// or qdrants:// URL), each
// subtest in a new collection dropped afterwards. Unset, it is skipped, in
// CI too: no Qdrant can run there.
func TestConformanceReal(t *testing.T) {
	env := os.Getenv("SHEAF_TEST_QDRANT_ADDR")
	if env == "" {
		t.Skip("SHEAF_TEST_QDRANT_ADDR is not set (e.g. localhost:6334 or qdrants://host:6334?api_key=...)")
	}
	base := Config{Addr: env}
	if strings.Contains(env, "://") {
		var err error
		if base, err = ParseURL(env); err != nil {
			t.Fatal(err)
		}
	}
	run := make([]byte, 6)
	rand.Read(run)
	vectorstest.Run(t, func(t *testing.T) vectors.Index {
		c := base
		c.Collection = fmt.Sprintf("sheaf-test-%s-%d", hex.EncodeToString(run), collections.Add(1))
		ix, err := Open(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// Run closes ix first, so drop through a new client.
			d, err := Open(context.Background(), c)
			if err == nil {
				err = d.drop(context.Background())
				d.Close()
			}
			if err != nil {
				t.Errorf("dropping %s: %v", c.Collection, err)
			}
		})
		return ix
	})
}

func TestPointIDs(t *testing.T) {
	long := strings.Repeat("ü/", 512)
	paths := []string{
		"a.md", "A.md", "emoji 🌱/note.md", "nfd/cafe\u0301.md", "nfd/caf\u00e9.md", long, long + "x",
		"a\x00b.md", "a", "a\x00", "\xff\xfe.md", "", " ",
	}
	a := &Index{ns: uuid.NewSHA1(idSpace, []byte("sheaf-a"))}
	b := &Index{ns: uuid.NewSHA1(idSpace, []byte("sheaf-b"))}
	seen := map[string]string{}
	for _, p := range paths {
		for _, ord := range []int{0, 1, -1, 256, 1 << 40} {
			id := a.pointID(p, ord)
			if again := a.pointID(p, ord); again != id {
				t.Errorf("pointID(%q, %d) not deterministic: %s, %s", p, ord, id, again)
			}
			u, err := uuid.Parse(id)
			if err != nil || u.Version() != 5 {
				t.Errorf("pointID(%q, %d) = %q: not a UUIDv5 (%v)", p, ord, id, err)
			}
			what := fmt.Sprintf("%q#%d", p, ord)
			if prev, ok := seen[id]; ok {
				t.Errorf("%s and %s share id %s", prev, what, id)
			}
			seen[id] = what
			if b.pointID(p, ord) == id {
				t.Errorf("%s has the same id in two collections", what)
			}
		}
	}
}

func TestEncoding(t *testing.T) {
	for _, s := range []string{"", "plain", "日本語", "a\x00b", "x\uFDD0", "\xff", "a\xc3", "\uFDD0", "\uFDD0x", strings.Repeat("\xfe", 1000)} {
		e := enc(s)
		kept := isValidUTF8(s) && !strings.HasPrefix(s, "\uFDD0")
		if kept != (e == s) {
			t.Errorf("enc(%q) = %q: kept %v, want %v", s, e, e == s, kept)
		}
		if got := dec(e); got != s {
			t.Errorf("dec(enc(%q)) = %q", s, got)
		}
		if !isValidUTF8(e) {
			t.Errorf("enc(%q) = %q is not valid UTF-8", s, e)
		}
	}
	if dec("\uFDD0!!!") != "\uFDD0!!!" {
		t.Error("dec of a bad encoding changed it")
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "?") == s }

func TestDirs(t *testing.T) {
	cases := map[string][]string{
		"a.md":      nil,
		"a/b/c.md":  {"a", "a/b"},
		"/a/b.md":   {"/a"},
		"a//b.md":   {"a", "a/"},
		"a/":        {"a"},
		"日本/語/x.md": {"日本", "日本/語"},
	}
	for path, want := range cases {
		if got := dirs(path); !slices.Equal(got, want) {
			t.Errorf("dirs(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestFilterTranslation(t *testing.T) {
	kw, kws := qdrant.NewMatchKeyword, qdrant.NewMatchKeywords
	must := func(c ...*qdrant.Condition) *qdrant.Filter { return &qdrant.Filter{Must: c} }
	cases := []struct {
		name   string
		f      vectors.Filter
		filter *qdrant.Filter
		prefix string
		none   bool
	}{
		{"empty", vectors.Filter{}, nil, "", false},
		{"folder", vectors.Filter{Folder: "/a/b/"}, must(kw(fDirs, "a/b")), "", false},
		{"folder root", vectors.Filter{Folder: "//"}, nil, "", false},
		{"prefix at slash", vectors.Filter{PathPrefix: "a/b/"}, must(kw(fDirs, "a/b")), "", false},
		{"prefix mid name", vectors.Filter{PathPrefix: "a/b/ro"}, must(kw(fDirs, "a/b")), "a/b/ro", false},
		{"prefix no slash", vectors.Filter{PathPrefix: "gard"}, nil, "gard", false},
		{"prefix leading slash", vectors.Filter{PathPrefix: "/"}, nil, "/", false},
		{"prefix double slash", vectors.Filter{PathPrefix: "a//"}, must(kw(fDirs, "a/")), "", false},
		{"prefix invalid utf8", vectors.Filter{PathPrefix: "\xff/x"}, must(kw(fDirs, enc("\xff"))), "\xff/x", false},
		{"tags", vectors.Filter{Tags: []string{"#Work/Q3", "", "#", "summer"}}, must(kw(fTags, "work/q3"), kw(fTags, "summer")), "", false},
		{"folder prefix tag", vectors.Filter{Folder: "a", PathPrefix: "a/b/c", Tags: []string{"x"}},
			must(kw(fDirs, "a"), kw(fDirs, "a/b"), kw(fTags, "x")), "a/b/c", false},
		{"paths", vectors.Filter{Paths: []string{"b.md", "a.md", "b.md"}}, must(kws(fPath, "b.md", "a.md")), "", false},
		{"paths empty", vectors.Filter{Paths: []string{}}, nil, "", true},
		{"paths resolved against prefix and folder",
			vectors.Filter{Paths: []string{"w/a.md", "w/x/b.md", "z.md", "\xff"}, PathPrefix: "w/", Folder: "w/x", Tags: []string{"t"}},
			must(kws(fPath, "w/x/b.md"), kw(fTags, "t")), "", false},
		{"paths none left", vectors.Filter{Paths: []string{"a.md"}, PathPrefix: "b"}, nil, "", true},
		{"paths invalid utf8", vectors.Filter{Paths: []string{"\xff"}}, must(kws(fPath, enc("\xff"))), "", false},
	}
	for _, c := range cases {
		p := translate(c.f)
		if p.none != c.none || p.prefix != c.prefix {
			t.Errorf("%s: none=%v prefix=%q, want none=%v prefix=%q", c.name, p.none, p.prefix, c.none, c.prefix)
		}
		if !c.none && !proto.Equal(p.filter, c.filter) {
			t.Errorf("%s: filter\n%v\nwant\n%v", c.name, p.filter, c.filter)
		}
	}
}

// TestPrefixAgreesWithMatchPath checks that the translated filter plus the
// local prefix check admit exactly what Filter.MatchPath admits.
func TestPrefixAgreesWithMatchPath(t *testing.T) {
	paths := []string{"a.md", "a/b.md", "a//b.md", "a/b/c.md", "ab/c.md", "/a/b.md", "a/bc/d.md", "\xff/a.md", "b.md"}
	prefixes := []string{"", "a", "a/", "a/b", "a/b/", "a//", "/", "/a", "\xff", "\xff/", "ab/c"}
	for _, pre := range prefixes {
		for _, folder := range []string{"", "a", "a/b", "/a/"} {
			f := vectors.Filter{PathPrefix: pre, Folder: folder}
			p := translate(f)
			for _, path := range paths {
				got := p.admits(path) && admitsPayload(p.filter, path)
				if want := f.MatchPath(path); got != want {
					t.Errorf("prefix %q folder %q path %q: translated %v, MatchPath %v", pre, folder, path, got, want)
				}
			}
		}
	}
}

// admitsPayload evaluates the dirs and path keyword conditions of f on path.
func admitsPayload(f *qdrant.Filter, path string) bool {
	ds := dirs(path)
	for _, c := range f.GetMust() {
		fc := c.GetField()
		switch fc.Key {
		case fDirs:
			if !slices.ContainsFunc(ds, func(d string) bool { return enc(d) == fc.Match.GetKeyword() }) {
				return false
			}
		case fPath:
			if !slices.Contains(fc.Match.GetKeywords().GetStrings(), enc(path)) {
				return false
			}
		}
	}
	return true
}

func vec(dim int, xs ...float32) []float32 {
	v := make([]float32, dim)
	copy(v, xs)
	return v
}

func TestBatching(t *testing.T) {
	srv := qdrantfake.New()
	ix := open(t, srv.Start(t))
	const dim = 8
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: dim}); err != nil {
		t.Fatal(err)
	}
	var pts []vectors.Point
	for i := range 600 {
		path := fmt.Sprintf("n/%d.md", i%3) // three notes of 200 passages
		pts = append(pts, vectors.Point{Path: path, Ordinal: i / 3, Hash: fmt.Sprint(i), NoteHash: "h" + path, Vector: vec(dim, 1, float32(i))})
	}
	srv.ResetCalls()
	if err := ix.Upsert(ctx, pts...); err != nil {
		t.Fatal(err)
	}
	var upserts []int
	deletes := 0
	for _, c := range srv.Calls() {
		switch c.Method {
		case "Points/Upsert":
			upserts = append(upserts, c.N)
		case "Points/Delete":
			deletes++
			if c.N != 3 {
				t.Errorf("the delete named %d paths, want 3", c.N)
			}
		}
	}
	if !slices.Equal(upserts, []int{256, 256, 88}) || deletes != 1 {
		t.Errorf("upserts of %v points and %d deletes, want [256 256 88] and 1", upserts, deletes)
	}
	notes, err := ix.Notes(ctx)
	if err != nil || len(notes) != 3 || notes["n/1.md"] != "hn/1.md" {
		t.Errorf("Notes = %v, %v", notes, err)
	}
	h, _ := ix.Hashes(ctx, "n/2.md")
	if len(h) != 200 {
		t.Errorf("Hashes has %d passages, want 200", len(h))
	}
	if hits, _ := ix.Search(ctx, vec(dim, 1), 1000, vectors.Filter{}); len(hits) != 600 {
		t.Errorf("Search found %d of 600 points", len(hits))
	}

	// Deleting more paths than fit in one request.
	var paths []string
	for i := range 600 {
		paths = append(paths, fmt.Sprintf("gone/%d.md", i))
	}
	paths = append(paths, "n/0.md")
	srv.ResetCalls()
	if err := ix.Delete(ctx, paths...); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("Points/Delete"); n != 3 {
		t.Errorf("%d delete requests for 601 paths, want 3", n)
	}
	if notes, _ := ix.Notes(ctx); len(notes) != 2 {
		t.Errorf("Notes after Delete = %v", notes)
	}
}

func TestBatchBytes(t *testing.T) {
	srv := qdrantfake.New()
	ix := open(t, srv.Start(t))
	const dim = 8192 // 32 KB a vector: the 4 MB cap binds before 256 points
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: dim}); err != nil {
		t.Fatal(err)
	}
	var pts []vectors.Point
	for i := range 300 {
		pts = append(pts, vectors.Point{Path: "big.md", Ordinal: i, Hash: fmt.Sprint(i), Vector: vec(dim, 1, float32(i))})
	}
	srv.ResetCalls()
	if err := ix.Upsert(ctx, pts...); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range srv.Calls() {
		if c.Method == "Points/Upsert" {
			if c.N*dim*4 > batchBytes {
				t.Errorf("an upsert of %d points of %d dims exceeds %d bytes", c.N, dim, batchBytes)
			}
			total += c.N
		}
	}
	if total != 300 || srv.Count("Points/Upsert") < 3 {
		t.Errorf("%d points in %d upserts", total, srv.Count("Points/Upsert"))
	}
}

func TestSpacePersists(t *testing.T) {
	addr := qdrantfake.Start(t)
	c := Config{Addr: addr, Collection: "sheaf-persist"}
	sp := vectors.Space{Model: "text-embedding-3-small \xff", Dim: 5}
	a := openAt(t, c)
	if err := a.Reset(ctx, sp); err != nil {
		t.Fatal(err)
	}
	if err := a.Upsert(ctx, vectors.Point{Path: "x.md", Hash: "x", NoteHash: "nx", Vector: vec(5, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Search(ctx, vec(5, 1), 1, vectors.Filter{}); !errors.Is(err, errClosed) {
		t.Errorf("Search after Close: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	b := openAt(t, c)
	if got, err := b.Space(ctx); err != nil || got != sp {
		t.Errorf("Space from a new Index = %+v, %v; want %+v", got, err, sp)
	}
	if hits, err := b.Search(ctx, vec(5, 1), 1, vectors.Filter{}); err != nil || len(hits) != 1 || hits[0].Path != "x.md" {
		t.Errorf("Search from a new Index = %v, %v", hits, err)
	}
	other := openAt(t, Config{Addr: addr, Collection: "sheaf-other"})
	if got, err := other.Space(ctx); err != nil || got != (vectors.Space{}) {
		t.Errorf("Space of another collection = %+v, %v", got, err)
	}
}

func TestWrongDimension(t *testing.T) {
	addr := qdrantfake.Start(t)
	c := Config{Addr: addr, Collection: "sheaf-dim"}
	a, b := openAt(t, c), openAt(t, c)
	if err := a.Reset(ctx, vectors.Space{Model: "m", Dim: 4}); err != nil {
		t.Fatal(err)
	}
	if err := a.Upsert(ctx, vectors.Point{Path: "x.md", Hash: "x", Vector: vec(4, 1)}); err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]float32{nil, vec(3, 1), vec(5, 1)} {
		if _, err := a.Search(ctx, q, 3, vectors.Filter{}); !errors.Is(err, vectors.ErrDimension) {
			t.Errorf("Search with %d dims: %v, want ErrDimension", len(q), err)
		}
		if _, err := a.SearchNotes(ctx, q, 3, vectors.Filter{}); !errors.Is(err, vectors.ErrDimension) {
			t.Errorf("SearchNotes with %d dims: %v, want ErrDimension", len(q), err)
		}
	}
	// Another process resets to another dimension: a's cached space goes
	// stale, and a follows.
	if err := b.Reset(ctx, vectors.Space{Model: "m2", Dim: 3}); err != nil {
		t.Fatal(err)
	}
	if err := a.Upsert(ctx, vectors.Point{Path: "x.md", Hash: "x", Vector: vec(4, 1)}); !errors.Is(err, vectors.ErrDimension) {
		t.Errorf("Upsert with the old dimension: %v, want ErrDimension", err)
	}
	// a now caches dimension 3; the server moves to 5 and back to 3.
	if err := b.Reset(ctx, vectors.Space{Model: "m3", Dim: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SearchNotes(ctx, vec(3, 1), 3, vectors.Filter{}); !errors.Is(err, vectors.ErrDimension) {
		t.Errorf("SearchNotes with a stale cached dimension: %v, want ErrDimension", err)
	}
	if err := b.Reset(ctx, vectors.Space{Model: "m3", Dim: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Search(ctx, vec(4, 1), 3, vectors.Filter{}); !errors.Is(err, vectors.ErrDimension) {
		t.Errorf("Search with the old dimension: %v, want ErrDimension", err)
	}
	if err := a.Upsert(ctx, vectors.Point{Path: "y.md", Hash: "y", Vector: vec(3, 0, 1)}); err != nil {
		t.Errorf("Upsert in the new dimension: %v", err)
	}
	if hits, err := a.Search(ctx, vec(3, 0, 1), 3, vectors.Filter{}); err != nil || len(hits) != 1 {
		t.Errorf("Search in the new dimension = %v, %v", hits, err)
	}
	// Dropped elsewhere: nothing to find, and nothing to write into.
	if err := b.drop(ctx); err != nil {
		t.Fatal(err)
	}
	if hits, err := a.Search(ctx, vec(3, 1), 3, vectors.Filter{}); err != nil || len(hits) != 0 {
		t.Errorf("Search of a dropped collection = %v, %v", hits, err)
	}
	if err := a.Upsert(ctx, vectors.Point{Path: "y.md", Hash: "y", Vector: vec(3, 1)}); !errors.Is(err, vectors.ErrNoSpace) {
		t.Errorf("Upsert into a dropped collection: %v, want ErrNoSpace", err)
	}
}

// TestInterruptedUpsert: a write that fails midway leaves no note that
// Notes reports as current.
func TestInterruptedUpsert(t *testing.T) {
	srv := qdrantfake.New()
	ix := open(t, srv.Start(t))
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: 2}); err != nil {
		t.Fatal(err)
	}
	var pts []vectors.Point
	for i := range 300 {
		pts = append(pts, vectors.Point{Path: "long.md", Ordinal: i, Hash: fmt.Sprint(i), NoteHash: "v2", Vector: []float32{1, float32(i)}})
	}
	// The second batch fails, and so does the cleanup after it.
	srv.FailAfter("Points/Upsert", 1, codes.Unavailable)
	srv.FailAfter("Points/Delete", 1, codes.Unavailable)
	if err := ix.Upsert(ctx, pts...); status.Code(errors.Unwrap(err)) != codes.Unavailable {
		t.Fatalf("Upsert with a failing server: %v", err)
	}
	srv.FailAfter("Points/Upsert", -1, 0)
	srv.FailAfter("Points/Delete", -1, 0)
	if h, _ := ix.Hashes(ctx, "long.md"); len(h) != 256 {
		t.Fatalf("%d passages written, want the first batch of 256", len(h))
	}
	if notes, err := ix.Notes(ctx); err != nil || len(notes) != 0 {
		t.Errorf("Notes lists a half-written note: %v, %v", notes, err)
	}
	// With the cleanup working, the half-written note is removed.
	srv.FailAfter("Points/Upsert", 1, codes.Unavailable)
	if err := ix.Upsert(ctx, pts...); err == nil {
		t.Fatal("Upsert with a failing server succeeded")
	}
	srv.FailAfter("Points/Upsert", -1, 0)
	if h, _ := ix.Hashes(ctx, "long.md"); len(h) != 0 {
		t.Errorf("%d passages left after a failed Upsert", len(h))
	}
	if err := ix.Upsert(ctx, pts...); err != nil {
		t.Fatal(err)
	}
	if notes, _ := ix.Notes(ctx); notes["long.md"] != "v2" {
		t.Errorf("Notes after a good Upsert = %v", notes)
	}
}

// TestPrefixPaging: a PathPrefix that the server cannot apply fully still
// fills k from beyond the first page of better, excluded hits.
func TestPrefixPaging(t *testing.T) {
	srv := qdrantfake.New()
	ix := open(t, srv.Start(t))
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: 2}); err != nil {
		t.Fatal(err)
	}
	var pts []vectors.Point
	for i := range 2000 {
		pts = append(pts, vectors.Point{Path: fmt.Sprintf("a/x%04d.md", i), Hash: "h", Vector: []float32{1, float32(i) / 10000}})
	}
	pts = append(pts,
		vectors.Point{Path: "a/y.md", Hash: "y", Vector: []float32{0.5, 1}},
		vectors.Point{Path: "a/y.md", Ordinal: 1, Hash: "y1", Vector: []float32{0.2, 1}},
		vectors.Point{Path: "a/yz.md", Hash: "yz", Vector: []float32{0, 1}},
	)
	if err := ix.Upsert(ctx, pts...); err != nil {
		t.Fatal(err)
	}
	srv.ResetCalls()
	hits, err := ix.Search(ctx, []float32{1, 0}, 2, vectors.Filter{PathPrefix: "a/y"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keys(hits)); got != "[a/y.md#0 a/y.md#1]" {
		t.Errorf("Search = %s", got)
	}
	if n := srv.Count("Points/Query"); n < 2 {
		t.Errorf("%d queries: the paging was not exercised", n)
	}
	srv.ResetCalls()
	hits, err = ix.SearchNotes(ctx, []float32{1, 0}, 5, vectors.Filter{PathPrefix: "a/y"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keys(hits)); got != "[a/y.md#0 a/yz.md#0]" {
		t.Errorf("SearchNotes = %s", got)
	}
	if n := srv.Count("Points/QueryGroups"); n < 2 {
		t.Errorf("%d group queries: the growing limit was not exercised", n)
	}
	// k beyond one page, no prefix: pages until the points run out.
	srv.ResetCalls()
	if hits, _ := ix.Search(ctx, []float32{1, 0}, 1<<30, vectors.Filter{}); len(hits) != 2003 {
		t.Errorf("Search k=1<<30 found %d of 2003", len(hits))
	}
	if n := srv.Count("Points/Query"); n != 2 {
		t.Errorf("%d queries for 2003 hits, want 2 pages", n)
	}
}

func keys(hits []vectors.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s#%d", h.Path, h.Ordinal))
	}
	return out
}

func TestHostilePayload(t *testing.T) {
	ix := open(t, qdrantfake.Start(t))
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: 2}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("dir/", 250) + "n.md"
	paths := []string{"\xff/bad.md", "\uFDD0odd.md", long, "emoji 🌱/x.md", "a\x00b.md"}
	for _, p := range paths {
		err := ix.Upsert(ctx, vectors.Point{Path: p, Hash: "\xfe" + p, NoteHash: p + "\xff", Heading: "\xc3", Tags: []string{"\xff/t"}, Vector: []float32{1, 0}})
		if err != nil {
			t.Fatalf("Upsert %q: %v", p, err)
		}
	}
	notes, err := ix.Notes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if notes[p] != p+"\xff" {
			t.Errorf("Notes[%q] = %q", p, notes[p])
		}
		h, _ := ix.Hashes(ctx, p)
		if _, ok := h["\xfe"+p]; !ok || len(h) != 1 {
			t.Errorf("Hashes(%q) = %v", p, h)
		}
	}
	for _, f := range []vectors.Filter{{Folder: "\xff"}, {PathPrefix: "\xff/b"}, {Paths: []string{"\xff/bad.md"}}} {
		hits, err := ix.Search(ctx, []float32{1, 0}, 10, f)
		if err != nil || len(hits) != 1 || hits[0].Path != "\xff/bad.md" || hits[0].Heading != "\xc3" {
			t.Errorf("Search %+v = %v, %v", f, hits, err)
		}
	}
	if hits, _ := ix.SearchNotes(ctx, []float32{1, 0}, 10, vectors.Filter{Folder: strings.Repeat("dir/", 200)}); len(hits) != 1 || hits[0].Path != long {
		t.Errorf("deep Folder found %v", hits)
	}
	if hits, _ := ix.Search(ctx, []float32{1, 0}, 10, vectors.Filter{Tags: []string{"\xff"}}); len(hits) != len(paths) {
		t.Errorf("tag filter found %d of %d", len(hits), len(paths))
	}
}

func TestAPIKey(t *testing.T) {
	addr := qdrantfake.New().RequireAPIKey("s3cret key+/").Start(t)
	c, err := ParseURL("qdrant://" + addr + "?collection=sheaf-key&api_key=s3cret+key%2B%2F")
	if err != nil {
		t.Fatal(err)
	}
	if err := openAt(t, c).Reset(ctx, vectors.Space{Model: "m", Dim: 2}); err != nil {
		t.Errorf("Reset with the right key: %v", err)
	}
	c.APIKey = "wrong"
	_, err = openAt(t, c).Space(ctx)
	if status.Code(errors.Unwrap(err)) != codes.PermissionDenied {
		t.Errorf("Space with a wrong key: %v", err)
	}
}

// TestOpenIsLazy: Open needs no server; the first call reports it missing.
func TestOpenIsLazy(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	ix := openAt(t, Config{Addr: addr, Collection: "sheaf-lazy"})
	if _, err := ix.Space(ctx); status.Code(errors.Unwrap(err)) != codes.Unavailable {
		t.Errorf("Space with no server: %v", err)
	}
	for _, c := range []Config{{Addr: "", Collection: "c"}, {Addr: "h:0", Collection: "c"}, {Addr: "h:1"}, {Addr: "h:1", Collection: "a/b"}, {Addr: "h", Collection: "c"}} {
		if _, err := Open(ctx, c); err == nil {
			t.Errorf("Open(%+v) succeeded", c)
		}
	}
}

func TestResetChecks(t *testing.T) {
	srv := qdrantfake.New()
	ix := open(t, srv.Start(t))
	for _, dim := range []int{0, -1, maxDim + 1} {
		if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: dim}); err == nil {
			t.Errorf("Reset to dimension %d succeeded", dim)
		}
	}
	if len(srv.Calls()) != 0 {
		t.Errorf("a refused Reset called the server: %v", srv.Calls())
	}
	if err := ix.Reset(ctx, vectors.Space{Model: "m", Dim: 3}); err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, c := range srv.Calls() {
		methods = append(methods, c.Method)
	}
	want := []string{"Collections/Delete", "Collections/Create", "Points/CreateFieldIndex", "Points/CreateFieldIndex",
		"Points/CreateFieldIndex", "Points/CreateFieldIndex", "Collections/Get"}
	if !slices.Equal(methods, want) {
		t.Errorf("Reset calls %q, want %q", methods, want)
	}
}
