package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/testbin"
)

// bodyServer starts `sheaf serve --http` on the sample vault and returns
// its endpoint and pid.
func bodyServer(t testing.TB, extra ...string) (string, int) {
	t.Helper()
	return serveHTTP(t, freeAddr(t), append([]string{"--vault", sampleVault(t), "--no-watch"}, extra...)...)
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// sendBody POSTs size bytes (with a Content-Length, or chunked) and returns
// the status (0 when the server closed the connection first).
func sendBody(endpoint string, size int64, chunked bool) int {
	req, _ := http.NewRequest(http.MethodPost, endpoint, io.LimitReader(spaces{}, size))
	if !chunked {
		req.ContentLength = size
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// bodyRound sends n bodies of size at once and returns their statuses,
// the server's peak resident memory meanwhile (KiB) and the slowest
// get_vault_info another client got meanwhile.
func bodyRound(t testing.TB, endpoint string, pid, n int, size int64, chunked bool, s *mcp.ClientSession) ([]int, float64, time.Duration) {
	t.Helper()
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { codes[i] = sendBody(endpoint, size, chunked) })
	}
	done := make(chan struct{})
	var peak float64
	var slowest time.Duration
	go func() {
		defer close(done)
		for {
			rss, _ := testbin.Memory(pid)
			peak = max(peak, rss)
			start := time.Now()
			var info map[string]any
			callJSON(t, s, "get_vault_info", nil, &info)
			slowest = max(slowest, time.Since(start))
			select {
			case <-stop(&wg):
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	wg.Wait()
	<-done
	rss, _ := testbin.Memory(pid)
	return codes, max(peak, rss), slowest
}

// stop is closed once wg is done.
func stop(wg *sync.WaitGroup) <-chan struct{} {
	c := make(chan struct{})
	go func() { wg.Wait(); close(c) }()
	return c
}

// TestBigBodiesBounded: bodies of 100 MB, one and ten at once, with a
// Content-Length or chunked, are answered 413 (the chunked ones as soon as
// they pass the limit, or by closing the connection), the server's memory
// stays within a stated budget meanwhile, and other clients keep being
// answered. Before the limit one such body took the server from 62 MB to
// 594 MB, ten to 9.97 GB.
func TestBigBodiesBounded(t *testing.T) {
	endpoint, pid := bodyServer(t)
	s := httpSession(t, endpoint)
	var info map[string]any
	callJSON(t, s, "get_vault_info", nil, &info)
	base, _ := testbin.Memory(pid)
	if base == 0 {
		testbin.Missing(t, fmt.Errorf("no /proc to read the server's memory from"))
	}
	// The budget: the default limit is 33 MiB and two such bodies may be
	// held at once (the rest wait); the garbage collector may let the heap
	// grow to twice what is live.
	const budgetKiB = 256 << 10
	for _, c := range []struct {
		n       int
		chunked bool
	}{{1, false}, {10, false}, {1, true}, {10, true}} {
		codes, peak, slowest := bodyRound(t, endpoint, pid, c.n, 100<<20, c.chunked, s)
		for i, code := range codes {
			// Chunked: 413 once past the limit, a closed connection when
			// the server stops reading first, or 503 for those beyond the
			// two big bodies the server holds at once.
			if code != http.StatusRequestEntityTooLarge && !(c.chunked && (code == 0 || code == http.StatusServiceUnavailable)) {
				t.Errorf("%d x 100 MB (chunked %v): body %d answered %d, want 413", c.n, c.chunked, i, code)
			}
		}
		t.Logf("%2d x 100 MB (chunked %v): RSS %.0f MB at rest, peak %.0f MB; another client's slowest call %v",
			c.n, c.chunked, base/1024, peak/1024, slowest.Round(time.Millisecond))
		if peak-base > budgetKiB {
			t.Errorf("%d x 100 MB (chunked %v): the server grew by %.0f MB, over the %d MB budget", c.n, c.chunked, (peak-base)/1024, budgetKiB>>10)
		}
	}
	// Memory goes back: give the runtime's scavenger a moment.
	var after float64
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if after, _ = testbin.Memory(pid); after-base < 32<<10 {
			break
		}
	}
	t.Logf("RSS after: %.0f MB (at rest before: %.0f MB)", after/1024, base/1024)
	if after-base > 64<<10 {
		t.Errorf("RSS stayed at %.0f MB after the bodies, %.0f MB before", after/1024, base/1024)
	}
	// A normal call still works on the same session.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_vault_info", Arguments: map[string]any{}}); err != nil {
		t.Errorf("after the bodies: %v", err)
	}
}

// TestSlowBodiesCut: 300 POSTs that trickle a few bytes every 2 s are all
// cut off (408 or a closed connection) within the body timeout and the
// minimum rate, instead of staying open indefinitely.
func TestSlowBodiesCut(t *testing.T) {
	endpoint, _ := bodyServer(t)
	host := endpoint[len("http://") : len(endpoint)-len("/mcp")]
	const n = 300
	cut := make(chan time.Duration, n)
	start := time.Now()
	for range n {
		go func() {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				cut <- -1
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{", host)
			read := make(chan struct{})
			go func() { _, _ = io.Copy(io.Discard, conn); close(read) }()
			for {
				select {
				case <-read:
					cut <- time.Since(start)
					return
				case <-time.After(2 * time.Second):
					if _, err := conn.Write([]byte("  ")); err != nil {
						cut <- time.Since(start)
						return
					}
				}
				if time.Since(start) > time.Minute {
					cut <- time.Hour
					return
				}
			}
		}()
	}
	var worst time.Duration
	for range n {
		d := <-cut
		if d < 0 {
			t.Fatal("could not connect")
		}
		worst = max(worst, d)
	}
	t.Logf("%d trickling bodies: all cut after %v at most", n, worst.Round(time.Millisecond))
	if worst > 30*time.Second {
		t.Errorf("a trickling body stayed open %v", worst)
	}
}
