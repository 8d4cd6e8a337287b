package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// httpAddr reads --http: host:port, or a bare port, which means
// 127.0.0.1:port (a person typing --http 8787 wants it on this machine).
func httpAddr(s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > 65535 {
			return "", fmt.Errorf("--http %s: a port is 0-65535", s)
		}
		return net.JoinHostPort("127.0.0.1", s), nil
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		return "", fmt.Errorf("--http %q: give host:port, e.g. 127.0.0.1:8787, or a port", s)
	}
	return s, nil
}

// listen listens on addr, saying what to do when it cannot.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return ln, nil
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s is in use (another sheaf serve?): stop that process, or pass another port, e.g. --http 127.0.0.1:8788", addr)
	case errors.Is(err, syscall.EACCES):
		return nil, fmt.Errorf("may not listen on %s (ports below 1024 need privileges): pick a port above 1024, e.g. --http 127.0.0.1:8787", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return nil, fmt.Errorf("%s is not an address of this machine: use 127.0.0.1, or 0.0.0.0 for every interface (with a key or token)", addr)
	}
	return nil, fmt.Errorf("--http %s: %w", addr, err)
}
