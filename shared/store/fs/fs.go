// Package fs is the local-folder adapter of the store port: the vault is a
// directory on disk, opened with os.Root so that no path, ".." or symlink can
// reach outside it.
//
// Names on disk may be NFC or NFD (macOS writes NFD); paths given to and
// returned by the Store are always NFC, and either spelling finds the file.
// Symlinks inside the vault are followed by Stat and Get but not by List
// and Folders (no loops, no duplicates); Put refuses a path that is a
// symlinked file or passes through a symlinked folder (ErrPathInvalid:
// write where it leads), Delete removes the link; a symlink that leads
// outside the vault yields ErrPathInvalid.
//
// Writes are atomic and conditional across processes: Put writes a hidden
// temporary file next to the target and fsyncs it, then, holding the
// vault's write lock (a mutex in the process and an flock on
// .sheaf/.write.lock between processes), checks the conditions and renames
// the file into place, and fsyncs the folder. A crash leaves the old file or
// the new one, never a mix; a temporary file it leaves is hidden (never
// listed or indexed) and removed by the next write into that folder once it
// is an hour old.
package fs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/store"
)

var _ store.Store = (*Store)(nil)

// Store is a vault folder on disk. It is safe for concurrent use; writes from
// this process are serialised so that Put and Delete conditions hold.
type Store struct {
	root   *os.Root
	escape error // the error os.Root returns for a path that leaves the root

	mu    sync.Mutex // serialises commits (condition check and rename) and deletes
	lockF *os.File   // .sheaf/.write.lock, opened on first use (under mu)
	tidy  sync.Map   // folders whose stale temporary files were removed

	namesMu sync.Mutex
	names   map[string]string // dir + "\x00" + NFC name -> non-NFC name on disk

	passedMu sync.Mutex
	passed   map[string]string // what the last List of the whole vault passed over (PassedOver)

	opts Options
}

// Options change where the write lock lives and how private new files are.
type Options struct {
	// LockFile is the file whose lock every writer of this folder takes
	// (an absolute path, anywhere); "" means .sheaf/.write.lock inside
	// the folder. Every process writing the folder must name the same one.
	LockFile string
	// Private creates files 0600 and folders 0700 (keys, Sheaf's own
	// state), whatever mode an overwritten file had.
	Private bool
}

// maxNames bounds the spelling cache; it is dropped when full.
const maxNames = 1 << 16

// Open opens the vault at root, which must be an existing directory.
func Open(root string) (*Store, error) { return OpenWith(root, Options{}) }

// OpenWith opens the folder root, which must exist, with options.
func OpenWith(root string, o Options) (*Store, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("fs: open vault: %w", err)
	}
	s := &Store{root: r, names: map[string]string{}, opts: o}
	// os.Root does not export its "path escapes" error; learn it once.
	if _, err := r.Stat(".."); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			s.escape = pe.Err
		}
	}
	return s, nil
}

// Close releases the vault's directory handle.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.lockF != nil {
		s.lockF.Close()
		s.lockF = nil
	}
	s.mu.Unlock()
	return s.root.Close()
}

// lockPath is the file whose flock serialises writers across processes.
const lockPath = ".sheaf/.write.lock"

// lock takes the vault's write lock: this process's mutex, then the flock
// other processes on the same folder take too. It returns the unlock.
func (s *Store) lock() (func(), error) {
	s.mu.Lock()
	if s.lockF == nil {
		f, err := s.openLock()
		if err != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("fs: the write lock: %w", err)
		}
		s.lockF = f
	}
	if err := lockFile(s.lockF); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("fs: the write lock: %w", err)
	}
	return func() {
		_ = unlockFile(s.lockF)
		s.mu.Unlock()
	}, nil
}

// openLock opens (creating) the lock file.
func (s *Store) openLock() (*os.File, error) {
	if s.opts.LockFile != "" {
		if err := os.MkdirAll(filepath.Dir(s.opts.LockFile), 0o700); err != nil {
			return nil, err
		}
		return os.OpenFile(s.opts.LockFile, os.O_RDWR|os.O_CREATE, 0o600)
	}
	if err := s.root.MkdirAll(".sheaf", s.dirMode()); err != nil {
		return nil, err
	}
	return s.root.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, s.fileMode())
}

