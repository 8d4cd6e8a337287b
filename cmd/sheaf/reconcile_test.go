package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
)

// cloudVault is a bucket on versitygw with a Meilisearch fake beside it.
type cloudVault struct {
	s3    *s3test.Server
	meili *meilifake.Server
}

func newCloudVault(t testing.TB, webhook string) *cloudVault {
	v := &cloudVault{s3: s3test.Start(t, s3test.Options{WebhookURL: webhook}), meili: meilifake.New(t)}
	v.s3.CreateBucket(t, "vault")
	return v
}

func (v *cloudVault) put(t testing.TB, path, body string) {
	t.Helper()
	v.s3.Put(t, "vault", "notes/"+path, []byte(body))
}

func (v *cloudVault) args(extra ...string) []string {
	return append([]string{"reconcile", "--vault", v.s3.URL("vault", "notes"), "--search", v.meili.URL, "--log-level", "warn"}, extra...)
}

func (v *cloudVault) command(extra ...string) *exec.Cmd {
	cmd := exec.Command(bin, v.args(extra...)...)
	cmd.Env = append(os.Environ(), v.s3.Env()...)
	return cmd
}

// catalogHas reports whether the saved catalog snapshot holds path.
func (v *cloudVault) catalogHas(t *testing.T, path string) bool {
	t.Helper()
	for _, kv := range v.s3.Env() {
		k, val, _ := strings.Cut(kv, "=")
		t.Setenv(k, val)
	}
	cl, err := config.OpenCloud(t.Context(), &config.Config{Vault: v.s3.URL("vault", "notes"), Search: v.meili.URL}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := cl.Vault.Catalogs.Catalog(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, ok := cat.Note(path)
	return ok
}

func TestReconcileOnce(t *testing.T) {
	v := newCloudVault(t, "")
	v.put(t, "a.md", "# A\n\nSee [[b]].\n")
	v.put(t, "sub/b.md", "# B\n\n#tag\n")
	v.put(t, "binary.md", "\x00\x01\x02 not text")
	out, err := v.command().CombinedOutput()
	if err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "3 notes (2 indexed, 0 unchanged, 0 removed, 1 skipped)") || !strings.Contains(string(out), "binary.md:") {
		t.Errorf("first reconcile printed:\n%s", out)
	}
	// A second run starts from the saved snapshot: nothing to redo.
	out, err = v.command().CombinedOutput()
	if err != nil {
		t.Fatalf("reconcile again: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "(0 indexed, 2 unchanged") {
		t.Errorf("second reconcile printed:\n%s", out)
	}
	if !v.catalogHas(t, "sub/b.md") {
		t.Errorf("sub/b.md is not in the saved snapshot")
	}
}

func TestReconcileRefuses(t *testing.T) {
	for name, args := range map[string][]string{
		"folder":       {"reconcile", "--vault", t.TempDir(), "--search", "http://127.0.0.1:1"},
		"open webhook": {"reconcile", "--vault", "s3://b/p?region=us-east-1", "--search", "http://127.0.0.1:1", "--webhook", "0.0.0.0:0"},
		"no search":    {"reconcile", "--vault", "s3://b/p?region=us-east-1"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "SHEAF_SEARCH=")
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("%s: accepted:\n%s", name, out)
		}
	}
}

// TestReconcileWebhook runs `sheaf reconcile --webhook` behind versitygw's
// event notifications as the README and docker compose start them:
// reconcile first, while the S3 server is down, then versitygw (which
// exits unless its webhook answers its start-up test event), then the
// bucket. A note put through the S3 API then shows up in the catalog
// snapshot without any other call.
func TestReconcileWebhook(t *testing.T) {
	s3 := s3test.Plan(t)
	v := &cloudVault{s3: s3, meili: meilifake.New(t)}
	hook, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := hook.Addr().String()
	hook.Close()
	cmd := v.command("--webhook", addr, "--log-level", "info")
	out := new(testbin.Output)
	cmd.Stdout, cmd.Stderr = out, out
	runUntilCleanup(t, cmd, nil, 5*time.Second)
	waitOutput(t, out, "serving the indexer webhook", "the webhook did not listen before the vault could be read")

	s3.Launch(t, s3test.Options{WebhookURL: "http://" + addr + "/"})
	waitOutput(t, out, "the vault cannot be read yet", "no retry while the bucket is missing")
	s3.CreateBucket(t, "vault")
	v.put(t, "a.md", "# A\n")
	waitOutput(t, out, "notes (", "the reconcile did not finish")

	v.put(t, "Inbox/new note.md", "# New\n\nArrived by webhook.\n")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for !v.catalogHas(t, "Inbox/new note.md") {
		if ctx.Err() != nil {
			t.Fatalf("the note put through S3 never reached the snapshot:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
