package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 29, 17, 0, 0, 0, time.UTC)
	cases := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{"Retry-After": {"1"}}, time.Second},
		{http.Header{"Retry-After": {" 2 "}}, 2 * time.Second},
		{http.Header{"Retry-After": {"2.5"}}, 2500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"0"}}, 0},
		{http.Header{"Retry-After": {"1e7"}}, 0},
		{http.Header{"Retry-After": {"NaN"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"junk"}, "Retry-After": {"9"}}, 9 * time.Second},
		{http.Header{"Retry-After-Ms": {"1e12"}}, 0},
		{http.Header{"X-Other": {"1"}}, 0},
		{nil, 0},
	}
	for _, tc := range cases {
		if got := RetryAfter(tc.header, now); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	f.Add("Retry-After", "1.5")
	f.Add("Retry-After-Ms", "250")
	f.Add("Retry-After", "Fri, 29 May 2026 17:00:07 GMT")
	f.Add("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")
	f.Fuzz(func(t *testing.T, name, value string) {
		now := time.Date(2026, 5, 29, 17, 0, 0, 0, time.UTC)
		if got := RetryAfter(http.Header{http.CanonicalHeaderKey(name): {value}}, now); got < 0 {
			t.Fatalf("%s: %q gave %v", name, value, got)
		}
	})
}

func TestBackoff(t *testing.T) {
	maxJitter := func(limit time.Duration) time.Duration { return limit }
	var got []time.Duration
	for attempt := range 8 {
		got = append(got, Backoff(attempt, 0, maxJitter))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 20 * time.Second, 20 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("backoff limits %v, want %v", got, want)
	}
	for _, attempt := range []int{-1, 10, 63, 64, 1 << 30} {
		if d := Backoff(attempt, 0, maxJitter); d != BackoffCap {
			t.Errorf("attempt %d: %v, want the cap %v", attempt, d, BackoffCap)
		}
	}
	for attempt := range 70 {
		d := Backoff(attempt, 0, Jitter)
		if limit := min(BackoffBase<<min(attempt, 10), BackoffCap); d < 0 || d > limit {
			t.Fatalf("attempt %d: backoff %v outside [0, %v]", attempt, d, limit)
		}
	}
	if d := Backoff(3, 1500*time.Millisecond, maxJitter); d != 1500*time.Millisecond {
		t.Errorf("Retry-After of 1.5s gave %v", d)
	}
	if d := Backoff(0, 5*time.Minute, maxJitter); d != MaxRetryAfter {
		t.Errorf("Retry-After of 5m gave %v, want the cap %v", d, MaxRetryAfter)
	}
}

func TestJitterSpreads(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 200 {
		d := Jitter(3)
		if d < 0 || d > 3 {
			t.Fatalf("Jitter(3) = %v", d)
		}
		seen[d] = true
	}
	if len(seen) != 4 {
		t.Errorf("200 draws of Jitter(3) gave %v, want all of 0..3", seen)
	}
	if d := Jitter(0); d != 0 {
		t.Errorf("Jitter(0) = %v", d)
	}
}

// testError is an adapter's ProviderError in miniature.
type testError struct {
	temporary bool
	hint      time.Duration
}

func (e *testError) Error() string   { return fmt.Sprintf("test error (temporary %v)", e.temporary) }
func (e *testError) Temporary() bool { return e.temporary }

var (
	errTemporary = &testError{temporary: true, hint: time.Millisecond}
	errFinal     = &testError{}
)

func newTestRetrier(maxRetries int) Retrier {
	return NewRetrier("test", maxRetries, func(e *testError) time.Duration { return e.hint })
}

// scripted returns an attempt that fails with errs in turn, then succeeds.
func scripted(errs ...error) (func(context.Context) error, *int) {
	calls := new(int)
	return func(context.Context) error {
		*calls++
		if *calls <= len(errs) {
			return errs[*calls-1]
		}
		return nil
	}, calls
}

