package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// Request bodies are bounded before the MCP layer sees them: one body is
// read whole (mcp-go reads it whole too), so an unbounded one is memory any
// client can take.
const (
	// DefaultMaxRequestBytes is the largest request body accepted by
	// default: a write of the largest note indexed (16 MiB), JSON-escaped
	// (quotes, backslashes and newlines take two bytes), and the envelope.
	DefaultMaxRequestBytes = 2*(16<<20) + 1<<20
	// DefaultBodyTimeout is how long a body may take to start arriving;
	// after that it must keep coming at MinBodyRate on average.
	DefaultBodyTimeout = 10 * time.Second
	// MinBodyRate is the slowest average rate a body may arrive at, in
	// bytes per second, after DefaultBodyTimeout: a client trickling a few
	// bytes now and then is cut off instead of holding a connection open.
	MinBodyRate = 64 << 10
)

// MaxRequestBytesFor is the request size limit that fits writes of notes of
// up to maxNote bytes (0: DefaultMaxRequestBytes).
func MaxRequestBytesFor(maxNote int64) int64 {
	if maxNote <= 0 {
		return DefaultMaxRequestBytes
	}
	return 2*maxNote + 1<<20
}

// bodyLimiter bounds what request bodies cost: each at most max bytes (413
// before reading when Content-Length says more, and as soon as a chunked
// one goes past it), read at MinBodyRate at least (408 otherwise), and all
// bodies being read or held beyond their first chunk (1 MiB: almost every
// call is smaller) within a shared budget of bytes, which a request waits
// for (503 when it waits too long), so that many big bodies at once cannot
// take the memory.
type bodyLimiter struct {
	max     int64
	timeout time.Duration
	budget  *byteBudget

	tidyMu  sync.Mutex
	tidying bool
	tidied  time.Time
}

func newBodyLimiter(max int64, timeout time.Duration) *bodyLimiter {
	if max <= 0 {
		max = DefaultMaxRequestBytes
	}
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	// Two bodies of the largest size at once; more wait their turn.
	return &bodyLimiter{max: max, timeout: timeout, budget: newByteBudget(2 * max)}
}

// errBodyBudget is a body that waited too long for the shared budget.
var errBodyBudget = errors.New("too many large requests at once")

// budgetWait is how long a body waits for the shared budget.
const budgetWait = 10 * time.Second

// read reads r's body, or writes the error answer and returns ok false.
// The body comes back as chunks (a body of 1 MiB or less as one): nothing
// is copied into a growing buffer, and release gives the chunks and the
// budget back once the body is no longer used.
func (l *bodyLimiter) read(w http.ResponseWriter, r *http.Request) (body *chunks, ok bool) {
	rc := http.NewResponseController(w)
	start := time.Now()
	deadline := func(read int64) time.Time {
		return start.Add(l.timeout + time.Duration(read)*time.Second/MinBodyRate)
	}
	_ = rc.SetReadDeadline(deadline(0)) // unsupported (Lambda: the body is in memory) is fine
	defer func() {
		if ok {
			_ = rc.SetReadDeadline(time.Time{})
		} else {
			// The server would read what is left of a refused body (up
			// to 256 KiB) to keep the connection: never wait for it.
			_ = rc.SetReadDeadline(time.Now())
		}
	}()
	if r.ContentLength > l.max {
		bodyTooLarge(w, l.max)
		return nil, false
	}
	body = &chunks{limiter: l}
	src := http.MaxBytesReader(w, r.Body, l.max)
	for {
		if len(body.parts) > 0 {
			// Every chunk after the first draws on the shared budget.
			if err := l.budget.acquire(r.Context(), chunkSize, budgetWait); err != nil {
				body.release()
				busy(w)
				return nil, false
			}
			body.held += chunkSize
		}
		c := getChunk()
		n, err := readFull(src, c, func(read int) { _ = rc.SetReadDeadline(deadline(body.size + int64(read))) })
		body.parts = append(body.parts, c[:n])
		body.size += int64(n)
		if err == io.EOF {
			return body, true
		}
		if err != nil {
			body.release()
			var mbe *http.MaxBytesError
			var ne net.Error
			switch {
			case errors.As(err, &mbe):
				bodyTooLarge(w, l.max)
			case errors.As(err, &ne) && ne.Timeout():
				w.Header().Set("Connection", "close")
				http.Error(w, fmt.Sprintf("Request Timeout: the body did not arrive at %d KiB/s", MinBodyRate>>10), http.StatusRequestTimeout)
			default: // the client went away
				w.Header().Set("Connection", "close")
				http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
			}
			return nil, false
		}
	}
}

