// Package folder is the history adapter of folder vaults: versions are
// content-addressed blobs and an append-only log in a state folder outside
// the vault (the caller passes it; Sheaf uses the user's cache folder
// keyed by the vault's path).
//
// Layout under dir:
//
//	log                    append-only records, one per version or hold
//	lock                   flock'd by every writer (several processes may share dir)
//	blobs/ab/abcd...zst    one per distinct content: zstd of the bytes, named by SHA-256
//
// A log record is a 4-byte little-endian length, the CRC-32C of the
// payload (4 bytes), then the payload (JSON). A record that is cut short or
// whose checksum fails ends the log: a crash mid-append loses only that
// record, and the next writer truncates it away.
//
// Durability: Record writes the blob (to a temporary file, fsync, rename,
// fsync of its folder) before the log record that names it, then fsyncs the
// log, and returns only then: a version Record returned survives a power
// loss. Options.NoSync skips every fsync (tests; a benchmark's baseline).
//
// Each process keeps an index of the log in memory (by path, by ID, by
// transaction), built at Open and brought up to date before every call by
// reading what other processes appended since (one stat when nothing was).
// Version IDs are the records' sequence numbers.
package folder

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/store"
)

var (
	_ history.Store    = (*Store)(nil)
	_ history.Observer = (*Store)(nil)
)

// Defaults of Policy.
const (
	DefaultDays    = 30
	DefaultKeep    = 10
	DefaultOpenFor = time.Hour
	// DefaultPruneEvery is how often Record prunes by itself.
	DefaultPruneEvery = time.Hour
	// ExternalGrace is how recent an OpExternal version must be for a
	// Sheaf write of the same content to take its place (the watcher saw
	// the write before the writer recorded it).
	ExternalGrace = 2 * time.Minute
)

// Policy says which versions Prune keeps. A version that is no longer its
// path's newest is pruned only when all of these allow it:
//   - it stopped being current more than Days days ago;
//   - at least Keep newer versions of its path remain;
//   - no open transaction needs it: it is neither a version of an open
//     transaction nor the version one of those replaced (undo needs it).
//
// A path's newest version (its current content, or the tombstone of a
// deleted note) is never pruned.
type Policy struct {
	Days int // 0: DefaultDays; < 0: no minimum age
	Keep int // 0: DefaultKeep; < 0: none
	// OpenFor: a transaction with a version recorded in the last OpenFor
	// is open (as is one held by Hold). 0: DefaultOpenFor.
	OpenFor time.Duration
}

func (p Policy) days() time.Duration {
	switch {
	case p.Days == 0:
		return DefaultDays * 24 * time.Hour
	case p.Days < 0:
		return 0
	}
	return time.Duration(p.Days) * 24 * time.Hour
}

func (p Policy) keep() int {
	switch {
	case p.Keep == 0:
		return DefaultKeep
	case p.Keep < 0:
		return 0
	}
	return p.Keep
}

func (p Policy) openFor() time.Duration {
	if p.OpenFor <= 0 {
		return DefaultOpenFor
	}
	return p.OpenFor
}

// Options configure a Store.
type Options struct {
	Policy Policy
	// PruneEvery: Record prunes when the last prune is older; 0:
	// DefaultPruneEvery; < 0: only Prune prunes.
	PruneEvery time.Duration
	NoSync     bool             // skip fsync (see the package doc)
	Now        func() time.Time // nil: time.Now
}

// Store is the history of one vault in a folder. It is safe for concurrent
// use, and several processes may open the same folder.
type Store struct {
	dir  string
	opts Options

	mu      sync.Mutex
	idx     *index
	logInfo os.FileInfo // the log file indexed
	logSize int64       // bytes of it indexed (whole records)

	lastPrune time.Time

	enc *zstd.Encoder
	dec *zstd.Decoder
}

// record is one log record: a version, or a hold on a transaction.
type record struct {
	Seq uint64 `json:"seq"`
	// Version, with the ID the string of Seq.
	V *history.Version `json:"v,omitempty"`
	// Replaces is the ID of an OpExternal version this one stands for.
	Replaces string `json:"replaces,omitempty"`
	// Hold keeps transaction Hold open until Until.
	Hold  string    `json:"hold,omitempty"`
	Until time.Time `json:"until,omitzero"`
}

