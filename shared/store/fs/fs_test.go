package fs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, t.TempDir())
	})
}

func open(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// vault makes parent/vault and parent/outside/secret.md.
func vault(t *testing.T) (s *Store, root, outside string) {
	t.Helper()
	parent := t.TempDir()
	root = filepath.Join(parent, "vault")
	outside = filepath.Join(parent, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(outside, "secret.md"), "secret")
	return open(t, root), root, outside
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

func listed(t *testing.T, s *Store, prefix string) []string {
	t.Helper()
	var got []string
	err := s.List(t.Context(), prefix, func(o store.Object) error {
		got = append(got, o.Path)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	slices.Sort(got)
	return got
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "file"), "x")
	for _, p := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "file")} {
		if s, err := Open(p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

func TestSymlinkEscape(t *testing.T) {
	s, root, outside := vault(t)
	ctx := t.Context()
	write(t, filepath.Join(root, "inside.md"), "in")
	symlink(t, outside, filepath.Join(root, "out"))
	symlink(t, filepath.Join(outside, "secret.md"), filepath.Join(root, "abs.md"))
	symlink(t, "../outside/secret.md", filepath.Join(root, "rel.md"))
	symlink(t, "../../outside", filepath.Join(root, "inside-dir-link"))

	for _, p := range []string{"out/secret.md", "abs.md", "rel.md", "inside-dir-link/secret.md", "out/new.md"} {
		_, err := s.Stat(ctx, p)
		if !errors.Is(err, store.ErrPathInvalid) && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrPathInvalid or ErrNotFound", p, err)
		}
		if data, _, err := s.Get(ctx, p, 0); err == nil || len(data) > 0 {
			t.Errorf("Get(%q) = %q, %v; want an error", p, data, err)
		}
		if _, err := s.Put(ctx, p, []byte("pwned"), store.PutOptions{}); !errors.Is(err, store.ErrPathInvalid) {
			t.Errorf("Put(%q) = %v, want ErrPathInvalid", p, err)
		}
		if err := s.Delete(ctx, p, ""); !errors.Is(err, store.ErrPathInvalid) && err != nil {
			t.Errorf("Delete(%q) = %v", p, err)
		}
	}
	for _, prefix := range []string{"out", "out/"} {
		if err := s.List(ctx, prefix, func(store.Object) error { return nil }); !errors.Is(err, store.ErrPathInvalid) {
			t.Errorf("List(%q) = %v, want ErrPathInvalid", prefix, err)
		}
		if _, err := s.Folders(ctx, prefix); !errors.Is(err, store.ErrPathInvalid) {
			t.Errorf("Folders(%q) = %v, want ErrPathInvalid", prefix, err)
		}
	}
	if got := listed(t, s, ""); !slices.Equal(got, []string{"inside.md"}) {
		t.Errorf("List = %q, want only inside.md", got)
	}
	if got, _ := s.Folders(ctx, ""); len(got) != 0 {
		t.Errorf("Folders = %q, want none", got)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || entries[0].Name() != "secret.md" {
		t.Errorf("outside folder changed: %v", entries)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(data) != "secret" {
		t.Errorf("outside file changed: %q", data)
	}
}

func TestSymlinkLoop(t *testing.T) {
	s, root, _ := vault(t)
	ctx := t.Context()
	write(t, filepath.Join(root, "d/x.md"), "x")
	symlink(t, "loop.md", filepath.Join(root, "loop.md"))
	symlink(t, "..", filepath.Join(root, "d/up"))
	symlink(t, "b", filepath.Join(root, "a"))
	symlink(t, "a", filepath.Join(root, "b"))

	if got := listed(t, s, ""); !slices.Equal(got, []string{"d/x.md"}) {
		t.Errorf("List = %q, want [d/x.md]", got)
	}
	if got, _ := s.Folders(ctx, ""); !slices.Equal(got, []string{"d"}) {
		t.Errorf("Folders = %q, want [d]", got)
	}
	for _, p := range []string{"loop.md", "a", "a/x.md"} {
		if _, err := s.Stat(ctx, p); !errors.Is(err, store.ErrPathInvalid) && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrPathInvalid or ErrNotFound", p, err)
		}
		if _, _, err := s.Get(ctx, p, 0); err == nil {
			t.Errorf("Get(%q) succeeded", p)
		}
	}
	// A symlink that stays inside the vault is followed on direct access.
	if data, _, err := s.Get(ctx, "d/up/d/x.md", 0); err != nil || string(data) != "x" {
		t.Errorf("Get through an inside symlink = %q, %v", data, err)
	}
}

func TestDanglingSymlink(t *testing.T) {
	s, root, _ := vault(t)
	ctx := t.Context()
	symlink(t, "nowhere.md", filepath.Join(root, "gone.md"))
	if _, err := s.Stat(ctx, "gone.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Stat(dangling) = %v, want ErrNotFound", err)
	}
	if got := listed(t, s, ""); len(got) != 0 {
		t.Errorf("List = %q, want nothing", got)
	}
	if err := s.Delete(ctx, "gone.md", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete(dangling, ifMatch) = %v, want ErrNotFound", err)
	}
	if _, err := s.Put(ctx, "gone.md", []byte("here"), store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Fatalf("Put over a dangling symlink: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "gone.md")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("after Put: %v, %v; want a regular file", fi, err)
	}
	if _, err := os.Stat(filepath.Join(root, "nowhere.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Put wrote through the dangling symlink: %v", err)
	}
	symlink(t, "nowhere.md", filepath.Join(root, "gone2.md"))
	if err := s.Delete(ctx, "gone2.md", ""); err != nil {
		t.Errorf("Delete(dangling) = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "gone2.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Delete left the dangling symlink: %v", err)
	}
}

func TestInsideSymlinkNotListed(t *testing.T) {
	s, root, _ := vault(t)
	write(t, filepath.Join(root, "real.md"), "real")
	write(t, filepath.Join(root, "dir/n.md"), "n")
	symlink(t, "real.md", filepath.Join(root, "alias.md"))
	symlink(t, "dir", filepath.Join(root, "dirlink"))
	if got := listed(t, s, ""); !slices.Equal(got, []string{"dir/n.md", "real.md"}) {
		t.Errorf("List = %q", got)
	}
	if o, err := s.Stat(t.Context(), "alias.md"); err != nil || o.Size != 4 {
		t.Errorf("Stat(alias.md) = %+v, %v", o, err)
	}
}

func TestOddFiles(t *testing.T) {
	s, root, _ := vault(t)
	ctx := t.Context()
	bin := []byte("\x00\x01\xff\xfe PNG\r\n\x1a\n\x00 not markdown \xc3\x28")
	if err := os.WriteFile(filepath.Join(root, "binary.md"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	odd := []string{"bad\xffname.md", "back\\slash.md", "tab\there.md", "%2e%2e"}
	for _, name := range odd {
		if err := os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644); err != nil {
			t.Logf("cannot create %q here: %v", name, err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "bad\xffdir"), 0o755); err == nil {
		write(t, filepath.Join(root, "bad\xffdir", "inner.md"), "x")
	}
	if got := listed(t, s, ""); !slices.Equal(got, []string{"binary.md"}) {
		t.Errorf("List = %q, want only binary.md", got)
	}
	if got, _ := s.Folders(ctx, ""); len(got) != 0 {
		t.Errorf("Folders = %q, want none", got)
	}
	data, obj, err := s.Get(ctx, "binary.md", 0)
	if err != nil || !bytes.Equal(data, bin) || obj.Size != int64(len(bin)) {
		t.Errorf("Get(binary.md) = %q, %+v, %v", data, obj, err)
	}
}

func TestHugeFileTooLarge(t *testing.T) {
	s, root, _ := vault(t)
	f, err := os.Create(filepath.Join(root, "huge.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 30); err != nil { // sparse: nothing is written
		t.Skipf("no sparse files: %v", err)
	}
	f.Close()
	_, _, err = s.Get(t.Context(), "huge.md", 1<<20)
	if !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("Get(huge, 1 MiB) = %v, want ErrTooLarge", err)
	}
}

func TestNFDOnDisk(t *testing.T) {
	s, root, _ := vault(t)
	ctx := t.Context()
	const (
		nfdDir  = "Re\u0301sume\u0301"
		nfcDir  = "R\u00e9sum\u00e9"
		nfdFile = "Cafe\u0301.md"
		nfcFile = "Caf\u00e9.md"
	)
	write(t, filepath.Join(root, nfdDir, nfdFile), "nfd")
	write(t, filepath.Join(root, "\u212a.md"), "kelvin") // NFC: "K.md"
	if _, err := os.Stat(filepath.Join(root, nfcDir)); err == nil {
		t.Skip("file system normalises names itself")
	}

	if got := listed(t, s, ""); !slices.Equal(got, []string{"K.md", nfcDir + "/" + nfcFile}) {
		t.Errorf("List = %q", got)
	}
	if got, _ := s.Folders(ctx, ""); !slices.Equal(got, []string{nfcDir}) {
		t.Errorf("Folders = %q", got)
	}
	for _, p := range []string{nfcDir + "/" + nfcFile, nfdDir + "/" + nfdFile, nfcDir + "/" + nfdFile} {
		if data, obj, err := s.Get(ctx, p, 0); err != nil || string(data) != "nfd" || obj.Path != nfcDir+"/"+nfcFile {
			t.Errorf("Get(%q) = %q, %+v, %v", p, data, obj, err)
		}
	}
	if data, _, err := s.Get(ctx, "K.md", 0); err != nil || string(data) != "kelvin" {
		t.Errorf("Get(K.md) = %q, %v", data, err)
	}

	// Overwriting and creating reuse the NFD spellings on disk.
	obj, err := s.Put(ctx, nfcDir+"/"+nfcFile, []byte("updated"), store.PutOptions{IfNoneMatch: false})
	if err != nil || obj.Path != nfcDir+"/"+nfcFile {
		t.Fatalf("Put = %+v, %v", obj, err)
	}
	if _, err := s.Put(ctx, nfcDir+"/new "+nfcFile, []byte("new"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.MakeFolder(ctx, nfcDir+"/sub"); err != nil {
		t.Fatal(err)
	}
	names := dirNames(t, root)
	if !slices.Equal(names, []string{nfdDir, "\u212a.md"}) {
		t.Errorf("vault root holds %q, want the NFD folder and the Kelvin file only", names)
	}
	names = dirNames(t, filepath.Join(root, nfdDir))
	if !slices.Equal(names, []string{nfdFile, "new " + nfcFile, "sub"}) {
		t.Errorf("folder holds %q, want the NFD file overwritten and the new file in NFC", names)
	}
	if data, _ := os.ReadFile(filepath.Join(root, nfdDir, nfdFile)); string(data) != "updated" {
		t.Errorf("NFD file = %q, want updated", data)
	}
	if err := s.Delete(ctx, nfcDir+"/"+nfcFile, obj.ETag); err != nil {
		t.Errorf("Delete(NFC) of the NFD file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, nfdDir, nfdFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NFD file still there: %v", err)
	}
}

// dirNames lists a folder, leaving out .sheaf (where the write lock lives).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != ".sheaf" {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

func TestPutConflictsWithFolders(t *testing.T) {
	s, root, _ := vault(t)
	ctx := t.Context()
	write(t, filepath.Join(root, "a.md"), "a")
	write(t, filepath.Join(root, "dir/x.md"), "x")
	if _, err := s.Put(ctx, "a.md/b.md", []byte("b"), store.PutOptions{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Put under a file = %v, want ErrConflict", err)
	}
	if _, err := s.Put(ctx, "dir", []byte("b"), store.PutOptions{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Put over a folder = %v, want ErrConflict", err)
	}
	if err := s.MakeFolder(ctx, "a.md"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("MakeFolder over a file = %v, want ErrConflict", err)
	}
	if got := dirNames(t, root); !slices.Equal(got, []string{"a.md", "dir"}) {
		t.Errorf("vault holds %q after failed puts", got)
	}
}

func TestPutLeavesNoTempFiles(t *testing.T) {
	s, root, _ := vault(t)
	if err := os.WriteFile(filepath.Join(root, "keep.md"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := s.Put(t.Context(), "keep.md", []byte(fmt.Sprint(i)), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := dirNames(t, root); !slices.Equal(got, []string{"keep.md"}) {
		t.Errorf("vault holds %q", got)
	}
	if fi, err := os.Stat(filepath.Join(root, "keep.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after Put = %v, %v; want 0600 kept", fi.Mode(), err)
	}
}

// TestETagSameSizeRewrites writes same-size contents faster than a coarse
// clock ticks: every write must still get a new ETag.
func TestETagSameSizeRewrites(t *testing.T) {
	s, _, _ := vault(t)
	seen := map[string]bool{}
	for i := range 50 {
		obj, err := s.Put(t.Context(), "n.md", []byte(fmt.Sprintf("%04d", i)), store.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if seen[obj.ETag] {
			t.Fatalf("write %d reused ETag %q", i, obj.ETag)
		}
		seen[obj.ETag] = true
	}
}

// TestCommitNudgesETag forces what a coarse clock does: the new file gets
// the old file's size and modification time. Its ETag must still differ.
func TestCommitNudgesETag(t *testing.T) {
	s, root, _ := vault(t)
	old, err := s.Put(t.Context(), "d/n.md", []byte("aaaa"), store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := s.writeTemp("d", []byte("bbbb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(root, tmp), old.Modified, old.Modified); err != nil {
		t.Fatal(err)
	}
	fi, err := s.commit("d/n.md", tmp, store.PutOptions{IfMatch: old.ETag})
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.Stat(t.Context(), "d/n.md")
	if err != nil || now.ETag == old.ETag || now.ETag != etag(fi) {
		t.Errorf("after commit: ETag %q (%v), old %q, returned %q", now.ETag, err, old.ETag, etag(fi))
	}
}

func TestErrorsQuotePath(t *testing.T) {
	s, _, _ := vault(t)
	_, err := s.Stat(t.Context(), "dir/missing note.md")
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `"dir/missing note.md"`) {
		t.Errorf("Stat error = %v", err)
	}
}

func benchVault(b *testing.B, files int) *Store {
	dir := b.TempDir()
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("f%03d", i%100), fmt.Sprintf("note %05d.md", i))
		if i < 100 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, []byte("# note\n\nsome text\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return open(b, dir)
}

func BenchmarkList(b *testing.B) {
	s := benchVault(b, 10000)
	for b.Loop() {
		n := 0
		s.List(b.Context(), "", func(store.Object) error { n++; return nil })
		if n != 10000 {
			b.Fatalf("listed %d", n)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s := benchVault(b, 100)
	data := bytes.Repeat([]byte("0123456789abcdef"), 256) // 4 KiB
	if _, err := s.Put(b.Context(), "f042/big.md", data, store.PutOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := s.Get(b.Context(), "f042/big.md", 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetNFD(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("Cafe\u0301 %d.md", i)), []byte("x"), 0o644)
	}
	s := open(b, dir)
	for b.Loop() {
		if _, _, err := s.Get(b.Context(), "Caf\u00e9 500.md", 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPut(b *testing.B) {
	s := benchVault(b, 0)
	data := []byte("# note\n\nsome text\n")
	for b.Loop() {
		if _, err := s.Put(b.Context(), "dir/note.md", data, store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzPaths throws arbitrary paths at one vault: whatever is accepted must
// round-trip under its clean name, and nothing may appear outside the vault.
func FuzzPaths(f *testing.F) {
	for _, p := range []string{"a.md", "../x", "a/../../b", "Cafe\u0301.md", "d/e/f.md", "/abs", "a\\b", "%2e%2e/x", "./n.md"} {
		f.Add(p)
	}
	parent := f.TempDir()
	root := filepath.Join(parent, "vault")
	if err := os.Mkdir(root, 0o755); err != nil {
		f.Fatal(err)
	}
	s := open(f, root)
	f.Fuzz(func(t *testing.T, p string) {
		ctx := t.Context()
		obj, err := s.Put(ctx, p, []byte(p), store.PutOptions{})
		if err == nil {
			if c, err := store.CleanPath(p); err != nil || c != obj.Path {
				t.Fatalf("Put(%q) stored %q; CleanPath = %q, %v", p, obj.Path, c, err)
			}
			if data, _, err := s.Get(ctx, obj.Path, 0); err != nil || string(data) != p {
				t.Fatalf("Get(%q) = %q, %v", obj.Path, data, err)
			}
			if err := s.Delete(ctx, p, obj.ETag); err != nil {
				t.Fatalf("Delete(%q): %v", p, err)
			}
		} else if !errors.Is(err, store.ErrPathInvalid) && !errors.Is(err, store.ErrConflict) {
			t.Fatalf("Put(%q): unexpected error %v", p, err)
		}
		if names := dirNames(t, parent); !slices.Equal(names, []string{"vault"}) {
			t.Fatalf("after Put(%q) the vault's parent holds %q", p, names)
		}
	})
}

// TestPutRefusesSymlink: writing a path that is a symlink inside the
// vault is refused (path-invalid, naming where it leads): the link is not
// replaced by a copy, and the file it leads to, which the caller's checks
// did not see, is not changed.
func TestPutRefusesSymlink(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "notes", "Alpha.md"), "alpha\n")
	symlink(t, "notes/Alpha.md", filepath.Join(root, "Link.md"))
	symlink(t, "Link.md", filepath.Join(root, "Chain.md"))
	s := open(t, root)
	ctx := t.Context()
	for _, p := range []string{"Link.md", "Chain.md"} {
		cur, err := s.Stat(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Put(ctx, p, []byte("through "+p+"\n"), store.PutOptions{IfMatch: cur.ETag})
		if !errors.Is(err, store.ErrPathInvalid) || !strings.Contains(err.Error(), "notes/Alpha.md") {
			t.Errorf("put %s: %v, want ErrPathInvalid naming notes/Alpha.md", p, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(root, "notes", "Alpha.md")); string(got) != "alpha\n" {
		t.Errorf("Alpha.md holds %q", got)
	}
	for _, l := range []string{"Link.md", "Chain.md"} {
		if fi, err := os.Lstat(filepath.Join(root, l)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink (%v)", l, err)
		}
	}
}

// TestPutRefusesSymlinkedFolder: a write whose path passes through a
// symlinked folder is refused, new note or not: it would land where the
// folder leads, outside the path that was checked.
func TestPutRefusesSymlinkedFolder(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "real", "sub", "L.md"), "l\n")
	symlink(t, "real/sub", filepath.Join(root, "a"))
	s := open(t, root)
	ctx := t.Context()
	cur, err := s.Stat(ctx, "a/L.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "a/L.md", []byte("x\n"), store.PutOptions{IfMatch: cur.ETag}); !errors.Is(err, store.ErrPathInvalid) {
		t.Errorf("overwrite through a linked folder: %v, want ErrPathInvalid", err)
	}
	if _, err := s.Put(ctx, "a/New.md", []byte("x\n"), store.PutOptions{IfNoneMatch: true}); !errors.Is(err, store.ErrPathInvalid) {
		t.Errorf("create through a linked folder: %v, want ErrPathInvalid", err)
	}
	if _, err := os.Stat(filepath.Join(root, "real", "sub", "New.md")); err == nil {
		t.Error("New.md was created where the link leads")
	}
	if _, err := s.Put(ctx, "real/sub/New.md", []byte("x\n"), store.PutOptions{IfNoneMatch: true}); err != nil {
		t.Errorf("create at the real path: %v", err)
	}
}