// readFull fills c from r; it returns io.EOF when r ended (with c maybe
// part filled), nil when c is full. progress is called after each read.
func readFull(r io.Reader, c []byte, progress func(read int)) (int, error) {
	n := 0
	for n < len(c) {
		m, err := r.Read(c[n:])
		n += m
		if m > 0 {
			progress(n)
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// chunkSize is the size of the pieces a body is read in.
const chunkSize = 1 << 20

// getChunk allocates a chunk. Not from a pool: a pool would keep a burst's
// chunks through the collection that hands memory back (see tidy).
func getChunk() []byte { return make([]byte, chunkSize) }

// chunks is a body read in pieces.
type chunks struct {
	limiter *bodyLimiter
	parts   [][]byte
	size    int64
	held    int64 // drawn from the budget
}

// reader reads the body from its start.
func (b *chunks) reader() io.Reader {
	rs := make([]io.Reader, len(b.parts))
	for i, p := range b.parts {
		rs[i] = bytes.NewReader(p)
	}
	return io.MultiReader(rs...)
}

// head is the body's first chunk: all of a body of up to chunkSize bytes.
func (b *chunks) head() []byte { return b.parts[0] }

// whole reports whether head is the whole body.
func (b *chunks) whole() bool { return len(b.parts) == 1 }

// release drops the pieces and returns the budget; once a big body is
// released and no other holds the budget, the memory it took is handed
// back to the system soon after (see bodyLimiter.tidy).
func (b *chunks) release() {
	b.parts = nil
	if b.held > 0 {
		b.limiter.budget.release(b.held)
		b.limiter.tidy()
		b.held = 0
	}
}

// tidy hands memory back to the system a second after the last big body
// was released, at most every 5 s: otherwise an idle server keeps the
// peak of a burst of big bodies for minutes (until a forced collection
// and the scavenger), which is what a burst of abuse would leave behind.
func (l *bodyLimiter) tidy() {
	if !l.budget.idle() {
		return
	}
	l.tidyMu.Lock()
	defer l.tidyMu.Unlock()
	if l.tidying || time.Since(l.tidied) < 5*time.Second {
		return
	}
	l.tidying = true
	time.AfterFunc(time.Second, func() {
		if l.budget.idle() {
			debug.FreeOSMemory()
		}
		l.tidyMu.Lock()
		l.tidying, l.tidied = false, time.Now()
		l.tidyMu.Unlock()
	})
}

// bodyTooLarge writes the 413, closing the connection (nothing more is read
// from it).
func bodyTooLarge(w http.ResponseWriter, max int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, "Content Too Large: requests are limited to "+strconv.FormatInt(max, 10)+" bytes (--max-request-bytes)", http.StatusRequestEntityTooLarge)
}

func busy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "5")
	w.Header().Set("Connection", "close")
	http.Error(w, "Service Unavailable: "+errBodyBudget.Error()+"; try again shortly", http.StatusServiceUnavailable)
}

// byteBudget is a counting semaphore of bytes.
type byteBudget struct {
	mu    sync.Mutex
	free  int64
	total int64
	wake  chan struct{} // closed and replaced when bytes are released
}

func newByteBudget(total int64) *byteBudget {
	return &byteBudget{free: total, total: total, wake: make(chan struct{})}
}

// acquire takes n bytes, waiting at most wait for them; n larger than the
// whole budget waits for all of it.
func (b *byteBudget) acquire(ctx context.Context, n int64, wait time.Duration) error {
	n = min(n, b.total)
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		b.mu.Lock()
		if b.free >= n {
			b.free -= n
			b.mu.Unlock()
			return nil
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-t.C:
			return errBodyBudget
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// idle reports whether nothing is taken.
func (b *byteBudget) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.free == b.total
}

// release gives back n bytes taken by acquire.
func (b *byteBudget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.free = min(b.free+n, b.total)
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}
