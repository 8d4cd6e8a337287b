package testbin

import (
	"net"
	"sync"
	"testing"
)

// Silent starts a listener on a free 127.0.0.1 port that accepts
// connections and never answers, the stand-in for a hung service, and
// returns its base URL, http://127.0.0.1:PORT. The listener and every
// connection it accepted are closed when the test ends.
func Silent(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}
