package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/testbin"
)

// TestTypeScriptSDKOnS3 runs infra/smoke/s3.mjs, the official TypeScript
// SDK client over Streamable HTTP with a bearer token, against `sheaf
// serve` on an S3 vault (versitygw, a Meilisearch fake for its search,
// the sample vault uploaded): the unknown-tool envelope, ingest_url of a
// local page (and its duplicate), ingest_file, provenance on a search hit,
// agent_id and retrieval_count, resources, prompts and completion. The
// source note must then be an object in the bucket.
func TestTypeScriptSDKOnS3(t *testing.T) {
	node := testbin.Require(t, "node", "", "install Node.js 20")
	script, _ := filepath.Abs("../../infra/smoke/s3.mjs")
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules")); err != nil {
		testbin.Missing(t, fmt.Errorf("infra/smoke/node_modules is missing: run make tools"))
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Espalier guide</title></head><body><article><h1>Espalier guide</h1><p>Train an espalier pear along wires thirty centimetres apart, tying in the new laterals in summer.</p></article></body></html>`))
	}))
	defer page.Close()

	sv := onBucket(t)
	const token = "ts-s3-t0ken"
	endpoint := httpServer(t, sv.vault, append(append([]string{}, sv.extra...), "--token", token, "--ingest-allow", "127.0.0.1/32")...)

	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "SHEAF_HTTP_URL="+endpoint, "SHEAF_HTTP_TOKEN="+token, "SHEAF_PAGE_URL="+page.URL+"/espalier")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	t.Logf("s3.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("s3.mjs through the TypeScript SDK: %v", err)
	}
	if !bytes.Contains(out, []byte(" passed, 0 failed")) {
		t.Fatalf("s3.mjs did not finish: %s", out)
	}
	// The notes the TypeScript client filed are objects in the bucket.
	var found []string
	for _, p := range filesUnder(filepath.Join(sv.root, "sources")) {
		if data, _ := os.ReadFile(p); strings.Contains(string(data), "source_url: "+page.URL) || strings.Contains(string(data), "source_file: medlar.md") {
			found = append(found, filepath.Base(p))
		}
	}
	if len(found) != 2 {
		t.Errorf("source notes in the bucket: %v, want the page's and medlar.md's", found)
	}
}
