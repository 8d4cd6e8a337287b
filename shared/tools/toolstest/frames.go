package toolstest

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// Frames measures the JSON-RPC frames a client receives: over stdio, the
// newline-delimited lines of the server's output (wrap it with Reader);
// over HTTP, each response body (use Client). Max is the largest seen but
// for tools/list answers (the catalogue of tools, not a tool's result).
type Frames struct {
	mu      sync.Mutex
	max     int
	count   int
	cur     []byte // the stdio line being read
	maxHead string // the largest frame's first bytes
}

// toolsList is the key only a tools/list answer has: in a tool's result
// the same bytes would be escaped.
var toolsList = []byte(`"tools":[`)

// Max is the largest frame seen, in bytes, and how many frames there were.
func (f *Frames) Max() (bytes, frames int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.max, f.count
}

// Largest is the start of the largest frame, to tell which answer it was.
func (f *Frames) Largest() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxHead
}

func (f *Frames) frame(b []byte) {
	if bytes.Contains(b, toolsList) {
		return
	}
	f.count++
	if len(b) > f.max {
		f.max, f.maxHead = len(b), string(b[:min(len(b), 160)])
	}
}

// Reader wraps a stdio server's output.
func (f *Frames) Reader(r io.ReadCloser) io.ReadCloser { return &frameReader{r, f} }

type frameReader struct {
	io.ReadCloser
	f *Frames
}

func (r *frameReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.f.mu.Lock()
	for chunk := p[:n]; len(chunk) > 0; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			r.f.cur = append(r.f.cur, chunk...)
			break
		}
		r.f.cur = append(r.f.cur, chunk[:i]...)
		r.f.frame(r.f.cur)
		r.f.cur = r.f.cur[:0]
		chunk = chunk[i+1:]
	}
	r.f.mu.Unlock()
	return n, err
}

// Client is an HTTP client that measures every response body.
func (f *Frames) Client() *http.Client {
	return &http.Client{Transport: roundTripper{f}}
}

type roundTripper struct{ f *Frames }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	rt.f.mu.Lock()
	rt.f.frame(body)
	rt.f.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}