func TestRetrier(t *testing.T) {
	var waits []time.Duration
	r := newTestRetrier(2)
	r.Sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }
	r.Jitter = func(limit time.Duration) time.Duration { return limit }
	ctx := context.Background()

	attempt, calls := scripted(&testError{temporary: true}, fmt.Errorf("wrapped: %w", errTemporary))
	if err := r.Do(ctx, attempt); err != nil || *calls != 3 {
		t.Errorf("recovering: %v after %d calls", err, *calls)
	}
	if !slices.Equal(waits, []time.Duration{BackoffBase, time.Millisecond}) {
		t.Errorf("waits %v, want a backoff, then the Retry-After hint", waits)
	}

	for _, final := range []error{errFinal, errors.New("not a provider error")} {
		waits = nil
		attempt, calls = scripted(errTemporary, final)
		if err := r.Do(ctx, attempt); err != final || *calls != 2 || len(waits) != 1 {
			t.Errorf("final error: %v after %d calls, waits %v", err, *calls, waits)
		}
	}

	waits = nil
	attempt, calls = scripted(errTemporary, errTemporary, errTemporary, errTemporary)
	err := r.Do(ctx, attempt)
	if !errors.Is(err, errTemporary) || err.Error() != "test: giving up after 3 attempts: "+errTemporary.Error() ||
		*calls != 3 || len(waits) != 2 {
		t.Errorf("exhausted: %v after %d calls, waits %v", err, *calls, waits)
	}

	r = newTestRetrier(-5)
	attempt, calls = scripted(errTemporary)
	if err := r.Do(ctx, attempt); err == nil || *calls != 1 || r.Max != 0 {
		t.Errorf("no retries: %v after %d calls, Max %d", err, *calls, r.Max)
	}
}

func TestRetrierCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newTestRetrier(5) // the real Sleep
	start := time.Now()
	calls := 0
	err := r.Do(ctx, func(context.Context) error {
		calls++
		time.AfterFunc(20*time.Millisecond, cancel)
		return &testError{temporary: true, hint: 30 * time.Second}
	})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "test: ") || calls != 1 {
		t.Errorf("cancelled during backoff: %v after %d calls", err, calls)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Do took %v after cancel", d)
	}

	calls = 0
	err = r.Do(ctx, func(context.Context) error { calls++; return errTemporary })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("cancelled before: %v after %d calls", err, calls)
	}
}

func TestConfigured(t *testing.T) {
	errNC := errors.New("not configured")
	for _, tc := range []struct {
		base, model string
		want        string
	}{
		{"", "", "not configured"},
		{"", "m", "not configured (the base URL is empty)"},
		{"http://x", "", "not configured (the model is empty)"},
	} {
		err := Configured(tc.base, tc.model, errNC)
		if !errors.Is(err, errNC) || err.Error() != tc.want {
			t.Errorf("Configured(%q, %q) = %v, want %q", tc.base, tc.model, err, tc.want)
		}
	}
	if err := Configured("http://x", "m", errNC); err != nil {
		t.Errorf("configured: %v", err)
	}
}

func TestAPIRoot(t *testing.T) {
	for _, tc := range []struct{ in, endpoint, want string }{
		{"http://127.0.0.1:11434", "/embeddings", "http://127.0.0.1:11434/v1"},
		{"http://127.0.0.1:11434/", "/embeddings", "http://127.0.0.1:11434/v1"},
		{"https://api.openai.com/v1/", "/chat/completions", "https://api.openai.com/v1"},
		{"https://api.openai.com/v1/chat/completions", "/chat/completions", "https://api.openai.com/v1"},
		{"https://api.openai.com/v1/embeddings/", "/embeddings", "https://api.openai.com/v1"},
		{"https://api.openai.com/embeddings", "/embeddings", "https://api.openai.com/v1"},
		{"http://h/openai/deployments/x", "/chat/completions", "http://h/openai/deployments/x"},
		{"http://h/v1/#frag", "/embeddings", "http://h/v1"},
		{"http://h/v1?api-version=2", "/embeddings", "http://h/v1?api-version=2"},
	} {
		if got, err := APIRoot(tc.in, tc.endpoint); err != nil || got != tc.want {
			t.Errorf("APIRoot(%q, %q) = %q, %v; want %q", tc.in, tc.endpoint, got, err, tc.want)
		}
	}
	for _, bad := range []string{"localhost:11434", "ftp://host/v1", "http://", "http://[::1", "/v1"} {
		if got, err := APIRoot(bad, "/embeddings"); err == nil || !strings.HasPrefix(err.Error(), "base URL") {
			t.Errorf("APIRoot(%q) = %q, %v; want a base URL error", bad, got, err)
		}
	}
}

