// Package schemes is the registry behind the URL openers of the ports
// (store.Open, textindex.Open, vectors.Open): adapters register a URL
// scheme from their package's init, and a program can open the schemes of
// the adapters its main imports.
package schemes

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Registry maps URL schemes to the openers of one port.
type Registry[O any] struct {
	port    string
	what    string // what the port opens, for errors: "text indexes"
	mu      sync.RWMutex
	openers map[string]O
}

// New is an empty registry for the port named port (used in panics) that
// opens what (used in errors: "text indexes").
func New[O any](port, what string) *Registry[O] {
	return &Registry[O]{port: port, what: what, openers: map[string]O{}}
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

// Resolve parses rawurl, given as flag, and finds the opener of its
// scheme: an error when rawurl is not a URL with a scheme, and an
// *UnknownError when no adapter this program links registered it.
func (r *Registry[O]) Resolve(flag, rawurl string) (*url.URL, O, error) {
	var none O
	u, err := url.Parse(rawurl)
	if err != nil || u.Scheme == "" {
		return nil, none, fmt.Errorf("%s %q: not a URL", flag, rawurl)
	}
	o, ok := r.Lookup(u.Scheme)
	if !ok {
		return nil, none, r.Unknown(flag, u.Redacted(), u.Scheme)
	}
	return u, o, nil
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

// Unknown is the error of value, given as flag, whose scheme no adapter
// this program links registered.
func (r *Registry[O]) Unknown(flag, value, scheme string) *UnknownError {
	return &UnknownError{Flag: flag, Value: value, Scheme: scheme, What: r.what, Known: r.Schemes()}
}

// UnknownError is a location whose scheme this program cannot open. The
// configuration turns it into a refusal of the stable kind unsupported.
type UnknownError struct {
	Flag   string   // the setting that named it: "--search"
	Value  string   // its value, a URL with any password redacted
	Scheme string   // its scheme: "foo"
	What   string   // what the port opens: "text indexes"
	Known  []string // the schemes this program can open, sorted
}

func (e *UnknownError) Error() string { return fmt.Sprintf("%s %q: %s", e.Flag, e.Value, e.Reason()) }

// Reason is the error without the setting: what this program cannot open
// and what it can.
func (e *UnknownError) Reason() string {
	return fmt.Sprintf("this program cannot open %s: %s (it can open: %s)", e.Scheme, e.What, strings.Join(e.Known, ", "))
}
