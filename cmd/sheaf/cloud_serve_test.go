package main

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// sampleCloudVault uploads infra/sample-vault, and the oversized attachment
// the conformance suite expects, through the S3 API under the vault's
// prefix, then indexes it with `sheaf reconcile`.
func sampleCloudVault(t *testing.T) *cloudVault {
	t.Helper()
	v := newCloudVault(t, "")
	v.s3.PutDir(t, "vault", "notes", "../../infra/sample-vault")
	v.put(t, "assets/huge.bin", string(make([]byte, toolstest.HugeAttachmentBytes)))
	if out, err := v.command().CombinedOutput(); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	return v
}

// cloudStdioSession starts `sheaf serve` over stdio on the cloud vault.
func cloudStdioSession(t testing.TB, v *cloudVault) *mcp.ClientSession {
	cmd := exec.Command(bin, "serve", "--vault", v.s3.URL("vault", "notes"), "--search", v.meili.URL, "--log-level", "warn")
	cmd.Env = append(os.Environ(), v.s3.Env()...)
	cmd.Stderr = os.Stderr
	return connect(t, &mcp.CommandTransport{Command: cmd})
}

// TestConformanceCloudStdio runs the whole MCP conformance suite against
// `sheaf serve --vault s3://... --search <meilisearch>`, over versitygw and
// the Meilisearch fake, after a `sheaf reconcile`: the server reads the
// catalog snapshot the reconcile saved in the bucket.
func TestConformanceCloudStdio(t *testing.T) {
	v := sampleCloudVault(t)
	toolstest.Run(t, func(t *testing.T) *mcp.ClientSession { return cloudStdioSession(t, v) })
}

// TestServeCloudRefuses: a cloud vault needs Meilisearch, and with
// embeddings, Qdrant.
func TestServeCloudRefuses(t *testing.T) {
	for name, args := range map[string][]string{
		"embedded search":  {"--search", "embedded"},
		"embedded vectors": {"--search", "http://127.0.0.1:1", "--embed-base-url", "http://127.0.0.1:1/v1", "--embed-model", "m", "--vectors", "embedded"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--vault", "s3://b/p?region=us-east-1"}, args...)...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY=b")
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("%s: accepted:\n%s", name, out)
		}
	}
}

// TestServeCloudBeforeTheIndexer: notes in the bucket, no indexer run yet
// (no catalog snapshot): answers say they are partial, not that the vault
// is empty; after a reconcile they are whole.
func TestServeCloudBeforeTheIndexer(t *testing.T) {
	v := newCloudVault(t, "")
	v.put(t, "A.md", "# A\n\nquokka\n")
	c := toolstest.NewClient(t, cloudStdioSession(t, v))
	var list struct {
		coverage
		Total int `json:"total"`
	}
	c.MustOK("list_notes", nil, &list)
	if !list.Partial || list.Indexing == nil || list.Indexing.State != "starting" {
		t.Errorf("before any indexer ran: %+v, want partial with indexing.state starting", list)
	}
	if out, err := v.command().CombinedOutput(); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		list.Partial, list.Indexing = false, nil
		c.MustOK("list_notes", nil, &list)
		if !list.Partial && list.Total == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after reconcile: %+v", list)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