func TestNewClient(t *testing.T) {
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if r.URL.Path != "/v1/models" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Retry-After-Ms", "1500")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"slow down","type":"rate_limit"}}`)
	}))
	defer srv.Close()
	for _, key := range []string{"sk-test", ""} {
		ctx, resp := Capture(context.Background())
		_, err := NewClient(srv.URL+"/v1", key, nil).ListModels(ctx)
		if Message(err) != "slow down" || resp.Status != 429 {
			t.Fatalf("key %q: %v, captured %+v", key, err, resp)
		}
		if status, after := resp.Failure(err, time.Now()); status != 429 || after != 1500*time.Millisecond {
			t.Errorf("Failure = %d, %v", status, after)
		}
	}
	if !slices.Equal(auth, []string{"Bearer sk-test", ""}) {
		t.Errorf("Authorization headers %q", auth)
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := Sleep(ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Sleep past the deadline = %v", err)
	}
}

func TestDoerCapture(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	d := Doer{Client: srv.Client()}
	ctx, resp := Capture(context.Background())
	if resp.Status != 0 || resp.Header != nil {
		t.Errorf("fresh Response %+v", resp)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	res, err := d.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if resp.Status != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("captured %+v", resp)
	}
	if status, after := resp.Failure(errors.New("rate limited"), time.Now()); status != 429 || after != 2*time.Second {
		t.Errorf("Failure = %d, %v", status, after)
	}

	req, _ = http.NewRequest(http.MethodGet, srv.URL, nil) // no Response to fill
	if res, err := d.Do(req); err != nil {
		t.Error(err)
	} else {
		res.Body.Close()
	}

	srv.Close()
	ctx, resp = Capture(context.Background())
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := d.Do(req); err == nil || resp.Status != 0 {
		t.Errorf("closed server: %v, %+v", err, resp)
	}
}

func TestFailure(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		resp   Response
		err    error
		status int
	}{
		{Response{}, errors.New("refused"), 0},
		{Response{Status: 200}, io.ErrUnexpectedEOF, 0},
		{Response{Status: 200}, errors.New("bad json"), 200},
		{Response{Status: 503}, io.ErrUnexpectedEOF, 503},
	} {
		if status, after := tc.resp.Failure(tc.err, now); status != tc.status || after != 0 {
			t.Errorf("%+v with %v: %d, %v; want %d, 0", tc.resp, tc.err, status, after, tc.status)
		}
	}
}

func TestTransient(t *testing.T) {
	for err, want := range map[error]bool{
		io.ErrUnexpectedEOF:                            true,
		fmt.Errorf("read: %w", io.ErrUnexpectedEOF):    true,
		context.DeadlineExceeded:                       true,
		&net.OpError{Op: "dial", Err: errors.New("x")}: true,
		context.Canceled:                               false,
		errors.New("bad json"):                         false,
	} {
		if got := Transient(err); got != want {
			t.Errorf("Transient(%v) = %v", err, got)
		}
	}
}

func TestTemporary(t *testing.T) {
	for status, want := range map[int]bool{0: true, 200: false, 400: false, 401: false, 404: false, 408: true, 429: true, 500: true, 503: true} {
		if got := Temporary(status); got != want {
			t.Errorf("Temporary(%d) = %v", status, got)
		}
	}
}