// fileMode and dirMode are the modes new files and folders get.
func (s *Store) fileMode() os.FileMode {
	if s.opts.Private {
		return 0o600
	}
	return 0o644
}

func (s *Store) dirMode() os.FileMode {
	if s.opts.Private {
		return 0o700
	}
	return 0o755
}

// etag is a file's entity tag: modification time and size. Put makes sure
// its writes change it.
func etag(fi os.FileInfo) string {
	return fmt.Sprintf("%x-%x", fi.ModTime().UnixNano(), fi.Size())
}

func object(path string, fi os.FileInfo) store.Object {
	return store.Object{Path: path, Size: fi.Size(), Modified: fi.ModTime(), ETag: etag(fi)}
}

// Stat returns the metadata of the file at path.
func (s *Store) Stat(ctx context.Context, path string) (store.Object, error) {
	if err := ctx.Err(); err != nil {
		return store.Object{}, err
	}
	p, err := store.CleanPath(path)
	if err != nil {
		return store.Object{}, err
	}
	_, fi, err := s.statFile(p)
	if err != nil {
		return store.Object{}, s.wrap("stat", p, err)
	}
	return object(p, fi), nil
}

// Get reads the file at path; ErrTooLarge when it is bigger than max > 0.
func (s *Store) Get(ctx context.Context, path string, max int64) ([]byte, store.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, store.Object{}, err
	}
	p, err := store.CleanPath(path)
	if err != nil {
		return nil, store.Object{}, err
	}
	// Stat first: opening a FIFO or device could block or have effects.
	disk, _, err := s.statFile(p)
	if err != nil {
		return nil, store.Object{}, s.wrap("get", p, err)
	}
	f, err := s.root.Open(disk)
	if err != nil {
		return nil, store.Object{}, s.wrap("get", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, store.Object{}, s.wrap("get", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, store.Object{}, s.wrap("get", p, os.ErrNotExist)
	}
	tooLarge := func(size int64) error {
		return fmt.Errorf("fs: get %q: %d bytes, limit %d: %w", p, size, max, store.ErrTooLarge)
	}
	if max > 0 && fi.Size() > max {
		return nil, store.Object{}, tooLarge(fi.Size())
	}
	// The metadata is taken before reading: if the file changes meanwhile, a
	// compare-and-swap with this ETag fails rather than wrongly succeeding.
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, store.Object{}, s.wrap("get", p, err)
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, 4096)
		}
	}
	if max > 0 && int64(len(data)) > max {
		return nil, store.Object{}, tooLarge(int64(len(data)))
	}
	return data, object(p, fi), nil
}

// GetRange implements store.RangeReader with one positioned read.
func (s *Store) GetRange(ctx context.Context, path string, off, n int64) ([]byte, store.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, store.Object{}, err
	}
	p, err := store.CleanPath(path)
	if err != nil {
		return nil, store.Object{}, err
	}
	if off < 0 || n < 0 {
		return nil, store.Object{}, fmt.Errorf("fs: get %q: negative range", p)
	}
	disk, _, err := s.statFile(p)
	if err != nil {
		return nil, store.Object{}, s.wrap("get", p, err)
	}
	f, err := s.root.Open(disk)
	if err != nil {
		return nil, store.Object{}, s.wrap("get", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, store.Object{}, s.wrap("get", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, store.Object{}, s.wrap("get", p, os.ErrNotExist)
	}
	if off >= fi.Size() {
		return []byte{}, object(p, fi), nil
	}
	buf := make([]byte, min(n, fi.Size()-off))
	m, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, store.Object{}, s.wrap("get", p, err)
	}
	return buf[:m], object(p, fi), nil
}

