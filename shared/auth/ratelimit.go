package auth

import (
	"sync"
	"time"
)

// DefaultMaxIdentities bounds how many identities a Limiter tracks at once.
const DefaultMaxIdentities = 10_000

// Limiter is a sliding-window rate limit per identity: at most n calls in
// any window. It keeps each identity's call times of the last window (at
// most n), forgets identities idle for a whole window, and tracks at most
// DefaultMaxIdentities identities (past that, the least recently seen one
// is forgotten, which can only ever let a call through). Safe for
// concurrent use.
type Limiter struct {
	n      int
	window time.Duration

	mu    sync.Mutex
	calls map[string]*history
	sweep time.Time // next time idle identities are swept
	max   int
}

// history is one identity's recent call times, oldest first, in a ring.
type history struct {
	times []time.Time // len <= n
	start int         // index of the oldest
	last  time.Time
}

// NewLimiter allows n calls per identity in any window. n < 1 allows none.
func NewLimiter(n int, window time.Duration) *Limiter {
	return &Limiter{n: n, window: window, calls: map[string]*history{}, max: DefaultMaxIdentities}
}

// Allow records a call by identity at now when it is within the limit. When
// it is not, ok is false and retryAfter is how long until the oldest call in
// the window leaves it (the call is not recorded).
func (l *Limiter) Allow(identity string, now time.Time) (ok bool, retryAfter time.Duration) {
	if l.n < 1 {
		return false, l.window
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepIdle(now)
	h := l.calls[identity]
	if h == nil {
		l.evictOldest()
		h = &history{times: make([]time.Time, 0, min(l.n, 16))}
		l.calls[identity] = h
	}
	h.last = now
	if len(h.times) < l.n {
		h.times = append(h.times, now)
		return true, 0
	}
	oldest := h.times[h.start]
	if wait := oldest.Add(l.window).Sub(now); wait > 0 {
		return false, min(wait, l.window) // a clock that stepped back waits a window at most
	}
	h.times[h.start] = now
	h.start = (h.start + 1) % len(h.times)
	return true, 0
}

// sweepIdle forgets identities idle for a whole window (they have no call
// left in it), at most once a window.
func (l *Limiter) sweepIdle(now time.Time) {
	if !now.After(l.sweep) {
		return
	}
	for id, h := range l.calls {
		if now.Sub(h.last) >= l.window {
			delete(l.calls, id)
		}
	}
	l.sweep = now.Add(l.window)
}

// evictOldest makes room for one more identity by forgetting the least
// recently seen ones.
func (l *Limiter) evictOldest() {
	for len(l.calls) >= l.max {
		var oldest string
		var at time.Time
		for id, h := range l.calls {
			if oldest == "" || h.last.Before(at) {
				oldest, at = id, h.last
			}
		}
		delete(l.calls, oldest)
	}
}

// Len is the number of identities tracked (for tests and metrics).
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}
