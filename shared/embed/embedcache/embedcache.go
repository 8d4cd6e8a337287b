// Package embedcache keeps vectors on disk between runs of an evaluation
// harness: an embed.Embedder that answers from a file for texts it has seen
// and asks the one it wraps for the rest. Entries are keyed by the SHA-256
// of the model name and the text, so a changed text, or another model, is
// a miss. It is for tests and benchmarks (the USE-lite server embeds about
// 100 texts a second on two cores); the server keeps its own vectors. It
// has no EmbedQuery, so it embeds queries as documents: right only for
// models without task prefixes, such as USE-lite.
package embedcache

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/embed"
)

// Cache is an embed.Embedder backed by a file. Safe for concurrent use.
type Cache struct {
	model string
	dims  int
	open  func() (embed.Embedder, error) // the wrapped embedder, started on the first miss

	mu    sync.Mutex
	inner embed.Embedder
	file  *os.File
	seen  map[[32]byte][]float32
	// Misses counts the texts sent to the wrapped embedder.
	Misses int
}

var _ embed.Embedder = (*Cache)(nil)

// Open opens (or creates) the cache file path for vectors of model with
// dims dimensions. open returns the embedder to ask on a miss; it is
// called at most once, on the first miss, so a harness whose vectors are
// all cached never starts its embeddings server.
func Open(path, model string, dims int, open func() (embed.Embedder, error)) (*Cache, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("embedcache: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("embedcache: %w", err)
	}
	c := &Cache{model: model, dims: dims, open: open, file: f, seen: map[[32]byte][]float32{}}
	if err := c.load(); err != nil {
		f.Close()
		return nil, fmt.Errorf("embedcache: %s: %w", path, err)
	}
	return c, nil
}

// entry is a key and dims little-endian float32s.
func (c *Cache) entrySize() int { return 32 + 4*c.dims }

// load reads every whole entry; a torn last entry (a crash mid-append) is
// cut off.
func (c *Cache) load() error {
	r := bufio.NewReader(c.file)
	buf := make([]byte, c.entrySize())
	var good int64
	for {
		_, err := io.ReadFull(r, buf)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return err
		}
		var k [32]byte
		copy(k[:], buf)
		v := make([]float32, c.dims)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[32+4*i:]))
		}
		c.seen[k] = v
		good += int64(len(buf))
	}
	if err := c.file.Truncate(good); err != nil {
		return err
	}
	_, err := c.file.Seek(good, io.SeekStart)
	return err
}

func (c *Cache) key(text string) [32]byte {
	return sha256.Sum256([]byte(c.model + "\x00" + text))
}

// Embed answers from the file, asking the wrapped embedder for the texts
// it has not seen and appending them.
func (c *Cache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]float32, len(texts))
	var missing []string
	var at []int
	for i, t := range texts {
		if v, ok := c.seen[c.key(t)]; ok {
			out[i] = v
		} else {
			missing = append(missing, t)
			at = append(at, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	if c.inner == nil {
		e, err := c.open()
		if err != nil {
			return nil, err
		}
		c.inner = e
	}
	// Small batches, each appended as it comes: a slow server answers
	// each well within its timeout, and what was embedded is kept.
	for start := 0; start < len(missing); start += batch {
		end := min(start+batch, len(missing))
		if err := c.fetch(ctx, missing[start:end], at[start:end], out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// batch is how many texts go to the wrapped embedder at once.
const batch = 32

// fetch embeds missing texts, appends them to the file and puts them in
// out at the indexes at.
func (c *Cache) fetch(ctx context.Context, missing []string, at []int, out [][]float32) error {
	vs, err := c.inner.Embed(ctx, missing)
	if err != nil {
		return err
	}
	if len(vs) != len(missing) {
		return fmt.Errorf("embedcache: %d vectors for %d texts", len(vs), len(missing))
	}
	c.Misses += len(missing)
	w := bufio.NewWriter(c.file)
	buf := make([]byte, c.entrySize())
	for j, v := range vs {
		if len(v) != c.dims {
			return fmt.Errorf("embedcache: a vector of %d dimensions, want %d", len(v), c.dims)
		}
		k := c.key(missing[j])
		copy(buf, k[:])
		for i, x := range v {
			binary.LittleEndian.PutUint32(buf[32+4*i:], math.Float32bits(x))
		}
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("embedcache: %w", err)
		}
		c.seen[k] = v
		out[at[j]] = v
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("embedcache: %w", err)
	}
	return nil
}

// Model is the cached model's name.
func (c *Cache) Model() string { return c.model }

// Dimensions is the vectors' length.
func (c *Cache) Dimensions() int { return c.dims }

// Close closes the file.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.file.Close()
}
