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

// TestTypeScriptSDKContract runs infra/smoke/contract.mjs, the official
// TypeScript SDK client over Streamable HTTP with a bearer token, against
// `sheaf serve` on a folder and on an S3 vault (versitygw, a Meilisearch
// fake for its search, the sample vault uploaded): the unknown-tool
// envelope, ingest_url of a local page (and its duplicate), ingest_file,
// provenance on a search hit, agent_id and retrieval_count, resources,
// prompts and completion. The source notes must then be in the vault (on
// S3, objects in the bucket).
func TestTypeScriptSDKContract(t *testing.T) {
	node := testbin.Require(t, "node", "", "install Node.js 20")
	script, _ := filepath.Abs("../../infra/smoke/contract.mjs")
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules")); err != nil {
		testbin.Missing(t, fmt.Errorf("infra/smoke/node_modules is missing: run make tools"))
	}
	// Stat the scripts so that go test's cache reruns the test when they change.
	for _, f := range []string{script, filepath.Join(filepath.Dir(script), "lib.mjs")} {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Espalier guide</title></head><body><article><h1>Espalier guide</h1><p>Train an espalier pear along wires thirty centimetres apart, tying in the new laterals in summer.</p></article></body></html>`))
	}))
	defer page.Close()
	onStores(t, func(t *testing.T, sv *storeVault) { typeScriptContract(t, node, script, page.URL, sv) })
}

func typeScriptContract(t *testing.T, node, script, pageURL string, sv *storeVault) {
	const token = "ts-contract-t0ken"
	endpoint := httpServer(t, sv.vault, append(append([]string{}, sv.extra...), "--token", token, "--ingest-allow", "127.0.0.1/32")...)

	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "SHEAF_HTTP_URL="+endpoint, "SHEAF_HTTP_TOKEN="+token, "SHEAF_PAGE_URL="+pageURL+"/espalier")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	t.Logf("contract.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("contract.mjs through the TypeScript SDK: %v", err)
	}
	if !bytes.Contains(out, []byte(" passed, 0 failed")) {
		t.Fatalf("contract.mjs did not finish: %s", out)
	}
	// The notes the TypeScript client filed are in the vault (objects in the bucket).
	var found []string
	for _, p := range filesUnder(filepath.Join(sv.root, "sources")) {
		if data, _ := os.ReadFile(p); strings.Contains(string(data), "source_url: "+pageURL) || strings.Contains(string(data), "source_file: medlar.md") {
			found = append(found, filepath.Base(p))
		}
	}
	if len(found) != 2 {
		t.Errorf("source notes in the vault: %v, want the page's and medlar.md's", found)
	}
}