// Put writes data to path atomically (temporary file, fsync, rename),
// creating parent folders. The data is written before the lock is taken;
// only the conditions and the rename are serialised.
func (s *Store) Put(ctx context.Context, path string, data []byte, opts store.PutOptions) (store.Object, error) {
	if err := ctx.Err(); err != nil {
		return store.Object{}, err
	}
	p, err := store.CleanPath(path)
	if err != nil {
		return store.Object{}, err
	}
	// Check once without the lock, so that a doomed write leaves no folders.
	disk, _, err := s.check(p, opts)
	if err != nil {
		return store.Object{}, err
	}
	dir, _ := splitDir(disk)
	if dir != "" {
		if err := s.root.MkdirAll(dir, s.dirMode()); err != nil {
			if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, os.ErrExist) {
				return store.Object{}, fmt.Errorf("fs: put %q: a parent is a file: %w", p, store.ErrConflict)
			}
			return store.Object{}, s.wrap("put", p, err)
		}
	}
	s.tidyTemps(dir)
	tmp, err := s.writeTemp(dir, data)
	if err != nil {
		return store.Object{}, s.wrap("put", p, err)
	}
	fi, err := s.commit(p, tmp, opts)
	if err != nil {
		s.root.Remove(tmp)
		return store.Object{}, err
	}
	if d, err := s.root.Open(orDot(dir)); err == nil {
		d.Sync() // best effort: some file systems cannot sync folders
		d.Close()
	}
	return object(p, fi), nil
}

// commit checks opts again under the lock and renames tmp over p. It
// returns the metadata the new file has.
func (s *Store) commit(p, tmp string, opts store.PutOptions) (os.FileInfo, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	disk, old, err := s.check(p, opts)
	if err != nil {
		return nil, err
	}
	if old != nil && !s.opts.Private {
		if err := s.root.Chmod(tmp, old.Mode().Perm()); err != nil {
			return nil, s.wrap("put", p, err)
		}
	}
	fi, err := s.root.Stat(tmp)
	if err != nil {
		return nil, s.wrap("put", p, err)
	}
	// With coarse clocks a same-size rewrite could keep the old ETag: nudge
	// the modification time forward, by ever larger steps for coarse file
	// systems, until it differs.
	for _, step := range []time.Duration{time.Microsecond, time.Second, 2 * time.Second} {
		if old == nil || etag(fi) != etag(old) {
			break
		}
		mt := old.ModTime().Add(step)
		if err := s.root.Chtimes(tmp, mt, mt); err != nil {
			return nil, s.wrap("put", p, err)
		}
		if fi, err = s.root.Stat(tmp); err != nil {
			return nil, s.wrap("put", p, err)
		}
	}
	if err := s.root.Rename(tmp, disk); err != nil {
		return nil, s.wrap("put", p, err)
	}
	return fi, nil
}

// check finds where p lives on disk and tests the conditions of opts
// against what is there; old is nil when there is no file.
func (s *Store) check(p string, opts store.PutOptions) (disk string, old os.FileInfo, err error) {
	disk, old, err = s.statFile(p)
	if err == nil {
		// A symlink inside the vault is not written: replacing it would
		// turn it into a copy, and writing through it would change a file
		// other than the one the caller's folders and the write-once paths
		// were checked for. Write the note it leads to.
		to, lerr := s.linkTarget(disk)
		switch {
		case lerr != nil:
			return "", nil, s.wrap("put", p, lerr)
		case to != disk:
			return "", nil, &store.PathError{Path: p, Reason: "leads to " + to + " (a symbolic link): write to that note, not to the link"}
		}
	}
	if dir := s.linkedFolder(disk); dir != "" {
		return "", nil, &store.PathError{Path: p, Reason: "leads through " + dir + ", a symbolic link to a folder: write under the folder it leads to"}
	}
	if err != nil {
		if !isNotExist(err) {
			return "", nil, s.wrap("put", p, err)
		}
		if fi, err := s.root.Lstat(disk); err == nil && fi.IsDir() {
			return "", nil, fmt.Errorf("fs: put %q: a folder has this path: %w", p, store.ErrConflict)
		}
		old = nil
	}
	switch {
	case opts.IfNoneMatch && old != nil:
		return "", nil, fmt.Errorf("fs: put %q: exists: %w", p, store.ErrConflict)
	case opts.IfMatch != "" && old == nil:
		return "", nil, fmt.Errorf("fs: put %q: missing, want ETag %q: %w", p, opts.IfMatch, store.ErrConflict)
	case opts.IfMatch != "" && etag(old) != opts.IfMatch:
		return "", nil, fmt.Errorf("fs: put %q: ETag %q, want %q: %w", p, etag(old), opts.IfMatch, store.ErrConflict)
	}
	return disk, old, nil
}

