package main

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// indexerProc is one `sheaf reconcile --webhook` process on a fixed port,
// which can be killed (SIGKILL) and started again.
type indexerProc struct {
	t    *testing.T
	v    *cloudVault
	addr string
	cmd  *exec.Cmd
	out  *testbin.Output
	done chan error
}

func (p *indexerProc) start() {
	p.cmd = p.v.command("--webhook", p.addr)
	p.out = new(testbin.Output)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(p.cmd, p.done)
	for deadline := time.Now().Add(60 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the indexer on %s did not listen:\n%s", p.addr, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the process at once, mid-batch: no deferred save, no flush.
func (p *indexerProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (p *indexerProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

// chaos stands between versitygw and the indexers: it answers every
// notification at once, then drops some, duplicates some, holds some back
// to deliver late and out of order, and sends each copy to one of the
// indexers at random (a killed one loses it).
type chaos struct {
	targets []string
	mu      sync.Mutex // guards rng and held
	rng     *rand.Rand
	held    [][]byte
	wg      sync.WaitGroup
	sem     chan struct{}

	received, dropped, duplicated, late, lost atomic.Int64
}

func (c *chaos) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !bytes.Contains(body, []byte(`"Records"`)) || !bytes.Contains(body, []byte(`"s3"`)) {
		return // versitygw's start-up test event
	}
	c.received.Add(1)
	c.mu.Lock()
	roll := c.rng.IntN(100)
	c.mu.Unlock()
	switch {
	case roll < 5:
		c.dropped.Add(1)
	case roll < 15:
		c.duplicated.Add(1)
		c.send(body)
		c.send(body)
	case roll < 25: // held back, delivered later in shuffled order
		c.late.Add(1)
		c.mu.Lock()
		c.held = append(c.held, body)
		var flush [][]byte
		if len(c.held) >= 50 {
			flush, c.held = c.held, nil
			c.rng.Shuffle(len(flush), func(i, j int) { flush[i], flush[j] = flush[j], flush[i] })
		}
		c.mu.Unlock()
		for _, b := range flush {
			c.send(b)
		}
	default:
		c.send(body)
	}
}

// deliverer posts notifications; a delivery an indexer does not answer
// within a minute counts as lost (reconcile repairs it), so the test never
// hangs on one.
var deliverer = &http.Client{Timeout: time.Minute}

func (c *chaos) send(body []byte) {
	c.mu.Lock()
	if len(c.targets) == 0 { // before the indexers are up
		c.mu.Unlock()
		c.lost.Add(1)
		return
	}
	target := c.targets[c.rng.IntN(len(c.targets))]
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.sem <- struct{}{}
		defer func() { <-c.sem }()
		resp, err := deliverer.Post("http://"+target+"/", "application/json", bytes.NewReader(body))
		if err != nil {
			c.lost.Add(1)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.lost.Add(1)
		}
	}()
}

// drain delivers what is held back and waits for every delivery.
func (c *chaos) drain() {
	c.mu.Lock()
	flush := c.held
	c.held = nil
	c.mu.Unlock()
	for _, b := range flush {
		c.send(b)
	}
	c.wg.Wait()
}

var syncLine = regexp.MustCompile(`(\d+) notes \((\d+) indexed, (\d+) unchanged, (\d+) removed, (\d+) skipped\)`)

// TestChaosUpload uploads a generated vault to versitygw while its event
// notifications reach two `sheaf reconcile --webhook` processes duplicated,
// dropped, late and reordered, and one of the processes is killed with
// SIGKILL twice mid-upload and started again. Then one reconcile repairs
// what the chaos left, a second one finds nothing to do (0 drift), and
// every note is in the saved catalog and the text index, found by search.
// 1,000 notes by default; SHEAF_TEST_CHAOS_NOTES=20000 runs the full size.
func TestChaosUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	notes := 1000
	if n, err := strconv.Atoi(os.Getenv("SHEAF_TEST_CHAOS_NOTES")); err == nil && n > 0 {
		notes = n
	}
	dir := filepath.Join(t.TempDir(), "gen")
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: notes, Seed: 11}); err != nil {
		t.Fatal(err)
	}

	ch := &chaos{rng: rand.New(rand.NewPCG(1, 2)), sem: make(chan struct{}, 32)}
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: ch}
	go hs.Serve(front)
	t.Cleanup(func() { hs.Close() })
	v := newCloudVault(t, "http://"+front.Addr().String()+"/")

	procs := make([]*indexerProc, 2)
	for i := range procs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = &indexerProc{t: t, v: v, addr: ln.Addr().String()}
		ln.Close()
		procs[i].start()
		ch.mu.Lock()
		ch.targets = append(ch.targets, procs[i].addr)
		ch.mu.Unlock()
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.stop()
		}
	})

	var files []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	client := v.s3.Client(t)
	start := time.Now()
	var uploaded atomic.Int64
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for f := range jobs {
				data, err := os.ReadFile(f)
				rel, _ := filepath.Rel(dir, f)
				if err == nil {
					_, err = client.PutObject(context.Background(), &awss3.PutObjectInput{
						Bucket: aws.String("vault"), Key: aws.String("notes/" + filepath.ToSlash(rel)), Body: bytes.NewReader(data),
					})
				}
				if err != nil {
					t.Errorf("put %s: %v", rel, err)
				}
				uploaded.Add(1)
			}
		})
	}
	kills := 0
	for i, f := range files {
		jobs <- f
		// Kill the second indexer at a third and at two thirds of the
		// upload, and start it again a moment later.
		if (i == len(files)/3 || i == 2*len(files)/3) && kills < 2 {
			kills++
			procs[1].kill()
			t.Logf("killed indexer 2 (SIGKILL) after %d uploads", i)
			time.Sleep(300 * time.Millisecond)
			procs[1].start()
		}
	}
	close(jobs)
	wg.Wait()
	ch.drain()
	upload := time.Since(start)
	t.Logf("%d notes uploaded in %v; %d notifications: %d dropped, %d duplicated, %d late, %d deliveries lost to a dead or failing indexer",
		uploaded.Load(), upload, ch.received.Load(), ch.dropped.Load(), ch.duplicated.Load(), ch.late.Load(), ch.lost.Load())
	if ch.dropped.Load() == 0 || ch.duplicated.Load() == 0 || ch.late.Load() == 0 {
		t.Fatalf("the chaos did nothing")
	}

	reconcile := func() []int {
		out, err := v.command().CombinedOutput()
		if err != nil {
			t.Fatalf("reconcile: %v\n%s", err, out)
		}
		m := syncLine.FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("reconcile printed:\n%s", out)
		}
		var n []int
		for _, s := range m[1:] {
			x, _ := strconv.Atoi(s)
			n = append(n, x)
		}
		return n
	}
	heal := reconcile()
	t.Logf("reconcile after the chaos: %d notes, %d re-indexed, %d removed", heal[0], heal[1], heal[3])
	again := reconcile()
	if again[0] != notes || again[1] != 0 || again[3] != 0 || again[2] != notes {
		t.Errorf("second reconcile: %v, want %d notes all unchanged (0 drift)", again, notes)
	}

	// The saved catalog and the text index hold every note; sampled notes
	// are found by search.
	for _, kv := range v.s3.Env() {
		k, val, _ := strings.Cut(kv, "=")
		t.Setenv(k, val)
	}
	cl, err := config.OpenCloud(t.Context(), &config.Config{Vault: v.s3.URL("vault", "notes"), Search: v.meili.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := cl.Vault.Catalogs.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	indexed, err := cl.Vault.Text.Paths(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cat.Len() != notes || len(indexed) != notes {
		t.Fatalf("catalog %d notes, text index %d, want %d", cat.Len(), len(indexed), notes)
	}
	missing := 0
	for i, n := range cat.Notes() {
		if _, ok := indexed[n.Path]; !ok {
			missing++
		}
		if i%max(1, notes/40) != 0 {
			continue
		}
		// The Meilisearch fake scans every document per query: search
		// a sample, without the tools' time bound.
		res, err := cl.Indexer.Text.Search(t.Context(), textindex.ParseQuery(`"`+n.Title+`"`), textindex.Options{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range res.Hits {
			found = found || h.Path == n.Path
		}
		if !found {
			t.Errorf("%s: not found by its title %q", n.Path, n.Title)
		}
	}
	if missing > 0 {
		t.Errorf("%d notes of the catalog are not in the text index", missing)
	}
}
