package embedded

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

// The file format (all integers little-endian or uvarint):
//
//	magic "SHEAFVEC", version uint32, dim uint32, model string
//	tag sets: count, then per set: count, keys (strings)
//	notes: count, then per note: path string, note hash string, point count, then per point:
//	    ordinal varint, hash string, heading string, tag set uvarint,
//	    dim float32s (unit length)
//	CRC-32C of everything above, uint32
//
// A string is a uvarint length and its bytes.
const (
	magic       = "SHEAFVEC"
	fileVersion = 2
	maxDim      = 1 << 16
	maxPoints   = math.MaxInt32
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// formatError marks a file that exists but cannot be used: the index then
// starts empty instead of failing.
type formatError struct{ msg string }

func (e *formatError) Error() string { return "embedded: index file: " + e.msg }

// Flush writes unsaved changes to the file atomically (a temporary file
// renamed over the old one). It does nothing for a memory-only index or when
// nothing changed. Searches continue while it writes; writers wait.
func (ix *Index) Flush(ctx context.Context) error {
	if ix.path == "" {
		return nil
	}
	ix.flushMu.Lock()
	defer ix.flushMu.Unlock()
	ix.mu.RLock()
	if ix.closed {
		ix.mu.RUnlock()
		return errClosed
	}
	gen := ix.gen
	if gen == ix.saved {
		ix.mu.RUnlock()
		return nil
	}
	err := ix.writeFile(ctx)
	ix.mu.RUnlock()
	if err != nil {
		return err
	}
	ix.mu.Lock()
	ix.saved = gen
	ix.mu.Unlock()
	return nil
}

// writeFile writes the index to a temporary file beside ix.path and renames
// it into place. The caller holds at least a read lock.
func (ix *Index) writeFile(ctx context.Context) (err error) {
	dir := filepath.Dir(ix.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("embedded: flush: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(ix.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("embedded: flush: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := ix.write(ctx, f); err != nil {
		return fmt.Errorf("embedded: flush: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("embedded: flush: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("embedded: flush: %w", err)
	}
	if err := os.Rename(f.Name(), ix.path); err != nil {
		return fmt.Errorf("embedded: flush: %w", err)
	}
	if d, err := os.Open(dir); err == nil { // make the rename durable; best effort
		d.Sync()
		d.Close()
	}
	return nil
}

// write encodes the index and its checksum to w.
func (ix *Index) write(ctx context.Context, w io.Writer) error {
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	e := &encoder{w: bw, buf: make([]byte, 0, 4*ix.space.Dim+binary.MaxVarintLen64)}
	ix.encode(ctx, e)
	if e.err != nil {
		return e.err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return binary.Write(w, binary.LittleEndian, crc.Sum32())
}

func (ix *Index) encode(ctx context.Context, w *encoder) {
	dim := ix.space.Dim
	w.bytes([]byte(magic))
	w.u32(fileVersion)
	w.u32(uint32(dim))
	w.str(ix.space.Model)
	w.uvarint(uint64(len(ix.tags.sets)))
	for _, s := range ix.tags.sets {
		w.uvarint(uint64(len(s.keys)))
		for _, k := range s.keys {
			w.str(k)
		}
	}
	w.uvarint(uint64(len(ix.byKey)))
	for _, n := range ix.notes {
		if n.path == "" {
			continue
		}
		if w.err == nil {
			w.err = ctx.Err()
		}
		w.str(n.path)
		w.str(n.hash)
		w.uvarint(uint64(len(n.points)))
		for _, i := range n.points {
			p := ix.pts[i]
			w.varint(int64(p.ordinal))
			w.str(p.hash)
			w.str(p.heading)
			w.uvarint(uint64(p.tagset))
			w.floats(ix.slab[int(i)*dim : int(i+1)*dim])
		}
	}
}

type encoder struct {
	w   *bufio.Writer
	buf []byte
	err error
}

func (e *encoder) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}
func (e *encoder) u32(v uint32) {
	e.bytes(binary.LittleEndian.AppendUint32(e.buf[:0], v))
}
func (e *encoder) floats(v []float32) {
	e.buf = e.buf[:0]
	for _, x := range v {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(x))
	}
	e.bytes(e.buf)
}
func (e *encoder) uvarint(v uint64) { e.bytes(binary.AppendUvarint(e.buf[:0], v)) }
func (e *encoder) varint(v int64)   { e.bytes(binary.AppendVarint(e.buf[:0], v)) }
func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// load reads ix.path into the empty ix. A missing file is no error; a file
// that cannot be used gives a *formatError.
func (ix *Index) load() error {
	f, err := os.Open(ix.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedded: open: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("embedded: open: %w", err)
	}
	if !st.Mode().IsRegular() {
		return &formatError{"not a regular file"}
	}
	return ix.read(f, st.Size())
}

// read decodes size bytes of r (body and checksum) into the empty ix.
func (ix *Index) read(r io.Reader, size int64) error {
	if size < int64(len(magic))+4+4 {
		return &formatError{"too short"}
	}
	crc := crc32.New(crcTable)
	body := io.TeeReader(io.LimitReader(r, size-4), crc)
	d := &decoder{r: bufio.NewReaderSize(body, int(min(size, 1<<20))), left: size - 4}
	if err := ix.decode(d); err != nil {
		return err
	}
	if d.left != 0 {
		return &formatError{"trailing bytes"}
	}
	var sum uint32
	if err := binary.Read(r, binary.LittleEndian, &sum); err != nil {
		return &formatError{"truncated checksum"}
	}
	if sum != crc.Sum32() {
		return &formatError{"checksum mismatch"}
	}
	ix.saved = ix.gen
	return nil
}

func (ix *Index) decode(d *decoder) error {
	if string(d.next(len(magic))) != magic {
		return d.fail("not a vector index file")
	}
	if v := d.u32(); v != fileVersion {
		return d.fail(fmt.Sprintf("format version %d, want %d", v, fileVersion))
	}
	dim := int(d.u32())
	if dim < 1 || dim > maxDim {
		return d.fail(fmt.Sprintf("dimension %d", dim))
	}
	ix.space = vectors.Space{Model: d.str(), Dim: dim}

	nsets := d.count(1)
	sets := make([][]string, 0, nsets)
	for range nsets {
		keys := make([]string, d.count(1))
		for k := range keys {
			keys[k] = d.str()
		}
		sets = append(sets, keys)
	}
	// Sets are interned as points use them; unused ones are dropped.
	ids := make([]int32, len(sets)) // file set -> ix.tags id
	used := make([]bool, len(sets))

	nnotes := d.count(2)
	if d.err == nil { // a point takes at least 4*dim+4 bytes: this is an upper bound
		ix.slab = make([]float32, 0, int(d.left/int64(4*dim+4))*dim)
	}
	for range nnotes {
		path := d.str()
		hash := d.str()
		npts := d.count(4 + 4*dim)
		if d.err != nil {
			break
		}
		if _, dup := ix.byKey[path]; dup || path == "" {
			return d.fail("bad or duplicate note path")
		}
		id := ix.newNote(path)
		ix.notes[id].hash = hash
		ix.notes[id].points = make([]int32, 0, npts)
		for range npts {
			p := point{note: id, ordinal: int(d.varint()), hash: d.str(), heading: d.str()}
			set := d.uvarint()
			if d.err != nil || set >= uint64(len(sets)) {
				return d.fail("bad tag set")
			}
			if !used[set] {
				used[set] = true
				ids[set] = ix.tags.add(sets[set])
			} else {
				ix.tags.sets[ids[set]].refs++
			}
			p.tagset = ids[set]
			raw := d.next(4 * dim)
			if d.err != nil {
				return d.err
			}
			if len(ix.pts) >= maxPoints {
				return d.fail("too many points")
			}
			for k := range dim {
				x := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return d.fail("vector is not finite")
				}
				ix.slab = append(ix.slab, x)
			}
			vectors.Normalize(ix.slab[len(ix.slab)-dim:]) // a stored vector is unit length or zero; keep it so
			ix.notes[id].points = append(ix.notes[id].points, int32(len(ix.pts)))
			ix.pts = append(ix.pts, p)
		}
	}
	if d.err != nil {
		return d.err
	}
	return nil
}

// decoder reads the file's body; every length is checked against the bytes
// left, so a corrupt header cannot make it allocate more than the file holds.
type decoder struct {
	r    *bufio.Reader
	left int64
	buf  []byte
	err  error
}

func (d *decoder) fail(msg string) error {
	if d.err == nil {
		d.err = &formatError{msg}
	}
	return d.err
}

// next returns the next n bytes, valid until the following call.
func (d *decoder) next(n int) []byte {
	if d.err != nil {
		return nil
	}
	if int64(n) > d.left {
		d.fail("truncated")
		return nil
	}
	if cap(d.buf) < n {
		d.buf = make([]byte, n)
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail("truncated")
		return nil
	}
	d.left -= int64(n)
	return b
}

func (d *decoder) u32() uint32 {
	b := d.next(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d)
	if err != nil {
		d.fail("bad number")
		return 0
	}
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d)
	if err != nil || v < math.MinInt || v > math.MaxInt {
		d.fail("bad number")
		return 0
	}
	return v
}

// ReadByte lets binary.ReadUvarint read through the byte budget.
func (d *decoder) ReadByte() (byte, error) {
	if d.left <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	b, err := d.r.ReadByte()
	if err == nil {
		d.left--
	}
	return b, err
}

// count reads a count of items each at least minSize bytes long.
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(d.left)/uint64(minSize) {
		d.fail("count exceeds file size")
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.count(1)
	return string(d.next(n))
}
