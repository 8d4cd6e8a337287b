package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// indexedCloudVault is a bucket on versitygw whose event notifications
// reach a running `sheaf reconcile --webhook`, as the indexer function
// follows S3 in the cloud. In between stands a queue, as SQS does in the
// cloud: versitygw sends its notifications asynchronously and drops one
// whose receiver takes more than 3 s to answer, which a busy indexer
// would; the queue answers at once and delivers them in order, retrying.
// (versitygw must also find its webhook listening when it starts.)
func indexedCloudVault(t testing.TB) *cloudVault {
	t.Helper()
	var target atomic.Pointer[url.URL]
	queue := make(chan []byte, 1<<20)
	fl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || target.Load() == nil { // versitygw's start-up test event
			return
		}
		queue <- body
	}), ErrorLog: log.New(io.Discard, "", 0)}
	go front.Serve(fl)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); front.Close() })
	go func() {
		for {
			var body []byte
			select {
			case <-stop:
				return
			case body = <-queue:
			}
			for attempt := 0; attempt < 20; attempt++ {
				resp, err := http.Post(target.Load().String(), "application/json", bytes.NewReader(body))
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode < 500 {
						break
					}
				}
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}()
	v := newCloudVault(t, "http://"+fl.Addr().String()+"/")
	addr := freeAddr(t)
	cmd := v.command("--webhook", addr)
	out := new(testbin.Output)
	cmd.Stdout, cmd.Stderr = out, out
	runUntilCleanup(t, cmd, nil, 10*time.Second)
	waitOutput(t, out, "notes (", "the indexer did not start")
	target.Store(&url.URL{Scheme: "http", Host: addr, Path: "/"})
	return v
}

// syncCmdOut runs `sheaf sync` against the cloud vault and returns what
// it printed; it fails the test when the command fails, unless fail.
func syncRun(t testing.TB, v *cloudVault, dir, state string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"sync", dir, v.s3.URL("vault", "notes"), "--state", state}, args...)...)
	cmd.Env = append(os.Environ(), v.s3.Env()...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustSync(t testing.TB, v *cloudVault, dir, state string, args ...string) string {
	t.Helper()
	out, err := syncRun(t, v, dir, state, args...)
	if err != nil {
		t.Fatalf("sheaf sync %v: %v\n%s", args, err, out)
	}
	return out
}

var summaryRE = regexp.MustCompile(`(\d+) files (?:sent|fetched) \((\d+) bytes\), (\d+) moved, (\d+) deleted, (\d+) conflicts, (\d+) same, (\d+) kept, (\d+) unchanged, (\d+) failed in ([0-9.]+)s`)

// syncSummary reads the counts of a sync's summary line: sent, bytes,
// moved, deleted, conflicts, same, kept, unchanged, failed.
func syncSummary(t testing.TB, out string) []int64 {
	t.Helper()
	m := summaryRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary in:\n%s", out)
	}
	var n []int64
	for _, s := range m[1:10] {
		v, _ := strconv.ParseInt(s, 10, 64)
		n = append(n, v)
	}
	return n
}

func syncNotes() int {
	if n, err := strconv.Atoi(os.Getenv("SHEAF_TEST_SYNC_NOTES")); err == nil && n > 0 {
		return n
	}
	return 300
}

