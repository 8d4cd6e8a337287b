package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/indexer/indexertest"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/vault"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// refVault serves the folder dir, its catalog built the way the indexer
// builds it: binary notes skipped, every other note parsed and stamped.
func refVault(t testing.TB, dir string) (*Core, *Vault) {
	t.Helper()
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	cat := vault.NewCatalog()
	err = st.List(ctx, "", func(o store.Object) error {
		if !vault.IsNotePath(o.Path) {
			cat.UpsertAttachment(vault.Attachment{Path: o.Path, Size: o.Size, Modified: o.Modified})
			return nil
		}
		data, obj, err := st.Get(ctx, o.Path, 0)
		if err != nil {
			return err
		}
		if errors.Is(vault.Check(data), vault.ErrBinary) {
			return nil
		}
		n := vault.Parse(obj.Path, data).Note
		sum := sha256.Sum256(data)
		n.Size, n.Modified, n.Hash, n.ETag = obj.Size, obj.Modified, hex.EncodeToString(sum[:]), obj.ETag
		cat.Upsert(n)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v := &Vault{ID: "test", Store: st, Catalogs: LiveCatalog{C: cat}}
	s, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func refKind(err error) Kind {
	if err == nil {
		return ""
	}
	return toError(err).Kind
}

// allReferences pages through find_references and returns every reference
// and the first page's counts.
func allReferences(t testing.TB, s *Core, in findReferencesIn) ([]RefCount, []Reference) {
	t.Helper()
	in.Limit = 70
	var refs []Reference
	var counts []RefCount
	for {
		out, err := s.FindReferences(context.Background(), in)
		if err != nil {
			t.Fatalf("find_references %+v: %v", in, err)
		}
		if counts == nil {
			counts = out.Counts
		}
		refs = append(refs, out.References...)
		if !out.HasMore {
			return counts, refs
		}
		if len(out.References) == 0 {
			t.Fatalf("hasMore with an empty page at offset %d", in.Offset)
		}
		in.Offset += len(out.References)
	}
}

// noteFiles lists the searchable notes under dir: *.md outside hidden
// folders, binary ones skipped (as the indexer skips them).
func noteFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if errors.Is(vault.Check(data), vault.ErrBinary) {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// grepCounts runs `grep -ciF value` over files (relative to dir) and
// returns the nonzero counts by NFC path.
func grepCounts(t testing.TB, dir, value string, files []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for len(files) > 0 {
		chunk := files[:min(len(files), 500)]
		files = files[len(chunk):]
		cmd := exec.Command("grep", append([]string{"-ciFZ", "--", value}, chunk...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		res, err := cmd.Output()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			t.Fatalf("grep %q: %v", value, err)
		}
		for line := range strings.SplitSeq(strings.TrimSuffix(string(res), "\n"), "\n") {
			name, count, ok := strings.Cut(line, "\x00")
			if !ok {
				continue
			}
			if n, _ := strconv.Atoi(count); n > 0 {
				out[norm.NFC.String(name)] = n
			}
		}
	}
	return out
}

// requireGrep skips the test without GNU grep, the reference its counts
// are checked against; under CI, where it is installed, it fails instead.
func requireGrep(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("grep"); err != nil {
		testbin.Missing(t, errors.New("grep is not installed (apt-get install grep)"))
		return
	}
	if out, err := exec.Command("grep", "--version").Output(); err != nil || !bytes.Contains(out, []byte("GNU grep")) {
		testbin.Missing(t, errors.New("the grep on PATH is not GNU grep (apt-get install grep; brew install grep on macOS)"))
	}
}

// compareWithGrep checks find_references against grep for each value: the
// total count, and the lines per file of every reference listed.
func compareWithGrep(t *testing.T, dir string, values []string) {
	s, _ := refVault(t, dir)
	files := noteFiles(t, dir)
	for _, val := range values {
		want := grepCounts(t, dir, val, files)
		total := 0
		for _, n := range want {
			total += n
		}
		counts, refs := allReferences(t, s, findReferencesIn{Values: []string{val}})
		c := counts[0]
		if total > refLineCap {
			if !c.Capped || c.Lines != refLineCap || len(refs) != refLineCap {
				t.Errorf("%q: grep counts %d lines, got %+v with %d references, want capped at %d", val, total, c, len(refs), refLineCap)
			}
			t.Logf("%q: grep counts %d lines, capped at %d as it should be", val, total, refLineCap)
			continue
		}
		if c.Lines != total || c.Capped || len(refs) != total {
			t.Errorf("%q: %+v and %d references, grep counts %d lines", val, c, len(refs), total)
		}
		got := map[string]int{}
		for _, r := range refs {
			got[r.Path]++
		}
		for p, n := range want {
			if got[p] != n {
				t.Errorf("%q in %s: %d lines, grep counts %d", val, p, got[p], n)
			}
		}
		for p, n := range got {
			if want[p] == 0 {
				t.Errorf("%q in %s: %d lines, grep finds none", val, p, n)
			}
		}
		t.Logf("%q: %d lines in %d files, same as grep", val, total, len(want))
	}
}

// TestFindReferencesMatchesGrep compares line counts with `grep -ciF`.
// binary.md is left out of both sides: binary notes are not searched.
func TestFindReferencesMatchesGrep(t *testing.T) {
	requireGrep(t)
	t.Run("sample", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS("../../infra/sample-vault")); err != nil {
			t.Fatal(err)
		}
		compareWithGrep(t, dir, []string{
			"compost", "COMPOST", "café", "CAFÉ", "résumé", "HÜGELKULTUR", "ü",
			"ПОЖАЛУЙСТА", "инструменты", "日本語", "🌱", "fenced fake link",
			"a.b*", "[[", "(", "1-4", "caf", "\r", "rota", "e", " ",
		})
	})
	t.Run("generated", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: 1000, Seed: 7}); err != nil {
			t.Fatal(err)
		}
		compareWithGrep(t, dir, []string{
			"compost", "КОМПОСТ", "грядка", "RÉCOLTE", "GRÖßE", "größe", "ΚΉΠΟΣ", "σπόροι",
			"BAHÇE", "vườn", "```", "a.b*", "[[", "#", "the", "堆肥", "🌱",
		})
	})
	t.Run("generated 10k", func(t *testing.T) {
		if testing.Short() {
			t.Skip("generates a 10,000-note vault")
		}
		dir := t.TempDir()
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			if d, err := os.MkdirTemp("/dev/shm", "sheaf-refs-"); err == nil {
				t.Cleanup(func() { os.RemoveAll(d) })
				dir = d
			}
		}
		if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: 10000, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		compareWithGrep(t, dir, []string{"КОМПОСТ", "RÉCOLTE", "堆肥", "a.b*", "zzqx", "compost"})
	})
	t.Run("edge cases", func(t *testing.T) {
		dir := indexertest.Folder(t, map[string]string{
			"crlf.md":    "Alpha\r\nalpha beta\r\n\r\nALPHA",
			"fold.md":    "ı dotless\nİ dotted\nſ long s\nK kelvin\nς final\nǅ title\nµ micro\nß sharp\nẞ capital\n",
			"nfd.md":     "Cafe\u0301 decomposed\nCafé composed\n",
			"invalid.md": "caf\xe9 cr\xe8me\n\xe6\x97 truncated\n\xff\xfe\n",
			"empty.md":   "",
			"nolf.md":    "no newline at the end: alpha",
			"many.md":    strings.Repeat("alpha alpha\n", 30),
		})
		compareWithGrep(t, dir, []string{
			"alpha", "alpha\r", "\r", "i", "I", "ı", "İ", "s", "S", "ſ", "k", "K", "σ", "Σ", "ς",
			"ǆ", "Ǆ", "ǅ", "μ", "Μ", "µ", "ß", "ẞ", "ss", "café", "CAFÉ", "e\u0301", "caf", "crème",
			"\ufffd", "end: ALPHA",
		})
	})
}