// linkedFolder returns the first folder of disk's path that is a symlink,
// "" when none is: a write there would land where the link leads, outside
// the path the caller's folders and the write-once paths were checked for.
func (s *Store) linkedFolder(disk string) string {
	for i := 0; i < len(disk); i++ {
		if disk[i] != '/' {
			continue
		}
		fi, err := s.root.Lstat(disk[:i])
		if err != nil {
			return "" // not there yet: created as a plain folder
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return disk[:i]
		}
	}
	return ""
}

// linkTarget follows disk while it is a symlink (at most 8 links) and
// returns the path, relative to the vault, its link text leads to (for
// messages: a symlinked folder on the way may lead elsewhere).
func (s *Store) linkTarget(disk string) (string, error) {
	for range 8 {
		fi, err := s.root.Lstat(disk)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return disk, nil
		}
		to, err := s.root.Readlink(disk)
		if err != nil {
			return "", err
		}
		to = filepath.ToSlash(to)
		if filepath.IsAbs(to) || strings.HasPrefix(to, "/") {
			return "", fmt.Errorf("symlink to %q: %w", to, store.ErrPathInvalid)
		}
		disk = path.Join(path.Dir(disk), to)
		if disk == ".." || strings.HasPrefix(disk, "../") {
			return "", fmt.Errorf("symlink leads outside the vault: %w", store.ErrPathInvalid)
		}
	}
	return "", fmt.Errorf("too many symlinks: %w", store.ErrPathInvalid)
}

// tempPrefix and tempSuffix frame the names of Put's temporary files.
const (
	tempPrefix = ".~sheaf-"
	tempSuffix = ".tmp"
	staleTemp  = time.Hour
)

// writeTemp writes data to a new hidden file in dir, synced to disk, and
// returns its name.
func (s *Store) writeTemp(dir string, data []byte) (string, error) {
	name := joinPath(dir, tempPrefix+rand.Text()+tempSuffix)
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, s.fileMode())
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.root.Remove(name)
		return "", err
	}
	return name, nil
}

// tidyTemps removes, once per folder and process, the temporary files a
// crashed write left in dir over an hour ago (a live write's is younger).
func (s *Store) tidyTemps(dir string) {
	if _, done := s.tidy.LoadOrStore(dir, true); done {
		return
	}
	f, err := s.root.Open(orDot(dir))
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		if !strings.HasPrefix(n, tempPrefix) || !strings.HasSuffix(n, tempSuffix) {
			continue
		}
		name := joinPath(dir, n)
		if fi, err := s.root.Lstat(name); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleTemp {
			s.root.Remove(name)
		}
	}
}

// Delete removes the file at path. A missing file is not an error, unless
// ifMatch is set: then it is ErrNotFound, and a different ETag ErrConflict.
func (s *Store) Delete(ctx context.Context, path string, ifMatch string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := store.CleanPath(path)
	if err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()

	disk, fi, err := s.statFile(p)
	if ifMatch != "" {
		if err != nil {
			return s.wrap("delete", p, err)
		}
		if etag(fi) != ifMatch {
			return fmt.Errorf("fs: delete %q: ETag %q, want %q: %w", p, etag(fi), ifMatch, store.ErrConflict)
		}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return s.wrap("delete", p, err)
	}
	// A dangling symlink has no ETag but is still removed.
	lfi, err := s.root.Lstat(disk)
	if err != nil || lfi.IsDir() {
		return nil
	}
	if err := s.root.Remove(disk); err != nil && !errors.Is(err, os.ErrNotExist) {
		return s.wrap("delete", p, err)
	}
	return nil
}

