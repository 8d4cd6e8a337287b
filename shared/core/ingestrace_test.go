package core

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/ingest"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	s3store "github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
)

// slowPage serves one HTML page after a pause (so concurrent ingests
// overlap) and counts its fetches; /gone answers 404.
func slowPage(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var fetches atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/post", func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		time.Sleep(150 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Claims and leases</title></head><body><article><h1>Claims and leases</h1><p>A claim taken with a conditional write has exactly one winner, however many processes try at the same moment, and the others read what it recorded.</p></article></body></html>`))
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, _ *http.Request) { fetches.Add(1); http.NotFound(w, nil) })
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts, &fetches
}

// ingestCore is coreOn with the test server's loopback address allowed.
func ingestCore(t *testing.T, st store.Store) *Core {
	s := coreOn(t, st)
	s.vaults["v"].Ingest.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	return s
}

// sourceNotes lists the notes under sources/.
func sourceNotes(t *testing.T, st store.Store) []string {
	t.Helper()
	var out []string
	if err := st.List(context.Background(), ingest.SourcesPrefix, func(o store.Object) error {
		out = append(out, o.Path)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// ingestAtOnce calls ingest_url of u n times at once, alternating between
// the cores, and checks the answers: one filed the note, every other is
// that note with duplicate: true, and sources/ holds exactly one note.
func ingestAtOnce(t *testing.T, st store.Store, cores []*Core, u string, n int) {
	t.Helper()
	outs := make([]*ingestOut, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out, err := cores[i%len(cores)].IngestURL(context.Background(), ingestURLIn{URL: u})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			outs[i] = out
		})
	}
	wg.Wait()
	filed := 0
	for i, o := range outs {
		if o == nil {
			continue
		}
		if !o.Duplicate {
			filed++
		}
		if o.Path != outs[0].Path || o.ContentHash != outs[0].ContentHash || o.Title != "Claims and leases" {
			t.Errorf("call %d answered %+v, call 0 %+v", i, o, outs[0])
		}
	}
	if notes := sourceNotes(t, st); filed != 1 || len(notes) != 1 {
		t.Errorf("%d calls of one URL at once: %d filed a note, sources/ holds %v", n, filed, notes)
	}
}

func TestConcurrentIngestOneFolder(t *testing.T) {
	dir := t.TempDir()
	open := func() store.Store {
		st, err := fs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	ts, fetches := slowPage(t)
	st := open()
	// Two servers on one folder, each with its own catalog.
	ingestAtOnce(t, st, []*Core{ingestCore(t, st), ingestCore(t, open())}, ts.URL+"/post", 8)
	if f := fetches.Load(); f != 1 {
		t.Errorf("%d fetches, want 1", f)
	}
}

// TestConcurrentIngestS3: two cores on one bucket, as two Lambda
// instances.
func TestConcurrentIngestS3(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	srv.CreateBucket(t, "ingest")
	st1 := s3store.New(srv.Client(t), "ingest", "vault")
	st2 := s3store.New(srv.Client(t), "ingest", "vault")
	ts, fetches := slowPage(t)
	ingestAtOnce(t, st1, []*Core{ingestCore(t, st1), ingestCore(t, st2)}, ts.URL+"/post", 8)
	if f := fetches.Load(); f != 1 {
		t.Errorf("%d fetches, want 1", f)
	}
}

// TestIngestClaimLifecycle: a failed fetch leaves no claim; a lapsed
// claim (its holder died) is taken over; a claim whose note was deleted
// files the URL again; a live claim of another holder is waited for.
func TestIngestClaimLifecycle(t *testing.T) {
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts, _ := slowPage(t)
	// Three servers of one folder whose catalogs only their own writes
	// update: the claims are all they share.
	s, other, third := ingestCore(t, st), ingestCore(t, st), ingestCore(t, st)
	ctx := context.Background()
	readClaim := func(u string) (urlClaim, error) {
		data, _, err := st.Get(ctx, ingestClaimPath(u), 0)
		var c urlClaim
		if err == nil {
			err = json.Unmarshal(data, &c)
		}
		return c, err
	}

	if _, err := s.IngestURL(ctx, ingestURLIn{URL: ts.URL + "/gone"}); err == nil {
		t.Fatal("a 404 was filed")
	}
	if _, err := readClaim(ts.URL + "/gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a failed fetch left its claim: %v", err)
	}

	u := ts.URL + "/post"
	lapsed := urlClaim{URL: u, Holder: "dead", Expires: time.Now().Add(-time.Second)}
	if _, err := putClaim(ctx, st, ingestClaimPath(u), "", lapsed); err != nil {
		t.Fatal(err)
	}
	out, err := s.IngestURL(ctx, ingestURLIn{URL: u})
	if err != nil || out.Duplicate {
		t.Fatalf("over a lapsed claim: %+v %v", out, err)
	}
	c, err := readClaim(u)
	if err != nil || c.Path != out.Path || c.Holder != "" {
		t.Errorf("the claim after filing: %+v %v", c, err)
	}

	// The note deleted: another server files the URL again.
	if err := st.Delete(ctx, out.Path, ""); err != nil {
		t.Fatal(err)
	}
	again, err := other.IngestURL(ctx, ingestURLIn{URL: u})
	if err != nil || again.Duplicate || len(sourceNotes(t, st)) != 1 {
		t.Errorf("after the note was deleted: %+v %v, sources %v", again, err, sourceNotes(t, st))
	}
	// A third answers that note from the claim, saying its index lags.
	dup, err := third.IngestURL(ctx, ingestURLIn{URL: u})
	if err != nil || !dup.Duplicate || dup.Path != again.Path || dup.ContentHash != again.ContentHash || dup.Index.State != "pending" {
		t.Errorf("from the claim: %+v %v", dup, err)
	}

	// A live claim of another holder: the call waits for its note.
	w := ts.URL + "/post?waited=1"
	live := urlClaim{URL: w, Holder: "alive", Expires: time.Now().Add(time.Minute)}
	etag, err := putClaim(ctx, st, ingestClaimPath(w), "", live)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		done := urlClaim{URL: w, Path: again.Path, Title: "Claims and leases"}
		if _, err := putClaim(ctx, st, ingestClaimPath(w), etag, done); err != nil {
			t.Error(err)
		}
	}()
	got, err := third.IngestURL(ctx, ingestURLIn{URL: w})
	if err != nil || !got.Duplicate || got.Path != again.Path {
		t.Errorf("waiting for a live claim: %+v %v", got, err)
	}
	if !strings.HasPrefix(got.Path, "sources/") {
		t.Errorf("path %q", got.Path)
	}
}
