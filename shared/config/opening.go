package config

import (
	"context"
	"io"
	"sync"
)

// opening is an index opened in the background: its users wait for the
// open (or for their context) and then use the index, or get the error
// that kept it from opening.
type opening[T io.Closer] struct {
	begin func()        // lets the open start (see Opened.Begin)
	ready chan struct{} // closed once ix or err is set
	ix    T
	err   error
	once  sync.Once // Close
}

// openInBackground opens an index with open in a goroutine, once gate is
// closed; begin closes it, and every wait calls it first.
func openInBackground[T io.Closer](gate <-chan struct{}, begin func(), open func() (T, error)) *opening[T] {
	o := &opening[T]{begin: begin, ready: make(chan struct{})}
	go func() {
		defer close(o.ready)
		<-gate
		o.ix, o.err = open()
	}()
	return o
}

// index waits for the open, or for ctx to end.
func (o *opening[T]) index(ctx context.Context) (T, error) {
	o.begin()
	select {
	case <-o.ready:
		return o.ix, o.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Close waits for the open and closes the index (once).
func (o *opening[T]) Close() error {
	o.begin()
	<-o.ready
	var err error
	o.once.Do(func() {
		if o.err == nil {
			err = o.ix.Close()
		}
	})
	return err
}
