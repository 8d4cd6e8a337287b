// Package cloudtest sets up a cloud vault for the functions' tests:
// versitygw (an S3-compatible server) holding a copy of infra/sample-vault,
// uploaded through the S3 API, and a Meilisearch fake; and it connects the
// official MCP Go SDK client to an endpoint with a bearer token.
package cloudtest

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/functions/internal/fnenv"
	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/testbin"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// Token is the bearer token the test vaults' functions require.
const Token = "cloudtest-token-0123456789"

// Vault is a sample vault in S3 with its search server.
type Vault struct {
	S3     *s3test.Server
	Meili  *meilifake.Server
	Bucket string
	Prefix string
}

// Sample uploads infra/sample-vault under the prefix "team/notes" of a new
// bucket, with the oversized attachment the conformance suite expects
// (assets/huge.bin), and starts a Meilisearch fake. It skips the test when
// versitygw is missing (fails it under CI).
func Sample(t testing.TB, opts s3test.Options) *Vault {
	t.Helper()
	v := &Vault{S3: s3test.Start(t, opts), Meili: meilifake.New(t), Bucket: "sheaf-vault", Prefix: "team/notes"}
	v.S3.CreateBucket(t, v.Bucket)
	v.S3.PutDir(t, v.Bucket, v.Prefix, filepath.Join(testbin.RepoRoot(t), "infra", "sample-vault"))
	v.Put(t, "assets/huge.bin", make([]byte, toolstest.HugeAttachmentBytes))
	return v
}

// Empty is a new bucket with nothing under the prefix "team/notes" yet
// (the vault arrives by `sheaf sync`), and a Meilisearch fake.
func Empty(t testing.TB, opts s3test.Options) *Vault {
	t.Helper()
	v := &Vault{S3: s3test.Start(t, opts), Meili: meilifake.New(t), Bucket: "sheaf-vault", Prefix: "team/notes"}
	v.S3.CreateBucket(t, v.Bucket)
	return v
}

// Put writes one object at a vault path through the S3 API.
func (v *Vault) Put(t testing.TB, path string, data []byte) {
	t.Helper()
	v.S3.Put(t, v.Bucket, v.Key(path), data)
}

// Key is the object key of a vault path.
func (v *Vault) Key(path string) string { return v.Prefix + "/" + path }

// URL is the vault's --vault value.
func (v *Vault) URL() string { return v.S3.URL(v.Bucket, v.Prefix) }

// Env is the environment of a function serving the vault: SHEAF_* and the
// AWS credentials of the S3 server.
func (v *Vault) Env() []string {
	return append(v.S3.Env(),
		"SHEAF_VAULT="+v.URL(),
		"SHEAF_SEARCH="+v.Meili.URL,
		"SHEAF_TOKEN="+Token,
		"SHEAF_LOG_LEVEL=warn",
	)
}

// Config is the configuration Env gives, for in-process wiring.
func (v *Vault) Config(t testing.TB) *config.Config {
	t.Helper()
	for _, kv := range v.Env() {
		k, val, _ := strings.Cut(kv, "=")
		t.Setenv(k, val)
	}
	c, err := fnenv.Config()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Reconcile indexes the vault in process, as the scheduled indexer does.
func (v *Vault) Reconcile(t testing.TB) indexer.SyncStats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := config.OpenCloud(ctx, v.Config(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.LoadCatalog(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := cl.Indexer.Reconcile(ctx)
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return st
}

// Connect opens an MCP session to endpoint, sending the bearer token.
func Connect(t testing.TB, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sheaf-cloud-conformance", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}, Timeout: 90 * time.Second},
	}
	s, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