// TestSyncCloud: `sheaf sync` sends a generated vault to versitygw while
// the indexer follows the bucket's events; --wait returns once the index
// shows everything; edits, a rename, a deletion and a change made in the
// bucket meanwhile (a conflict, both versions kept) follow; the edit is
// searchable; a sync with nothing changed sends nothing.
func TestSyncCloud(t *testing.T) {
	v := indexedCloudVault(t)
	dir, state := filepath.Join(t.TempDir(), "vault"), t.TempDir()
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: syncNotes(), Seed: 7, AttachmentsEvery: 25}); err != nil {
		t.Fatal(err)
	}
	files := int64(countFiles(t, dir))
	// What never goes up: Obsidian's settings, Sheaf's local state, a sync
	// tool's metadata, an excluded folder.
	for name, body := range map[string]string{".obsidian/app.json": "{}", ".sheaf/keys.json": "{}",
		"_remotely-save-metadata-on-remote.json": "{}", "Private/diary.md": "# Diary\n"} {
		writeFile(t, dir, name, body)
	}

	out := mustSync(t, v, dir, state, "--wait", "--exclude", "Private/")
	n := syncSummary(t, out)
	if n[0] != files || n[8] != 0 || !strings.Contains(out, "the cloud index shows all") {
		t.Fatalf("first sync sent %d of %d files:\n%s", n[0], files, out)
	}
	for _, key := range []string{".obsidian/app.json", ".sheaf/keys.json", "_remotely-save-metadata-on-remote.json", "Private/diary.md"} {
		if v.s3.Has(t, "vault", "notes/"+key) {
			t.Errorf("%s was sent", key)
		}
	}
	if !v.catalogHas(t, vaultgen.FirstNote(dir)) {
		t.Errorf("%s not in the catalog after --wait", vaultgen.FirstNote(dir))
	}
	if out := mustSync(t, v, dir, state, "--exclude", "Private/"); syncSummary(t, out)[0] != 0 {
		t.Errorf("a second sync sent files:\n%s", out)
	}

	notes := notePaths(t, dir)
	edited, renamed, deleted, conflicted := notes[1], notes[2], notes[3], notes[4]
	appendFile(t, dir, edited, "\nThe zebracorn grazes here.\n")
	newName := filepath.ToSlash(filepath.Join(filepath.Dir(renamed), "Renamed note.md"))
	if err := os.Rename(filepath.Join(dir, renamed), filepath.Join(dir, newName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, deleted)); err != nil {
		t.Fatal(err)
	}
	appendFile(t, dir, conflicted, "\nEdited on the laptop.\n")
	v.put(t, conflicted, "# Edited in the bucket\n\nBy an agent.\n")

	out = mustSync(t, v, dir, state, "--delete", "--wait", "--exclude", "Private/")
	n = syncSummary(t, out)
	if n[0] != 1 || n[2] != 1 || n[3] != 1 || n[4] != 1 || !strings.Contains(out, "the cloud index shows all") {
		t.Fatalf("after changes: sent %d, moved %d, deleted %d, conflicts %d:\n%s", n[0], n[2], n[3], n[4], out)
	}
	// Writing the conflict copy took the vault's write lock: where a
	// server takes it, in the user's cache folder, not in the vault.
	if _, err := os.Stat(filepath.Join(dir, ".sheaf", ".write.lock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("sync wrote its lock into the vault: %v", err)
	}
	if _, err := os.Stat(filepath.Join(stateOf(t, dir), "vault.lock")); err != nil {
		t.Errorf("sync did not take the server's write lock: %v", err)
	}
	m := regexp.MustCompile(`(?m)kept as (.+\.conflict-\S+\.md)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the conflict was not reported:\n%s", out)
	}
	if got := string(v.s3.Get(t, "vault", "notes/"+m[1])); got != "# Edited in the bucket\n\nBy an agent.\n" {
		t.Errorf("the bucket's version in %s: %q", m[1], got)
	}
	if got, err := os.ReadFile(filepath.Join(dir, m[1])); err != nil || !strings.Contains(string(got), "By an agent") {
		t.Errorf("the bucket's version was not kept here: %v", err)
	}
	if got := string(v.s3.Get(t, "vault", "notes/"+conflicted)); !strings.Contains(got, "Edited on the laptop") {
		t.Errorf("the laptop's version is not in the bucket: %q", got)
	}
	if v.s3.Has(t, "vault", "notes/"+renamed) || v.s3.Has(t, "vault", "notes/"+deleted) || !v.s3.Has(t, "vault", "notes/"+newName) {
		t.Error("the rename or the deletion was not carried")
	}
	if v.catalogHas(t, deleted) || !v.catalogHas(t, newName) {
		t.Error("the index does not show the rename or the deletion")
	}

	c := toolstest.NewClient(t, cloudStdioSession(t, v))
	var r struct {
		Items []struct{ Path string } `json:"items"`
	}
	c.MustOK("search", map[string]any{"query": "zebracorn"}, &r)
	if len(r.Items) != 1 || r.Items[0].Path != edited {
		t.Errorf("search zebracorn: %+v, want %s", r.Items, edited)
	}
	if out := mustSync(t, v, dir, state, "--delete", "--exclude", "Private/"); syncSummary(t, out)[0] != 0 {
		t.Errorf("a sync with nothing changed sent files:\n%s", out)
	}
}

// TestSyncRefuses: bad arguments are refused before anything is sent.
func TestSyncRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"no folder":      {"sync", filepath.Join(dir, "missing"), "s3://b/p?region=us-east-1"},
		"not s3":         {"sync", dir, "/tmp/elsewhere"},
		"pull and watch": {"sync", dir, "s3://b/p?region=us-east-1", "--pull", "--watch"},
		"dry and wait":   {"sync", dir, "s3://b/p?region=us-east-1", "--dry-run", "--wait"},
		"bad glob":       {"sync", dir, "s3://b/p?region=us-east-1", "--exclude", "a/[b"},
		"bad url":        {"sync", dir, "s3://b/p?colour=blue"},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil {
			t.Errorf("%s: accepted:\n%s", name, out)
		}
	}
}

// TestSyncPullAndDryRun: --dry-run sends nothing; --pull fetches what an
// agent wrote in the bucket, and --pull --delete what it deleted.
func TestSyncPullAndDryRun(t *testing.T) {
	v := newCloudVault(t, "")
	dir, state := t.TempDir(), t.TempDir()
	writeFile(t, dir, "a.md", "# A\n")
	writeFile(t, dir, "b.md", "# B\n")
	out := mustSync(t, v, dir, state, "--dry-run")
	if !strings.Contains(out, "would upload a.md") || v.s3.Has(t, "vault", "notes/a.md") {
		t.Fatalf("dry run:\n%s", out)
	}
	mustSync(t, v, dir, state)
	v.put(t, "Inbox/from agent.md", "# From an agent\n")
	v.s3.Delete(t, "vault", "notes/b.md")
	out = mustSync(t, v, dir, state, "--pull", "--delete")
	if got, err := os.ReadFile(filepath.Join(dir, "Inbox", "from agent.md")); err != nil || string(got) != "# From an agent\n" {
		t.Errorf("pull: %q %v\n%s", got, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.md")); err == nil {
		t.Errorf("pull --delete kept b.md:\n%s", out)
	}
}

func writeFile(t testing.TB, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, dir, name, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(name)), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// countFiles counts the files of a folder outside hidden folders.
func countFiles(t testing.TB, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// notePaths lists the vault's notes, slash-separated, sorted.
func notePaths(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
