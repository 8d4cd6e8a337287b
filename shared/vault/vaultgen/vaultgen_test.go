package vaultgen

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// tmpDir is a fresh directory, on tmpfs when there is one: creating files
// is the slow part of Generate, and some disks are slow at it.
func tmpDir(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "vaultgen-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

func generate(t testing.TB, opt Options) (string, Stats) {
	t.Helper()
	dir := tmpDir(t)
	st, err := Generate(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return dir, st
}

// digest hashes every file's path, bytes and modification time.
func digest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", filepath.ToSlash(rel), len(b), fi.ModTime().UnixNano())
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestDeterministic(t *testing.T) {
	opt := Options{Notes: 400, Seed: 42, Folders: 12, AttachmentsEvery: 25}
	a, sa := generate(t, opt)
	b, sb := generate(t, opt)
	if sa != sb {
		t.Errorf("stats differ: %+v vs %+v", sa, sb)
	}
	if da, db := digest(t, a), digest(t, b); da != db {
		t.Errorf("same seed, different vaults: %s vs %s", da, db)
	}
	opt.Seed = 43
	c, _ := generate(t, opt)
	if digest(t, a) == digest(t, c) {
		t.Error("different seeds gave the same vault")
	}
}

func TestErrors(t *testing.T) {
	if _, err := Generate(t.TempDir(), Options{}); err == nil {
		t.Error("Notes=0: want an error")
	}
	if _, err := Generate(t.TempDir(), Options{Notes: 1, Folders: -1}); err == nil {
		t.Error("Folders=-1: want an error")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.md"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, Options{Notes: 3}); err == nil {
		t.Error("non-empty dir: want an error")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mine.md")); string(b) != "keep me" {
		t.Error("Generate touched an existing file")
	}
}

func TestTiny(t *testing.T) {
	for n := 1; n <= 3; n++ {
		dir, st := generate(t, Options{Notes: n, Seed: int64(n)})
		v := scan(t, dir)
		if st.Notes != n || len(v.notes) != n {
			t.Errorf("Notes=%d: stats %+v, %d files", n, st, len(v.notes))
		}
	}
}

// scanned is a generated vault read back with simple, independent parsing.
type scanned struct {
	notes       map[string]*scannedNote // by vault path
	byName      map[string][]string     // lower-cased basename -> paths
	byAlias     map[string]string       // lower-cased alias -> path
	attachments map[string]bool         // file names in AttachmentDir
	bytes       int
}

type scannedNote struct {
	path, body  string
	frontmatter bool
	tags        []string
	headings    []string
	wikilinks   []string // inner text of [[...]] and ![[...]]
	mdlinks     []string // destinations of [text](dest)
}

var (
	fenceRe    = regexp.MustCompile("(?ms)^```.*?^```$")
	codeSpanRe = regexp.MustCompile("`[^`\n]*`")
	wikiRe     = regexp.MustCompile(`\[\[([^\]]+)\]\]`)
	mdLinkRe   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	tagRe      = regexp.MustCompile(`(?:^|\s)#([\p{L}\p{N}_/-]+)`)
	headingRe  = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	aliasRe    = regexp.MustCompile(`(?m)^  - "(.+)"$`)
)

func scan(t *testing.T, dir string) *scanned {
	t.Helper()
	v := &scanned{
		notes:       map[string]*scannedNote{},
		byName:      map[string][]string{},
		byAlias:     map[string]string{},
		attachments: map[string]bool{},
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(rel, ".md") {
			if path.Dir(rel) != AttachmentDir {
				t.Errorf("unexpected file %s", rel)
			}
			v.attachments[path.Base(rel)] = true
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !utf8.Valid(b) {
			t.Errorf("%s: invalid UTF-8", rel)
		}
		v.bytes += len(b)
		n := &scannedNote{path: rel, body: string(b)}
		body := n.body
		if rest, ok := strings.CutPrefix(body, "---\n"); ok {
			fm, after, ok := strings.Cut(rest, "\n---\n")
			if !ok {
				t.Fatalf("%s: unterminated frontmatter", rel)
			}
			n.frontmatter = true
			n.tags = fmTags(fm)
			for _, m := range aliasRe.FindAllStringSubmatch(fm, -1) {
				v.byAlias[strings.ToLower(m[1])] = rel
			}
			body = after
		}
		body = fenceRe.ReplaceAllString(body, "")
		body = codeSpanRe.ReplaceAllString(body, "")
		for _, m := range tagRe.FindAllStringSubmatch(body, -1) {
			if !slices.Contains(n.tags, m[1]) {
				n.tags = append(n.tags, m[1])
			}
		}
		for _, m := range headingRe.FindAllStringSubmatch(body, -1) {
			n.headings = append(n.headings, m[1])
		}
		for _, m := range wikiRe.FindAllStringSubmatch(body, -1) {
			n.wikilinks = append(n.wikilinks, m[1])
		}
		for _, m := range mdLinkRe.FindAllStringSubmatch(body, -1) {
			n.mdlinks = append(n.mdlinks, m[1])
		}
		v.notes[rel] = n
		name := strings.ToLower(strings.TrimSuffix(path.Base(rel), ".md"))
		v.byName[name] = append(v.byName[name], rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func fmTags(fm string) []string {
	var tags []string
	lines := strings.Split(fm, "\n")
	for i, line := range lines {
		val, ok := strings.CutPrefix(line, "tags:")
		if !ok {
			continue
		}
		val = strings.Trim(strings.TrimSpace(val), "[]")
		if val == "" { // block list
			for _, l := range lines[i+1:] {
				item, ok := strings.CutPrefix(l, "  - ")
				if !ok {
					break
				}
				tags = append(tags, item)
			}
			continue
		}
		for _, t := range strings.Split(val, ",") {
			tags = append(tags, strings.TrimSpace(t))
		}
	}
	return tags
}

// resolve finds the note a wikilink target names: by path, unique basename
// or alias. It reports "" for unresolved and ambiguous targets.
func (v *scanned) resolve(target string) string {
	key := strings.ToLower(target)
	if strings.Contains(key, "/") {
		for p := range v.notes {
			if strings.ToLower(p) == key+".md" {
				return p
			}
		}
		return ""
	}
	if ps := v.byName[key]; len(ps) == 1 {
		return ps[0]
	}
	return v.byAlias[key]
}

func TestShape(t *testing.T) {
	const n = 2000
	opt := Options{Notes: n, Seed: 7, AttachmentsEvery: 40}
	dir, st := generate(t, opt)
	v := scan(t, dir)

	// Stats agree with an independent reading of the files.
	links, tags := 0, 0
	for _, note := range v.notes {
		links += len(note.wikilinks) + len(note.mdlinks)
		tags += len(note.tags)
	}
	got := Stats{Notes: len(v.notes), Bytes: v.bytes, Links: links, Tags: tags}
	if got != st {
		t.Errorf("stats %+v, files say %+v", st, got)
	}
	if want := n / opt.AttachmentsEvery; len(v.attachments) != want {
		t.Errorf("%d attachments, want %d", len(v.attachments), want)
	}

	// Sizes: ~5 KB mean with a tail.
	mean := v.bytes / n
	largest := 0
	for _, note := range v.notes {
		largest = max(largest, len(note.body))
	}
	if mean < 3500 || mean > 7500 {
		t.Errorf("mean note size %d bytes, want ~5 KB", mean)
	}
	if largest < 25_000 || largest > 110_000 {
		t.Errorf("largest note %d bytes, want a long tail up to ~100 KB", largest)
	}

	// Folders nest, but never deeper than three levels.
	deepest := 0
	for p := range v.notes {
		deepest = max(deepest, strings.Count(p, "/"))
	}
	if deepest != 3 {
		t.Errorf("deepest note is %d folders down, want 3", deepest)
	}

	var withFM, unresolved, wikilinks, headingLinks, aliasLinks, dupNames, directives, mentions, cjk int
	inbound := map[string]int{}
	for _, name := range v.byName {
		if len(name) > 1 {
			dupNames++
		}
	}
	for p, note := range v.notes {
		if note.frontmatter {
			withFM++
		}
		if k := len(note.wikilinks) + len(note.mdlinks); k < 3 || k > 16 {
			t.Errorf("%s: %d links, want 3-15 (+1 attachment)", p, k)
		}
		if len(note.tags) < 1 || len(note.tags) > 5 {
			t.Errorf("%s: tags %q, want 1-5", p, note.tags)
		}
		if strings.Contains(note.body, "> [!ai] ") {
			directives++
		}
		if strings.Contains(note.body, " @claude") || strings.Contains(note.body, " @garden-bot") {
			mentions++
		}
		if strings.ContainsAny(note.body, "の我다") {
			cjk++
		}
		for _, l := range note.wikilinks {
			target, _, _ := strings.Cut(l, "|")
			target, frag, hasFrag := strings.Cut(target, "#")
			if v.attachments[target] {
				continue
			}
			wikilinks++
			to := v.resolve(target)
			if to == "" {
				unresolved++
				if !strings.HasPrefix(target, "Someday ") {
					t.Errorf("%s: [[%s]] does not resolve", p, l)
				}
				continue
			}
			inbound[to]++
			if v.byAlias[strings.ToLower(target)] != "" {
				aliasLinks++
			}
			switch {
			case hasFrag && strings.HasPrefix(frag, "^"):
				if !strings.Contains(v.notes[to].body, " "+frag+"\n") {
					t.Errorf("%s: [[%s]]: no block %s in %s", p, l, frag, to)
				}
			case hasFrag:
				headingLinks++
				if !slices.Contains(v.notes[to].headings, frag) {
					t.Errorf("%s: [[%s]]: no heading %q in %s", p, l, frag, to)
				}
			}
		}
		for _, dest := range note.mdlinks {
			rel, err := url.PathUnescape(dest)
			if err != nil {
				t.Errorf("%s: bad link %q", p, dest)
				continue
			}
			if to := path.Join(path.Dir(p), rel); v.notes[to] == nil {
				t.Errorf("%s: [](%s) points at missing %s", p, dest, to)
			}
		}
	}
	between := func(what string, got, lo, hi float64) {
		t.Helper()
		if got < lo || got > hi {
			t.Errorf("%s = %.3f, want %.3f-%.3f", what, got, lo, hi)
		}
	}
	between("frontmatter share", float64(withFM)/n, 0.65, 0.75)
	between("unresolved share", float64(unresolved)/float64(wikilinks), 0.03, 0.08)
	between("duplicate-name share", float64(dupNames)/n, 0.003, 0.02)
	between("directive share", float64(directives)/n, 0.005, 0.04)
	between("mention share", float64(mentions)/n, 0.005, 0.06)
	between("CJK share", float64(cjk)/n, 0.005, 0.04)
	if headingLinks == 0 || aliasLinks == 0 {
		t.Errorf("heading links %d, alias links %d: want some of each", headingLinks, aliasLinks)
	}
	// Zipf targets make hubs: the busiest note gets far more than its share.
	busiest := 0
	for _, c := range inbound {
		busiest = max(busiest, c)
	}
	if avg := wikilinks / n; busiest < 20*avg {
		t.Errorf("busiest note has %d inbound links, average %d: want hubs", busiest, avg)
	}
}

func TestVocab(t *testing.T) {
	vocab, english := buildVocab()
	if len(vocab) < 3000 || english < 500 {
		t.Fatalf("vocabulary of %d words (%d English), want a few thousand", len(vocab), english)
	}
	// Words become file names, tags and link targets: letters only.
	bad := regexp.MustCompile(`[^\p{L}\p{M}]`)
	for _, w := range vocab {
		if bad.MatchString(w) {
			t.Errorf("word %q has a non-letter", w)
		}
	}
}

func TestRelPath(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"", "a b.md", "a%20b.md"},
		{"", "A/x.md", "A/x.md"},
		{"A", "x.md", "../x.md"},
		{"A/B", "A/C/x.md", "../C/x.md"},
		{"A/B", "A/B/x.md", "x.md"},
		{"A/B/C", "D/x y.md", "../../../D/x%20y.md"},
	} {
		if got := relPath(c.from, c.to); got != c.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
}

func BenchmarkGenerate10k(b *testing.B) { benchmarkGenerate(b, 10_000) }

// BenchmarkGenerate100k writes ~540 MB; run it on purpose:
// go test -run=^$ -bench=100k -benchtime=1x ./shared/vault/vaultgen
func BenchmarkGenerate100k(b *testing.B) { benchmarkGenerate(b, 100_000) }

func benchmarkGenerate(b *testing.B, n int) {
	for i := range b.N {
		dir := tmpDir(b)
		st, err := Generate(dir, Options{Notes: n, Seed: int64(i), AttachmentsEvery: 100})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(st.Bytes))
		b.ReportMetric(float64(st.Links)/float64(st.Notes), "links/note")
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
}

func TestFirstNote(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{".hidden/a.md", "b/z.md", "b/c.txt", "c.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := FirstNote(dir); got != "b/z.md" {
		t.Errorf("FirstNote = %q, want b/z.md", got)
	}
	if got := FirstNote(t.TempDir()); got != "" {
		t.Errorf("FirstNote of an empty vault = %q", got)
	}
}