// Open opens (creating it) the history folder dir.
func Open(dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, opts: opts, enc: enc, dec: dec}
	err = s.locked(func() error { return s.refresh(true) })
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Close releases the store's resources.
func (s *Store) Close() error {
	s.dec.Close()
	return s.enc.Close()
}

func (s *Store) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Store) logPath() string { return filepath.Join(s.dir, "log") }

// locked runs fn holding s.mu and the folder's flock.
func (s *Store) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("history: lock: %w", err)
	}
	defer unlockFile(f)
	return fn()
}

// refresh brings the index up to date with the log: reloads it when the
// file was replaced (a prune), reads what was appended otherwise. With
// repair (the flock held), a torn last record is truncated away.
func (s *Store) refresh(repair bool) error {
	fi, err := os.Stat(s.logPath())
	if errors.Is(err, os.ErrNotExist) {
		s.idx, s.logInfo, s.logSize = newIndex(), nil, 0
		return nil
	}
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	from := s.logSize
	if s.idx == nil || s.logInfo == nil || !os.SameFile(fi, s.logInfo) || fi.Size() < s.logSize {
		s.idx, from = newIndex(), 0
	} else if fi.Size() == s.logSize {
		s.logInfo = fi
		return nil
	}
	f, err := os.Open(s.logPath())
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(opened, fi) || from > opened.Size() {
		// Replaced (a prune in another process) between the stat and the
		// open: read the new file whole.
		s.idx, from = newIndex(), 0
	}
	fi = opened
	data := make([]byte, fi.Size()-from)
	if _, err := f.ReadAt(data, from); err != nil && err != io.EOF {
		return fmt.Errorf("history: read log: %w", err)
	}
	good := 0
	for good < len(data) {
		rec, n, ok := decodeRecord(data[good:])
		if !ok {
			break
		}
		s.idx.add(rec)
		good += n
	}
	s.logInfo, s.logSize = fi, from+int64(good)
	if repair && s.logSize < fi.Size() {
		if err := os.Truncate(s.logPath(), s.logSize); err != nil {
			return fmt.Errorf("history: truncate torn log record: %w", err)
		}
		if s.logInfo, err = os.Stat(s.logPath()); err != nil {
			return err
		}
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxRecord bounds one record (a version's JSON is a few hundred bytes;
// paths are at most a few KB).
const maxRecord = 1 << 20

func encodeRecord(rec *record) ([]byte, error) {
	payload, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 8, 8+len(payload))
	binary.LittleEndian.PutUint32(buf[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[4:], crc32.Checksum(payload, castagnoli))
	return append(buf, payload...), nil
}

// decodeRecord reads the record at the start of b; ok is false when it is
// cut short or damaged.
func decodeRecord(b []byte) (rec *record, n int, ok bool) {
	if len(b) < 8 {
		return nil, 0, false
	}
	size := int(binary.LittleEndian.Uint32(b))
	if size > maxRecord || len(b) < 8+size {
		return nil, 0, false
	}
	payload := b[8 : 8+size]
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0, false
	}
	rec = new(record)
	if err := json.Unmarshal(payload, rec); err != nil {
		return nil, 0, false
	}
	if rec.V != nil {
		rec.V.ID = strconv.FormatUint(rec.Seq, 10)
	}
	return rec, 8 + size, true
}

// appendRecords writes records at the end of the log (s.mu and the flock
// held, the index fresh) and indexes them.
func (s *Store) appendRecords(recs []*record) error {
	var buf bytes.Buffer
	for _, r := range recs {
		b, err := encodeRecord(r)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	f, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteAt(buf.Bytes(), s.logSize); err != nil {
		return fmt.Errorf("history: append: %w", err)
	}
	if !s.opts.NoSync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("history: sync log: %w", err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if s.logInfo == nil && !s.opts.NoSync {
		syncDir(s.dir)
	}
	for _, r := range recs {
		s.idx.add(r)
	}
	s.logInfo, s.logSize = fi, s.logSize+int64(buf.Len())
	return nil
}

// syncDir fsyncs a folder, so that a file created or renamed in it stays.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func (s *Store) blobPath(hash string) string {
	return filepath.Join(s.dir, "blobs", hash[:2], hash+".zst")
}

// putBlob stores data under its hash unless it is there already.
func (s *Store) putBlob(hash string, data []byte) error {
	p := s.blobPath(hash)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(s.enc.EncodeAll(data, nil))
	if err == nil && !s.opts.NoSync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		return fmt.Errorf("history: write blob: %w", err)
	}
	if !s.opts.NoSync {
		syncDir(dir)
	}
	return nil
}

func (s *Store) readBlob(hash string) ([]byte, error) {
	z, err := os.ReadFile(s.blobPath(hash))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("history: content %s: %w", hash, history.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	data, err := s.dec.DecodeAll(z, nil)
	if err != nil {
		return nil, fmt.Errorf("history: content %s: %w", hash, err)
	}
	if history.Hash(data) != hash {
		return nil, fmt.Errorf("history: content %s is damaged", hash)
	}
	return data, nil
}

// Record implements history.Store.
func (s *Store) Record(ctx context.Context, changes ...history.Change) ([]history.Version, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, c := range changes {
		if _, err := store.CleanPath(c.Path); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		if c.Op == "" {
			return nil, fmt.Errorf("history: record %q: no op", c.Path)
		}
	}
	out := make([]history.Version, len(changes))
	err := s.locked(func() error {
		if err := s.refresh(true); err != nil {
			return err
		}
		var recs []*record
		pend := s.idx.pending()
		for i, c := range changes {
			v, rs, err := s.prepare(pend, c)
			if err != nil {
				return err
			}
			out[i] = v
			recs = append(recs, rs...)
		}
		if len(recs) == 0 {
			return nil
		}
		return s.appendRecords(recs)
	})
	if err != nil {
		return nil, err
	}
	s.maybePrune(ctx)
	return out, nil
}

// prepare turns one change into records (its blob written), staged in pend
// so that later changes of one Record call see it.
func (s *Store) prepare(pend *pending, c history.Change) (history.Version, []*record, error) {
	now := c.Time.UTC()
	if c.Time.IsZero() {
		now = s.now()
	}
	var recs []*record
	head := pend.head(c.Path)
	v := history.Version{
		Path: c.Path, Time: now, Author: c.Author, Tool: c.Tool, Transaction: c.Transaction,
		Op: c.Op, From: c.From, To: c.To, Merged: c.Merged, Restored: c.Restored,
	}
	if !c.Op.Deletes() {
		v.Hash, v.Size = history.Hash(c.Data), int64(len(c.Data))
	}
	if c.Op == history.OpExternal {
		v.Author = history.ExternalAuthor
		if head != nil && head.V.Hash == v.Hash && head.V.Deleted() == v.Deleted() {
			return *head.V, nil, nil // seen before
		}
	}
	// A Sheaf write the watcher saw first: this version stands for the
	// external one.
	replaces := ""
	if c.Op != history.OpExternal && head != nil && head.V.Author.Subject == history.External &&
		head.V.Hash == v.Hash && head.V.Deleted() == v.Deleted() && now.Sub(head.V.Time) < ExternalGrace {
		replaces = head.V.ID
		head = pend.byID(head.V.Parent)
	}
	// What the write replaced, when history does not hold it as the newest.
	if c.Prev != nil && (head == nil || head.V.Deleted() || head.V.Hash != history.Hash(c.Prev)) {
		if err := s.putBlob(history.Hash(c.Prev), c.Prev); err != nil {
			return history.Version{}, nil, err
		}
		prev := &record{Seq: pend.next(), V: &history.Version{
			Path: c.Path, Hash: history.Hash(c.Prev), Size: int64(len(c.Prev)), Time: now,
			Author: history.ExternalAuthor, Op: history.OpExternal,
		}}
		if head != nil {
			prev.V.Parent = head.V.ID
		}
		prev.V.ID = strconv.FormatUint(prev.Seq, 10)
		pend.add(prev)
		recs = append(recs, prev)
		head = prev
	}
	if head != nil {
		v.Parent = head.V.ID
	}
	if c.Op == history.OpMove && c.From != "" {
		// The parent of a moved note is its last version at the old path.
		if from := pend.head(c.From); from != nil && !from.V.Deleted() {
			v.Parent = from.V.ID
		}
	}
	if !v.Deleted() {
		if err := s.putBlob(v.Hash, c.Data); err != nil {
			return history.Version{}, nil, err
		}
	}
	rec := &record{Seq: pend.next(), V: &v, Replaces: replaces}
	v.ID = strconv.FormatUint(rec.Seq, 10)
	pend.add(rec)
	return v, append(recs, rec), nil
}

// Hold keeps transaction tx open (its versions and what they replaced
// unpruned) until until, whatever its age: an explicit lease, for an undo
// the caller means to make later.
func (s *Store) Hold(ctx context.Context, tx string, until time.Time) error {
	if tx == "" {
		return errors.New("history: hold: no transaction id")
	}
	return s.locked(func() error {
		if err := s.refresh(true); err != nil {
			return err
		}
		return s.appendRecords([]*record{{Seq: s.idx.seq + 1, Hold: tx, Until: until.UTC()}})
	})
}

// read runs fn with s.mu held and the index fresh.
func (s *Store) read(ctx context.Context, fn func(*index) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(false); err != nil {
		return err
	}
	return fn(s.idx)
}

// List implements history.Store.
func (s *Store) List(ctx context.Context, path string, opts history.ListOptions) (history.Page, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = history.DefaultLimit
	}
	var page history.Page
	err := s.read(ctx, func(ix *index) error {
		chain := ix.chain(path)
		start := 0
		if opts.After != "" {
			i := slices.IndexFunc(chain, func(e *record) bool { return e.V.ID == opts.After })
			if i < 0 {
				return fmt.Errorf("history: %s: no version %q: %w", path, opts.After, history.ErrNotFound)
			}
			start = i + 1
		}
		end := min(len(chain), start+limit)
		page.Versions = make([]history.Version, 0, end-start)
		for _, e := range chain[start:end] {
			page.Versions = append(page.Versions, *e.V)
		}
		page.More = end < len(chain)
		return nil
	})
	return page, err
}

// Read implements history.Store.
func (s *Store) Read(ctx context.Context, path, id string) ([]byte, history.Version, error) {
	var v history.Version
	err := s.read(ctx, func(ix *index) error {
		for _, e := range ix.chain(path) {
			if e.V.ID == id {
				v = *e.V
				return nil
			}
		}
		return fmt.Errorf("history: %s: no version %q: %w", path, id, history.ErrNotFound)
	})
	if err != nil {
		return nil, history.Version{}, err
	}
	if v.Deleted() {
		return nil, v, fmt.Errorf("history: %s: version %s is a %s, without content: %w", path, id, v.Op, history.ErrNotFound)
	}
	data, err := s.readBlob(v.Hash)
	return data, v, err
}

// Find implements history.Store.
func (s *Store) Find(ctx context.Context, path, hash string) (history.Version, error) {
	var v history.Version
	err := s.read(ctx, func(ix *index) error {
		for _, e := range ix.chain(path) {
			if !e.V.Deleted() && e.V.Hash == hash {
				v = *e.V
				return nil
			}
		}
		return fmt.Errorf("history: %s: no version with hash %s: %w", path, hash, history.ErrNotFound)
	})
	return v, err
}

// Transaction implements history.Store.
func (s *Store) Transaction(ctx context.Context, id string) ([]history.Version, error) {
	var out []history.Version
	err := s.read(ctx, func(ix *index) error {
		for _, e := range ix.byTx[id] {
			if !ix.replaced[e.V.ID] {
				out = append(out, *e.V)
			}
		}
		return nil
	})
	return out, err
}

// Seen implements history.Observer: an external change to a note history
// already holds becomes an OpExternal version.
func (s *Store) Seen(ctx context.Context, path string, data []byte, obj store.Object) error {
	return s.observe(ctx, path, data, obj, false)
}

// Gone implements history.Observer: a note history holds that was deleted
// outside Sheaf gets an OpDelete version by the external author.
func (s *Store) Gone(ctx context.Context, path string) error {
	return s.observe(ctx, path, nil, store.Object{}, true)
}

func (s *Store) observe(ctx context.Context, path string, data []byte, obj store.Object, gone bool) error {
	var head *history.Version
	err := s.read(ctx, func(ix *index) error {
		if e := ix.head(path); e != nil {
			head = e.V
		}
		return nil
	})
	if err != nil || head == nil {
		return err
	}
	switch {
	case gone && head.Deleted():
		return nil
	case !gone && !head.Deleted() && head.Hash == history.Hash(data):
		return nil
	}
	c := history.Change{Path: path, Op: history.OpExternal, Data: data, Tool: "indexer", Object: obj}
	if gone {
		c.Op = history.OpDelete
		c.Author = history.ExternalAuthor
	}
	_, err = s.Record(ctx, c)
	return err
}