func TestFindReferences(t *testing.T) {
	long := strings.Repeat("filler words here ", 30) + "the SECRET value " + strings.Repeat("more filler ", 30)
	dir := indexertest.Folder(t, map[string]string{
		"a.md":               "# A\n\nThe secret is out.\n~~the secret was 34~~ now 36\n~~old secret~~ and a live secret\n" + long + "\n",
		"b.md":               "secret secret secret on one line\n```\nsecret in code\n```\n",
		"sub/target.md":      "---\naliases: [Goal]\n---\n# Target\n",
		"links.md":           "See [[target]] and [[Goal]].\nAlso [x](sub/target.md) and [[sub/target#Target|t]].\nPlain: sub/target.md is here.\nNot: other/sub/target.md, sub/target.mdx\n~~[[target]]~~\n",
		"sub/rel.md":         "[rel](target.md) and ![[target.md]]\n",
		"img.md":             "![[pic.png]] and ![p](pic.png)\n",
		"pic.png":            "\x89PNG\r\n\x1a\n",
		".hidden/secret.md":  "secret hidden\n",
		"binary.md":          "secret\x00binary",
		"Projects/caps.md":   strings.Repeat("cap line\n", refLineCap+5),
		"Projects/caps2.md":  "cap again\n",
		"Projects/z-last.md": "secret at the end",
	})
	s, _ := refVault(t, dir)
	ctx := context.Background()

	counts, refs := allReferences(t, s, findReferencesIn{Values: []string{"SECRET", "secret is"}})
	if counts[0] != (RefCount{Value: "SECRET", Lines: 7}) || counts[1] != (RefCount{Value: "secret is", Lines: 1}) {
		t.Errorf("counts %+v", counts)
	}
	type key struct {
		path string
		line int
		val  string
	}
	var got []key
	for _, r := range refs {
		got = append(got, key{r.Path, r.Line, r.Value})
	}
	want := []key{
		{"Projects/z-last.md", 1, "SECRET"},
		{"a.md", 3, "SECRET"}, {"a.md", 3, "secret is"},
		{"a.md", 4, "SECRET"}, {"a.md", 5, "SECRET"}, {"a.md", 6, "SECRET"},
		{"b.md", 1, "SECRET"}, {"b.md", 3, "SECRET"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("references\n got %v\nwant %v", got, want)
	}
	byLine := map[int]Reference{}
	for _, r := range refs {
		if r.Path == "a.md" && r.Value == "SECRET" {
			byLine[r.Line] = r
		}
	}
	if r := byLine[3]; r.Text != "The secret is out." || r.Shortened || r.Struck {
		t.Errorf("plain line: %+v", r)
	}
	if r := byLine[4]; !r.Struck {
		t.Errorf("struck line: %+v", r)
	}
	if r := byLine[5]; r.Struck {
		t.Errorf("a line with a live mention is not struck: %+v", r)
	}
	if r := byLine[6]; !r.Shortened || !strings.Contains(r.Text, "the SECRET value") ||
		!strings.HasPrefix(r.Text, "…") || !strings.HasSuffix(r.Text, "…") ||
		len([]rune(r.Text)) > refWindow+2 {
		t.Errorf("long line: %+v", r)
	}

	// Paging.
	p1, err := s.FindReferences(ctx, findReferencesIn{Values: []string{"secret"}, Limit: 3})
	if err != nil || len(p1.References) != 3 || !p1.HasMore || p1.Offset != 0 {
		t.Fatalf("page 1: %+v %v", p1, err)
	}
	p3, _ := s.FindReferences(ctx, findReferencesIn{Values: []string{"secret"}, Limit: 3, Offset: 5})
	if len(p3.References) != 2 || p3.HasMore || p3.References[1].Path != "b.md" || p3.References[1].Line != 3 {
		t.Errorf("last page: %+v", p3)
	}
	past, _ := s.FindReferences(ctx, findReferencesIn{Values: []string{"secret"}, Limit: 3, Offset: 99})
	if len(past.References) != 0 || past.HasMore || past.Counts[0].Lines != 7 {
		t.Errorf("past the end: %+v", past)
	}

	// The cap: counting stops at 2000 lines, in path order.
	capOut, err := s.FindReferences(ctx, findReferencesIn{Values: []string{"cap", "nothing at all"}, Limit: 70, Offset: refLineCap - 1})
	if err != nil {
		t.Fatal(err)
	}
	if c := capOut.Counts[0]; c.Lines != refLineCap || !c.Capped || capOut.HasMore || len(capOut.References) != 1 {
		t.Errorf("capped: %+v, %d refs", capOut.Counts, len(capOut.References))
	}
	if capOut.Counts[1] != (RefCount{Value: "nothing at all"}) || !strings.Contains(capOut.Note, "1 value capped at 2000 lines") {
		t.Errorf("capped note: %+v %q", capOut.Counts, capOut.Note)
	}

	// Path mode: links by any spelling, plus the path written in prose.
	counts, refs = allReferences(t, s, findReferencesIn{Path: "sub/target"})
	var lines []string
	for _, r := range refs {
		lines = append(lines, r.Path+":"+strconv.Itoa(r.Line))
		if r.Value != "sub/target.md" {
			t.Errorf("path reference value %q", r.Value)
		}
	}
	wantLines := []string{"links.md:1", "links.md:2", "links.md:3", "links.md:5", "sub/rel.md:1"}
	if !slices.Equal(lines, wantLines) || counts[0] != (RefCount{Value: "sub/target.md", Lines: 5}) {
		t.Errorf("path references %v %+v, want %v", lines, counts, wantLines)
	}
	for _, r := range refs {
		if r.Line == 5 && !r.Struck {
			t.Errorf("struck link: %+v", r)
		}
	}
	_, refs = allReferences(t, s, findReferencesIn{Path: "pic.png"})
	if len(refs) != 1 || refs[0].Path != "img.md" {
		t.Errorf("attachment references: %+v", refs)
	}

	// Errors.
	for _, in := range []findReferencesIn{{}, {Values: []string{"x"}, Path: "a.md"}} {
		if _, err := s.FindReferences(ctx, in); refKind(err) != KindArgsInvalid {
			t.Errorf("%+v: %v, want args-invalid", in, err)
		}
	}
	for p, k := range map[string]Kind{"nope.md": KindNoteNotFound, "nope": KindNoteNotFound, "../x.md": KindPathInvalid,
		".hidden/secret.md": KindNoteNotFound, "binary.md": KindNoteNotFound, "sub": KindNoteNotFound} {
		if _, err := s.FindReferences(ctx, findReferencesIn{Path: p, Limit: 10}); refKind(err) != k {
			t.Errorf("path %q: %v, want %s", p, err, k)
		}
	}
	if out, err := s.FindReferences(ctx, findReferencesIn{Values: []string{"a\nb"}, Limit: 10}); err != nil || out.Counts[0].Lines != 0 || out.Note == "" {
		t.Errorf("a value with a line break: %+v %v", out, err)
	}
}

func TestFindReferencesCacheFollowsChanges(t *testing.T) {
	dir := indexertest.Folder(t, map[string]string{"a.md": "apple\n", "b.md": "apple pie\n"})
	s, v := refVault(t, dir)
	ctx := context.Background()
	count := func() int {
		out, err := s.FindReferences(ctx, findReferencesIn{Values: []string{"apple"}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return out.Counts[0].Lines
	}
	if n := count(); n != 2 {
		t.Fatalf("%d lines, want 2", n)
	}
	cat, _ := v.Catalogs.Catalog(ctx)
	data := []byte("apple\napple tart\nno\n")
	obj, err := v.Store.Put(ctx, "a.md", data, store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := vault.Parse("a.md", data).Note
	n.Size, n.Modified, n.ETag, n.Hash = obj.Size, obj.Modified.Add(time.Second), obj.ETag, "changed"
	cat.Upsert(n)
	cat.Remove("b.md")
	if n := count(); n != 2 {
		t.Errorf("after the change: %d lines, want 2 (both in a.md)", n)
	}
	c := refCacheFor(v)
	if len(c.files(cat)) != 1 || c.used.Load() != int64(len(data)) {
		t.Errorf("cache holds %d entries, %d bytes", len(c.files(cat)), c.used.Load())
	}
}

// BenchmarkFindReferences10k times find_references (handler, warm cache)
// against `grep -rciF --include=*.md` on the same generated 10k vault.
func BenchmarkFindReferences10k(b *testing.B) {
	requireGrep(b)
	dir := benchDir(b)
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: 10000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	s, _ := refVault(b, dir)
	values := []string{"compost", "the garden", "КОМПОСТ", "zzqx"}
	ctx := context.Background()
	cold := time.Now()
	if _, err := s.FindReferences(ctx, findReferencesIn{Values: values, Limit: 50}); err != nil {
		b.Fatal(err)
	}
	coldTime := time.Since(cold)

	var grepTime time.Duration
	const grepRuns = 3
	for range grepRuns {
		for _, v := range values {
			cmd := exec.Command("grep", "-rciF", "--include=*.md", "--", v, ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
			start := time.Now()
			err := cmd.Run()
			grepTime += time.Since(start)
			var exit *exec.ExitError
			if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.FindReferences(ctx, findReferencesIn{Values: values, Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	grep := float64(grepTime.Nanoseconds()) / grepRuns
	b.ReportMetric(float64(coldTime.Milliseconds()), "cold-ms")
	b.ReportMetric(ours/1e6, "ms/call")
	b.ReportMetric(grep/1e6, "grep-ms/call")
	b.ReportMetric(grep/ours, "x-faster-than-grep")
}

// benchDir is an empty folder for a generated vault, on tmpfs when there is one.
func benchDir(b *testing.B) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "sheaf-refs-"); err == nil {
			b.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return b.TempDir()
}

// FuzzMatchLines checks the anchored line search against a naive one:
// every offset where the folded needle starts (and, bounded, stands alone).
func FuzzMatchLines(f *testing.F) {
	f.Add([]byte("a\nBA\r\nab"), "a", false)
	f.Add([]byte("x/sub/t.md sub/t.md, sub/t.mdx"), "sub/t.md", true)
	f.Add([]byte("ıİſ\xff\nzzq"), "i", false)
	f.Fuzz(func(t *testing.T, text []byte, value string, bounded bool) {
		if value == "" || strings.Contains(value, "\n") {
			return
		}
		text = vault.FoldCase(nil, text)
		needle := vault.FoldCase(nil, []byte(value))
		got := matchLines(text, newNeedle(needle, bounded), 1<<30)
		var want []int32
		for p := 0; p+len(needle) <= len(text); p++ {
			if !bytes.HasPrefix(text[p:], needle) || (bounded && !pathBounded(text, p, p+len(needle))) {
				continue
			}
			line := int32(bytes.Count(text[:p], []byte("\n")) + 1)
			if len(want) == 0 || want[len(want)-1] != line {
				want = append(want, line)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q in %q: lines %v, want %v", needle, text, got, want)
		}
	})
}

// FuzzShowLine: any line and key give valid text, the whole line when short.
func FuzzShowLine(f *testing.F) {
	f.Add([]byte("~~a~~ b a\r"), "a")
	f.Add([]byte(strings.Repeat("é\xff", 200)+"key"), "KEY")
	f.Fuzz(func(t *testing.T, line []byte, key string) {
		line = bytes.ReplaceAll(line, []byte("\n"), nil)
		text, shortened, _ := showLine(line, vault.FoldCase(nil, []byte(key)))
		if !utf8.ValidString(text) {
			t.Fatalf("invalid UTF-8 %q", text)
		}
		if n := utf8.RuneCountInString(text); shortened && n > refWindow+2 {
			t.Fatalf("window of %d runes", n)
		}
		if !shortened && text != strings.ToValidUTF8(string(bytes.TrimSuffix(line, []byte("\r"))), "\uFFFD") {
			t.Fatalf("short line changed: %q -> %q", line, text)
		}
	})
}

// TestFindReferencesConcurrent runs calls while the catalog changes (run
// with -race): every answer counts one line per note that holds the value.
func TestFindReferencesConcurrent(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files["n"+strconv.Itoa(i)+".md"] = "shared word\nother\n"
	}
	s, v := refVault(t, indexertest.Folder(t, files))
	ctx := context.Background()
	cat, _ := v.Catalogs.Catalog(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			n, _ := cat.Note("n" + strconv.Itoa(i%40) + ".md")
			n.Hash = "v" + strconv.Itoa(i) // a new version of the same bytes
			cat.Upsert(n)
		}
	}()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				out, err := s.FindReferences(ctx, findReferencesIn{Values: []string{"SHARED"}, Limit: 5})
				if err != nil || out.Counts[0].Lines != 40 {
					t.Errorf("%+v %v", out, err)
					return
				}
			}
		})
	}
	wg.Wait()
	<-done
	if _, err := s.FindReferences(ctx, findReferencesIn{Values: []string{"x"}, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	c := refCacheFor(v)
	var held int64
	for _, e := range c.files(cat) {
		if p := e.text.Load(); p != nil {
			held += int64(len(*p))
		}
	}
	if held != c.used.Load() || held != 40*int64(len("shared word\nother\n")) {
		t.Errorf("cache accounts %d bytes, holds %d", c.used.Load(), held)
	}
}