// List calls fn for every regular file under prefix. Hidden names (starting
// with '.') below prefix are skipped; prefix itself may be hidden. Names
// that CleanPath would refuse (invalid UTF-8, control characters, ...) are
// skipped too, since no caller could address them.
func (s *Store) List(ctx context.Context, prefix string, fn func(store.Object) error) error {
	pre, disk, ok, err := s.locateDir(prefix)
	if err != nil || !ok {
		return err
	}
	w := &walker{s: s, file: fn}
	if err := w.walk(ctx, disk, pre); err != nil {
		return err
	}
	if pre == "" {
		s.passedMu.Lock()
		s.passed = w.passed
		s.passedMu.Unlock()
	}
	return nil
}

// PassedOver implements store.Passer: the files the last List of the
// whole vault passed over, and why.
func (s *Store) PassedOver() map[string]string {
	s.passedMu.Lock()
	defer s.passedMu.Unlock()
	return maps.Clone(s.passed)
}

// Folders returns every folder under prefix, sorted, empty ones included,
// hidden ones (below prefix) and prefix itself excluded.
func (s *Store) Folders(ctx context.Context, prefix string) ([]string, error) {
	pre, disk, ok, err := s.locateDir(prefix)
	if err != nil {
		return nil, err
	}
	dirs := []string{}
	if !ok {
		return dirs, nil
	}
	w := &walker{s: s, dir: func(p string) error {
		dirs = append(dirs, p)
		return nil
	}}
	err = w.walk(ctx, disk, pre)
	if err != nil {
		return nil, err
	}
	slices.Sort(dirs)
	return dirs, nil
}

// locateDir cleans a prefix and finds its folder on disk; ok is false when
// there is no such folder.
func (s *Store) locateDir(prefix string) (pre, disk string, ok bool, err error) {
	pre, err = store.CleanDir(prefix)
	if err != nil || pre == "" {
		return pre, "", err == nil, err
	}
	disk, err = s.locate(pre)
	if err == nil {
		var fi os.FileInfo
		if fi, err = s.root.Stat(disk); err == nil {
			return pre, disk, fi.IsDir(), nil
		}
	}
	if err = s.wrap("list", pre, err); errors.Is(err, store.ErrNotFound) {
		return pre, "", false, nil
	}
	return pre, "", false, err
}

// walker is one walk of the vault's folders: List's and Folders'.
type walker struct {
	s      *Store
	file   func(store.Object) error // called for regular files, if set
	dir    func(string) error       // called for folders, if set
	passed map[string]string        // files passed over, and why
}

// walk visits the folder disk (named pre in NFC) recursively without
// following symlinks, calling file for regular files and dir for folders.
func (w *walker) walk(ctx context.Context, disk, pre string) error {
	s := w.s
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := s.root.Open(orDot(disk))
	if err != nil {
		if isNotExist(err) {
			return nil // removed while walking
		}
		return s.wrap("list", pre, err)
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return s.wrap("list", pre, err)
	}
	// Two names of one folder with one NFC form are one path: the first
	// on disk (the NFC spelling when there is one) is it, the other is
	// passed over.
	slices.SortStableFunc(entries, func(a, b iofs.DirEntry) int {
		return compareBool(norm.NFC.IsNormalString(b.Name()), norm.NFC.IsNormalString(a.Name()))
	})
	named := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p, err := store.CleanPath(joinPath(pre, name))
		if err != nil {
			w.pass(joinPath(pre, name), "the file name cannot be a vault path (it holds a control character or a backslash): rename the file to see it")
			continue
		}
		if named[p] {
			w.pass(p, "two files have this path, spelled in two Unicode normalisations (NFC and NFD): only one is seen; rename or remove the other")
			continue
		}
		named[p] = true
		switch t := e.Type(); {
		case t.IsDir():
			if w.dir != nil {
				if err := w.dir(p); err != nil {
					return err
				}
			}
			if err := w.walk(ctx, joinPath(disk, name), p); err != nil {
				return err
			}
		case t.IsRegular() && w.file != nil:
			fi, err := e.Info()
			if err != nil {
				continue // removed while walking
			}
			if err := w.file(object(p, fi)); err != nil {
				return err
			}
		}
	}
	return nil
}

