// Package schemes is the registry behind the URL openers of the ports
// (store.Open, textindex.Open, vectors.Open): adapters register a URL
// scheme from their package's init, and a program can open the schemes of
// the adapters its main imports.
package schemes

import (
	"slices"
	"sync"
)

// Registry maps URL schemes to the openers of one port.
type Registry[O any] struct {
	port    string
	mu      sync.RWMutex
	openers map[string]O
}

// New is an empty registry for the port named port (used in panics).
func New[O any](port string) *Registry[O] {
	return &Registry[O]{port: port, openers: map[string]O{}}
}

// Register makes scheme open with o. It panics when the scheme is
// registered twice: two adapters linked for one scheme is a build mistake.
func (r *Registry[O]) Register(scheme string, o O) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.openers[scheme]; dup {
		panic(r.port + ": scheme " + scheme + " registered twice")
	}
	r.openers[scheme] = o
}

// Lookup is the opener of scheme, if one is registered.
func (r *Registry[O]) Lookup(scheme string) (O, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	o, ok := r.openers[scheme]
	return o, ok
}

// Schemes are the registered schemes, sorted.
func (r *Registry[O]) Schemes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.openers))
	for s := range r.openers {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
