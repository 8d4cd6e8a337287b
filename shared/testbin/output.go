package testbin

import (
	"bytes"
	"sync"
)

// MaxOutput is how much of a process's output an Output keeps.
const MaxOutput = 1 << 20

// Output collects what a child process prints (set it as the command's
// Stdout and Stderr) while the test reads it: safe for concurrent use, it
// keeps the first MaxOutput bytes and drops the rest. The zero Output is
// ready to use.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps what fits under MaxOutput and always reports success, so that
// a chatty process is never stopped by a full buffer.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if room := MaxOutput - o.buf.Len(); room > 0 {
		o.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns the output kept so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