// pass records a file (or folder) passed over.
func (w *walker) pass(p, why string) {
	if w.passed == nil {
		w.passed = map[string]string{}
	}
	w.passed[strings.ToValidUTF8(p, "\uFFFD")] = why
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// statFile finds the regular file at clean path p and returns its on-disk
// name and metadata (symlinks inside the vault are followed).
func (s *Store) statFile(p string) (string, os.FileInfo, error) {
	disk, err := s.locate(p)
	if err != nil {
		return disk, nil, err
	}
	fi, err := s.root.Stat(disk)
	if err != nil {
		return disk, nil, err
	}
	if !fi.Mode().IsRegular() {
		return disk, nil, fmt.Errorf("not a regular file: %w", os.ErrNotExist)
	}
	return disk, fi, nil
}

// locate returns the on-disk spelling of clean path p: each existing
// segment as it is spelled on disk (found by comparing NFC forms), the
// missing rest in NFC. It fails only when the path cannot be resolved
// inside the vault.
func (s *Store) locate(p string) (string, error) {
	_, err := s.root.Lstat(p)
	if err == nil {
		return p, nil
	}
	if !isNotExist(err) {
		return p, err
	}
	segs := strings.Split(p, "/")
	cur := ""
	for i, seg := range segs {
		cand := joinPath(cur, seg)
		_, err := s.root.Lstat(cand)
		if err == nil {
			cur = cand
			continue
		}
		if !isNotExist(err) {
			return p, err
		}
		name, ok := s.lookup(cur, seg)
		if !ok {
			return joinPath(cur, strings.Join(segs[i:], "/")), nil
		}
		cur = joinPath(cur, name)
	}
	return cur, nil
}

// lookup finds the entry of folder dir whose NFC form is seg, remembering
// the non-NFC names it sees. Only hits are cached, and verified on use.
func (s *Store) lookup(dir, seg string) (string, bool) {
	key := dir + "\x00" + seg
	s.namesMu.Lock()
	name, ok := s.names[key]
	s.namesMu.Unlock()
	if ok {
		if _, err := s.root.Lstat(joinPath(dir, name)); err == nil {
			return name, true
		}
	}
	f, err := s.root.Open(orDot(dir))
	if err != nil {
		return "", false
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	found := ""
	s.namesMu.Lock()
	defer s.namesMu.Unlock()
	for _, n := range names {
		nfc := norm.NFC.String(n)
		if nfc == n {
			continue // an NFC name would have been found by Lstat
		}
		if len(s.names) >= maxNames {
			clear(s.names)
		}
		s.names[dir+"\x00"+nfc] = n
		if nfc == seg && found == "" {
			found = n
		}
	}
	return found, found != ""
}

// wrap maps an error from the file system to the port's sentinels.
func (s *Store) wrap(op, p string, err error) error {
	switch {
	case isNotExist(err):
		return fmt.Errorf("fs: %s %q: %w", op, p, store.ErrNotFound)
	case s.escape != nil && errors.Is(err, s.escape):
		return &store.PathError{Path: p, Reason: "leads outside the vault through a symbolic link"}
	case errors.Is(err, syscall.ELOOP):
		return &store.PathError{Path: p, Reason: "goes through a loop of symbolic links"}
	case errors.Is(err, iofs.ErrPermission) || errors.Is(err, syscall.EROFS):
		return fmt.Errorf("fs: %s %q: the folder is read-only for this process (%v): make it writable, or serve it read-only: %w", op, p, err, store.ErrDenied)
	}
	return fmt.Errorf("fs: %s %q: %w", op, p, err)
}

func isNotExist(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func splitDir(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// MakeFolder creates the folder at path and its parents (storetest.FolderMaker).
// Existing folders are reused whatever their Unicode spelling on disk.
func (s *Store) MakeFolder(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := store.CleanPath(path)
	if err != nil {
		return err
	}
	disk, err := s.locate(p)
	if err != nil {
		return s.wrap("mkdir", p, err)
	}
	if err := s.root.MkdirAll(disk, s.dirMode()); err != nil {
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, os.ErrExist) {
			return fmt.Errorf("fs: mkdir %q: a file has this path: %w", p, store.ErrConflict)
		}
		return s.wrap("mkdir", p, err)
	}
	return nil
}
