package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/functions/internal/cloudtest"
	"github.com/sheaf-dev/sheaf/functions/internal/rietest"
	"github.com/sheaf-dev/sheaf/shared/auth/oauthserver/oauthservertest"
	"github.com/sheaf-dev/sheaf/shared/s3events"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// sqsBridge stands in for the template's S3 notifications through SQS: it
// receives versitygw's event notifications, keeps the ones the template's
// filter passes (ObjectCreated and ObjectRemoved of *.md under the vault's
// prefix), and hands them to the indexer function, under the Lambda
// emulator, in SQS batches (S3's record shape, keys form-encoded).
type sqsBridge struct {
	prefix string
	mu     sync.Mutex
	queue  []string
	kick   chan struct{}
	fn     *rietest.RIE
	failed []string
	done   int
}

func (b *sqsBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	hints, kind, err := s3events.DecodeEvent(body)
	if err != nil || kind == s3events.KindTestEvent {
		return
	}
	b.mu.Lock()
	for _, h := range hints {
		if strings.HasPrefix(h.Key, b.prefix+"/") && strings.HasSuffix(h.Key, ".md") {
			event := "ObjectCreated:Put"
			if h.Removed {
				event = "ObjectRemoved:Delete"
			}
			b.queue = append(b.queue, fmt.Sprintf(`{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1",
			  "eventTime":%q,"eventName":%q,"s3":{"s3SchemaVersion":"1.0","bucket":{"name":%q,"arn":"arn:aws:s3:::%s"},
			  "object":{"key":%q,"size":%d}}}]}`, time.Now().UTC().Format(time.RFC3339), event, h.Bucket, h.Bucket, url.QueryEscape(h.Key), h.Size))
		}
	}
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// run delivers batches of at most 100 messages, after a batching window,
// until ctx ends.
func (b *sqsBridge) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		time.Sleep(300 * time.Millisecond) // the batching window
		for {
			b.mu.Lock()
			n := min(len(b.queue), 100)
			batch := slices.Clone(b.queue[:n])
			b.queue = b.queue[n:]
			b.mu.Unlock()
			if n == 0 {
				break
			}
			var records []any
			for i, body := range batch {
				records = append(records, map[string]any{"messageId": fmt.Sprint(b.done + i), "receiptHandle": "rh", "body": body,
					"eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:sheaf-vault-events", "awsRegion": "us-east-1"})
			}
			ev, _ := json.Marshal(map[string]any{"Records": records})
			out, err := b.fn.Invoke(ctx, ev)
			b.mu.Lock()
			b.done += n
			if err != nil || strings.Contains(string(out), `"itemIdentifier"`) {
				b.failed = append(b.failed, fmt.Sprintf("%v %s", err, out))
			}
			b.mu.Unlock()
		}
	}
}

