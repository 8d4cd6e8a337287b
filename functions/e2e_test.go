package functions_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sheaf-dev/sheaf/functions/internal/cloudtest"
	"github.com/sheaf-dev/sheaf/functions/internal/rietest"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/s3events"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// TestEndToEndEvents is the cloud path from upload to answer: versitygw
// posts its event notifications to the indexer's webhook (in process, the
// code `sheaf reconcile --webhook` and the indexer function run), the
// indexer writes the Meilisearch fake and the catalog snapshot in the
// bucket, and the MCP function, under the Lambda emulator behind an in-test
// API gateway, answers from them. A generated 1,000-note vault uploaded
// through the S3 API must become listable and searchable; deletes,
// overwrites and renames must show; then a reconcile picks up the sample
// vault, whose events may have been missed (it is uploaded before the
// indexer listens).
func TestEndToEndEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: skipped with -short")
	}
	rietest.Require(t)
	var target atomic.Pointer[http.Handler]
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := target.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		io.Copy(io.Discard, r.Body) // versitygw's start-up test event, the sample vault's uploads
	}))
	t.Cleanup(hook.Close)
	v := cloudtest.Sample(t, s3test.Options{WebhookURL: hook.URL})

	ctx := context.Background()
	cl, err := config.OpenCloud(ctx, v.Config(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.LoadCatalog(ctx); err != nil {
		t.Fatal(err)
	}
	wh := s3events.Webhook(cl.Indexer, "")
	target.Store(&wh)

	gen := filepath.Join(t.TempDir(), "gen")
	if _, err := vaultgen.Generate(gen, vaultgen.Options{Notes: e2eNotes(), Seed: 7}); err != nil {
		t.Fatal(err)
	}
	var genPaths []string
	err = filepath.WalkDir(gen, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(gen, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		path := "gen/" + filepath.ToSlash(rel)
		v.Put(t, path, data)
		genPaths = append(genPaths, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	bin := rietest.Build(t, "./mcp")
	r := rietest.Start(t, bin, v.Env()...)
	endpoint := (&rietest.Gateway{RIE: r}).Start(t) + "/mcp"
	c := toolstest.NewClient(t, cloudtest.Connect(t, endpoint, cloudtest.Token))

	total := func(path string) int {
		var p page
		c.MustOK("list_notes", map[string]any{"path": path, "limit": 1}, &p)
		return p.Total
	}
	eventually(t, 2*time.Minute, func() string {
		if n := total("gen"); n != len(genPaths) {
			return fmt.Sprintf("list_notes gen: total %d, want %d", n, len(genPaths))
		}
		return ""
	})

	// Every tenth of the first 500 generated notes is found by its title
	// as a phrase.
	var notes page
	c.MustOK("list_notes", map[string]any{"path": "gen", "limit": 500}, &notes)
	for i := 0; i < len(notes.Items); i += 10 {
		n := notes.Items[i]
		var hits page
		c.MustOK("search", map[string]any{"query": `"` + n.Title + `"`, "limit": 100}, &hits)
		if !hasPath(hits, n.Path) {
			t.Errorf("search %q: %s not among %d hits", n.Title, n.Path, hits.Total)
		}
	}

	// Deletes, overwrites and renames through the S3 API.
	s3c := v.S3.Client(t)
	del := func(path string) {
		if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(v.Bucket), Key: aws.String(v.Key(path))}); err != nil {
			t.Fatal(err)
		}
	}
	deleted, overwritten, renamed := genPaths[0:5:5], genPaths[5:10:10], genPaths[10:15:15]
	for _, p := range deleted {
		del(p)
	}
	for i, p := range overwritten {
		v.Put(t, p, fmt.Appendf(nil, "# Rewritten\n\nNow about zqxrewrite%d only.\n", i))
	}
	var renamedTo []string
	for _, p := range renamed {
		to := strings.TrimSuffix(p, ".md") + " (moved 🚚).md"
		data, err := os.ReadFile(filepath.Join(gen, strings.TrimPrefix(p, "gen/")))
		if err != nil {
			t.Fatal(err)
		}
		v.Put(t, to, data)
		del(p)
		renamedTo = append(renamedTo, to)
	}
	eventually(t, 2*time.Minute, func() string {
		if n := total("gen"); n != len(genPaths)-len(deleted) {
			return fmt.Sprintf("list_notes gen: total %d, want %d", n, len(genPaths)-len(deleted))
		}
		for _, p := range slices.Concat(deleted, renamed) {
			if res := c.Call("read_note", map[string]any{"path": p}, nil); res.Kind != "note-not-found" {
				return "still readable after delete: " + p
			}
		}
		for _, p := range renamedTo {
			if res := c.Call("read_note", map[string]any{"path": p}, nil); res.IsError {
				return "renamed note not readable: " + p
			}
		}
		for i, p := range overwritten {
			var hits page
			c.MustOK("search", map[string]any{"query": fmt.Sprintf("zqxrewrite%d", i)}, &hits)
			if !hasPath(hits, p) {
				return "overwritten note not found by its new text: " + p
			}
		}
		return ""
	})

	// Whatever events were missed (the sample vault was uploaded before
	// the indexer listened), a reconcile brings everything in.
	v.Reconcile(t)
	eventually(t, 30*time.Second, func() string {
		if n, want := total(""), len(genPaths)-len(deleted)+43; n != want {
			return fmt.Sprintf("after reconcile: %d notes, want %d", n, want)
		}
		return ""
	})
}

func e2eNotes() int {
	if n, err := strconv.Atoi(os.Getenv("SHEAF_E2E_NOTES")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// page is a list_notes or search result.
type page struct {
	Total int `json:"total"`
	Items []struct {
		Path  string `json:"path"`
		Title string `json:"title"`
	} `json:"items"`
}

func hasPath(p page, path string) bool {
	for _, it := range p.Items {
		if it.Path == path {
			return true
		}
	}
	return false
}

// eventually retries check until it returns "" or the time is up.
func eventually(t *testing.T, d time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