func TestDescribe(t *testing.T) {
	err := errors.New("boom")
	for status, want := range map[int]string{
		0:   "X provider unreachable: boom",
		200: "X provider sent a bad answer: boom",
		502: "X provider returned HTTP 502: boom",
	} {
		if got := Describe("X provider", "a bad answer", status, err); got != want {
			t.Errorf("status %d: %q, want %q", status, got, want)
		}
	}
}

func TestMessage(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&openai.APIError{Message: "Rate limit reached", HTTPStatusCode: 429}, "Rate limit reached"},
		{fmt.Errorf("create: %w", &openai.APIError{Message: "wrapped"}), "wrapped"},
		{&openai.RequestError{HTTPStatus: "502 Bad Gateway", Body: []byte("  upstream down\n")}, "upstream down"},
		{&openai.RequestError{HTTPStatus: "502 Bad Gateway", Body: []byte(" \n ")}, "502 Bad Gateway"},
		{&openai.RequestError{HTTPStatus: "500", Body: []byte("bad \xff byte")}, "bad \uFFFD byte"},
		{&openai.RequestError{HTTPStatus: "500", Body: []byte(long)}, strings.Repeat("é", 150) + "…"},
		{&openai.RequestError{HTTPStatus: "500", Body: []byte("x" + long)}, "x" + strings.Repeat("é", 149) + "…"},
		{errors.New("plain"), "plain"},
		{nil, "no message"},
	} {
		if got := Message(tc.err); got != tc.want {
			t.Errorf("Message(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestClipAndTruncate(t *testing.T) {
	for _, tc := range []struct {
		s        string
		n        int
		truncate string
		clip     string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 5, "hello", "hello"},
		{"hello", 3, "hel", "hel…"},
		{"日本語", 4, "日", "日…"},
		{"日本語", 2, "", "…"},
		{"abc", 0, "", "…"},
		{"abc", -1, "", "…"},
	} {
		if got := Truncate(tc.s, tc.n); got != tc.truncate {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.truncate)
		}
		if got := Clip(tc.s, tc.n); got != tc.clip {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.clip)
		}
	}
	if got := Clip("a\xffb", 10); got != "a\uFFFDb" {
		t.Errorf("Clip of invalid UTF-8 = %q", got)
	}
}

func FuzzClip(f *testing.F) {
	f.Add("日本語のテキスト", 4)
	f.Add("a\xffb", 2)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		got := Clip(s, n)
		body, cut := strings.CutSuffix(got, "…")
		if !utf8.ValidString(got) || len(body) > n || (!cut && got != strings.ToValidUTF8(s, "\uFFFD")) {
			t.Fatalf("Clip(%q, %d) = %q", s, n, got)
		}
		if !strings.HasPrefix(strings.ToValidUTF8(s, "\uFFFD"), body) {
			t.Fatalf("Clip(%q, %d) = %q, not a prefix", s, n, got)
		}
		if tr := Truncate(s, n); len(tr) > n || !strings.HasPrefix(s, tr) || (utf8.ValidString(s) && !utf8.ValidString(tr)) {
			t.Fatalf("Truncate(%q, %d) = %q", s, n, tr)
		}
	})
}

// A body past Doer.Max fails to read instead of filling memory; one of
// exactly Max bytes reads whole.
func TestDoerBoundsBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write([]byte(strings.Repeat("x", n)))
	}))
	defer srv.Close()
	d := Doer{Client: srv.Client(), Max: 100}
	for n, wantErr := range map[int]bool{0: false, 99: false, 100: false, 101: true, 100_000: true} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"?n="+strconv.Itoa(n), nil)
		res, err := d.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if gotErr := errors.Is(err, ErrResponseTooLarge); gotErr != wantErr || len(body) > 100 || (!wantErr && len(body) != n) {
			t.Errorf("n=%d: read %d bytes, err %v", n, len(body), err)
		}
	}
}