// TestQuickStart follows docs/claude-ai.md as far as it can run here: the
// two functions under the Lambda emulator with the settings the template
// gives them for OAuthBuiltin=true (the MCP function's URL from an SSM
// parameter, here a stand-in of that one call), the bucket's note events
// reaching the indexer function in SQS batches, then the guide's commands
// with the built sheaf binary (an owner key, the vault synced with
// --wait), then what claude.ai does (the official TypeScript SDK: register
// or present a metadata document, the consent page approved by the test
// with the owner key for one folder, a question answered from it, refresh,
// revocation). Deploying (sam) and claude.ai itself cannot run here.
func TestQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: skipped with -short")
	}
	rietest.Require(t)
	bridge := &sqsBridge{prefix: "team/notes", kick: make(chan struct{}, 1)}
	hook := httptest.NewServer(bridge)
	t.Cleanup(hook.Close)
	v := cloudtest.Empty(t, s3test.Options{WebhookURL: hook.URL})
	env := slices.DeleteFunc(v.Env(), func(kv string) bool { return strings.HasPrefix(kv, "SHEAF_TOKEN=") })

	bridge.fn = rietest.Start(t, rietest.Build(t, "./indexer"), env...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go bridge.run(ctx)

	gw := &rietest.Gateway{}
	api := httptest.NewServer(gw)
	t.Cleanup(api.Close)
	apiURL := api.URL + "/mcp" // the stack's ApiUrl output
	ssm := httptest.NewServer(fakeSSM{"/sheaf/quickstart/mcp-url": apiURL})
	t.Cleanup(ssm.Close)
	doc, ca := oauthservertest.MetadataDocument(t)
	gw.RIE = rietest.Start(t, rietest.Build(t, "./mcp"), append(env, "SHEAF_OAUTH_BUILTIN=true",
		"SHEAF_OAUTH_AUDIENCE=ssm:/sheaf/quickstart/mcp-url?endpoint="+ssm.URL,
		"SHEAF_OAUTH_PRIVATE_CLIENT_HOSTS=127.0.0.1", "SSL_CERT_FILE="+ca)...)

	sheaf := filepath.Join(t.TempDir(), "sheaf")
	if out, err := exec.Command("go", "build", "-o", sheaf, "../cmd/sheaf").CombinedOutput(); err != nil {
		t.Fatalf("building sheaf: %v\n%s", err, out)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(sheaf, args...)
		cmd.Env = append(os.Environ(), v.S3.Env()...)
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("sheaf %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return string(out)
	}

	// sheaf keys add me --owner --vault s3://BUCKET/PREFIX
	owner := strings.TrimSpace(run("keys", "add", "me", "--owner", "--vault", v.URL()))
	// sheaf sync ~/Notes s3://BUCKET/PREFIX --wait
	notes := filepath.Join(t.TempDir(), "Notes")
	if err := os.CopyFS(notes, os.DirFS(filepath.Join(testbin.RepoRoot(t), "infra", "sample-vault"))); err != nil {
		t.Fatal(err)
	}
	out := run("sync", notes, v.URL(), "--wait", "--wait-timeout", "5m", "--state", t.TempDir())
	if !strings.Contains(out, "the cloud index shows all") {
		t.Fatalf("sync --wait:\n%s", out)
	}
	bridge.mu.Lock()
	failed := slices.Clone(bridge.failed)
	bridge.mu.Unlock()
	if len(failed) > 0 {
		t.Errorf("the indexer function failed batches: %v", failed)
	}
	t.Logf("sheaf sync:\n%s", out)

	// claude.ai: add the connector (ApiUrl), approve, ask.
	oauthservertest.RunTypeScriptClient(t, oauthservertest.Run{MCPURL: apiURL, OwnerKey: owner, Folder: "Projects", CIMDURL: doc, Question: "compost"})
}

// fakeSSM answers GetParameter in the AWS JSON 1.1 protocol the SDK speaks
// (no SSM server runs here).
type fakeSSM map[string]string

func (f fakeSSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ Name string }
	_ = json.NewDecoder(r.Body).Decode(&in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	v, ok := f[in.Name]
	if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"ParameterNotFound","message":"not found"}`)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{"Name": in.Name, "Type": "String", "Value": v, "Version": 1}})
}

// BenchmarkSyncToLambdaIndexer: `sheaf sync --wait` of a generated vault
// (SHEAF_BENCH_SYNC_NOTES notes, 10,000 by default, an attachment every
// 25th) to versitygw, whose note events reach the indexer function under
// the Lambda emulator in SQS batches of up to 100, as the template
// deploys it. It reports files/s sent, bytes, seconds to searchable, and
// what a second sync sends (0). Run with -benchtime 1x.
func BenchmarkSyncToLambdaIndexer(b *testing.B) {
	rietest.Require(b)
	notes := 10000
	if n, err := strconv.Atoi(os.Getenv("SHEAF_BENCH_SYNC_NOTES")); err == nil && n > 0 {
		notes = n
	}
	dir := filepath.Join(b.TempDir(), "vault")
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Notes: notes, Seed: 1, AttachmentsEvery: 25}); err != nil {
		b.Fatal(err)
	}
	sheaf := filepath.Join(b.TempDir(), "sheaf")
	if out, err := exec.Command("go", "build", "-o", sheaf, "../cmd/sheaf").CombinedOutput(); err != nil {
		b.Fatalf("building sheaf: %v\n%s", err, out)
	}
	indexerBin := rietest.Build(b, "./indexer")
	summary := regexp.MustCompile(`(\d+) files sent \((\d+) bytes\).* in ([0-9.]+)s`)
	for b.Loop() {
		bridge := &sqsBridge{prefix: "team/notes", kick: make(chan struct{}, 1)}
		hook := httptest.NewServer(bridge)
		v := cloudtest.Empty(b, s3test.Options{WebhookURL: hook.URL})
		bridge.fn = rietest.Start(b, indexerBin, v.Env()...)
		ctx, cancel := context.WithCancel(context.Background())
		go bridge.run(ctx)
		state := b.TempDir()
		sync := func(args ...string) string {
			cmd := exec.Command(sheaf, append([]string{"sync", dir, v.URL(), "--state", state, "--quiet"}, args...)...)
			cmd.Env = append(os.Environ(), v.S3.Env()...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Fatalf("sheaf sync: %v\n%s", err, out)
			}
			return string(out)
		}
		start := time.Now()
		out := sync("--wait", "--wait-timeout", "60m")
		searchable := time.Since(start)
		m := summary.FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "the cloud index shows all") {
			b.Fatalf("sync:\n%s", out)
		}
		sent, _ := strconv.ParseFloat(m[1], 64)
		bytes, _ := strconv.ParseFloat(m[2], 64)
		secs, _ := strconv.ParseFloat(m[3], 64)
		again := summary.FindStringSubmatch(sync())
		b.ReportMetric(sent/secs, "files/s")
		b.ReportMetric(bytes, "bytes-sent")
		b.ReportMetric(secs, "s-to-send")
		b.ReportMetric(searchable.Seconds(), "s-to-searchable")
		resent, _ := strconv.ParseFloat(again[1], 64)
		b.ReportMetric(resent, "files-resent")
		b.Logf("%s files sent (%s bytes) in %.1fs, searchable after %.1fs; a second sync sent %s", m[1], m[2], secs, searchable.Seconds(), again[1])
		cancel()
		hook.Close()
	}
}
